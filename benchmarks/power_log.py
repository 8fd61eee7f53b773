"""Speed of `scorecard evidence add` of a big nvidia-smi log (issue 18): 8 GPUs x 10 Hz x 36 h
= 10,368,000 rows, 383 MB.

Run by hand (not collected by pytest):

    uv run python benchmarks/power_log.py [--hours 36] [--keep DIR] [--runs 3] [--phases]
        [--inspect]

It writes the log with a seeded generator, then, `runs` times, each in a fresh child process
(wall time, CPU time (user + sys) and peak RSS of that process, imports included):

  1. baseline: DuckDB's own `CREATE TABLE t AS SELECT * FROM read_csv(...)` of the file into
     a new database file;
  2. ours: `scorecard evidence add --tz UTC FILE --db NEW.duckdb` (hash, parse, check, keep
     the bytes as a raw snapshot (compressed into `NEW.duckdb.raw/` beside the store, the
     file being over 16 MiB), load the samples);
  3. unchanged: the same command again on that store (answered from the file's recorded
     size, modification time and sha256, no parse); its imports (duckdb, polars, the CLI:
     0.6-0.9 s on a quiet machine) and the answer after them are timed apart;
  4. with `--phases`, `add_power_logs` into another new store (the log hashed ahead, as the
     command does), each stage it reports (checking, hashing when not done yet, reading and
     loading the rows with the snapshot kept meanwhile, closing) timed in wall and CPU
     seconds by its progress callback.
  5. with `--inspect` (issue 27, R15), `scorecard evidence inspect --tz UTC FILE --json`
     (the log computed part by part: `pipeline.evidence.power.streamed`) and the same with
     the log read whole (the path before: its threshold set past the file's size), their
     peak RSS beside `add`'s and the relative difference of their energies.

and prints each figure, the ratio of ours to the baseline of the same run, and the medians.
Targets (issue 18): wall ratio <= 1.5, peak RSS <= 1 GB, unchanged < 1 s; (issue 27) inspect's
peak near add's (a 2 GB log under about 3 GB).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import child_process  # benchmarks/child_process.py, beside this script
from child_process import figures

GPUS, HZ = 8, 10


def generate(path: Path, hours: float) -> int:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(20261129)
    ticks = int(HZ * 3600 * hours)
    start = np.datetime64("2026-11-20T00:00:00.000")
    times = start + (np.arange(ticks) * (1000 // HZ)).astype("timedelta64[ms]")
    stamps = pl.Series(times).dt.strftime("%Y/%m/%d %H:%M:%S%.3f").to_numpy().repeat(GPUS)
    frame = pl.DataFrame({
        "t": stamps, "i": np.tile(np.arange(GPUS), ticks),
        "p": rng.uniform(200, 700, ticks * GPUS).round(2)})
    lines = frame.select(pl.format("{}, {}, {} W", "t", "i", "p"))
    with path.open("w") as out:
        out.write("timestamp, index, power.draw [W]\n")
        lines.write_csv(out, include_header=False, quote_style="never")
    return frame.height


def child(what: str, log: Path, db: Path) -> None:
    """In the child process: do `what`, print its wall and CPU seconds and peak RSS, and the
    seconds of its imports and of the work after them."""
    begin = time.perf_counter()
    if what == "duckdb":
        import duckdb

        imported = time.perf_counter()
        con = duckdb.connect(str(db))
        con.execute("SET enable_progress_bar = false")
        con.execute("CREATE TABLE t AS SELECT * FROM read_csv(?)", [str(log)])
        rows = con.execute("SELECT count(*) FROM t").fetchall()[0][0]
        con.close()
        status = f"{rows} rows"
    elif what in ("inspect", "inspect_whole"):
        from typer.testing import CliRunner

        import pipeline.evidence.power.streamed as streamed
        from pipeline.cli import app
        from pipeline.evidence import inspection  # noqa: F401  (what the command imports)

        if what == "inspect_whole":  # the path before R15: the log read whole, then its energy
            streamed.STREAM_BYTES = log.stat().st_size + 1
        imported = time.perf_counter()
        result = CliRunner().invoke(app, ["evidence", "inspect", "--tz", "UTC", str(log),
                                          "--json"])
        if result.exit_code:
            raise SystemExit(f"evidence inspect failed: {result.output}")
        found = json.loads(result.stdout)["power_log"]
        end = time.perf_counter()
        figures(begin, imports_s=imported - begin, work_s=end - imported,
                status=f"{found['samples']} samples", energy_j=found["energy_j"],
                peak_power_w=found["peak_power_w"])
        return
    elif what == "phases":
        import resource

        from pipeline.evidence.power.hashing import HashedAhead

        hashed = HashedAhead([log])  # as the command does: hashed while the rest imports
        from pipeline.evidence.power.logs import add_power_logs
        from pipeline.store import connect

        imported = time.perf_counter()
        marks: list[tuple[str, float, float]] = []

        def mark(stage: str) -> None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            marks.append((stage, time.perf_counter(), usage.ru_utime + usage.ru_stime))

        mark("open the store")
        con = connect(db)
        # the stages add_power_logs reports: checking, hashing, the rows (the snapshot beside them)
        [(_, result)] = add_power_logs(con, [log], tz="UTC", hashed=hashed,
                                       progress=lambda what, stage: mark(stage.split(" ")[0]))
        mark("close")
        con.close()
        mark("end")
        phases = {f"{a}_s": [round(t1 - t0, 2), round(c1 - c0, 2)]
                  for (a, t0, c0), (_, t1, c1) in itertools.pairwise(marks)}
        end = time.perf_counter()
        figures(begin, imports_s=imported - begin, work_s=end - imported,
                status=f"{result.status}, {result.row_count} rows",
                phases_wall_cpu_s=phases)
        return
    else:
        from typer.testing import CliRunner

        from pipeline.cli import app
        from pipeline.evidence import add  # noqa: F401  (what the command imports)

        imported = time.perf_counter()
        result = CliRunner().invoke(app, ["evidence", "add", "--tz", "UTC", str(log),
                                          "--db", str(db)])
        if result.exit_code:
            raise SystemExit(f"evidence add failed: {result.output}")
        status = result.stdout.strip().rsplit(": ", 1)[-1]
    end = time.perf_counter()
    figures(begin, imports_s=imported - begin, work_s=end - imported, status=status)


def measured(what: str, log: Path, db: Path) -> dict[str, Any]:
    """`what` in a fresh process; its whole-process wall time is measured here too."""
    return child_process.measured(__file__, what, str(log), str(db))


def _stored_mb(db: Path) -> float:
    """The database file's size and that of whatever is kept beside it (a folder named after
    it), in MB."""
    beside = [p for p in db.parent.glob(db.name + ".*") if p.is_file()]
    beside += [p for d in db.parent.glob(db.name + ".*") if d.is_dir() for p in d.rglob("*")
               if p.is_file()]
    return sum(p.stat().st_size for p in [db, *beside]) / 1e6


def _remove(db: Path) -> None:
    """A store's file and the folder of raw snapshots beside it."""
    from pipeline.store.snapshots import raw_folder_of

    db.unlink(missing_ok=True)
    shutil.rmtree(raw_folder_of(db), ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=36.0)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep the log in")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phases", action="store_true",
                        help="also time each stage of an add in one more process per run")
    parser.add_argument("--inspect", action="store_true",
                        help="also `evidence inspect LOG` part by part and read whole (R15)")
    parser.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / f"nvidia_smi_{args.hours:g}h.csv"
        if not log.exists():
            print(f"generated {generate(log, args.hours):,} rows, "
                  f"{log.stat().st_size / 1e6:,.0f} MB", file=sys.stderr)
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        runs: list[dict[str, Any]] = []
        for k in range(args.runs):
            base_db, our_db = Path(tmp) / f"base{k}.duckdb", Path(tmp) / f"ours{k}.duckdb"
            run: dict[str, Any] = {"duckdb": measured("duckdb", log, base_db),
                   "ours": measured("ours", log, our_db),
                   "unchanged": measured("ours", log, our_db)}
            if args.inspect:
                run["inspect"] = measured("inspect", log, our_db)
                run["inspect_whole"] = measured("inspect_whole", log, our_db)
                run["inspect_rss_to_add"] = (run["inspect"]["peak_rss_gb"]
                                             / run["ours"]["peak_rss_gb"])
                run["inspect_rss_to_whole"] = (run["inspect"]["peak_rss_gb"]
                                               / run["inspect_whole"]["peak_rss_gb"])
                run["inspect_energy_rel_diff"] = abs(
                    run["inspect"]["energy_j"] / run["inspect_whole"]["energy_j"] - 1)
            if args.phases:
                phase_db = Path(tmp) / f"phases{k}.duckdb"
                run["phases"] = measured("phases", log, phase_db)["phases_wall_cpu_s"]
                _remove(phase_db)
            run["wall_ratio"] = run["ours"]["process_s"] / run["duckdb"]["process_s"]
            run["cpu_ratio"] = run["ours"]["cpu_s"] / run["duckdb"]["cpu_s"]
            run["rss_ratio"] = run["ours"]["peak_rss_gb"] / run["duckdb"]["peak_rss_gb"]
            run["store_mb"] = _stored_mb(our_db)
            run["table_mb"] = _stored_mb(base_db)
            run["size_ratio"] = run["store_mb"] / run["table_mb"]
            runs.append(run)
            print(json.dumps(run, sort_keys=True))
            for db in (base_db, our_db):
                _remove(db)

        def median(pick: str, key: str | None = None) -> float:
            return float(statistics.median(r[pick] if key is None else r[pick][key] for r in runs))

        print(f"DuckDB CREATE TABLE AS read_csv: {median('duckdb', 'process_s'):.2f} s wall, "
              f"{median('duckdb', 'cpu_s'):.2f} s CPU, "
              f"{median('duckdb', 'peak_rss_gb'):.2f} GB peak RSS")
        print(f"evidence add: {median('ours', 'process_s'):.2f} s wall, "
              f"{median('ours', 'cpu_s'):.2f} s CPU, "
              f"{max(r['ours']['peak_rss_gb'] for r in runs):.2f} GB peak RSS (max)")
        print(f"ratio to DuckDB (median): wall {median('wall_ratio'):.2f} (target <= 1.5), "
              f"CPU {median('cpu_ratio'):.2f}, memory {median('rss_ratio'):.2f}")
        print(f"store {median('store_mb'):.0f} MB against DuckDB's table {median('table_mb'):.0f} "
              f"MB: {median('size_ratio'):.2f}x (target <= 2; the store file and what it "
              "keeps beside it, against the CREATE TABLE AS database file)")
        print(f"unchanged file: {median('unchanged', 'work_s'):.2f} s to answer (target < 1 s) "
              f"after {median('unchanged', 'imports_s'):.2f} s of imports; "
              f"{median('unchanged', 'process_s'):.2f} s whole process "
              f"({runs[-1]['unchanged']['status']})")
        if args.inspect:
            print(f"evidence inspect LOG --json: {median('inspect', 'process_s'):.2f} s wall, "
                  f"{max(r['inspect']['peak_rss_gb'] for r in runs):.2f} GB peak RSS (max), "
                  f"{median('inspect_rss_to_add'):.2f}x add's peak (median); read whole (the "
                  f"path before): {median('inspect_whole', 'process_s'):.2f} s wall, "
                  f"{max(r['inspect_whole']['peak_rss_gb'] for r in runs):.2f} GB peak RSS "
                  f"(max); part by part / whole: memory {median('inspect_rss_to_whole'):.2f}, "
                  f"energy differs by {max(r['inspect_energy_rel_diff'] for r in runs):.1e} "
                  "relative (max)")
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
