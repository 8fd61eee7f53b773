"""Energy over a window from a fleet's power samples in Parquet, computed by DuckDB over the
files without loading them into memory (`evidence add --parquet DIR`, `power = { parquet =
"DIR" }`).

Layout: `DIR/**/*.parquet`, Hive partitions (e.g. `day=2026-11-08/`), columns `gpu_uuid`
(text), `timestamp_utc` (timestamp with time zone), `power_w` (W) and, optionally, `energy_j`
(a cumulative energy counter, J). Every GPU is one stream at the `gpu_board` boundary.

The rules are those of `pipeline.evidence.energy` (DESIGN section 7): counter when every GPU
has two counter readings, else trapezoid; a reading interval longer than `gap_factor` x the
GPU's median period is a gap (integrated, reported); a log that starts or ends inside the
window by at most one gap threshold is extended at its edge power; a counter drop is a reset,
integrated from power or filled at the GPU's median counter power; idle power is the mean
power outside the window. The SQL below restates energy.py's formulas (trapezoid over the
clipped interval, counter pro-rated, reset fill, edge power); `stability_reasons` is shared;
tests/pipeline/test_fleet_energy.py checks both paths equal on the same samples.

- `energy_sql(dialect, source, a, b, lo, hi, method, ...) -> str`: the energy query over the
  samples within [lo, hi] (s since the epoch) for the window [a, b], in `duckdb`, `spark` or
  `trino` SQL (the same query; docs/energy.md shows it in each).
- `fleet_energy(folder, window=None, *, params=None) -> (EnergyResult, files)`: the energy of
  the fleet over `window` (None: the span every GPU covers), and the Parquet files read.

Errors: `FleetError` (an EnergyError: a bad folder or file, named), `EnergyError` (the samples
do not cover the window).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from pipeline.evidence.energy import (
    EnergyError,
    EnergyParams,
    EnergyResult,
    Gap,
    Reset,
    Window,
    stability_reasons,
    utc_of,
)
from schemas.fields import FIELDS

#: DuckDB's memory while it reads a fleet's files (it spills to a temporary folder beyond).
MEMORY_LIMIT = "1GB"
REQUIRED = {"gpu_uuid": "VARCHAR", "timestamp_utc": "TIMESTAMP WITH TIME ZONE",
            "power_w": "DOUBLE"}
OPTIONAL = {"energy_j": "DOUBLE"}


class FleetError(EnergyError):
    """A Parquet folder that cannot be read as a fleet's power samples; names the file."""


@dataclass(frozen=True)
class Dialect:
    """What differs between the engines: seconds since the epoch of a timestamp, an exact (or
    approximate) median, the minimum of a value by a key, an array collected, a timestamp
    literal."""

    epoch: str
    median: str
    min_by: str
    max_by: str
    collect: str
    array: str
    timestamp: str


DIALECTS = {
    "duckdb": Dialect("epoch_us({}) / 1e6", "median({})", "arg_min({}, {})", "arg_max({}, {})",
                      "list({})", "[{}]", "TIMESTAMPTZ '{}+00'"),
    "spark": Dialect("unix_micros({}) / 1e6", "percentile({}, 0.5)", "min_by({}, {})",
                     "max_by({}, {})", "collect_list({})", "array({})", "TIMESTAMP '{}'"),
    "trino": Dialect("to_unixtime({})", "approx_percentile({}, 0.5)", "min_by({}, {})",
                     "max_by({}, {})", "array_agg({})", "ARRAY[{}]", "TIMESTAMP '{} UTC'"),
}


def _num(x: float) -> str:
    """A double literal in all three dialects (a bare 1.5 is a DECIMAL in Spark and Trino)."""
    text = repr(float(x))
    return text if "e" in text else text + "e0"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def energy_sql(dialect: str, source: str, a: float, b: float, lo: float, hi: float,
               method: str, *, gap_factor: float = 3.0, has_counter: bool = True,
               day_column: str | None = "day") -> str:
    """The energy query: one row per GPU with the reading intervals' energy over [a, b] and
    what qualifies it; the edges (a log starting or ending inside the window) are applied to
    these rows by `fleet_energy`. `source` is the samples' relation (a table, or DuckDB's
    read_parquet(...)); `day_column` a Hive partition of days pruned to [lo, hi]."""
    d = DIALECTS[dialect]
    A, B, G, H = _num(a), _num(b), _num(gap_factor), _num((b - a) / 2)
    t = d.epoch.format("timestamp_utc")
    counter = method == "counter"
    value = "c" if counter else "p"
    energy = "energy_j" if has_counter else "CAST(NULL AS DOUBLE)"
    days = (f"\n    AND {day_column} BETWEEN DATE '{_iso(lo)[:10]}' AND DATE '{_iso(hi)[:10]}'"
            if day_column else "")
    # the median period from each GPU's distinct intervals and their counts (exact, and a
    # handful of rows per GPU where median() would hold every interval: 1.5 million each)
    typical = "CAST(NULL AS DOUBLE)"
    if counter:
        typical = ("(SELECT " + d.median.format("(c1 - c) / dt") + " FROM intervals j WHERE "
                   "j.device_id = ranked.device_id AND NOT j.reset AND j.dt > 0)")
        e = ("CASE WHEN dt = 0 THEN 0.0 WHEN NOT reset THEN c1 - c\n"
             "              WHEN p IS NOT NULL AND p1 IS NOT NULL THEN (p + p1) / 2 * dt\n"
             "              ELSE dt * typical_w END")
        clipped = "e * (r - l) / dt"
        reset = "c1 < c AND dt > 0"
    else:
        e = "(p + p1) / 2 * dt"
        clipped = ("(p + (p1 - p) / dt * (l - t) + p + (p1 - p) / dt * (r - t)) / 2 "
                   "* (r - l)")
        reset = "FALSE"
    return f"""WITH samples AS (
  SELECT gpu_uuid AS device_id, {t} AS t, power_w AS p, {energy} AS c
  FROM {source}
  WHERE timestamp_utc >= {d.timestamp.format(_iso(lo))}
    AND timestamp_utc <= {d.timestamp.format(_iso(hi))}{days}
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
         sum(k) OVER (PARTITION BY device_id ORDER BY dt ROWS UNBOUNDED PRECEDING) AS upto,
         sum(k) OVER (PARTITION BY device_id) AS n
  FROM periods
),
typical AS (
  SELECT device_id,
         (min(CASE WHEN upto >= floor((n + 1) / 2.0) THEN dt END)
          + min(CASE WHEN upto >= floor(n / 2.0) + 1 THEN dt END)) / 2 AS period,
         {typical} AS typical_w
  FROM ranked GROUP BY device_id
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
)
SELECT device_id, min(t) AS first, max(t1) AS last, max(period) AS period,
       {d.min_by.format("CASE WHEN dt > 0 THEN e / dt END", "CASE WHEN dt > 0 THEN t END")}
         AS p_first,
       {d.max_by.format("CASE WHEN dt > 0 THEN e / dt END", "CASE WHEN dt > 0 THEN t END")}
         AS p_last,
       sum(e_window) AS e_window,
       count(CASE WHEN r > l AND e IS NULL THEN 1 END) AS unknown,
       count(CASE WHEN dt = 0 THEN 1 END) AS duplicates,
       count(CASE WHEN r > l AND (t < {A} OR t1 > {B}) AND dt > {H} THEN 1 END)
         AS prorated,
       {d.collect.format(d.array.format("t, t1"))} FILTER (WHERE gap) AS gaps,
       {d.collect.format(d.array.format("t1, c, c1"))} FILTER (WHERE r > l AND reset)
         AS resets
FROM clipped GROUP BY device_id"""


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


def _files(con: duckdb.DuckDBPyConnection, folder: Path) -> tuple[list[str], set[str]]:
    """The Parquet files under `folder` and the partition/extra columns; a file that is not
    Parquet, or lacks or mistypes a column, is named."""
    if not folder.is_dir():
        raise FleetError(f"{folder}: not a folder of Parquet files")
    files = sorted(str(p) for p in folder.rglob("*.parquet"))
    if not files:
        raise FleetError(f"{folder}: no .parquet file under it")
    columns: set[str] = set()
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
        columns |= set(types)
    return files, columns


def _scan(con: duckdb.DuckDBPyConnection, folder: Path, has_counter: bool
          ) -> list[dict[str, Any]]:
    """Per GPU over the whole folder: first and last reading, counts and the power sum; a
    value out of its declared bounds, or a reading without GPU or time, names its file."""
    energy = "energy_j" if has_counter else "CAST(NULL AS DOUBLE)"
    power, counter = FIELDS["power_w"], FIELDS["energy_counter_j"]
    bad = (f"gpu_uuid IS NULL OR timestamp_utc IS NULL OR power_w < {power.ge!r} "
           f"OR power_w > {power.le!r} OR isnan(power_w) OR {energy} < {counter.ge!r} "
           f"OR isnan({energy})")
    rows = con.execute(f"""
        SELECT gpu_uuid, epoch_us(min(timestamp_utc)) / 1e6, epoch_us(max(timestamp_utc)) / 1e6,
               count(*), count(power_w), count({energy}), sum(power_w),
               gpu_uuid IS NULL OR count(timestamp_utc) < count(*)
               OR min(power_w) < {power.ge!r} OR max(power_w) > {power.le!r}
               OR isnan(max(power_w)) OR min({energy}) < {counter.ge!r}
               OR isnan(max({energy})),
               count(*) - count(coalesce(power_w, {energy}))
        FROM {_source(folder)} GROUP BY gpu_uuid ORDER BY gpu_uuid""").fetchall()
    if any(r[7] for r in rows):  # values out of bounds: a second pass names the file
        (found,), = con.execute(f"SELECT min(filename) FROM {_source(folder, filename=True)} "
                                f"WHERE {bad}").fetchall()
        raise FleetError(f"{found}: a sample without gpu_uuid or timestamp_utc, or a "
                         f"power_w outside {power.ge:g}..{power.le:g} W or energy_j below 0 J")
    keys = ("device_id", "first", "last", "n", "n_power", "n_counter", "power_sum_w")
    return [dict(zip(keys, r[:7], strict=True)) | {"empty": r[8]} for r in rows
            if r[1] is not None]


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
                 params: EnergyParams | None = None) -> tuple[EnergyResult, list[str]]:
    params = params or EnergyParams()
    folder = Path(folder)
    origin = str(folder)
    con = _connect()
    try:
        files, columns = _files(con, folder)
        has_counter = "energy_j" in columns
        devices = _scan(con, folder, has_counter)
        if not devices:
            raise EnergyError(f"{origin}: no power or energy samples")
        notes: list[str] = []
        empty = sum(d["empty"] for d in devices)
        if empty:
            notes.append(f"{empty} sample(s) without power or energy skipped ({empty} x "
                         "no value)")
        if window is None:
            a = max(d["first"] for d in devices)
            b = min(d["last"] for d in devices)
            if not b > a:
                raise EnergyError(f"{origin}: the devices' logs do not overlap in time")
            window = Window(datetime.fromtimestamp(a, UTC), datetime.fromtimestamp(b, UTC))
        a, b = window.start_utc.timestamp(), window.end_utc.timestamp()
        if window.uncertainty_s:
            notes.append("no energy range from Parquet samples: the window's uncertainty "
                         "is not applied")
        method = _method(devices, origin, notes)
        rows = _near(con, folder, devices, a, b, method, params, has_counter,
                     "day" if "day" in columns else None)
    finally:
        con.close()
    return _result(rows, devices, window, method, params, origin, notes), files


def _near(con: duckdb.DuckDBPyConnection, folder: Path, devices: list[dict[str, Any]],
          a: float, b: float, method: str, params: EnergyParams, has_counter: bool,
          day_column: str | None) -> list[dict[str, Any]]:
    """The energy query over the samples near [a, b]: a margin widened (x4) until every GPU
    has a reading at or before a and at or after b, or its first and last (as energy.py's
    `_near_window`)."""
    margin = max(60.0, 0.05 * (b - a))
    start = min(d["first"] for d in devices)
    end = max(d["last"] for d in devices)
    by_id = {d["device_id"]: d for d in devices}
    while True:
        lo, hi = max(a - margin, start), min(b + margin, end)
        sql = energy_sql("duckdb", _source(folder), a, b, lo, hi, method,
                         gap_factor=params.gap_factor, has_counter=has_counter,
                         day_column=day_column)
        counted = {r[0]: r[1:] for r in con.execute(
            sql.split("\nreadings AS", 1)[0].rstrip(",\n") + "\nSELECT * FROM counted"
        ).fetchall()}
        complete = all(
            d["device_id"] in counted
            and (counted[d["device_id"]][0] <= a or counted[d["device_id"]][0] == d["first"])
            and (counted[d["device_id"]][1] >= b or counted[d["device_id"]][1] == d["last"])
            for d in devices)
        if complete or (lo <= start and hi >= end):
            break
        margin *= 4
    cursor = con.execute(sql)
    names = [c[0] for c in cursor.description]
    rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    for r in rows:
        _, _, in_window, busy_sum, busy_n = counted[r["device_id"]]
        r.update(in_window=in_window, busy_sum_w=busy_sum or 0.0, busy_n=busy_n)
        r["n_method"] = by_id[r["device_id"]]["n_counter" if method == "counter" else "n_power"]
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
        lead, trail = max(r["first"] - a, 0.0), max(b - r["last"], 0.0)
        tolerance = 0.0 if r["n_method"] == 2 else params.gap_factor * r["period"]
        if lead > tolerance or trail > tolerance:
            raise EnergyError(
                f"{origin}: power log does not cover the window for device {r['device_id']}: "
                f"it covers {utc_of(r['first']).isoformat()} .. {utc_of(r['last']).isoformat()}, "
                f"window {utc_of(a).isoformat()} .. {utc_of(b).isoformat()}")
        energy += ((r["e_window"] or 0.0) + lead * (r["p_first"] or 0.0)
                   + trail * (r["p_last"] or 0.0))
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
                                sum(g.duration_s for g in gaps), len(devices), 0.0,
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
