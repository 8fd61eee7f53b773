"""The fleet energy query, defined once (DuckDB SQL) and rendered for DuckDB, Spark SQL and Trino
(`scorecard evidence sql`), so a fleet team runs it where its power samples lie and feeds its
one-row result back (`scorecard evidence add --fleet-result`).

- `fleet_query`: the query over the samples of the fleet layout (schemas/fleet.py) for a window:
  the per-GPU rows of `pipeline.evidence.power.fleet.energy_ctes` (the same text
  `fleet_energy` runs on one machine), their edge correction (`fleet._edges`), each GPU's idle
  power (its mean power outside the window, over the whole table), and one row for the fleet
  (`RESULT_COLUMNS`): the window, the boundary, the GPUs and those whose log does not cover the
  window, the energy, the idle power, gaps, resets and samples. It reads the samples within
  `margin_s` of the window (pruned by the `day` partition) and the whole table for the idle
  power.
- `render`: that text in another dialect, transpiled by sqlglot (its DuckDB reader and Spark or
  Trino writer), with what sqlglot does not translate given here: the epoch in microseconds
  (`unix_micros` in Spark, `to_unixtime(...) * 1e6` in Trino) and Trino's median
  (`approx_percentile`, Trino has no exact one; used only to fill a counter reset without power).
- `fleet_result`: the `PowerEvidence` of the query's result (a CSV with a header, or a JSON
  object or one-row list, as the engine wrote it), checked against the query's text: its window
  and method, with the text's sha256 as its source.

Errors: `FleetSqlError` (a ValueError naming the file and key).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from datetime import UTC, datetime
from pathlib import Path

import sqlglot
from sqlglot import exp

from pipeline.evidence.power.energy import (
    EnergyParams,
    EnergyResult,
    Window,
    stability_reasons,
)
from pipeline.evidence.power.fleet import TIMESTAMP, _edges, _iso, _num, energy_ctes
from pipeline.evidence.power.measured import EvidenceFile, PowerEvidence
from schemas.fleet import FLEET_SAMPLES

DIALECTS = ("duckdb", "spark", "trino")
#: the table name in the one definition, replaced by each engine's source (`source`)
TABLE = FLEET_SAMPLES.name
#: the samples read on either side of the window (the query says when a GPU's log does not
#: reach as far: `gpus_not_covered`)
MARGIN_S = 3600.0
#: the columns of the query's one row, in order
RESULT_COLUMNS = (
    "window_start_utc", "window_end_utc", "window_s", "boundary", "method", "gpus",
    "gpus_not_covered", "duplicated_samples", "unknown_intervals", "energy_j",
    "average_power_w", "idle_power_w", "gaps", "gap_s", "edge_s", "resets",
    "samples_in_window", "fewest_samples_in_window", "prorated_intervals")
HEADER = "-- scorecard fleet energy query:"


def _stamp(seconds: float) -> str:
    """An instant as the query's result and header give it: ISO 8601, UTC, in microseconds."""
    return _iso(seconds).replace(" ", "T") + "Z"


class FleetSqlError(ValueError):
    """A fleet query's result that cannot be taken (named: file, key)."""


def source(dialect: str, path: str) -> str:
    """The fleet's samples as each engine reads them: DuckDB and Spark the Hive-partitioned
    Parquet folder `path`; Trino a table (`path` is its name, e.g. hive.telemetry.fleet_power,
    declared over the folder as docs/energy.md shows)."""
    if dialect == "duckdb":
        glob = (path.rstrip("/") + "/**/*.parquet").replace("'", "''")
        return f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
    if dialect == "spark":
        return "parquet.`" + path.replace("`", "``") + "`"
    if dialect == "trino":
        if not all(part.replace("_", "").isalnum() for part in path.split(".")):
            raise ValueError(f"a Trino table name (catalog.schema.table), got {path!r}")
        return path
    raise ValueError(f"dialect {dialect!r}: one of {', '.join(DIALECTS)}")


def fleet_query(a: float, b: float, method: str, *, margin_s: float = MARGIN_S,
                gap_factor: float = 3.0, has_counter: bool | None = None) -> str:
    """The fleet query in DuckDB SQL over the table `TABLE`, for the window [a, b] (s since the
    epoch) by `method` (`trapezoid` or `counter`; the counter needs `energy_j`, which the
    trapezoid reads only when `has_counter`)."""
    if method not in ("trapezoid", "counter"):
        raise ValueError(f"method {method!r}: trapezoid or counter")
    if not (math.isfinite(a) and math.isfinite(b) and b > a):
        raise ValueError("the window's end must be after its start")
    counter = method == "counter" if has_counter is None else has_counter
    G = _num(gap_factor)
    ctes = energy_ctes(TABLE, a, b, a - margin_s, b + margin_s, method, gap_factor=gap_factor,
                       has_counter=counter, day_column="day")
    start, end = TIMESTAMP.format(_iso(a)), TIMESTAMP.format(_iso(b))
    return f"""{ctes},
edged AS (
  SELECT *, {_edges(a, b)}
  FROM per_gpu
),
flags AS (
  SELECT device_id, count(CASE WHEN gap THEN 1 END) AS n_gaps,
         coalesce(sum(CASE WHEN gap THEN dt END), 0.0) AS gap_s,
         count(CASE WHEN r > l AND reset THEN 1 END) AS n_resets
  FROM clipped GROUP BY device_id
),
idle AS (
  SELECT gpu_uuid AS device_id, avg(power_w) AS idle_w
  FROM {TABLE}
  WHERE timestamp_utc < {start} OR timestamp_utc > {end}
  GROUP BY gpu_uuid
)
SELECT '{_stamp(a)}' AS window_start_utc, '{_stamp(b)}' AS window_end_utc,
       {_num(b - a)} AS window_s, 'gpu_board' AS boundary, '{method}' AS method,
       count(*) AS gpus,
       count(CASE WHEN g.device_id IS NULL OR g.lead_s > {G} * g.period
                       OR g.trail_s > {G} * g.period THEN 1 END) AS gpus_not_covered,
       coalesce(sum(g.duplicates), 0) AS duplicated_samples,
       coalesce(sum(g.unknown), 0) AS unknown_intervals,
       sum(g.energy_j) AS energy_j, sum(g.energy_j) / {_num(b - a)} AS average_power_w,
       CASE WHEN count(i.idle_w) = count(*) THEN sum(i.idle_w) END AS idle_power_w,
       coalesce(sum(f.n_gaps), 0) AS gaps, coalesce(sum(f.gap_s), 0.0) AS gap_s,
       coalesce(sum(g.lead_s + g.trail_s), 0.0) AS edge_s,
       coalesce(sum(f.n_resets), 0) AS resets,
       sum(c.in_window) AS samples_in_window, min(c.in_window) AS fewest_samples_in_window,
       coalesce(sum(g.prorated), 0) AS prorated_intervals
FROM counted c LEFT JOIN edged g ON c.device_id = g.device_id
LEFT JOIN flags f ON c.device_id = f.device_id
LEFT JOIN idle i ON c.device_id = i.device_id"""


def _dialect_fixes(node: exp.Expression, dialect: str) -> exp.Expression:
    """What sqlglot does not translate from DuckDB: epoch_us, and Trino's median."""
    if isinstance(node, exp.Anonymous) and str(node.this).lower() == "epoch_us":
        (arg,) = node.expressions
        if dialect == "spark":
            return exp.Anonymous(this="unix_micros", expressions=[arg])
        return exp.Mul(this=exp.Anonymous(this="to_unixtime", expressions=[arg]),
                       expression=exp.Literal.number("1e6"))
    if dialect == "trino" and isinstance(node, exp.Median):
        return exp.Anonymous(this="approx_percentile",
                             expressions=[node.this, exp.Literal.number("0.5")])
    return node


def render(sql: str, dialect: str, path: str) -> str:
    """`sql` (the one definition, DuckDB, over `TABLE`) for `dialect`, reading `path`."""
    relation = source(dialect, path)
    if dialect == "duckdb":
        text = sql
    else:
        tree = sqlglot.parse_one(sql, read="duckdb")
        tree = tree.transform(_dialect_fixes, dialect)
        text = tree.sql(dialect=dialect, pretty=True)
    return text.replace(TABLE, relation)


def query_text(dialect: str, path: str, a: float, b: float, method: str, *,
               margin_s: float = MARGIN_S, has_counter: bool | None = None) -> str:
    """What `scorecard evidence sql` prints: a header naming the window, method and dialect
    (read back by `fleet_result`), then the query."""
    body = render(fleet_query(a, b, method, margin_s=margin_s, has_counter=has_counter),
                  dialect, path)
    return (f"{HEADER} window {_stamp(a)} .. {_stamp(b)}, method {method}, "
            f"dialect {dialect}, margin {margin_s:g} s\n{body}\n")


def _header(text: str, origin: str) -> tuple[str, str, str]:
    first = text.split("\n", 1)[0]
    if not first.startswith(HEADER):
        raise FleetSqlError(f"{origin}: line 1: not a query printed by `scorecard evidence "
                            f"sql` (expected {HEADER!r})")
    try:
        rest = first[len(HEADER):]
        window = rest.split("window ", 1)[1].split(",", 1)[0]
        start, end = window.split(" .. ")
        method = rest.split("method ", 1)[1].split(",", 1)[0]
    except (IndexError, ValueError):
        raise FleetSqlError(f"{origin}: line 1: no window and method in its header") from None
    return start.strip(), end.strip(), method.strip()


def _rows(data: bytes, origin: str) -> dict[str, str]:
    """The one row of the result file: a JSON object (or a list of one), or a CSV with a
    header line."""
    text = data.decode("utf-8-sig")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        def refuse(constant: str) -> None:
            raise FleetSqlError(f"{origin}: {constant} is not a number (strict JSON)")

        try:
            value = json.loads(stripped, parse_constant=refuse)
        except json.JSONDecodeError as err:
            raise FleetSqlError(f"{origin}: line {err.lineno}: not JSON ({err.msg})") from None
        rows = value if isinstance(value, list) else [value]
        if len(rows) != 1 or not isinstance(rows[0], dict):
            raise FleetSqlError(f"{origin}: expected the query's one row (a JSON object)")
        return {str(k): "" if v is None else str(v) for k, v in rows[0].items()}
    found = list(csv.DictReader(io.StringIO(text)))
    if len(found) != 1:
        raise FleetSqlError(f"{origin}: expected the query's one row under a header line, "
                            f"got {len(found)} rows")
    return {k: v for k, v in found[0].items() if k is not None}


def _read(path: Path) -> bytes:
    """The file's bytes; a missing one named as the other commands name it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FleetSqlError(f"{path}: no such file") from None


def fleet_result(result: Path, query: Path, params: EnergyParams | None = None
                 ) -> PowerEvidence:
    """The `PowerEvidence` of a fleet query's result (`result`, as the engine wrote it) and of
    the query's text (`query`, as `scorecard evidence sql` printed it): the window and method
    must be the text's; a GPU whose log does not cover the window, a duplicated sample or an
    unknown interval is an error, as on one machine. Stability from `stability_reasons`."""
    params = params or EnergyParams()
    text_bytes = _read(query)
    start, end, method = _header(text_bytes.decode("utf-8", "replace"), str(query))
    data = _read(result)
    row = _rows(data, str(result))
    missing = [c for c in RESULT_COLUMNS if c not in row]
    if missing:
        raise FleetSqlError(f"{result}: no column {missing[0]!r} (the query's columns: "
                            f"{', '.join(RESULT_COLUMNS)})")
    for key, want in (("window_start_utc", start), ("window_end_utc", end), ("method", method)):
        if row[key].replace(" ", "T") != want.replace(" ", "T"):
            raise FleetSqlError(f"{result}: {key} is {row[key]!r}, the query's {want!r} "
                                f"({query}): a result of another query")

    def number(key: str) -> float | None:
        if row[key] in ("", "NULL", "null"):
            return None
        try:
            value = float(row[key])
        except ValueError:
            raise FleetSqlError(f"{result}: {key}: not a number: {row[key][:40]!r}") from None
        if not math.isfinite(value):
            raise FleetSqlError(f"{result}: {key}: not a finite number")
        return value

    figures = {c: number(c) for c in RESULT_COLUMNS[5:] if c not in ("method", "boundary")}
    if figures["duplicated_samples"]:
        raise FleetSqlError(f"{result}: duplicated_samples: {figures['duplicated_samples']:g} "
                            "(two readings of a GPU at one instant)")
    if figures["unknown_intervals"]:
        raise FleetSqlError(f"{result}: unknown_intervals: an energy counter dropped between "
                            "a GPU's only readings: energy unknown")
    if figures["gpus_not_covered"]:
        raise FleetSqlError(f"{result}: gpus_not_covered: {figures['gpus_not_covered']:g} "
                            "GPU(s) whose log does not cover the window (or has no two "
                            "readings around it)")
    energy = figures["energy_j"]
    if energy is None or not figures["gpus"]:
        raise FleetSqlError(f"{result}: energy_j: no energy (no GPU's samples in the window)")
    a = datetime.fromisoformat(start.replace("Z", "+00:00"))
    b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    duration = (b - a).total_seconds()
    gaps = (figures["gap_s"] or 0.0) + (figures["edge_s"] or 0.0)
    reasons = stability_reasons(int(figures["fewest_samples_in_window"] or 0), duration, gaps,
                                int(figures["gpus"] or 0), 0.0, int(figures["resets"] or 0),
                                params)
    digest = hashlib.sha256(text_bytes).hexdigest()
    notes = [f"from a fleet query's result: query {query} sha256:{digest}, "
             f"{int(figures['gaps'] or 0)} gap(s) over {gaps:g} s (edges included)"]
    if reasons:
        notes.append("unstable: " + ", ".join(reasons))
    window = Window(a.astimezone(UTC), b.astimezone(UTC))
    energy_result = EnergyResult(
        energy_j=energy, average_power_w=energy / duration, boundary="gpu_board", method=method,
        gpus=(), window=window, gaps=(), resets=(),
        samples_in_window=int(figures["samples_in_window"] or 0), samples_outside_window=0,
        idle_power_w=figures["idle_power_w"], energy_range_j=None, stable=not reasons,
        stability_reasons=tuple(reasons), notes=())
    files = (EvidenceFile(str(query), digest, "fleet-sql", 0),
             EvidenceFile(str(result), hashlib.sha256(data).hexdigest(), "fleet-result", 0))
    return PowerEvidence(
        average_power_w=energy / duration, energy_j=energy, boundary="gpu_board",
        method=method, grade="production", notes=tuple(notes), files=files,
        energy=energy_result)


def power_line(evidence: PowerEvidence, query: Path) -> str:
    """A candidate's declared power from the result, cited by the query's text and hash (for
    the proposal's `[candidates.measured]`)."""
    digest = next(f.sha256 for f in evidence.files if f.tool == "fleet-sql")
    idle = evidence.energy.idle_power_w if evidence.energy is not None else None
    idle_part = f", idle_watts = {idle!r}" if idle is not None else ""
    cite = json.dumps(f"fleet energy query {query.name} sha256:{digest}")
    return (f"power = {{ watts = {evidence.average_power_w!r}{idle_part}, "
            f"boundary = \"gpu_board\", source = {cite} }}")

