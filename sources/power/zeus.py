"""Zeus `ZeusMonitor(log_file=...)` CSV: one row per measurement window.

Header `start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy,...`: `start_time` epoch s
(UTC) at `begin_window`, `elapsed_time` s, energies **J** per GPU (NVML's mJ counter / 1000 on
Volta+, else integrated power). Each window and GPU becomes a counter read twice: 0 J at the
start and the window's energy at its end (series = window name @ start). CPU/DRAM columns,
when present, are not GPU-board energy and are skipped.
"""

from __future__ import annotations

import re

import polars as pl

from sources.errors import ParseError
from sources.power.frame import canonical, first_line, from_epoch_s, read_text_csv

TOOL = "zeus"


def detect(data: bytes, path: str) -> bool:
    first = first_line(data)
    return first.replace(" ", "").startswith("start_time,window_name,elapsed_time")


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    raw = read_text_csv(data, source=TOOL, path=path)
    names = [c.strip() for c in raw.columns]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ParseError(TOOL, path, "header", f"column {twice!r} appears twice (spaces aside)")
    raw = raw.rename(dict(zip(raw.columns, names, strict=True)))
    missing = [c for c in ("start_time", "window_name", "elapsed_time") if c not in raw.columns]
    if missing:
        raise ParseError(TOOL, path, "header", f"missing column(s) {', '.join(missing)}")
    gpu_cols = [c for c in raw.columns if re.fullmatch(r"gpu\d{1,4}_energy", c)]
    if not gpu_cols:
        raise ParseError(TOOL, path, "header", "no gpuN_energy column")
    frame = raw.with_row_index("line", offset=2).with_columns(
        start=pl.col("start_time").cast(pl.Float64, strict=False),
        elapsed=pl.col("elapsed_time").cast(pl.Float64, strict=False))
    bad = frame.filter(from_epoch_s(pl.col("start")).is_null() | pl.col("elapsed").is_null()
                       | ~pl.col("elapsed").is_between(0, 1e8))
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}", "bad start_time or elapsed_time")
    long = frame.unpivot(on=gpu_cols, index=["line", "window_name", "start", "elapsed"],
                         variable_name="column", value_name="energy_text").with_columns(
        energy=pl.col("energy_text").str.strip_chars().cast(pl.Float64, strict=False),
        gpu=pl.col("column").str.extract(r"^gpu(\d{1,4})_energy$", 1).cast(pl.Int64))
    bad = long.filter(pl.col("energy").is_null() & pl.col("energy_text").is_not_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]} {bad['column'][0]}",
                         f"not an energy in J: {bad['energy_text'][0]!r}")
    long = long.filter(pl.col("energy").is_not_null()).with_columns(
        series_id=pl.format("{}@{}", pl.col("window_name"), pl.col("start")),
        start_utc=from_epoch_s(pl.col("start")))
    common = [pl.col("gpu").cast(pl.String).alias("device_id"), pl.col("gpu").alias("gpu_index"),
              pl.col("series_id"), pl.lit("gpu_board").alias("measurement_boundary")]
    begin = long.select(*common, sample_utc="start_utc", energy_counter_j=pl.lit(0.0))
    end = long.select(
        *common, sample_utc=pl.col("start_utc")
        + pl.duration(microseconds=(pl.col("elapsed") * 1e6).round()),
        energy_counter_j="energy")
    return canonical(pl.concat([begin, end])).sort("device_id", "series_id", "sample_utc")
