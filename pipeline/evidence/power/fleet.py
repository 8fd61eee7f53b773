"""Energy over a window from a fleet's power samples in Parquet, computed by DuckDB over the
files without loading them into memory (`evidence add --parquet DIR`, `power = { parquet =
"DIR" }`).

Layout (schemas/fleet.py, `FLEET_SAMPLES`): `DIR/**/*.parquet`, Hive partitions (e.g.
`day=2026-11-08/`), columns `gpu_uuid` (text), `timestamp_utc` (timestamp with time zone),
`power_w` (W) and, optionally, `energy_j` (a cumulative energy counter, J). Every GPU is one
stream at the `gpu_board` boundary.

The rules are those of `pipeline.evidence.power.energy` (DESIGN section 7): counter when every GPU
has two counter readings, else trapezoid; a reading interval longer than `gap_factor` x the
GPU's median period is a gap (integrated, reported); a log that starts or ends inside the
window by at most one gap threshold is extended at its edge power; a counter drop is a reset,
integrated from power or filled at the GPU's median counter power; idle power is the mean
power outside the window. The SQL below restates energy.py's formulas (trapezoid over the
clipped interval, counter pro-rated, reset fill, edge power); `stability_reasons` is shared;
tests/pipeline/test_fleet_energy.py checks both paths equal on the same samples.

- `energy_sql`: the text of the energy query over the samples within [lo, hi] (s since the
  epoch) for the window [a, b], in DuckDB SQL: one row per GPU, its edges applied (`_edges`);
  pipeline.evidence.power.fleet_sql builds the fleet query on its CTEs (`energy_ctes`) and
  renders it for Spark SQL and Trino.
- `power_from_parquet`: a fleet folder's `PowerEvidence` (`pipeline.evidence.power.measured`)
  over a window, what `evidence add --parquet` and `power = { parquet = "DIR" }` take, from
  `fleet_energy`.
- `fleet_energy`: the `EnergyResult` of the fleet over a window (None: the span every GPU
  covers), and the Parquet files read; with the window's uncertainty u, the energy over it
  shifted by -u and +u gives `energy_range_j`, as in energy.py. On
  one machine DuckDB gives energy_sql's rows a UTC day at a time (`_chunk_sql`: one window
  sorting that day's readings, where one over the whole folder spills), combined across the
  days' edges (`_combine_sql`); the one query runs only where the chunks cannot give the
  rows exactly (a counter reset to fill at the median counter power, a day whose shortest
  interval exceeds the period). `_formulas` is the one statement of an interval's energy.

Errors: `FleetError` (an EnergyError: a bad folder or file, named), `EnergyError` (the samples
do not cover the window).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from pipeline.evidence.power.energy import (
    EnergyError,
    EnergyParams,
    EnergyResult,
    Gap,
    Reset,
    Window,
    skipped_note,
    stability_reasons,
    utc_of,
)
from pipeline.evidence.power.measured import EvidenceFile, PowerEvidence
from schemas.fields import FIELDS
from schemas.fleet import OPTIONAL as FLEET_OPTIONAL
from schemas.fleet import PARQUET_TYPES
from schemas.fleet import REQUIRED as FLEET_REQUIRED

#: DuckDB's memory while it reads a fleet's files (it spills to a temporary folder beyond).
MEMORY_LIMIT = "1GB"
#: the layout's columns and their types (schemas/fleet.py, the one declaration)
REQUIRED = {name: PARQUET_TYPES[name] for name in FLEET_REQUIRED}
OPTIONAL = {name: PARQUET_TYPES[name] for name in FLEET_OPTIONAL}


class FleetError(EnergyError):
    """A Parquet folder that cannot be read as a fleet's power samples; names the file."""


#: DuckDB's spellings, the one definition's (pipeline.evidence.power.fleet_sql renders the
#: query for Spark SQL and Trino from this text with sqlglot)
EPOCH = "epoch_us({}) / 1e6"
TIMESTAMP = "TIMESTAMPTZ '{}+00:00'"


def _num(x: float) -> str:
    """A double literal in all three dialects (a bare 1.5 is a DECIMAL in Spark and Trino)."""
    text = repr(float(x))
    return text if "e" in text else text + "e0"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


#: the median of the positive intervals `dt` from their counts `k` (`upto`: the running count
#: in dt order, `n`: all of them, RANKED per `key`), exact: the middle one, or the mean of the
#: middle two
RANKED = ("sum(k) OVER (PARTITION BY {key} ORDER BY dt ROWS UNBOUNDED PRECEDING) AS upto,\n"
          "         sum(k) OVER (PARTITION BY {key}) AS n")
MEDIAN = ("(min(CASE WHEN upto >= floor((n + 1) / 2.0) THEN dt END)\n"
          "          + min(CASE WHEN upto >= floor(n / 2.0) + 1 THEN dt END)) / 2")


def _formulas(method: str) -> tuple[str, str, str]:
    """The energy `e` of a reading interval (t, t1, p, p1, c, c1, dt, reset), its part within
    [l, r] and the reset condition, by `method`: the one statement of them every query here
    uses (energy.py's `_intervals` and `_energy_over` in SQL)."""
    if method == "counter":
        e = ("CASE WHEN dt = 0 THEN 0.0 WHEN NOT reset THEN c1 - c\n"
             "              WHEN p IS NOT NULL AND p1 IS NOT NULL THEN (p + p1) / 2 * dt\n"
             "              ELSE dt * typical_w END")
        return e, "e * (r - l) / dt", "c1 < c AND dt > 0"
    return ("(p + p1) / 2 * dt",
            "(p + (p1 - p) / dt * (l - t) + p + (p1 - p) / dt * (r - t)) / 2 * (r - l)",
            "FALSE")


def _edges(a: float, b: float) -> str:
    """The edge correction of a GPU's row (`first`, `last`, `e_window`, `p_first`, `p_last`):
    a log starting after a (ending before b) is extended at its first (last) interval's power
    over `lead_s` (`trail_s`); `energy_j` is the GPU's energy over [a, b]. Whether an edge is
    short enough (3 x the period) is `fleet_energy`'s check, and the full query's."""
    A, B = _num(a), _num(b)
    lead, trail = f"GREATEST(first - {A}, 0.0)", f"GREATEST({B} - last, 0.0)"
    return (f"{lead} AS lead_s, {trail} AS trail_s,\n"
            f"       coalesce(e_window, 0.0) + {lead} * coalesce(p_first, 0.0)\n"
            f"         + {trail} * coalesce(p_last, 0.0) AS energy_j")


def energy_ctes(source: str, a: float, b: float, lo: float, hi: float, method: str, *,
                gap_factor: float = 3.0, has_counter: bool = True,
                day_column: str | None = "day") -> str:
    """The energy query's common table expressions in DuckDB SQL (`energy_sql` selects from
    `per_gpu`; pipeline.evidence.power.fleet_sql builds the fleet query on them)."""
    A, B, G, H = _num(a), _num(b), _num(gap_factor), _num((b - a) / 2)
    t = EPOCH.format("timestamp_utc")
    counter = method == "counter"
    value = "c" if counter else "p"
    energy = "energy_j" if has_counter else "CAST(NULL AS DOUBLE)"
    days = _days_read(day_column, lo, hi)
    # the median period from each GPU's distinct intervals and their counts (exact, and a
    # handful of rows per GPU where median() would hold every interval: 1.5 million each)
    # and the median counter power joined to it (not a correlated subquery: Spark refuses one
    # inside an aggregate)
    typical, joined = "CAST(NULL AS DOUBLE)", ""
    if counter:
        typical = "w.typical_w"
        joined = ("\n  LEFT JOIN (SELECT device_id, median((c1 - c) / dt) AS typical_w "
                  "FROM intervals\n    WHERE NOT reset AND dt > 0 GROUP BY device_id) w "
                  "ON k.device_id = w.device_id")
    e, clipped, reset = _formulas(method)
    return f"""WITH samples AS (
  SELECT gpu_uuid AS device_id, {t} AS t, power_w AS p, {energy} AS c
  FROM {source}
  WHERE timestamp_utc >= {TIMESTAMP.format(_iso(lo))}
    AND timestamp_utc <= {TIMESTAMP.format(_iso(hi))}{days}
    AND (power_w IS NOT NULL OR {energy} IS NOT NULL)
),
counted AS (
  SELECT device_id, min(t) AS near_first, max(t) AS near_last,
         count(CASE WHEN t >= {A} AND t <= {B} THEN 1 END) AS in_window,
         sum(CASE WHEN t >= {A} AND t <= {B} THEN p END) AS busy_sum_w,
         count(CASE WHEN t >= {A} AND t <= {B} THEN p END) AS busy_n
  FROM samples GROUP BY device_id
),
readings AS (
  SELECT device_id, t, p, c,
         LEAD(t) OVER w AS t1, LEAD(p) OVER w AS p1, LEAD(c) OVER w AS c1
  FROM samples WHERE {value} IS NOT NULL
  WINDOW w AS (PARTITION BY device_id ORDER BY t)
),
intervals AS (
  SELECT device_id, t, t1, p, p1, c, c1, t1 - t AS dt,
         {reset.replace("dt", "t1 - t")} AS reset
  FROM readings WHERE t1 IS NOT NULL
),
periods AS (
  SELECT device_id, dt, count(*) AS k FROM intervals WHERE dt > 0 GROUP BY device_id, dt
),
ranked AS (
  SELECT device_id, dt,
         {RANKED.format(key="device_id")}
  FROM periods
),
typical AS (
  SELECT k.device_id, k.period, {typical} AS typical_w
  FROM (SELECT device_id,
               {MEDIAN} AS period
        FROM ranked GROUP BY device_id) k{joined}
),
energies AS (
  SELECT i.device_id, i.t, i.t1, i.dt, i.reset, i.c, i.c1, y.period,
         {e} AS e,
         GREATEST(i.t, {A}) AS l, LEAST(i.t1, {B}) AS r, i.p, i.p1
  FROM intervals i JOIN typical y ON i.device_id = y.device_id
),
clipped AS (
  SELECT *, CASE WHEN r > l THEN {clipped} END AS e_window,
         r > l AND dt > {G} * period AS gap
  FROM energies
),
per_gpu AS (
SELECT device_id, min(t) AS first, max(t1) AS last, max(period) AS period,
       arg_min(CASE WHEN dt > 0 THEN e / dt END, CASE WHEN dt > 0 THEN t END) AS p_first,
       arg_max(CASE WHEN dt > 0 THEN e / dt END, CASE WHEN dt > 0 THEN t END) AS p_last,
       sum(e_window) AS e_window,
       count(CASE WHEN r > l AND e IS NULL THEN 1 END) AS unknown,
       count(CASE WHEN dt = 0 THEN 1 END) AS duplicates,
       count(CASE WHEN r > l AND (t < {A} OR t1 > {B}) AND dt > {H} THEN 1 END)
         AS prorated,
       list([t, t1]) FILTER (WHERE gap) AS gaps,
       list([t1, c, c1]) FILTER (WHERE r > l AND reset) AS resets
FROM clipped GROUP BY device_id
)"""


def energy_sql(source: str, a: float, b: float, lo: float, hi: float, method: str, *,
               gap_factor: float = 3.0, has_counter: bool = True,
               day_column: str | None = "day") -> str:
    """The energy query in DuckDB SQL: one row per GPU with the reading intervals' energy over
    [a, b], what qualifies it, and its energy with the edges (`_edges`). `source` is the
    samples' relation (a table, or DuckDB's read_parquet(...)); `day_column` a Hive partition
    of days pruned to [lo, hi]."""
    ctes = energy_ctes(source, a, b, lo, hi, method, gap_factor=gap_factor,
                       has_counter=has_counter, day_column=day_column)
    return f"{ctes}\nSELECT *, {_edges(a, b)}\nFROM per_gpu"


#: the mean power of the first and of the last interval of positive length, with their start
_EDGE_POWER = """min(CASE WHEN dt > 0 THEN t END) AS pf_t,
         arg_min(CASE WHEN dt > 0 THEN e / dt END, CASE WHEN dt > 0 THEN t END) AS pf,
         max(CASE WHEN dt > 0 THEN t END) AS pl_t,
         arg_max(CASE WHEN dt > 0 THEN e / dt END, CASE WHEN dt > 0 THEN t END) AS pl"""


def _sums(clipped: str, A: str, B: str, H: str) -> str:
    """What a chunk's intervals, and those between chunks, add up to per GPU: the energy
    within [A, B], the resets to fill at the median counter power (`fills`), duplicated and
    pro-rated intervals (longer than H, half the window), the resets in the window."""
    return f"""sum(CASE WHEN r > l THEN {clipped} END) AS e_window,
         count(CASE WHEN reset AND e IS NULL THEN 1 END) AS fills,
         count(CASE WHEN dt = 0 THEN 1 END) AS duplicates,
         count(CASE WHEN r > l AND (t < {A} OR t1 > {B}) AND dt > {H} THEN 1 END) AS prorated,
         list([t1, c, c1]) FILTER (WHERE r > l AND reset) AS resets"""


def _days_read(day_column: str | None, lo: float, hi: float) -> str:
    """The Hive day partitions [lo, hi] reads (nothing without a day partition)."""
    if not day_column:
        return ""
    return f"\n    AND {day_column} BETWEEN DATE '{_iso(lo)[:10]}' AND DATE '{_iso(hi)[:10]}'"


def _chunk_sql(source: str, key: str, chunk: int, lo: float, hi: float, closed: bool,
               a: float, b: float, method: str, *, gap_factor: float, has_counter: bool,
               day_column: str | None) -> str:
    """DuckDB's pass over one chunk of time ([lo, hi), or [lo, hi] when `closed`, within one
    day): per GPU (`key`, its hash) the chunk's first and last readings and what its reading
    intervals give to the energy over [a, b], with the histogram of their lengths (`periods`)
    and those long enough to be a gap at any period up to the chunk's shortest interval
    (`long`). `_combine_sql` adds the intervals between chunks and finishes the rows."""
    A, B, G, H = _num(a), _num(b), _num(gap_factor), _num((b - a) / 2)
    e, clipped, reset = _formulas(method)
    energy = "energy_j" if has_counter else "CAST(NULL AS DOUBLE)"
    value = energy if method == "counter" else "power_w"
    # [lo, hi] within one day, but hi may be the next midnight: its readings are filed there
    days = _days_read(day_column, lo, hi)
    return f"""WITH samples AS (
  SELECT {key} AS h, {EPOCH.format("timestamp_utc")} AS t, power_w AS p, {energy} AS c
  FROM {source}
  WHERE timestamp_utc >= {TIMESTAMP.format(_iso(lo))}
    AND timestamp_utc {"<=" if closed else "<"} {TIMESTAMP.format(_iso(hi))}{days}
    AND {value} IS NOT NULL
),
readings AS (
  SELECT h, t, p, c, LEAD(t) OVER w AS t1, LEAD(p) OVER w AS p1, LEAD(c) OVER w AS c1
  FROM samples WINDOW w AS (PARTITION BY h ORDER BY t)
),
intervals AS (
  SELECT h, t, t1, p, p1, c, c1, t1 - t AS dt, {reset.replace("dt", "t1 - t")} AS reset
  FROM readings
),
periods AS (
  SELECT h, dt, count(*) AS k FROM intervals WHERE dt > 0 GROUP BY h, dt
),
shortest AS (
  SELECT h, min(dt) AS m, list([dt, k]) AS periods FROM periods GROUP BY h
),
energies AS (
  SELECT i.*, s.m, {e.replace("typical_w", "CAST(NULL AS DOUBLE)")} AS e,
         GREATEST(i.t, {A}) AS l, LEAST(i.t1, {B}) AS r
  FROM intervals i LEFT JOIN shortest s ON i.h = s.h
),
parts AS (
  SELECT h, min(t) AS first_t, arg_min_null(p, t) AS first_p, arg_min_null(c, t) AS first_c,
         max(t) AS last_t, arg_max_null(p, t) AS last_p, arg_max_null(c, t) AS last_c,
         count(t1) AS n_intervals, min(m) AS m, {_EDGE_POWER},
         count(CASE WHEN t >= {A} AND t <= {B} THEN 1 END) AS in_window,
         sum(CASE WHEN t >= {A} AND t <= {B} THEN p END) AS busy_sum_w,
         count(CASE WHEN t >= {A} AND t <= {B} THEN p END) AS busy_n,
         {_sums(clipped, A, B, H)},
         list([t, t1]) FILTER (WHERE r > l AND dt > {G} * m) AS long
  FROM energies GROUP BY h
)
SELECT {chunk} AS chunk, parts.*, shortest.periods
FROM parts LEFT JOIN shortest ON parts.h = shortest.h"""


def _combine_sql(a: float, b: float, method: str, *, gap_factor: float) -> str:
    """The per-GPU rows of `energy_sql` from the chunks' rows (table `parts`): the reading
    intervals between consecutive chunks (a chunk's last reading to the next one's first)
    taken as the chunks take theirs, the median period from all the histograms, the gaps
    among the long intervals at that period. Also `fills` (a counter reset with no power to
    integrate, which needs the median counter power) and each GPU's largest shortest interval
    `m` (above the period, that chunk's `long` may miss gaps): `fleet_energy` then runs
    `energy_sql` instead."""
    A, B, G, H = _num(a), _num(b), _num(gap_factor), _num((b - a) / 2)
    e, clipped, reset = _formulas(method)
    return f"""WITH bounds AS (
  SELECT h, last_t AS t, LEAD(first_t) OVER w AS t1, last_p AS p, LEAD(first_p) OVER w AS p1,
         last_c AS c, LEAD(first_c) OVER w AS c1
  FROM parts WINDOW w AS (PARTITION BY h ORDER BY chunk)
),
intervals AS (
  SELECT h, t, t1, p, p1, c, c1, t1 - t AS dt, {reset.replace("dt", "t1 - t")} AS reset
  FROM bounds WHERE t1 IS NOT NULL
),
periods AS (
  SELECT h, dt, sum(k) AS k FROM (
    SELECT h, u[1] AS dt, u[2] AS k FROM (SELECT h, unnest(periods) AS u FROM parts)
    UNION ALL SELECT h, dt, 1 AS k FROM intervals WHERE dt > 0)
  GROUP BY h, dt
),
ranked AS (
  SELECT h, dt,
         {RANKED.format(key="h")}
  FROM periods
),
typical AS (
  SELECT h, {MEDIAN} AS period FROM ranked GROUP BY h
),
energies AS (
  SELECT i.*, y.period, {e.replace("typical_w", "CAST(NULL AS DOUBLE)")} AS e,
         GREATEST(i.t, {A}) AS l, LEAST(i.t1, {B}) AS r
  FROM intervals i LEFT JOIN typical y ON i.h = y.h
),
crossing AS (
  SELECT h, count(*) AS n_intervals, {_EDGE_POWER},
         {_sums(clipped, A, B, H)},
         list([t, t1]) FILTER (WHERE r > l AND dt > {G} * period) AS gaps
  FROM energies GROUP BY h
),
gapped AS (
  SELECT g.h, list(g.u) AS gaps
  FROM (SELECT h, unnest(long) AS u FROM parts) g JOIN typical y ON g.h = y.h
  WHERE g.u[2] - g.u[1] > {G} * y.period GROUP BY g.h
),
chunks AS (
  SELECT h, min(first_t) AS first, max(last_t) AS last, sum(n_intervals) AS n_intervals,
         max(m) AS m, min(pf_t) AS pf_t, arg_min(pf, pf_t) AS pf, max(pl_t) AS pl_t,
         arg_max(pl, pl_t) AS pl, sum(e_window) AS e_window, sum(fills) AS fills,
         sum(duplicates) AS duplicates, sum(prorated) AS prorated,
         flatten(list(resets) FILTER (WHERE resets IS NOT NULL)) AS resets,
         sum(in_window) AS in_window, sum(busy_sum_w) AS busy_sum_w, sum(busy_n) AS busy_n
  FROM parts GROUP BY h
),
per_gpu AS (
SELECT c.h, c.first, c.last, y.period,
       CASE WHEN w.pf_t < c.pf_t OR c.pf_t IS NULL THEN w.pf ELSE c.pf END AS p_first,
       CASE WHEN w.pl_t > c.pl_t OR c.pl_t IS NULL THEN w.pl ELSE c.pl END AS p_last,
       CASE WHEN c.e_window IS NULL AND w.e_window IS NULL THEN NULL
            ELSE coalesce(c.e_window, 0.0) + coalesce(w.e_window, 0.0) END AS e_window,
       0 AS unknown, c.duplicates + coalesce(w.duplicates, 0) AS duplicates,
       c.prorated + coalesce(w.prorated, 0) AS prorated,
       g.gaps AS long_gaps, w.gaps, c.resets, w.resets AS between_resets,
       c.n_intervals + coalesce(w.n_intervals, 0) AS n_intervals,
       c.fills + coalesce(w.fills, 0) AS fills, c.m, c.in_window, c.busy_sum_w, c.busy_n
FROM chunks c LEFT JOIN crossing w ON c.h = w.h LEFT JOIN typical y ON c.h = y.h
LEFT JOIN gapped g ON c.h = g.h
)
SELECT *, {_edges(a, b)}
FROM per_gpu"""


def export_samples(con: duckdb.DuckDBPyConnection, folder: Path) -> int:
    """The store's GPU-board power samples (`core__power_samples`) in the fleet layout
    (schemas/fleet.py: `folder/day=YYYY-MM-DD/*.parquet`, gpu_uuid = device_id, timestamp_utc
    = sample_utc, energy_j = energy_counter_j), replacing what `folder` held; the rows
    written. A device id that is only a GPU's index in its log (an nvidia-smi log by index:
    digits) names a GPU of that log alone, so its gpu_uuid is the log's (the snapshot's
    sha256, 12 characters) and the index, `<sha12>:<index>`: two machines' GPU 0 stay two
    GPUs. `scorecard export --parquet DIR` writes it as DIR/fleet_power_samples, which
    `evidence add --parquet`, `power = { parquet = ... }` and `evidence sql` read as they are."""
    import shutil

    rows = ("SELECT CASE WHEN regexp_full_match(device_id, '[0-9]+') THEN "
            "left(snapshot_sha256, 12) || ':' || device_id ELSE device_id END AS gpu_uuid, "
            "sample_utc AS timestamp_utc, power_w, "
            "energy_counter_j AS energy_j, CAST(timezone('UTC', sample_utc) AS DATE) AS day "
            "FROM core__power_samples WHERE measurement_boundary = 'gpu_board'")
    (count,), = con.execute(f"SELECT count(*) FROM ({rows})").fetchall()
    if folder.exists():
        shutil.rmtree(folder)
    if count:
        con.execute(f"COPY ({rows} ORDER BY gpu_uuid, timestamp_utc) TO ? "
                    "(FORMAT parquet, PARTITION_BY (day))", [str(folder)])
    return int(count)


def _glob(folder: Path) -> str:
    return str(folder / "**" / "*.parquet")


def _source(folder: Path, *, filename: bool = False) -> str:
    path = _glob(folder).replace("'", "''")
    extra = ", filename = true" if filename else ""
    return f"read_parquet('{path}', hive_partitioning = true, union_by_name = true{extra})"


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET temp_directory = '{tempfile.gettempdir()}/scorecard-fleet'")
    return con


def _files(con: duckdb.DuckDBPyConnection, folder: Path) -> tuple[list[str], dict[str, str]]:
    """The Parquet files under `folder` and the types of their columns (the partitions'
    included); a file that is not Parquet, or lacks or mistypes a column, is named."""
    if not folder.is_dir():
        raise FleetError(f"{folder}: not a folder of Parquet files")
    files = sorted(str(p) for p in folder.rglob("*.parquet"))
    if not files:
        raise FleetError(f"{folder}: no .parquet file under it")
    columns: dict[str, str] = {}
    for file in files:
        try:
            schema = dict(con.execute(
                "SELECT name, type FROM parquet_schema(?) WHERE num_children IS NULL",
                [file]).fetchall())
            types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * "
                                     "FROM read_parquet(?))", [file]).fetchall())
        except duckdb.Error as error:
            raise FleetError(f"{file}: not a readable Parquet file "
                             f"({str(error).splitlines()[0]})") from None
        for name, kind in REQUIRED.items():
            if name not in schema:
                raise FleetError(f"{file}: no column {name!r} (columns: "
                                 f"{', '.join(sorted(schema))})")
            if types.get(name) != kind:
                raise FleetError(f"{file}: column {name!r} is {types.get(name)}, not {kind}")
        if "energy_j" in types and types["energy_j"] != OPTIONAL["energy_j"]:
            raise FleetError(f"{file}: column 'energy_j' is {types['energy_j']}, not DOUBLE")
        columns |= types
    return files, columns


@dataclass
class _Scan:
    """What one pass over the whole folder found: per GPU its counts, power sum and span
    (`devices`; `first` and `last` None until `_fill_spans` when the pass did not take them),
    the first and last reading of the whole folder (`span`), the key a GPU's readings are
    partitioned by (`key`: its hash, or the text itself should two hashes collide), the rows
    of each day partition (`day_rows`), and whether each day partition holds only its own
    day's samples (else `day_column` is None: no pruning)."""

    devices: list[dict[str, Any]]
    span: tuple[float, float]
    key: str
    day_rows: dict[str, int]
    day_column: str | None


def _days(con: duckdb.DuckDBPyConnection, files: list[str]) -> tuple[dict[str, int], bool]:
    """The rows of each `day=YYYY-MM-DD` partition and whether every one holds only its own
    (UTC) day's samples, from the files' footers (row counts and the time statistics of their
    row groups): no data is read. Without those statistics, not known (False)."""
    rows = con.execute(
        "SELECT file_name, sum(row_group_num_rows), min(stats_min_value), "
        "max(stats_max_value), 2 * count(*) - count(stats_min_value) - count(stats_max_value) "
        "FROM parquet_metadata(?) WHERE path_in_schema = 'timestamp_utc' GROUP BY file_name",
        [files]).fetchall()
    day_rows: dict[str, int] = {}
    own = True
    for name, n, low, high, missing in rows:
        day = next((part[4:] for part in Path(name).parts if part.startswith("day=")), None)
        if day is None:
            return {}, False
        day_rows[day] = day_rows.get(day, 0) + int(n or 0)
        own = own and not missing and n is not None and (
            n == 0 or (_utc_day(low) == day and _utc_day(high) == day))
    return day_rows, own


def _utc_day(text: str | None) -> str | None:
    """The UTC date of a timestamp statistic as DuckDB prints it ("2026-11-08 06:00:00+00")."""
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("+00", "+00:00", 1) if text.endswith("+00")
                                       else text)
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC).date(
        ).isoformat()


def _stated(con: duckdb.DuckDBPyConnection, files: list[str]) -> bool:
    """Whether the files' footers alone show every sample has a GPU and a time and every value
    is within its declared bounds (every row group's null and NaN counts and its min and max
    stated: DuckDB writes them), so the scan need not take them."""
    power, counter = FIELDS["power_w"], FIELDS["energy_counter_j"]
    rows = con.execute(
        "SELECT path_in_schema, bool_and(stats_null_count = 0), "
        "bool_and(coalesce(stats_nan_count = 0, FALSE) AND (stats_null_count = "
        "row_group_num_rows OR (TRY_CAST(stats_min_value AS DOUBLE) IS NOT NULL AND "
        "TRY_CAST(stats_max_value AS DOUBLE) IS NOT NULL))), "
        "min(TRY_CAST(stats_min_value AS DOUBLE)), max(TRY_CAST(stats_max_value AS DOUBLE)) "
        "FROM parquet_metadata(?) WHERE path_in_schema IN "
        "('gpu_uuid', 'timestamp_utc', 'power_w', 'energy_j') GROUP BY path_in_schema",
        [files]).fetchall()
    found = {name: rest for name, *rest in rows}
    if not all(found.get(name, (None,))[0] for name in ("gpu_uuid", "timestamp_utc")):
        return False
    for name, floor, ceiling in (("power_w", power.ge, power.le),
                                 ("energy_j", counter.ge, counter.le)):
        if name not in found:
            continue
        _, stated, low, high = found[name]
        if not stated or (low is not None and floor is not None and low < floor) or (
                high is not None and ceiling is not None and high > ceiling):
            return False
    return True

def _scan(con: duckdb.DuckDBPyConnection, folder: Path, files: list[str], has_counter: bool,
          day_column: str | None, *, spans: bool) -> _Scan:
    """Per GPU over the whole folder (one grouping, the aggregates DuckDB's own scan of the
    files would take, plus the bounds unless the footers show them): counts and the power
    sum, and its first and last reading when `spans` is asked or the footers' time
    statistics do not give the folder's (taking them costs a quarter more: a window's energy
    rarely needs them, and `_fill_spans` takes them then); a value out of its declared bounds,
    or a reading without GPU or time, names its file."""
    power, counter = FIELDS["power_w"], FIELDS["energy_counter_j"]
    # the bounds the footers show need not be taken again (DuckDB's own scan's aggregates)
    bounds = not _stated(con, files)
    folder_span = None if spans else _footer_span(con, files)
    timed = folder_span is None
    energy = ("count(energy_j), " + ("min(energy_j), max(energy_j), " if bounds
                                     else "NULL, NULL, ") + "count(coalesce(power_w, energy_j))"
              if has_counter else "0, NULL, NULL, NULL")
    rows = con.execute(f"""
        SELECT gpu_uuid, {_SPAN if timed else "NULL, NULL"},
               count(*), {"count(timestamp_utc)" if bounds else "count(*)"}, count(power_w),
               sum(power_w), {"min(power_w), max(power_w)" if bounds else "NULL, NULL"},
               {energy}, hash(gpu_uuid)
        FROM {_source(folder)} GROUP BY gpu_uuid""").fetchall()

    def bad(low: Any, high: Any, floor: float | None, ceiling: float | None) -> bool:
        return low is not None and (math.isnan(low) or math.isnan(high)
                                    or (floor is not None and low < floor)
                                    or (ceiling is not None and high > ceiling))

    if any(r[0] is None or r[4] < r[3] or bad(r[7], r[8], power.ge, power.le)
           or bad(r[10], r[11], counter.ge, None) for r in rows):
        energy_bad = (f"OR energy_j < {counter.ge!r} OR isnan(energy_j)" if has_counter
                      else "")
        (found,), = con.execute(
            f"SELECT min(filename) FROM {_source(folder, filename=True)} WHERE gpu_uuid IS NULL "
            f"OR timestamp_utc IS NULL OR power_w < {power.ge!r} OR power_w > {power.le!r} "
            f"OR isnan(power_w) {energy_bad}").fetchall()
        raise FleetError(f"{found}: a sample without gpu_uuid or timestamp_utc, or a "
                         f"power_w outside {power.ge:g}..{power.le:g} W or energy_j below 0 J")
    devices = []
    for (gpu, first, last, n, _, n_power, power_sum, _, _, n_counter, _, _, n_value,
         hashed) in sorted(rows):
        devices.append({"device_id": gpu, "first": first, "last": last, "n": n,
                        "n_power": n_power, "n_counter": n_counter, "power_sum_w": power_sum,
                        "empty": n - (n_value if has_counter else n_power), "key": hashed})
    distinct = len({d["key"] for d in devices}) == len(devices)
    if not distinct:  # two GPUs' hashes collide: partition by the text itself
        for d in devices:
            d["key"] = d["device_id"]
    day_rows, own = _days(con, files) if day_column else ({}, False)
    if folder_span is None and devices:
        folder_span = (min(d["first"] for d in devices), max(d["last"] for d in devices))
    return _Scan(devices, folder_span or (0.0, 0.0), "hash(gpu_uuid)" if distinct else
                 "gpu_uuid", day_rows, day_column if own else None)


#: A GPU's first and last reading, in seconds since the epoch.
_SPAN = "epoch_us(min(timestamp_utc)) / 1e6, epoch_us(max(timestamp_utc)) / 1e6"


def _footer_span(con: duckdb.DuckDBPyConnection, files: list[str]) -> tuple[float, float] | None:
    """The folder's first and last reading from the files' footers (every row group's time
    statistics), or None when a row group does not state them."""
    (low, high, missing), = con.execute(
        "SELECT epoch_us(min(TRY_CAST(stats_min_value AS TIMESTAMPTZ))) / 1e6, "
        "epoch_us(max(TRY_CAST(stats_max_value AS TIMESTAMPTZ))) / 1e6, "
        "count(*) - count(TRY_CAST(stats_min_value AS TIMESTAMPTZ) + "
        "(TRY_CAST(stats_max_value AS TIMESTAMPTZ) - TIMESTAMPTZ '1970-01-01 00:00:00+00')) "
        "FROM parquet_metadata(?) WHERE path_in_schema = 'timestamp_utc'", [files]).fetchall()
    return None if missing or low is None or high is None else (float(low), float(high))


def _fill_spans(con: duckdb.DuckDBPyConnection, folder: Path, scan: _Scan) -> None:
    """Each GPU's first and last reading, where the scan did not take them."""
    if all(d["first"] is not None for d in scan.devices):
        return
    spans = {gpu: (first, last) for gpu, first, last in con.execute(
        f"SELECT gpu_uuid, {_SPAN} FROM {_source(folder)} GROUP BY gpu_uuid").fetchall()}
    for d in scan.devices:
        d["first"], d["last"] = spans[d["device_id"]]


def _method(devices: list[dict[str, Any]], origin: str, notes: list[str]) -> str:
    """As energy.py's `_choose_method` (no forced method)."""
    if all(d["n_counter"] >= 2 for d in devices):
        return "counter"
    if all(d["n_power"] >= 2 for d in devices):
        if any(d["n_counter"] > 0 for d in devices):
            notes.append("energy counters missing on some devices; integrated power instead")
        return "trapezoid"
    few = next(d for d in devices if d["n_counter"] < 2 and d["n_power"] < 2)
    raise EnergyError(f"{origin}: device {few['device_id']} has fewer than 2 power or energy "
                      "readings")


def fleet_energy(folder: Path, window: Window | None = None, *,
                 params: EnergyParams | None = None, origin: str | None = None
                 ) -> tuple[EnergyResult, list[str]]:
    """`origin` names the samples in errors (the folder when None)."""
    params = params or EnergyParams()
    folder = Path(folder)
    origin = origin or str(folder)
    con = _connect()
    try:
        files, columns = _files(con, folder)
        has_counter = "energy_j" in columns
        scan = _scan(con, folder, files, has_counter,
                     "day" if columns.get("day") == "DATE" else None, spans=window is None)
        devices = scan.devices
        if not devices:
            raise EnergyError(f"{origin}: no power or energy samples")
        notes: list[str] = []
        empty = sum(d["empty"] for d in devices)
        if empty:
            notes.append(skipped_note({None: empty}))
        if window is None:
            a = max(d["first"] for d in devices)
            b = min(d["last"] for d in devices)
            if not b > a:
                raise EnergyError(f"{origin}: the devices' logs do not overlap in time")
            window = Window(datetime.fromtimestamp(a, UTC), datetime.fromtimestamp(b, UTC))
        a, b = window.start_utc.timestamp(), window.end_utc.timestamp()
        method = _method(devices, origin, notes)
        rows = _near(con, folder, scan, a, b, method, params, has_counter)
        u = window.uncertainty_s
        if u > 0:  # idle power: the readings more than u outside the window (energy.py)
            busy = _busy(con, folder, scan, a - u, b + u)
            for r in rows:
                r["busy_sum_w"], r["busy_n"] = busy.get(r["device_id"], (0.0, 0))
        result = _result(rows, devices, window, method, params, origin, notes)
        if u > 0:  # as energy.py: the energy over the window shifted by -u and +u
            try:
                shifted = [_result(
                    _near(con, folder, scan, a + s, b + s, method, params, has_counter),
                    devices, Window(utc_of(a + s), utc_of(b + s)), method, params, origin,
                    []).energy_j for s in (-u, u)]
                result = replace(result, energy_range_j=(min(*shifted, result.energy_j),
                                                         max(*shifted, result.energy_j)))
            except EnergyError:
                result = replace(result, notes=(
                    *result.notes, f"the log does not cover the window shifted by +/-{u} s: "
                    "no energy range"))
    finally:
        con.close()
    return result, files


def _busy(con: duckdb.DuckDBPyConnection, folder: Path, scan: _Scan, lo: float, hi: float
          ) -> dict[str, tuple[float, int]]:
    """Per GPU the sum and count of its power readings within [lo, hi]."""
    t = "epoch_us(timestamp_utc) / 1e6"
    days = _days_read(scan.day_column, lo, hi)
    return {gpu: (total or 0.0, n) for gpu, total, n in con.execute(
        f"SELECT gpu_uuid, sum(power_w), count(power_w) FROM {_source(folder)} "
        f"WHERE {t} >= {_num(lo)} AND {t} <= {_num(hi)}{days} GROUP BY gpu_uuid").fetchall()}


#: the most rows one chunk's window sorts (a day with more is cut into equal parts of time)
CHUNK_ROWS = 8_000_000


def _chunks(lo: float, hi: float, scan: _Scan, chunk_rows: int = CHUNK_ROWS
            ) -> list[tuple[float, float, bool]]:
    """[lo, hi] cut at each UTC midnight, and a day of more than `chunk_rows` rows into equal
    parts: (start, end, end included)."""
    cuts = [lo]
    midnight = (math.floor(lo / 86_400) + 1) * 86_400
    while cuts[-1] < hi:
        end = min(float(midnight), hi)
        rows = scan.day_rows.get(_iso(cuts[-1])[:10], 0)
        parts = max(1, math.ceil(rows / chunk_rows))
        start = cuts[-1]
        cuts += [start + (end - start) * i / parts for i in range(1, parts)] + [end]
        midnight += 86_400
    spans = [(cuts[i], cuts[i + 1], i == len(cuts) - 2) for i in range(len(cuts) - 1)]
    return spans or [(lo, hi, True)]


def _chunked(con: duckdb.DuckDBPyConnection, folder: Path, scan: _Scan, a: float, b: float,
             lo: float, hi: float, method: str, params: EnergyParams, has_counter: bool,
             chunk_rows: int = CHUNK_ROWS
             ) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, Any]] | None]:
    """`energy_sql`'s rows over [lo, hi] computed a chunk of time at a time (each chunk's
    window sorts one day's readings in memory, where one window over the whole folder
    spills), combined by `_combine_sql`, with the readings' `counted` (first and last in [lo,
    hi], in the window, their power); the rows are None when the chunks cannot give them
    exactly (a counter reset to fill at the median counter power, or a chunk whose shortest
    interval exceeds the period)."""
    con.execute("DROP TABLE IF EXISTS parts")
    for k, (start, end, closed) in enumerate(_chunks(lo, hi, scan, chunk_rows)):
        sql = _chunk_sql(_source(folder), scan.key, k, start, end, closed, a, b, method,
                         gap_factor=params.gap_factor, has_counter=has_counter,
                         day_column=scan.day_column)
        con.execute(("CREATE TEMP TABLE parts AS " if k == 0 else "INSERT INTO parts ") + sql)
    cursor = con.execute(_combine_sql(a, b, method, gap_factor=params.gap_factor))
    names = [c[0] for c in cursor.description]
    found = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    con.execute("DROP TABLE parts")
    by_key = {d["key"]: d["device_id"] for d in scan.devices}
    counted = {by_key[r["h"]]: (r["first"], r["last"], r["in_window"], r["busy_sum_w"],
                                r["busy_n"]) for r in found}
    if any(r["fills"] or (r["m"] is not None and r["period"] is not None
                          and r["m"] > r["period"]) for r in found):
        return counted, None
    rows = []
    for r in found:
        if not r["n_intervals"]:
            continue  # one reading: no interval, as energy_sql has no row for it
        rows.append({"device_id": by_key[r["h"]], "first": r["first"], "last": r["last"],
                     "period": r["period"], "p_first": r["p_first"], "p_last": r["p_last"],
                     "e_window": r["e_window"], "lead_s": r["lead_s"],
                     "trail_s": r["trail_s"], "energy_j": r["energy_j"],
                     "unknown": 0, "duplicates": r["duplicates"],
                     "prorated": r["prorated"],
                     "gaps": (r["long_gaps"] or []) + (r["gaps"] or []),
                     "resets": (r["resets"] or []) + (r["between_resets"] or [])})
    return counted, rows


def _near(con: duckdb.DuckDBPyConnection, folder: Path, scan: _Scan, a: float, b: float,
          method: str, params: EnergyParams, has_counter: bool) -> list[dict[str, Any]]:
    """The energy query over the samples near [a, b]: a margin widened (x4) until every GPU
    has a reading at or before a and at or after b, or its first and last (as energy.py's
    `_near_window`). When every sample holds the method's value (the samples are the
    readings), the chunks' pass also counts them; else one more query does."""
    devices, day_column = scan.devices, scan.day_column
    n_method = "n_counter" if method == "counter" else "n_power"
    readings_only = all(d["n"] - d["empty"] == d[n_method] for d in devices)
    margin = max(60.0, 0.05 * (b - a))
    start, end = scan.span
    by_id = {d["device_id"]: d for d in devices}
    rows: list[dict[str, Any]] | None = None
    while True:
        lo, hi = max(a - margin, start), min(b + margin, end)
        sql = energy_sql(_source(folder), a, b, lo, hi, method,
                         gap_factor=params.gap_factor, has_counter=has_counter,
                         day_column=day_column)
        if readings_only:
            counted, rows = _chunked(con, folder, scan, a, b, lo, hi, method, params,
                                     has_counter)
        else:
            counted = {r[0]: r[1:] for r in con.execute(
                sql.split("\nreadings AS", 1)[0].rstrip(",\n") + "\nSELECT * FROM counted"
            ).fetchall()}
        if any(d["device_id"] in counted and d["first"] is None and (
                counted[d["device_id"]][0] > a or counted[d["device_id"]][1] < b)
                for d in devices):  # is a GPU's first reading after a its log's first?
            _fill_spans(con, folder, scan)
        complete = all(
            d["device_id"] in counted
            and (counted[d["device_id"]][0] <= a or counted[d["device_id"]][0] == d["first"])
            and (counted[d["device_id"]][1] >= b or counted[d["device_id"]][1] == d["last"])
            for d in devices)
        if complete or (lo <= start and hi >= end):
            break
        margin *= 4
    if not readings_only:
        _, rows = _chunked(con, folder, scan, a, b, lo, hi, method, params, has_counter)
    if rows is None:
        cursor = con.execute(sql)
        names = [c[0] for c in cursor.description]
        rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    for r in rows:
        _, _, in_window, busy_sum, busy_n = counted[r["device_id"]]
        r.update(in_window=in_window, busy_sum_w=busy_sum or 0.0, busy_n=busy_n)
        r["n_method"] = by_id[r["device_id"]][n_method]
    return rows


def _result(rows: list[dict[str, Any]], devices: list[dict[str, Any]], window: Window,
            method: str, params: EnergyParams, origin: str, notes: list[str]
            ) -> EnergyResult:
    """The edges, errors and qualification of energy.py's `_energy_over` and `_qualify` on
    the per-GPU rows."""
    a, b = window.start_utc.timestamp(), window.end_utc.timestamp()
    got = {r["device_id"]: r for r in rows}
    for d in devices:
        if d["device_id"] not in got:
            raise EnergyError(f"{origin}: device {d['device_id']} has no two {method} "
                              "readings around the window")
    for r in sorted(rows, key=lambda r: r["device_id"]):
        if r["duplicates"]:
            raise FleetError(f"{origin}: duplicated sample for device {r['device_id']} "
                             "(two readings at one instant)")
        if r["unknown"]:
            raise EnergyError(f"{origin}: energy counter of device {r['device_id']} dropped "
                              "between its only readings (a reset, or readings from different "
                              "runs): energy unknown")
    energy, gaps, resets, edges = 0.0, [], [], []
    for r in sorted(rows, key=lambda r: r["device_id"]):
        lead, trail = r["lead_s"], r["trail_s"]
        tolerance = 0.0 if r["n_method"] == 2 else params.gap_factor * r["period"]
        if lead > tolerance or trail > tolerance:
            raise EnergyError(
                f"{origin}: power log does not cover the window for device {r['device_id']}: "
                f"it covers {utc_of(r['first']).isoformat()} .. {utc_of(r['last']).isoformat()}, "
                f"window {utc_of(a).isoformat()} .. {utc_of(b).isoformat()}")
        energy += r["energy_j"]
        gaps += [Gap(r["device_id"], utc_of(t), utc_of(t1), t1 - t, "gap")
                 for t, t1 in sorted(r["gaps"] or [])]
        resets += [Reset(r["device_id"], utc_of(at), before, after)
                   for at, before, after in sorted(r["resets"] or [])]
        if lead > 0:
            edges.append(Gap(r["device_id"], utc_of(a), utc_of(r["first"]), lead,
                             "before_first_sample"))
        if trail > 0:
            edges.append(Gap(r["device_id"], utc_of(r["last"]), utc_of(b), trail,
                             "after_last_sample"))
    gaps += edges
    if resets:
        notes.append(f"{len(resets)} energy-counter reset(s) in the window: those intervals "
                     "integrated from power where present, else filled at the device's median "
                     "counter power")
    prorated = sum(r["prorated"] for r in rows)
    if prorated:
        notes.append(f"{prorated} reading interval(s) longer than half the window were "
                     "pro-rated to it (constant power assumed within them)")
    by_id = {d["device_id"]: d for d in devices}
    idle = [(by_id[r["device_id"]]["power_sum_w"] or 0.0) - r["busy_sum_w"] for r in rows]
    idle_n = [by_id[r["device_id"]]["n_power"] - r["busy_n"] for r in rows]
    idle_w = (sum(s / n for s, n in zip(idle, idle_n, strict=True))
              if all(n > 0 for n in idle_n) else None)
    duration = b - a
    in_window = sum(r["in_window"] for r in rows)
    reasons = stability_reasons(min(r["in_window"] for r in rows), duration,
                                sum(g.duration_s for g in gaps), len(devices),
                                window.uncertainty_s,
                                len(resets), params)
    total = sum(d["n"] - d["empty"] for d in devices)
    if not math.isfinite(energy):
        raise EnergyError(f"{origin}: the energy is not a finite number")
    return EnergyResult(
        energy_j=energy, average_power_w=energy / duration, boundary="gpu_board",
        method=method, gpus=tuple(sorted(got)), window=window, gaps=tuple(gaps),
        resets=tuple(resets), samples_in_window=in_window,
        samples_outside_window=total - in_window, idle_power_w=idle_w, energy_range_j=None,
        stable=not reasons, stability_reasons=tuple(reasons), notes=tuple(notes))


def power_from_parquet(folder: Path, window_start_utc: datetime | None,
                       window_end_utc: datetime | None, *, uncertainty_s: float = 0.0,
                       params: EnergyParams | None = None) -> PowerEvidence:
    """`pipeline.evidence.power.logs.power_from_evidence` for a fleet's Parquet samples: the energy
    computed by DuckDB over the files (`fleet_energy`). `files` lists each Parquet file with
    its size (as `size:<bytes>`, in place of a sha256: the files are not read whole to be
    hashed)."""
    if (window_start_utc is None) != (window_end_utc is None):
        raise ValueError("give both window_start_utc and window_end_utc, or neither")
    window = (Window(window_start_utc, window_end_utc, uncertainty_s)
              if window_start_utc is not None and window_end_utc is not None else None)
    result, paths = fleet_energy(Path(folder), window, params=params)
    notes = [] if window is not None else [
        "no benchmark window given: energy over the span all devices cover"]
    if not result.stable:
        notes.append("unstable: " + ", ".join(result.stability_reasons))
    files = tuple(EvidenceFile(p, f"size:{Path(p).stat().st_size}", "parquet", 0)
                  for p in paths)
    return PowerEvidence(
        average_power_w=result.average_power_w, energy_j=result.energy_j,
        boundary=result.boundary, method=result.method, grade="measured",
        notes=tuple(notes) + result.notes, files=files, energy=result)
