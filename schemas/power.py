"""Power and energy samples from GPU and node power loggers, in one canonical shape.

Every power-log reader (sources/power/*) returns rows of `POWER_SAMPLES`: one reading of one
device at one UTC instant, with a power in W and/or a cumulative energy counter in J. A
reader that only reports energy over an interval (Zeus, CodeCarbon) writes two counter
readings, 0 J at the interval's start and the interval's energy at its end.
"""

from __future__ import annotations

import polars as pl

from schemas.fields import FIELDS, UTC_TIME, declare
from schemas.table import Table

BOUNDARIES = ("gpu_board", "node", "wall", "facility")

declare("sample_utc", UTC_TIME, "Instant of a power or energy reading (UTC).")
declare("device_id", pl.String(), "Stable id of the measured device: the GPU UUID when the "
        "tool gives one, else host/index or the meter's name. Readings of one device are "
        "never summed twice.")
declare("gpu_index", pl.Int64(), "GPU index as the tool numbers it (null for node or wall "
        "meters and for tools that report all GPUs together).", ge=0, le=1023)
declare("series_id", pl.String(), "Which stream of readings a row belongs to (exporter URL, "
        "host, measurement window or run id): one device may be read by several streams.")
declare("measurement_boundary", pl.String(), "What the reading covers: the GPU board, the "
        "whole node (as the tool estimates it), the wall socket, or the facility (x PUE). "
        "Figures of different boundaries are never summed.", isin=BOUNDARIES)
declare("power_w", pl.Float64(), "Power drawn at the sample instant (or averaged by the tool "
        "over its own short window). Bounded at 50 kW to catch mW/kW mistakes.", unit="W",
        ge=0, le=50_000)
declare("energy_counter_j", pl.Float64(), "Reading of a cumulative energy counter (since "
        "boot, driver load or the start of the tool's window); only differences within one "
        "series mean anything, and a drop is a reset.", unit="J", ge=0)

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
