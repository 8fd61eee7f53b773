"""DCGM exporter scrapes (Prometheus text exposition of `:9400/metrics`), one or many.

Read: `DCGM_FI_DEV_POWER_USAGE` (gauge, W) and `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (counter,
**mJ** since boot, converted to J here), per GPU (`gpu`, `UUID`, `Hostname` labels).
`DCGM_FI_DEV_POWER_USAGE_INSTANT` is used only where the averaged gauge is absent.

The exposition carries no time, so a scrape log must say when each scrape was taken, either
as a Prometheus sample timestamp (integer ms after the value) or as a comment line before the
scrape: `# scrape_utc: 2026-11-29T07:00:00Z` (also `# scrape_time:`, `# scraped_at:` as for
vLLM /metrics, a bare `# 2026-11-29T07:00:00Z`, or epoch seconds `# scrape_utc: 1795935600.25`).
A naive ISO time needs `tz`; a labelled time that cannot be read is an error. Blank sentinels
(values near 2^47 or 2^63) become nulls with a note.
"""

from __future__ import annotations

import re

import polars as pl

from sources.errors import ParseError
from sources.power.frame import (
    canonical,
    decode,
    from_epoch_s,
    local_to_utc,
    require_tz,
    text_lines,
)
from sources.scrape_time import SCRAPE_TIME_COMMENT

TOOL = "dcgm-exporter"

POWER = "DCGM_FI_DEV_POWER_USAGE"
POWER_INSTANT = "DCGM_FI_DEV_POWER_USAGE_INSTANT"
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
_SENTINEL = 1.4e14  # DCGM blank values: fp64 2^47 and int64 near 2^63
_METRIC = rf"^({POWER}|{POWER_INSTANT}|{ENERGY})\{{([^}}]*)\}}\s+(\S+)(?:\s+(-?\d+))?\s*$"
# an unlabelled comment is a scrape time only when it looks like one (not `# HELP ...`)
_BARE_TIME = r"^#\s*(\d{4}-\d{2}-\d{2}[T ][\d:.]+(?:Z|[+-]\d{2}:\d{2})?|\d{9,}(?:\.\d+)?)\s*$"


def detect(data: bytes, path: str) -> bool:
    head = data[:65536]
    return b"DCGM_FI_DEV_" in head and not head.lstrip().startswith((b"{", b"["))


def _label(name: str) -> pl.Expr:
    return pl.col("labels").str.extract(rf'(?:^|,)\s*{name}="([^"]*)"', 1)


def _marker_times(marker: pl.Expr, tz: str | None, path: str, naive_present: bool) -> pl.Expr:
    iso = marker.str.replace(r"Z$", "+00:00").str.replace(" ", "T")
    epoch = from_epoch_s(marker.cast(pl.Float64, strict=False))
    aware = iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_zone="UTC",
                                time_unit="us")
    result = pl.coalesce(epoch, aware)
    if naive_present:
        zone = require_tz(tz, source=TOOL, path=path, where="scrape time comment")
        naive = iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us")
        result = pl.coalesce(result, local_to_utc(naive, zone))
    return result


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    text = decode(data, source=TOOL, path=path)
    lines = text_lines(text)
    markers = lines["text"].str.extract(SCRAPE_TIME_COMMENT, 1).fill_null(
        lines["text"].str.extract(_BARE_TIME, 1))
    naive_present = bool(markers.drop_nulls().str.contains(r"^\d{4}-.*\d$").any())
    frame = lines.with_columns(marker=markers).with_columns(
        marker_utc=_marker_times(pl.col("marker"), tz, path, naive_present))
    unread = frame.filter(pl.col("marker").is_not_null() & pl.col("marker_utc").is_null())
    if unread.height:
        raise ParseError(TOOL, path, f"line {unread['line'][0]}",
                         f"scrape time {unread['marker'][0]!r} is neither ISO-8601 nor epoch "
                         "seconds (or is a local time that a DST change skips or repeats)")
    frame = frame.with_columns(scrape_utc=pl.col("marker_utc").forward_fill())
    parts = pl.col("text").str.extract_groups(_METRIC)
    metrics = frame.with_columns(parts.alias("m")).unnest("m").rename(
        {"1": "metric", "2": "labels", "3": "value_text", "4": "ts_ms"}
    ).filter(pl.col("metric").is_not_null())
    if metrics.is_empty():
        raise ParseError(TOOL, path, "metrics", f"no {POWER} or {ENERGY} samples")
    metrics = metrics.with_columns(
        value=pl.col("value_text").cast(pl.Float64, strict=False),
        gpu=_label("gpu"), uuid=_label("UUID"), host=_label("Hostname"),
        stamp=pl.coalesce(
            from_epoch_s(pl.col("ts_ms").cast(pl.Float64) / 1000),
            pl.col("scrape_utc")),
    )
    bad = metrics.filter(pl.col("value").is_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}",
                         f"not a number: {bad['value_text'][0]!r}")
    no_time = metrics.filter(pl.col("stamp").is_null())
    if no_time.height:
        raise ParseError(TOOL, path, f"line {no_time['line'][0]}", "scrape has no time: add "
                         "'# scrape_utc: <ISO time>' before each scrape, or sample timestamps")
    no_gpu = metrics.filter(pl.col("gpu").is_null() & pl.col("uuid").is_null())
    if no_gpu.height:
        raise ParseError(TOOL, path, f"line {no_gpu['line'][0]}", "no gpu or UUID label")
    blank = pl.col("value") >= _SENTINEL
    value = pl.when(blank).then(None).otherwise(pl.col("value"))
    wide = (
        metrics.group_by("stamp", "uuid", "gpu", "host", maintain_order=True).agg(
            power=value.filter(pl.col("metric") == POWER).first(),
            instant=value.filter(pl.col("metric") == POWER_INSTANT).first(),
            energy_mj=value.filter(pl.col("metric") == ENERGY).first(),
            blank=(blank & (pl.col("metric") != POWER_INSTANT)).any(),
        )
    )
    return samples(wide.rename({"stamp": "sample_utc"}), TOOL)


def samples(wide: pl.DataFrame, series: str) -> pl.DataFrame:
    """Power samples from one row per (time, GPU): `sample_utc`, `uuid`, `gpu`, `host`,
    `power`, `instant`, `energy_mj`, `blank` (the exporter's or a `query_range` export's)."""
    out = wide.select(
        "sample_utc",
        device_id=pl.coalesce("uuid", pl.concat_str(
            [pl.col("host").fill_null(""), pl.col("gpu")], separator="/")),
        gpu_index=pl.col("gpu").cast(pl.Int64, strict=False),
        series_id=pl.coalesce(pl.col("host"), pl.lit(series)),
        measurement_boundary=pl.lit("gpu_board"),
        power_w=pl.coalesce("power", "instant"),
        energy_counter_j=pl.col("energy_mj") / 1000.0,
        note=pl.when(pl.col("blank")).then(pl.lit("DCGM blank value (no reading)"))
        .when(pl.col("power").is_null() & pl.col("instant").is_not_null())
        .then(pl.lit(f"power from {POWER_INSTANT}")),
    )
    return canonical(out)


def gpu_names(data: bytes) -> tuple[str, ...]:
    """The GPU names of the scrapes' `modelName` label ("NVIDIA H100 80GB HBM3"), from the
    first 64 kB, in order of first appearance."""
    found = re.findall(rb'[{,]\s*modelName="([^"]*)"', data[:65536])
    return tuple(dict.fromkeys(n.decode("utf-8", errors="replace") for n in found if n))

