"""Power and energy samples from GPU and node power loggers, in one canonical shape.

Every power-log reader (sources/power/*) returns rows of `POWER_SAMPLES`: one reading of one
device at one UTC instant, with a power in W and/or a cumulative energy counter in J. A
reader that only reports energy over an interval (Zeus, CodeCarbon) writes two counter
readings, 0 J at the interval's start and the interval's energy at its end.
"""

from __future__ import annotations

import polars as pl

from schemas.fields import FIELDS, choices
from schemas.table import Table

#: What a reading may cover, narrowest first (declared with measurement_boundary).
BOUNDARIES = choices("measurement_boundary")

POWER_SAMPLES = Table(
    "core__power_samples",
    "Power and energy-counter readings of GPUs, nodes and wall meters.",
    ("sample_utc", "device_id", "gpu_index", "series_id", "measurement_boundary", "power_w",
     "energy_counter_j", "note"),
    key=("device_id", "series_id", "measurement_boundary", "sample_utc"),
    required=("sample_utc", "device_id", "series_id", "measurement_boundary"),
)

#: Column dtypes of a parsed frame, in table order (parsers build frames with exactly these).
POWER_COLUMNS: dict[str, pl.DataType] = {c: FIELDS[c].dtype for c in POWER_SAMPLES.columns}


def _violations(name: str) -> list[pl.Expr]:
    """One boolean per check of the field's declared bounds: True when some value breaks it
    (nulls break none, as in the pandera checks the table builds from the same fields)."""
    field, column = FIELDS[name], pl.col(name)
    broken = []
    if field.ge is not None:
        broken.append(~(column >= field.ge))
    if field.gt is not None:
        broken.append(~(column > field.gt))
    if field.le is not None:
        broken.append(~(column <= field.le))
    if field.isin is not None:
        broken.append(~column.is_in(list(field.isin)))
    if field.pattern is not None:
        broken.append(~column.str.contains(f"^(?:{field.pattern})"))
    if name in POWER_SAMPLES.required:
        broken.append(column.is_null())
    return [check.any().alias(f"{name}#{i}") for i, check in enumerate(broken)]


def surely_valid(frame: pl.DataFrame) -> bool:
    """Whether `frame` passes POWER_SAMPLES (columns, dtypes, not-null, every declared bound;
    not the key's uniqueness) — all checks in one parallel select, a few passes over a
    10-million-row log where pandera makes one per check. False means "let pandera look": it
    then names the failing rows."""
    if set(frame.columns) != set(POWER_SAMPLES.columns) or any(
            frame.schema[name] != dtype for name, dtype in POWER_COLUMNS.items()):
        return False
    checks = [check for name in POWER_SAMPLES.columns for check in _violations(name)]
    return not any(frame.select(checks).row(0))
