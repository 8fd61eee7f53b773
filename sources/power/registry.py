"""Which reader reads a power log: detection, a forced format, and the checks every frame gets
(samples in time order per stream, no duplicated samples, the table's schema and bounds)."""

from __future__ import annotations

from types import ModuleType

import polars as pl

from schemas.power import POWER_SAMPLES
from sources.errors import ParseError
from sources.power import (
    aiperf_telemetry,
    amd_smi,
    codecarbon,
    dcgm,
    nvidia_smi,
    nvidia_smi_dmon,
    ptdaemon,
    zeus,
)

#: Detection order: the most specific first (every detect looks at the first line or the
#: first few kB only, so detection is cheap on a 10-million-row log).
READERS: tuple[ModuleType, ...] = (aiperf_telemetry, dcgm, nvidia_smi, nvidia_smi_dmon, zeus,
                                   codecarbon, amd_smi, ptdaemon)
FORMATS: dict[str, ModuleType] = {reader.TOOL: reader for reader in READERS}


def detect_format(data: bytes, path: str) -> str:
    """The TOOL name of the first reader that recognises the bytes."""
    for reader in READERS:
        if reader.detect(data, path):
            return str(reader.TOOL)
    raise ParseError("power", path, "format", "not a power log this project reads (formats: "
                     f"{', '.join(FORMATS)}); force one with format=... / --format")


def _check_order(frame: pl.DataFrame, tool: str, path: str) -> None:
    keys = ["device_id", "series_id", "measurement_boundary"]
    indexed = frame.with_row_index("row", offset=1)
    back = indexed.filter(pl.col("sample_utc") < pl.col("sample_utc").shift(1).over(keys))
    if back.height:
        row = back.row(0, named=True)
        raise ParseError(tool, path, f"sample {row['row']}", f"timestamps out of order for "
                         f"device {row['device_id']} at {row['sample_utc']}")
    dup = indexed.filter(pl.struct([*keys, "sample_utc"]).is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise ParseError(tool, path, f"sample {row['row']}", f"duplicated sample for device "
                         f"{row['device_id']} at {row['sample_utc']}")


def read_power(data: bytes, *, path: str, tz: str | None = None, format: str | None = None
               ) -> tuple[str, pl.DataFrame]:
    """(tool, validated POWER_SAMPLES frame) for one file. Raises ParseError or
    schemas.table.ValidationFailed; nothing partial is returned."""
    tool = format or detect_format(data, path)
    if tool not in FORMATS:
        raise ParseError("power", path, "format", f"unknown format {tool!r} "
                         f"(formats: {', '.join(FORMATS)})")
    frame = FORMATS[tool].parse(data, path=path, tz=tz)
    if frame.is_empty():
        raise ParseError(tool, path, "file", "no power or energy samples")
    _check_order(frame, tool, path)
    return tool, POWER_SAMPLES.validate(frame, origin=path)
