"""A canonical table: which declared fields it holds, its key, and the pandera schema built
from the declarations. Validation is always lazy so one run reports every failure at once.

pandera is imported where a frame is validated, not with the module: every command declares
tables (DDL, columns), few validate (`ingest`, `evidence add`, a store's first load), and the
import is a noticeable share of a `scorecard run` (docs/performance.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from schemas.fields import FIELDS, Field

if TYPE_CHECKING:
    import pandera.polars as pa

PROVENANCE = ("load_id", "snapshot_sha256")


class ValidationFailed(Exception):
    """A frame broke its table's schema. `report` is a readable summary, `failure_cases` the
    pandera frame (table, column, check, failing value, row index)."""

    def __init__(self, table: str, origin: str, failure_cases: pl.DataFrame, rows: pl.DataFrame):
        self.table = table
        self.origin = origin
        self.failure_cases = failure_cases
        self.rows = rows
        super().__init__(self.report())

    def report(self, max_cases: int = 10) -> str:
        cases = self.failure_cases
        lines = [f"{self.origin}: {cases.height} failure(s) validating table {self.table}"]
        for case in cases.head(max_cases).iter_rows(named=True):
            index = case.get("index")
            row = ""
            if index is not None and 0 <= index < self.rows.height:
                shown = {k: v for k, v in self.rows.row(index, named=True).items()
                         if k not in PROVENANCE and v is not None}
                row = f"\n      row {index}: {shown}"
            lines.append(f"  - column {case['column']!r}, check {case['check']}: "
                         f"value {case['failure_case']!r}{row}")
        if cases.height > max_cases:
            lines.append(f"  ... and {cases.height - max_cases} more")
        return "\n".join(lines)


def _checks(field: Field) -> list[pa.Check]:
    import pandera.polars as pa

    checks = []
    if field.ge is not None:
        checks.append(pa.Check.ge(field.ge))
    if field.gt is not None:
        checks.append(pa.Check.gt(field.gt))
    if field.le is not None:
        checks.append(pa.Check.le(field.le))
    if field.isin is not None:
        checks.append(pa.Check.isin(list(field.isin)))
    if field.pattern is not None:
        checks.append(pa.Check.str_matches(field.pattern))
    return checks


_DUCKDB_TYPES = {
    pl.String: "VARCHAR",
    pl.Float64: "DOUBLE",
    pl.Int64: "BIGINT",
    pl.Boolean: "BOOLEAN",
    pl.Date: "DATE",
    pl.Datetime: "TIMESTAMPTZ",
}


@dataclass(frozen=True)
class Table:
    """`columns` are field names; `required` may not be null; `key` is unique per vintage."""

    name: str
    description: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    required: tuple[str, ...] = ()
    provenance: bool = True

    @property
    def all_columns(self) -> tuple[str, ...]:
        return self.columns + (PROVENANCE if self.provenance else ())

    @cached_property
    def schema(self) -> pa.DataFrameSchema:
        import pandera.polars as pa

        not_null = set(self.required) | set(self.key)
        columns = {
            name: pa.Column(
                FIELDS[name].dtype,
                checks=_checks(FIELDS[name]),
                nullable=name not in not_null,
                description=FIELDS[name].description,
                metadata={"unit": FIELDS[name].unit},
            )
            for name in self.columns
        }
        return pa.DataFrameSchema(columns, strict=True, unique=list(self.key) or None,
                                  name=self.name, ordered=False)

    def validate(self, frame: pl.DataFrame, origin: str) -> pl.DataFrame:
        """Return the frame in declared column order, or raise ValidationFailed naming `origin`
        (the file or URL it came from)."""
        missing = [c for c in self.columns if c not in frame.columns]
        if missing:
            cases = pl.DataFrame({
                "failure_case": missing, "column": missing,
                "check": ["column_in_dataframe"] * len(missing),
                "index": pl.Series([None] * len(missing), dtype=pl.Int32),
            })
            raise ValidationFailed(self.name, origin, cases, frame)
        import pandera.errors

        try:
            self.schema.validate(frame, lazy=True)
        except pandera.errors.SchemaErrors as err:
            raise ValidationFailed(self.name, origin, err.failure_cases, frame) from None
        return frame.select(self.columns)

    def ddl(self) -> str:
        cols = [f"{name} {duckdb_type(name)}" for name in self.all_columns]
        return f"CREATE TABLE IF NOT EXISTS {self.name} ({', '.join(cols)})"


def duckdb_type(name: str) -> str:
    """The DuckDB column type of field `name` (VARCHAR, DOUBLE, TIMESTAMPTZ, ...)."""
    return _DUCKDB_TYPES[FIELDS[name].dtype.base_type()]
