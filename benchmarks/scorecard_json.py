"""Benchmark: the scorecard's JSON of 1,000 candidates, written and stored (issue 33), against
the way it was (indented by the pure-Python encoder, stored twice: as the run and again as the
published scorecard), interleaved round by round in this process.

    uv run python benchmarks/scorecard_json.py [--size 1000] [--rounds 5]

The proposal is benchmarks/candidates.py's; its result is computed once, untimed, by
`scorecard run --json` on a temporary store. Each round, on a store of its own per side:

- before: `json.dumps(indent=2)` of the result's document, inserted into `out__scorecard_run`
  and again into `out__scorecard` (the previous `save_run` and `publish_scorecard`);
- now: `pipeline.workspace.dumps` (compact above `INDENT_MAX_CHARS`) and
  `pipeline.store.save_run(..., publish=True)` (the document once).

Prints each side's median wall and CPU seconds for the dump and for the store, the ratios
now / before, the document's size both ways and each store's file size after one run, and
the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import duckdb  # noqa: E402
from candidates import proposal  # noqa: E402

from pipeline import store  # noqa: E402
from pipeline.workspace import dumps  # noqa: E402
from schemas.result import Result  # noqa: E402

SHA = "a" * 64


def dumps_before(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, default=str,
                      allow_nan=False) + "\n"


def store_before(con: duckdb.DuckDBPyConnection, result: Result, text: str) -> None:
    """The run and the published scorecard, each with its own copy (as before issue 33)."""
    con.execute("""CREATE TABLE IF NOT EXISTS out__scorecard_run (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        proposal_source VARCHAR NOT NULL, generated_at_utc TIMESTAMPTZ NOT NULL,
        candidates_json VARCHAR NOT NULL, PRIMARY KEY (vintage, proposal, proposal_sha256))""")
    con.execute("""CREATE TABLE IF NOT EXISTS out__scorecard (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        generated_at_utc TIMESTAMPTZ NOT NULL, candidates_json VARCHAR NOT NULL,
        PRIMARY KEY (vintage, proposal))""")
    at = datetime.fromisoformat(result.generated_at)
    con.execute("INSERT OR REPLACE INTO out__scorecard_run VALUES (?, ?, ?, ?, ?, ?)",
                [result.vintage, result.proposal, SHA, "bench", at, text])
    con.execute("INSERT OR REPLACE INTO out__scorecard VALUES (?, ?, ?, ?, ?)",
                [result.vintage, result.proposal, SHA, at, text])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        file = folder / "candidates.toml"
        file.write_text(proposal(args.size), encoding="utf-8")
        done = subprocess.run([str(Path(sys.executable).parent / "scorecard"), "run",
                               str(file), "--json", "--db", str(folder / "engine.duckdb")],
                              capture_output=True, text=True, cwd=folder, check=True)
        result = Result.model_validate_json(done.stdout)
        document = result.document()
        sides = ("before", "now")
        times: dict[str, list[tuple[float, float, float, float]]] = {s: [] for s in sides}
        sizes: dict[str, tuple[int, int]] = {}
        for r in range(args.rounds):
            for side in sides:
                db = folder / f"{side}-{r}.duckdb"
                con = store.connect(db)
                wall, cpu = time.perf_counter(), time.process_time()
                text = dumps_before(document) if side == "before" else dumps(document)
                dump_wall, dump_cpu = time.perf_counter() - wall, time.process_time() - cpu
                wall, cpu = time.perf_counter(), time.process_time()
                if side == "before":
                    store_before(con, result, text)
                else:
                    store.save_run(con, result, SHA, "bench", text, publish=True)
                con.close()
                times[side].append((dump_wall, dump_cpu, time.perf_counter() - wall,
                                    time.process_time() - cpu))
                sizes[side] = (len(text.encode()), db.stat().st_size)
                db.unlink()
                print(f"round {r + 1} {side}: dump {dump_wall:.3f} s wall {dump_cpu:.3f} s "
                      f"CPU; store {times[side][-1][2]:.3f} s wall {times[side][-1][3]:.3f} s "
                      "CPU", flush=True)
    med = {s: [statistics.median(t[i] for t in times[s]) for i in range(4)] for s in sides}
    print(f"load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"{args.size:,} candidates, medians of {args.rounds}")
    for i, what in enumerate(("dump wall", "dump CPU", "store wall", "store CPU")):
        print(f"{what:<10} before {med['before'][i]:.3f} s, now {med['now'][i]:.3f} s = "
              f"{med['now'][i] / med['before'][i]:.2f}x")
    total = [sum(med[s][0::2]) for s in sides], [sum(med[s][1::2]) for s in sides]
    print(f"dump + store: before {total[0][0]:.3f} s wall {total[1][0]:.3f} s CPU, now "
          f"{total[0][1]:.3f} s wall {total[1][1]:.3f} s CPU = {total[0][1] / total[0][0]:.2f}x "
          f"wall, {total[1][1] / total[1][0]:.2f}x CPU")
    for side in sides:
        print(f"{side}: document {sizes[side][0] / 1e6:.1f} MB, store file after one run "
              f"{sizes[side][1] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
