"""Which reader reads a power log: detection, a forced format, and the checks every frame gets
(samples in time order per stream, no duplicated samples, the table's schema and bounds).

- `gpu_names`: the GPU names a log records, for the evidence identity check.
- `read_power`: one file's bytes, whole, to the tool that wrote them and their frame.
- `read_power_parts`: the tool and the checked parts of a file read part by part (the formats
  with a part reader: nvidia-smi), each part checked as `read_power` checks a file, and in time
  order after the parts before it; None for the other formats. A failing part makes it read the
  whole file with `read_power`, whose error names the line; so the errors are the same either
  way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from io import BufferedIOBase
from pathlib import Path
from types import ModuleType

import polars as pl

from schemas.power import POWER_SAMPLES, surely_valid
from schemas.table import ValidationFailed
from sources.bench.jsondoc import head
from sources.errors import ParseError, reading
from sources.power import (
    aiperf_telemetry,
    amd_smi,
    codecarbon,
    dcgm,
    nvidia_smi,
    nvidia_smi_dmon,
    prometheus_range,
    ptdaemon,
    zeus,
)

#: Detection order: the most specific first (every detect looks at the first line or the
#: first few kB only, so detection is cheap on a 10-million-row log).
READERS: tuple[ModuleType, ...] = (aiperf_telemetry, prometheus_range, dcgm, nvidia_smi,
                                   nvidia_smi_dmon, zeus, codecarbon, amd_smi, ptdaemon)
FORMATS: dict[str, ModuleType] = {reader.TOOL: reader for reader in READERS}


def gpu_names(tool: str, head: bytes) -> tuple[str, ...]:
    """The GPU names a log of `tool` records in its first 64 kB (nvidia-smi's `name` column,
    DCGM's `modelName` label, AIPerf's `gpu_model_name`), () for a format or a file that
    records none."""
    reader = FORMATS.get(tool)
    names = getattr(reader, "gpu_names", None)
    return tuple(names(head)) if names is not None else ()


def detect_format(data: bytes, path: str) -> str:
    """The TOOL name of the first reader that recognises the bytes' head (the benchmark
    readers' head: the first 64 kB, a byte-order mark dropped)."""
    top = head(data)
    for reader in READERS:
        if reader.detect(top, path):
            return str(reader.TOOL)
    raise ParseError("power", path, "format", "not a power log this project reads (formats: "
                     f"{', '.join(FORMATS)}); force one with format = ... in the "
                     "proposal or --power-format on the command line")


#: Validation without the key's uniqueness check (a 4-column uniqueness test is slow on
#: millions of rows): `_check_order` proves uniqueness instead, since readings strictly
#: increasing in time within each series are unique.
_UNKEYED = replace(POWER_SAMPLES, key=())


#: Rows per slice of the order check: bounds the window expression's buffers (which grow with
#: the rows checked in one go) without costing time.
_SLICE_ROWS = 1 << 21


def _first_disorder(frame: pl.DataFrame, keys: list[str], rows: int = _SLICE_ROWS
                    ) -> int | None:
    """Row of the first reading not strictly after the previous one of its stream, or None.
    Slice by slice, each with every stream's last reading so far put in front of it."""
    columns = [*keys, "sample_utc"]
    carry = frame.clear().select(columns)
    for start in range(0, frame.height, rows):
        part = pl.concat([carry, frame.slice(start, rows).select(columns)])
        found = part.select((pl.col("sample_utc") <= pl.col("sample_utc").shift(1).over(keys))
                            .arg_true().first()).item()
        if found is not None:  # a carried row is the first of its stream: never found
            return int(start + found - carry.height)
        # streams are in order so far: each one's last reading is its latest
        carry = part.group_by(keys).agg(pl.col("sample_utc").last())
    return None


def _in_strict_order(frame: pl.DataFrame, keys: list[str], rows: int = _SLICE_ROWS) -> bool:
    """Whether the rows strictly increase in (time, *keys): then every stream's readings
    strictly increase in time (nvidia-smi writes GPUs 0..N-1 at each instant). A device id
    compares by its length first, then its text, so that "9" comes before "10" (as equal ids
    are equal both ways, the check stays exact). One pass over neighbouring rows, no
    grouping; False proves nothing (the grouped check then decides)."""
    tie = pl.lit(False)
    compared = [e for key in keys for e in (
        (pl.col(key).str.len_bytes(), pl.col(key)) if key == "device_id" else (pl.col(key),))]
    for column in reversed(compared):
        before = column.shift(1)
        tie = (column > before) | ((column == before) & tie)
    time, before = pl.col("sample_utc"), pl.col("sample_utc").shift(1)
    ahead = ((time > before) | ((time == before) & tie)).fill_null(False).slice(1).all()
    # slices overlapping by one row, to keep the shifted copies small
    return all(frame.slice(max(start - 1, 0), rows + 1).select(ahead).item()
               for start in range(0, frame.height, rows))


def _check_order(frame: pl.DataFrame, tool: str, path: str) -> list[str] | None:
    """Each stream's readings strictly increase in time: none out of order, none twice.
    One pass giving the first offending row; the message is built only when there is one.
    Returns the keys when the rows strictly increase in (time, *keys) (`_in_strict_order`),
    else None (the streams are in order, interleaved otherwise)."""
    keys = ["device_id"] + [k for k in ("series_id", "measurement_boundary")
                            if not frame.select(  # cheaper than n_unique on 10M strings
                                (pl.col(k) == pl.col(k).first()).fill_null(False).all()).item()]
    if _in_strict_order(frame, keys):
        return keys
    first_bad = _first_disorder(frame, keys)
    if first_bad is None:
        return None
    row = frame.row(first_bad, named=True)
    previous = frame.head(first_bad).filter(
        pl.all_horizontal(pl.col(k).eq_missing(row[k]) for k in keys))["sample_utc"][-1]
    what = ("duplicated sample" if row["sample_utc"] == previous
            else "timestamps out of order")
    raise ParseError(tool, path, f"sample {first_bad + 1}", f"{what} for device "
                     f"{row['device_id']} at {row['sample_utc']}")


def read_power(data: bytes, *, path: str, tz: str | None = None, format: str | None = None
               ) -> tuple[str, pl.DataFrame]:
    """(tool, validated POWER_SAMPLES frame) for one file. Raises ParseError or
    schemas.table.ValidationFailed; nothing partial is returned."""
    with reading("power", path):
        tool = format or detect_format(data, path)
    if tool not in FORMATS:
        raise ParseError("power", path, "format", f"unknown format {tool!r} "
                         f"(formats: {', '.join(FORMATS)})")
    with reading(tool, path):  # a hostile file's overflow, recursion, ...: a ParseError
        frame = FORMATS[tool].parse(data, path=path, tz=tz)
    if frame.is_empty():
        raise ParseError(tool, path, "file", "no power or energy samples")
    _check_order(frame, tool, path)
    if surely_valid(frame):  # the same bounds in one pass; pandera only to name failures
        return tool, frame.select(POWER_SAMPLES.columns)
    return tool, _UNKEYED.validate(frame, origin=path)


#: Bytes of text per part of `read_power_parts` (~450,000 nvidia-smi rows). `evidence add`
#: parses the next part while DuckDB inserts this one, faster than one part after the other;
#: larger parts raise the peak memory (docs/performance.md).
PART_BYTES = 16 << 20

_STREAM = ["device_id", "series_id", "measurement_boundary"]


def read_power_parts(path: Path, *, tz: str | None = None, format: str | None = None,
                     part_bytes: int = PART_BYTES
                     ) -> tuple[str, Iterator[pl.DataFrame]] | None:
    """(tool, validated POWER_SAMPLES frames in file order) read part by part, or None when
    the file's format has no part reader (read it with `read_power`)."""
    with path.open("rb") as file:
        first = file.read(8192)
    with reading("power", str(path)):
        tool = format or detect_format(first, str(path))
    if tool != nvidia_smi.TOOL:
        return None
    file = path.open("rb")
    found = nvidia_smi.parts(file, path=str(path), tz=tz, part_bytes=part_bytes)
    if found is None:
        file.close()
        return None
    return tool, _checked_parts(path, tool, tz, found, file)


def _checked_parts(path: Path, tool: str, tz: str | None, found: Iterator[pl.DataFrame],
                   file: BufferedIOBase) -> Iterator[pl.DataFrame]:
    """Each part checked as `read_power` checks a file; each stream's first reading of a part
    after its last of the parts before. On any failure, the whole file read by `read_power`
    raises its error (line and sample numbers of the file, not of the part)."""
    last: pl.DataFrame | None = None  # the part before
    last_order: list[str] | None = None
    rows = 0
    try:
        try:
            for frame in found:
                if frame.is_empty():
                    continue
                order = _check_order(frame, tool, str(path))
                # both parts in one strict (time, *keys) order, the first row of this one
                # after the last of that one: then so is every stream's (no grouping)
                if last is not None and not (
                        order is not None and order == last_order
                        and _in_strict_order(pl.concat([
                            last.tail(1).select(*order, "sample_utc"),
                            frame.head(1).select(*order, "sample_utc")]), order)):
                    _check_after(frame, last, tool, str(path))
                checked = (frame.select(POWER_SAMPLES.columns) if surely_valid(frame)
                           else _UNKEYED.validate(frame, origin=str(path)))
                last, last_order = checked, order
                rows += checked.height
                yield checked
            if not rows:
                raise ParseError(tool, str(path), "file", "no power or energy samples")
        except (ParseError, ValidationFailed):
            read_power(path.read_bytes(), path=str(path), tz=tz, format=tool)
            raise  # the whole file read without error: the part's error stands
    finally:
        file.close()


def _check_after(frame: pl.DataFrame, before: pl.DataFrame, tool: str, path: str) -> None:
    """Every stream's first reading in `frame` after its last in `before` (the part before)."""
    first = frame.group_by(_STREAM).agg(first=pl.col("sample_utc").first())
    last = before.group_by(_STREAM).agg(pl.col("sample_utc").last())
    behind = first.join(last, on=_STREAM, nulls_equal=True).filter(
        pl.col("first") <= pl.col("sample_utc"))
    if behind.height:
        row = behind.row(0, named=True)
        raise ParseError(tool, path, "samples", f"timestamps out of order for device "
                         f"{row['device_id']} at {row['first']}")
