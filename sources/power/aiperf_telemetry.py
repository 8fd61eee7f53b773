"""AIPerf `gpu_telemetry_export.jsonl`: one record per GPU per sample (~3 Hz).

`timestamp_ns` is epoch ns (UTC). `telemetry_data` holds DCGM values mapped by AIPerf:
`gpu_power_usage` (W) and `energy_consumption`, a cumulative counter in **MJ** (DCGM mJ x
1e-9), converted to J here. Schema 1.5 renames them `nvidia_power_usage` /
`nvidia_energy_consumption` and adds `amd_power` / `amd_energy_consumption` (taken in the same
units; not confirmed for AMD). One GPU can be scraped through several exporters (the sample
file reads one UUID through ports 9400 and 9402): each exporter is its own series, and the
energy computation counts the device once.
"""

from __future__ import annotations

import re

import polars as pl

from sources.bench.jsondoc import json_lines
from sources.errors import ParseError
from sources.power.frame import canonical, decode, from_epoch_ns

TOOL = "aiperf-telemetry"

_POWER = ("gpu_power_usage", "nvidia_power_usage", "amd_power")
_ENERGY_MJ = ("energy_consumption", "nvidia_energy_consumption", "amd_energy_consumption")
_SERIES = ("telemetry_source_url", "dcgm_url", "hostname")


def detect(data: bytes, path: str) -> bool:
    first = data[:8192].lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"timestamp_ns"' in first and b'"telemetry_data"' in first


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    text = decode(data, source=TOOL, path=path)
    try:
        raw = pl.read_ndjson(text.encode(), infer_schema_length=None)
    except (pl.exceptions.PolarsError, ValueError):
        json_lines(text, TOOL, path)  # a ParseError naming the first line that is no record
        raise ParseError(TOOL, path, "records", "unreadable records") from None
    if raw.is_empty() or "timestamp_ns" not in raw.columns or "telemetry_data" not in raw.columns:
        raise ParseError(TOOL, path, "line 1", "records need timestamp_ns and telemetry_data")
    if not isinstance(raw.schema["telemetry_data"], pl.Struct):
        raise ParseError(TOOL, path, "telemetry_data", "is not an object")
    data_cols = {f.name for f in raw.schema["telemetry_data"].fields}  # type: ignore[attr-defined]
    frame = raw.with_row_index("line", offset=1).unnest("telemetry_data")

    def first_of(names: tuple[str, ...]) -> pl.Expr:
        present = [pl.col(n).cast(pl.Float64, strict=False) for n in names if n in data_cols]
        return pl.coalesce(present) if present else pl.lit(None, pl.Float64)

    def text_col(name: str) -> pl.Expr:
        return pl.col(name).cast(pl.String) if name in frame.columns else pl.lit(None, pl.String)

    stamp = from_epoch_ns(pl.col("timestamp_ns").cast(pl.Int64, strict=False))
    bad = frame.filter(stamp.is_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}", "timestamp_ns is not epoch ns")
    index = pl.col("gpu_index").cast(pl.Int64, strict=False) if "gpu_index" in frame.columns \
        else pl.lit(None, pl.Int64)
    series = [text_col(n) for n in _SERIES if n in frame.columns]
    out = frame.select(
        sample_utc=stamp,
        device_id=pl.coalesce(text_col("gpu_uuid"), pl.concat_str(
            [text_col("hostname").fill_null(""), index.cast(pl.String)], separator="/")),
        gpu_index=index,
        series_id=pl.coalesce([*series, pl.lit(TOOL)]),
        measurement_boundary=pl.lit("gpu_board"),
        power_w=first_of(_POWER),
        energy_counter_j=first_of(_ENERGY_MJ) * 1e6,
        line=pl.col("line"),
    )
    bad = out.filter(pl.col("device_id").is_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}", "no gpu_uuid or gpu_index")
    return canonical(out)


def gpu_names(data: bytes) -> tuple[str, ...]:
    """The GPU names of the records' `gpu_model_name` ("NVIDIA RTX 6000 Ada Generation"), from
    the first 64 kB, in order of first appearance."""
    found = re.findall(rb'"gpu_model_name"\s*:\s*"([^"]*)"', data[:65536])
    return tuple(dict.fromkeys(n.decode("utf-8", errors="replace") for n in found if n))

