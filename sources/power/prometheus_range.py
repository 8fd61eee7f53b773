"""Prometheus HTTP API `query_range` exports of DCGM power and energy (`curl
.../api/v1/query_range?query=DCGM_FI_DEV_POWER_USAGE&start=...&end=...&step=1s > power.json`):
a JSON `{"status": "success", "data": {"resultType": "matrix", "result": [...]}}`, one series
per GPU with `metric` labels and `values` = [[unix s, "value"], ...].

Read, as in the DCGM exporter's text (`sources.power.dcgm`): `DCGM_FI_DEV_POWER_USAGE` (W),
`DCGM_FI_DEV_POWER_USAGE_INSTANT` where the averaged gauge is absent, and
`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ -> J), per GPU (`gpu`, `UUID`, `Hostname`
labels; `instance` when there is no Hostname). Several queries' results may be in one file
as a JSON list of such documents. A series of another metric is ignored; a value that is not
a number ("NaN" included) is an error naming the series and the point.
"""

from __future__ import annotations

import polars as pl

from sources import prometheus
from sources.errors import ParseError
from sources.power.dcgm import ENERGY, POWER, POWER_INSTANT, samples
from sources.power.frame import from_epoch_s

TOOL = "prometheus-range"
_METRICS = (POWER, POWER_INSTANT, ENERGY)


def detect(data: bytes, path: str) -> bool:
    top = data[:8192]
    return top.lstrip()[:1] in (b"{", b"[") and b'"resultType"' in top and (
        b"DCGM_FI_DEV_" in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    rows: list[dict[str, object]] = []
    for where_series, series in prometheus.series(data, TOOL, path):
        labels = series.get("metric") if isinstance(series, dict) else None
        if not isinstance(labels, dict) or labels.get("__name__") not in _METRICS:
            continue
        name = labels["__name__"]
        values = series.get("values") or []
        if not isinstance(values, list):
            raise ParseError(TOOL, path, where_series, "values: expected a list")
        gpu, uuid = labels.get("gpu"), labels.get("UUID")
        if gpu is None and uuid is None:
            raise ParseError(TOOL, path, where_series, "no gpu or UUID label")
        host = labels.get("Hostname") or labels.get("instance")
        for p, point in enumerate(values):
            where = f"{where_series} ({name} gpu {gpu}) point {p}"
            stamp, value = prometheus.point(point, TOOL, path, where)
            rows.append({"stamp": stamp, "metric": name, "value": value, "gpu": gpu,
                         "uuid": uuid, "host": host})
    if not rows:
        raise ParseError(TOOL, path, "data.result", f"no series of {', '.join(_METRICS)}")
    long = pl.DataFrame(rows, schema={"stamp": pl.Float64(), "metric": pl.String(),
                                      "value": pl.Float64(), "gpu": pl.String(),
                                      "uuid": pl.String(), "host": pl.String()})
    wide = long.group_by("stamp", "uuid", "gpu", "host", maintain_order=True).agg(
        power=pl.col("value").filter(pl.col("metric") == POWER).first(),
        instant=pl.col("value").filter(pl.col("metric") == POWER_INSTANT).first(),
        energy_mj=pl.col("value").filter(pl.col("metric") == ENERGY).first(),
    )
    stamped = wide.with_columns(
        sample_utc=from_epoch_s(pl.col("stamp")), blank=pl.lit(False)).sort("gpu", "uuid", "stamp")
    return samples(stamped, TOOL)
