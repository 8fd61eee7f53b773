"""CodeCarbon `emissions.csv`: one row per tracked run (rewritten or appended at each save).

Units: `timestamp` local `%Y-%m-%dT%H:%M:%S` written when the run stopped (no timezone: `tz`
required); `duration` s; `*_energy` and `energy_consumed` **kWh** (x 3.6e6 -> J); `*_power` W.
The header changes between versions (2.x lacks experiment_id, water_consumed, utilisation and
wue columns; older files put experiment_id before project_name): columns are found by name.

Each run becomes a counter read twice: 0 J at `timestamp - duration`, the run's energy at
`timestamp`. `energy_consumed` (CPU + GPU + RAM) is boundary `node` (CodeCarbon models CPU and
RAM power when it cannot measure them: noted); `gpu_energy` is `gpu_board`, all GPUs together,
and only when the run tracked GPUs (gpu_count > 0 or gpu_energy > 0; a 0 without GPUs means
"not measured", not 0 J). An empty `energy_consumed` cell (real 2.4.3 files have them) is a
run without node energy: its counter readings are null, each noted "energy_consumed empty in
the file (line N)"; an unreadable one is an error naming the line and the column.
"""

from __future__ import annotations

import polars as pl

from sources.errors import ParseError
from sources.power.frame import canonical, first_line, local_to_utc, read_text_csv, require_tz

TOOL = "codecarbon"
_REQUIRED = ("timestamp", "duration", "energy_consumed")
KWH_TO_J = 3.6e6


def detect(data: bytes, path: str) -> bool:
    first = first_line(data)
    names = {c.strip() for c in first.split(",")}
    return {"timestamp", "duration", "emissions", "energy_consumed"} <= names


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    raw = read_text_csv(data, source=TOOL, path=path)
    missing = [c for c in _REQUIRED if c not in raw.columns]
    if missing:
        raise ParseError(TOOL, path, "header", f"missing column(s) {', '.join(missing)}")
    zone = require_tz(tz, source=TOOL, path=path, where="timestamp column")
    frame = raw.with_row_index("line", offset=2)

    def number(name: str) -> pl.Expr:
        if name not in frame.columns:
            return pl.lit(None, pl.Float64)
        return pl.col(name).str.strip_chars().cast(pl.Float64, strict=False)

    run = pl.coalesce([pl.col(c) for c in ("run_id", "experiment_id") if c in frame.columns]
                      + [pl.col("line").cast(pl.String)])
    stamp = pl.col("timestamp").str.strip_chars().str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us")
    def empty(name: str) -> pl.Expr:
        return pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")

    runs = frame.select(
        "line", run=run, end=local_to_utc(stamp, zone), duration=number("duration"),
        node_j=number("energy_consumed") * KWH_TO_J, gpu_j=number("gpu_energy") * KWH_TO_J,
        gpu_count=number("gpu_count"), raw_stamp=pl.col("timestamp"),
        raw_duration=pl.col("duration"), raw_energy=pl.col("energy_consumed"),
        no_energy=empty("energy_consumed"))
    for column, what, cell in (("end", "timestamp", "raw_stamp"),
                              ("duration", "duration", "raw_duration"),
                              ("node_j", "energy_consumed", "raw_energy")):
        # an empty energy_consumed cell is a run without node energy (null, noted below)
        bad = runs.filter(pl.col(column).is_null() & ~(pl.col("no_energy")
                                                       if column == "node_j" else pl.lit(False)))
        if bad.height:
            problem = (f"unreadable or non-existent local time {bad[cell][0]!r} in {zone}"
                       if column == "end" else f"not a number: {bad[cell][0]!r}")
            raise ParseError(TOOL, path, f"line {bad['line'][0]} {what}", problem)
    runs = runs.with_columns(
        start=pl.col("end") - pl.duration(microseconds=(pl.col("duration") * 1e6).round()))
    node_note = pl.when(pl.col("no_energy")).then(pl.format(
        "energy_consumed empty in the file (line {}): no node energy for this run",
        pl.col("line"))).otherwise(pl.lit(
            "CodeCarbon CPU+GPU+RAM; CPU and RAM may be modelled, not measured"))
    gpus = runs.filter((pl.col("gpu_count") > 0) | (pl.col("gpu_j") > 0))
    parts = []
    for boundary, device, energy, subset, note in (
            ("node", "node", "node_j", runs, node_note),
            ("gpu_board", "gpus", "gpu_j", gpus, pl.lit("all GPUs of the run together"))):
        starts = subset.group_by("run", maintain_order=True).agg(
            sample_utc=pl.col("start").min(), no_energy=pl.col("no_energy").all(),
            line=pl.col("line").first())
        parts.append(starts.select("sample_utc", series_id="run", device_id=pl.lit(device),
                                   measurement_boundary=pl.lit(boundary),
                                   energy_counter_j=pl.when(pl.col("no_energy") & (
                                       pl.lit(energy) == "node_j")).then(None).otherwise(0.0),
                                   note=note))
        parts.append(subset.select(sample_utc="end", series_id="run", device_id=pl.lit(device),
                                   measurement_boundary=pl.lit(boundary),
                                   energy_counter_j=pl.col(energy), note=note))
    out = pl.concat([canonical(p) for p in parts])
    return out.sort("measurement_boundary", "series_id", "sample_utc", maintain_order=True)
