"""The bundled rule tables of the regulatory gates and the sovereignty rubric
(sources/reference/regulatory_rules.csv, sovereignty_objectives.csv): parsed from their bytes
into typed frames and checked row by row, a bad value a ParseError naming the file, line and
column (sources/reference/README.md describes both tables and their sources). The store keeps
them as `core__regulatory_rules` and `core__sovereignty_objectives` (schemas/market.py), a few
columns renamed (`STORED_RULE_NAMES`, `STORED_OBJECTIVE_NAMES`): a run reads them from there,
so its gates cite the stored rows."""

from __future__ import annotations

import polars as pl

from schemas.fields import FIELDS, choices
from schemas.market import REGULATORY_RULES, SOVEREIGNTY_OBJECTIVES
from schemas.table import Table
from sources.errors import ParseError
from sources.reference_csv import SOURCE, RawFile, read_typed_csv

#: the file's column -> the stored table's (a name that says what it is beside the others)
STORED_RULE_NAMES = {"metric": "gate_metric", "direction": "gate_direction",
                     "limit": "gate_limit", "scope": "gate_scope"}
STORED_OBJECTIVE_NAMES = {"title": "objective_title", "assesses": "objective_assesses"}


def _file_columns(table: Table, stored_names: dict[str, str]) -> dict[str, pl.DataType]:
    """The file's columns, each of the dtype its stored field declares (schemas/fields.toml)."""
    file_name = {stored: own for own, stored in stored_names.items()}
    return {file_name.get(c, c): FIELDS[c].dtype for c in table.columns}


RULE_COLUMNS = _file_columns(REGULATORY_RULES, STORED_RULE_NAMES)
#: the site facts a rule may compare, and those that set its scope
METRICS = choices("gate_metric")
SCOPES = choices("gate_scope")
OBJECTIVE_COLUMNS = _file_columns(SOVEREIGNTY_OBJECTIVES, STORED_OBJECTIVE_NAMES)
OBJECTIVES = tuple(f"SOV-{n}" for n in range(1, 9))


def _check(frame: pl.DataFrame, path: str, column: str, ok: pl.Expr, expected: str) -> None:
    bad = frame.with_row_index("line", offset=2).filter(~ok.fill_null(False))
    if bad.height:
        row = bad.row(0, named=True)
        raise ParseError(SOURCE, path, f"line {row['line']}, column {column!r}",
                         f"{row[column]!r}: expected {expected}")


def _required(frame: pl.DataFrame, path: str, columns: tuple[str, ...]) -> None:
    for column in columns:
        _check(frame, path, column, pl.col(column).is_not_null(), "a value (required)")


def parse_rules(raw: RawFile) -> pl.DataFrame:
    frame = read_typed_csv(raw.content, raw.name, RULE_COLUMNS)
    _required(frame, raw.name, ("rule_id", "instrument", "country", "legal_basis",
                                "requirement", "metric", "direction", "limit", "scope",
                                "scope_min_kw", "source_url", "source_date", "licence"))
    _check(frame, raw.name, "rule_id", pl.col("rule_id").is_unique(), "a unique rule id")
    _check(frame, raw.name, "country", pl.col("country").str.contains(r"^(EU|[A-Z]{2})$"),
           "EU or an ISO country code")
    _check(frame, raw.name, "metric", pl.col("metric").is_in(METRICS), f"one of {METRICS}")
    _check(frame, raw.name, "direction", pl.col("direction").is_in(("max", "min")),
           "max or min")
    _check(frame, raw.name, "scope", pl.col("scope").is_in(SCOPES), f"one of {SCOPES}")
    _check(frame, raw.name, "limit", pl.col("limit").ge(0), "a limit >= 0")
    _check(frame, raw.name, "scope_min_kw", pl.col("scope_min_kw").ge(0), "kW >= 0")
    _check(frame, raw.name, "commissioned_before",
           pl.col("commissioned_from").is_null() | pl.col("commissioned_before").is_null()
           | (pl.col("commissioned_from") < pl.col("commissioned_before")),
           "a day after commissioned_from")
    # one scope per instrument: the gates read it once per instrument
    _check(frame, raw.name, "scope",
           pl.col("scope").n_unique().over("instrument").eq(1)
           & pl.col("scope_min_kw").n_unique().over("instrument").eq(1),
           "the same scope and threshold as the instrument's other rules")
    return frame


def parse_objectives(raw: RawFile) -> pl.DataFrame:
    frame = read_typed_csv(raw.content, raw.name, OBJECTIVE_COLUMNS)
    _required(frame, raw.name, tuple(OBJECTIVE_COLUMNS))
    if frame["objective"].to_list() != list(OBJECTIVES):
        raise ParseError(SOURCE, raw.name, "column 'objective'",
                         f"expected the rows {', '.join(OBJECTIVES)} in order, got "
                         f"{frame['objective'].to_list()}")
    _check(frame, raw.name, "weight_pct", pl.col("weight_pct").is_between(0, 100),
           "a weight in percent")
    total = float(frame["weight_pct"].sum())
    if abs(total - 100) > 1e-9:
        raise ParseError(SOURCE, raw.name, "column 'weight_pct'",
                         f"the weights add up to {total:g}, not 100")
    return frame


def stored_rules(raw: RawFile) -> pl.DataFrame:
    """The rules checked row by row, in the stored table's columns."""
    return parse_rules(raw).rename(STORED_RULE_NAMES)


def stored_objectives(raw: RawFile) -> pl.DataFrame:
    """The objectives checked, in the stored table's columns."""
    return parse_objectives(raw).rename(STORED_OBJECTIVE_NAMES)
