"""Fleet power out of core (issue 18): 64 GPUs at 1 Hz for 18 days (99,532,800 rows) as
Parquet partitioned by day (Hive layout `day=YYYY-MM-DD/`; columns `gpu_uuid`,
`timestamp_utc`, `power_w`), written by DuckDB `COPY ... PARTITION_BY`.

Run by hand (not collected by pytest):

    uv run python benchmarks/fleet_parquet.py [--gpus 64] [--days 18] [--keep DIR] [--runs 3]
                                              [--windows span,window]

Then, `runs` times, each in a fresh child process (wall time, CPU time and peak RSS of that
process, imports included), over the whole span and over one 6-hour window (06:00-12:00 UTC
of the 8th day):

  1. scan: DuckDB's own aggregate over the files (`count(*)`, `avg(power_w)` per GPU);
  2. bare: DuckDB's own trapezoid over the files (one `lead()` window per GPU, summed), the
     least any energy over them can cost;
  3. ours: `scorecard evidence add --parquet DIR --json` (`pipeline.evidence.power.fleet`: the
     rules of pipeline/evidence/power/energy.py: method, gaps, edges, resets);
  4. spark (issue 32; `--engines` adds it, pyspark and Java needed): the fleet query as
     `scorecard evidence sql --dialect spark` prints it, on pyspark in local mode (local[2],
     driver memory 2 GB), its session start included; the peak RSS is the Python process's
     (the JVM is its child: not counted).

It prints each figure and the ratio of ours to both baselines of the same run. Targets
(issue 18): peak RSS <= 2 GB, time <= 2x DuckDB's own aggregate; issue 32, over the whole
span of 256 GPUs x 1 Hz x 7 days (`--gpus 256 --days 7`): <= 1.5x DuckDB's bare trapezoid.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import child_process  # benchmarks/child_process.py, beside this script
from child_process import figures

START = "2026-11-01 00:00:00"


def window_of(days: int) -> tuple[str, str]:
    """The 6-hour window, 06:00-12:00 UTC of the 8th day (of the last, for fewer days)."""
    day = f"2026-11-{min(8, days):02d}"
    return f"{day}T06:00:00+00:00", f"{day}T12:00:00+00:00"


def generate(folder: Path, gpus: int, days: int) -> int:
    """Seeded, deterministic samples in time order (as exporters write them): each GPU's
    power a slow wave plus hashed noise. One COPY per day (a 100-million-row sort at once
    would need GBs), each appending its day's partition."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for day in range(days):
        con.execute(f"""
            COPY (
                SELECT printf('GPU-%08x-0000-4000-8000-%012x', g, g * 7919) AS gpu_uuid,
                       TIMESTAMPTZ '{START}+00' + to_seconds(s) AS timestamp_utc,
                       round(350 + 150 * sin(s / 13751.0 + g) + (hash(g * 1000003 + s) % 1000)
                             / 20.0, 2) AS power_w,
                       strftime(TIMESTAMP '{START}' + to_seconds(s), '%Y-%m-%d') AS day
                FROM range({gpus}) AS gs(g),
                     range({day * 86_400}, {(day + 1) * 86_400}) AS ss(s)
                ORDER BY timestamp_utc, gpu_uuid
            ) TO '{folder}' (FORMAT parquet, PARTITION_BY (day), APPEND)""")
    return gpus * days * 86_400


SCAN = """SELECT gpu_uuid, count(*), avg(power_w), min(timestamp_utc), max(timestamp_utc)
FROM read_parquet(?, hive_partitioning = true) GROUP BY gpu_uuid"""
BARE = """SELECT sum(e) FROM (
  SELECT (power_w + lead(power_w) OVER w) / 2
         * (epoch(lead(timestamp_utc) OVER w) - epoch(timestamp_utc)) AS e
  FROM read_parquet(?, hive_partitioning = true)
  WHERE timestamp_utc >= ?::TIMESTAMPTZ AND timestamp_utc <= ?::TIMESTAMPTZ
  WINDOW w AS (PARTITION BY gpu_uuid ORDER BY timestamp_utc))"""


def child(what: str, folder: Path, window: str) -> None:
    begin = time.perf_counter()
    days = len(list(folder.glob("day=*")))
    start, end = window_of(days) if window == "window" else ("1970-01-01T00:00:00+00:00",
                                                              "2100-01-01T00:00:00+00:00")
    if what == "spark":
        answer = _spark(folder, start, end, days)
    elif what in ("scan", "bare"):
        import duckdb

        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        glob = str(folder / "**" / "*.parquet")
        if what == "scan":
            answer = len(con.execute(SCAN, [glob]).fetchall())
        else:
            answer = con.execute(BARE, [glob, start, end]).fetchall()[0][0]
    else:
        from typer.testing import CliRunner

        from pipeline.cli import app

        args = ["evidence", "add", "--parquet", str(folder), "--json"]
        if window == "window":
            args += ["--window-start", start, "--window-end", end]
        result = CliRunner().invoke(app, args)
        if result.exit_code:
            raise SystemExit(f"evidence add --parquet failed: {result.output}")
        answer = json.loads(result.stdout)["energy_j"]
    figures(begin, answer=answer)


def _spark(folder: Path, start: str, end: str, days: int) -> float:
    """The fleet query's energy, the Spark text on pyspark local mode; the whole span is the
    generated one (START to its last reading)."""
    from datetime import datetime, timedelta

    from pyspark.sql import SparkSession

    from pipeline.evidence.power.fleet_sql import query_text

    first = datetime.fromisoformat(START + "+00:00")
    a = max(datetime.fromisoformat(start), first)
    b = min(datetime.fromisoformat(end), first + timedelta(days=days) - timedelta(seconds=1))
    text = query_text("spark", str(folder), a.timestamp(), b.timestamp(), "trapezoid")
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
             .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        return float(spark.sql(text).first()["energy_j"])
    finally:
        spark.stop()


def measured(what: str, folder: Path, window: str) -> dict[str, Any]:
    return child_process.measured(__file__, what, str(folder), window)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=64)
    parser.add_argument("--days", type=int, default=18)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep the files in")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--windows", default="span,window",
                        help="which of span (the whole span) and window (6 hours) to time")
    parser.add_argument("--engines", default="scan,bare,ours",
                        help="which of scan, bare, ours and spark to time (spark: pyspark)")
    parser.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.child[2])
        return
    engines = args.engines.split(",")
    if not {"scan", "bare", "ours"} <= set(engines):
        parser.error("--engines: scan, bare and ours are always timed (the ratios need them)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)) / f"fleet_{args.gpus}x{args.days}d"
        if not folder.exists():
            begin = time.perf_counter()
            rows = generate(folder, args.gpus, args.days)
            print(f"generated {rows:,} rows in {time.perf_counter() - begin:.0f} s",
                  file=sys.stderr)
        size = sum(f.stat().st_size for f in folder.rglob("*.parquet"))
        print(f"{folder}: {size / 1e6:,.0f} MB of Parquet; load average "
              f"{os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        for window in args.windows.split(","):
            runs: list[dict[str, Any]] = []
            for _ in range(args.runs):
                run: dict[str, Any] = {what: measured(what, folder, window)
                                       for what in engines}
                for base in ("scan", "bare"):
                    run[f"ratio_to_{base}"] = run["ours"]["process_s"] / run[base]["process_s"]
                runs.append(run)
                print(window, json.dumps(run, sort_keys=True))

            def median(pick: str, key: str | None = None, runs: list[dict[str, Any]] = runs
                       ) -> float:
                return float(statistics.median(
                    r[pick] if key is None else r[pick][key] for r in runs))

            for what in engines:
                print(f"{window} {what}: {median(what, 'process_s'):.2f} s wall, "
                      f"{median(what, 'cpu_s'):.2f} s CPU, "
                      f"{max(r[what]['peak_rss_gb'] for r in runs):.2f} GB peak RSS (max)")
            print(f"{window}: ours / DuckDB scan {median('ratio_to_scan'):.2f}, ours / DuckDB "
                  f"bare trapezoid {median('ratio_to_bare'):.2f} (targets <= 2, over the span "
                  "<= 1.5); energy "
                  f"{runs[-1]['ours']['answer']:.6g} J ours, {runs[-1]['bare']['answer']:.6g} "
                  "J bare" + (f", {runs[-1]['spark']['answer']:.6g} J Spark"
                              if "spark" in engines else ""))
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
