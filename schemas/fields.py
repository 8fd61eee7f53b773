"""Every column the project stores, declared once: name (with its unit), dtype, bounds, meaning.

The declarations are data, in schemas/fields.toml (one table per column; TOML refuses a name
declared twice), as the scorecard's figures are in schemas/outputs.toml. Tables
(schemas/market.py, schemas/power.py, ...) list field names; their pandera schemas and DuckDB
DDL are generated from these declarations, so a unit or a bound lives in exactly one place.
Bounds are there to catch unit mistakes (a 700 kW GPU board, 58,000 EUR/MWh), not to judge
plausible values.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

DECLARATIONS = Path(__file__).with_name("fields.toml")
UTC_TIME = pl.Datetime("us", "UTC")
#: The `dtype` names the declarations use.
DTYPES: dict[str, pl.DataType] = {
    "String": pl.String(), "Int64": pl.Int64(), "Float64": pl.Float64(),
    "Boolean": pl.Boolean(), "Date": pl.Date(), "Datetime(us, UTC)": UTC_TIME,
}
_KEYS = {"dtype", "description", "unit", "ge", "le", "gt", "isin", "pattern"}


@dataclass(frozen=True)
class Field:
    name: str
    dtype: pl.DataType
    description: str
    unit: str | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    isin: tuple[str, ...] | None = None
    pattern: str | None = None


def parse(declarations: dict[str, Any]) -> dict[str, Field]:
    """column -> its declaration, in the file's order; a missing, unknown or mistyped key or an
    unknown dtype is a ValueError naming the column."""
    fields = {}
    for name, entry in declarations.items():
        keys = set(entry) if isinstance(entry, dict) else set()
        if not {"dtype", "description"} <= keys <= _KEYS:
            raise ValueError(f"{name}: a field declares dtype, description and optionally "
                             f"{sorted(_KEYS - {'dtype', 'description'})}; got {sorted(keys)}")
        if entry["dtype"] not in DTYPES:
            raise ValueError(f"{name}: dtype is one of {list(DTYPES)}, not {entry['dtype']!r}")
        bad = [k for k in ("description", "unit", "pattern")
               if k in entry and not isinstance(entry[k], str)]
        bad += [k for k in ("ge", "le", "gt") if k in entry
                and (isinstance(entry[k], bool) or not isinstance(entry[k], int | float))]
        if "isin" in entry and not (isinstance(entry["isin"], list)
                                    and all(isinstance(v, str) for v in entry["isin"])):
            bad.append("isin")
        if bad:
            raise ValueError(f"{name}: {', '.join(bad)} mistyped (a text is a string, a bound a "
                             "number, isin a list of strings)")
        fields[name] = Field(
            name, DTYPES[entry["dtype"]], entry["description"], unit=entry.get("unit"),
            ge=entry.get("ge"), le=entry.get("le"), gt=entry.get("gt"),
            isin=tuple(entry["isin"]) if "isin" in entry else None,
            pattern=entry.get("pattern"))
    return fields


#: column -> its declaration
FIELDS: dict[str, Field] = parse(tomllib.loads(DECLARATIONS.read_text(encoding="utf-8")))


def choices(name: str) -> tuple[str, ...]:
    """The values field `name` allows (its `isin`)."""
    isin = FIELDS[name].isin
    if isin is None:
        raise ValueError(f"field {name!r} declares no isin")
    return isin


def pattern(name: str) -> str:
    """The regular expression field `name` must match."""
    declared = FIELDS[name].pattern
    if declared is None:
        raise ValueError(f"field {name!r} declares no pattern")
    return declared


VINTAGE_PATTERN = pattern("vintage")


def is_vintage(text: str) -> bool:
    """Whether `text` is a month YYYY-MM in ASCII digits, nothing before or after (a trailing
    newline included, which `re.match` with `$` would let through)."""
    return re.fullmatch(VINTAGE_PATTERN, text) is not None


def vintage_refused(vintage: str, this_month: str) -> str | None:
    """Why a vintage asked for cannot be read, None when it can: not a month YYYY-MM, or a
    month after `this_month` (a vintage is the market data as seen in its month: a month to
    come holds none). The one check `run`, `diff` and `ingest` make, each naming the value."""
    if not is_vintage(vintage):
        return "is not a month YYYY-MM"
    if vintage > this_month:
        return (f"is after this month ({this_month}): no market data is seen in a month to "
                "come; give this month or an earlier one")
    return None
