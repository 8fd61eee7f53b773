"""amd-smi CSV: the `amd-smi metric -p -c -t -u -w 1 --csv` stream, and `metric -E` snapshots.

Stream: header `timestamp,gpu,...,socket_power,...`; `timestamp` integer epoch s (UTC),
`socket_power` W, `N/A` cells, list cells quoted as Python reprs, a blank line between ticks
and the header possibly repeated (dropped). A `total_energy_consumption` column (J), when
present, is read as a counter; AMD counters reset (a drop is handled in
pipeline.evidence.power.energy).

`amd-smi metric -E --csv` (`gpu,total_energy_consumption`, J) has no time: `parse` refuses it;
read a start/end pair with `parse_snapshot` and
`pipeline.evidence.power.logs.power_from_snapshots`, which places them at the benchmark window's
edges.
"""

from __future__ import annotations

import polars as pl

from sources.errors import ParseError
from sources.power.frame import NOT_AVAILABLE, canonical, first_line, from_epoch_s, read_text_csv

TOOL = "amd-smi"
_POWER = ("socket_power", "current_socket_power", "average_socket_power")
_ENERGY = "total_energy_consumption"


def is_snapshot(data: bytes) -> bool:
    return first_line(data).strip().replace(" ", "") == "gpu,total_energy_consumption"


def detect(data: bytes, path: str) -> bool:
    first = first_line(data)
    return (first.startswith("timestamp,gpu,") and "socket_power" in first) or is_snapshot(data)


def _read(data: bytes, path: str) -> pl.DataFrame:
    raw = read_text_csv(data, source=TOOL, path=path, truncate_ragged_lines=True)
    return (raw.with_row_index("line", offset=2)
            .filter(pl.any_horizontal(pl.all().exclude("line").is_not_null()))
            .filter(pl.col(raw.columns[0]) != raw.columns[0]))  # repeated header


def _number(name: str, frame: pl.DataFrame, path: str) -> pl.Series:
    text = frame[name].str.strip_chars()
    value = text.cast(pl.Float64, strict=False)
    bad = frame.filter(value.is_null() & ~text.is_in(list(NOT_AVAILABLE)) & text.is_not_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]} {name}",
                         f"not a number: {bad[name][0]!r}")
    return value


def parse_snapshot(data: bytes, *, path: str) -> pl.DataFrame:
    """`amd-smi metric -E --csv` -> (gpu_index, energy_counter_j)."""
    frame = _read(data, path)
    if frame.columns[1:] != ["gpu", _ENERGY]:
        raise ParseError(TOOL, path, "header", "not an `amd-smi metric -E --csv` snapshot")
    return pl.DataFrame({"gpu_index": _number("gpu", frame, path).cast(pl.Int64, strict=False),
                         "energy_counter_j": _number(_ENERGY, frame, path)})


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    if is_snapshot(data):
        raise ParseError(TOOL, path, "header", "an energy snapshot has no time: read the "
                         "start/end pair with power_from_snapshots(start, end, window)")
    frame = _read(data, path)
    power_name = next((c for c in _POWER if c in frame.columns), None)
    if power_name is None or "timestamp" not in frame.columns or "gpu" not in frame.columns:
        raise ParseError(TOOL, path, "header", "need timestamp, gpu and socket_power columns")
    seconds = _number("timestamp", frame, path)
    stamp = seconds.to_frame("t").select(from_epoch_s(pl.col("t")))["t"]
    if stamp.null_count():
        line = frame.filter(stamp.is_null())["line"][0]
        raise ParseError(TOOL, path, f"line {line} timestamp", "missing or implausible epoch "
                         "seconds")
    gpu = _number("gpu", frame, path).cast(pl.Int64, strict=False)
    if gpu.null_count():
        line = frame.filter(gpu.is_null())["line"][0]
        raise ParseError(TOOL, path, f"line {line} gpu", "missing or not an integer")
    power = _number(power_name, frame, path)
    energy = (_number(_ENERGY, frame, path) if _ENERGY in frame.columns
              else pl.Series([None] * frame.height, dtype=pl.Float64))
    out = pl.DataFrame({
        "sample_utc": stamp,
        "gpu_index": gpu,
        "device_id": gpu.cast(pl.String),
        "power_w": power,
        "energy_counter_j": energy,
    }).with_columns(series_id=pl.lit(TOOL), measurement_boundary=pl.lit("gpu_board"),
                    note=pl.when(pl.col("power_w").is_null())
                    .then(pl.lit(f"{power_name} was N/A")))
    return canonical(out)
