"""Benchmark: what `scorecard run` does after the engine (issue 18's "1,000 candidates in
seconds", the report part), now against the baseline of revision 4fdd196, in one process,
interleaved, on one engine result.

    uv run python benchmarks/report_files.py [--sizes 7,1000] [--rounds 3] [--baseline REV]

The proposals are benchmarks/candidates.py's (the bundled example's candidates copied, half
near-duplicates); the engine (`scorecard.compute`) runs once per size on a temporary store
holding the bundled data. Then, round after round, each tail runs on the same result, into a
folder of its own, charts and the scorecard table coming from the store's caches (as on a
rerun; an untimed run fills them first):

- baseline: the contract walked for bidi and control characters, dumped, stored in line,
  scorecard.json, the terminal summary, then the report files with the result walked again
  and the workbook written cell by cell (reports/files/xlsx.py at `--baseline`, from git);
- now: `pipeline.run`'s tail: dumped, its text scanned (`reports.cells.plain_json`), stored
  in a thread (`_meanwhile`) while scorecard.json, the summary and the files are written.

Prints per size each round's wall and CPU seconds (process time, every thread), the medians
and the ratio now / baseline (CPU is the steadier figure on a shared machine), and `uptime`'s
load average before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from candidates import proposal  # noqa: E402
from workbook import baseline_writer  # noqa: E402

from pipeline import store  # noqa: E402
from pipeline.engine.scorecard import compute, to_contract  # noqa: E402
from pipeline.inputs import resolve  # noqa: E402
from pipeline.run import _keep, _meanwhile, execute  # noqa: E402
from pipeline.store import caches  # noqa: E402
from pipeline.workspace import Opened, code_version, dumps, opened  # noqa: E402
from reports.cells import plain_all, plain_json  # noqa: E402
from reports.figures.charts import rendering_cache  # noqa: E402
from reports.files import outputs  # noqa: E402
from reports.files.xlsx import write_xlsx  # noqa: E402
from reports.frames import Frames, frames_of  # noqa: E402
from reports.html.report import write_html  # noqa: E402
from reports.html.scorecard_table import table_cache  # noqa: E402
from reports.summary import print_summary  # noqa: E402
from schemas.result import Result  # noqa: E402

BASELINE = "4fdd196"  # before issue 18's report-part work
STAMP = "2026-12-01T00:00:00+00:00"
Writer = Callable[[Result, Path, Frames], None]


def files(o: Opened, result: Result, folder: Path, workbook: Writer) -> None:
    """The report files, as write_outputs writes them (no PDF, no diff): the result's frames
    built once for all of them."""
    frames = frames_of(result)
    with rendering_cache(caches.ChartCache(o.con)), table_cache(caches.TableCache(o.con)):
        write_html(result, folder / "scorecard.html", None, frames=frames)
        workbook(result, folder / "scorecard.xlsx", frames)
        outputs.write_csv(result, folder / "scorecard.csv", frames)
        outputs.write_parquet(result, folder / "scorecard.parquet", frames)


def baseline_tail(o: Opened, card: Any, folder: Path, workbook: Writer) -> None:
    result = Result.model_validate(plain_all(to_contract(card, STAMP, code_version()).document()))
    document = dumps(result.document())
    store.save_run(o.con, result, "a" * 64, "baseline", document)
    (folder / "scorecard.json").write_text(document, encoding="utf-8")
    print_summary(result)
    files(o, Result.model_validate(plain_all(result.document())), folder, workbook)


def tail_now(o: Opened, card: Any, folder: Path, workbook: Writer) -> None:
    result = to_contract(card, STAMP, code_version())
    document = dumps(result.document())
    if not plain_json(document):
        result = Result.model_validate(plain_all(result.document()))
        document = dumps(result.document())
    with _meanwhile(_keep(o, result, "b" * 64, "now", document, False)):
        (folder / "scorecard.json").write_text(document, encoding="utf-8")
        print_summary(result)
        files(o, result, folder, workbook)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="7,1000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    uptime = ["uptime"]
    print("uptime before:", subprocess.run(uptime, capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "bench.duckdb"
        before = baseline_writer(args.baseline, folder, "baseline")
        if before is None:  # it said why
            raise SystemExit(1)
        def old_workbook(result: Result, path: Path, frames: Frames) -> None:
            before(result.document(), path)  # the revision's writer reads the plain document

        tails = {f"baseline {args.baseline}": (baseline_tail, old_workbook),
                 "now": (tail_now, write_xlsx)}
        for n in (int(s) for s in args.sizes.split(",")):
            file = folder / f"candidates_{n}.toml"
            file.write_text(proposal(n), encoding="utf-8")
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                execute(file, vintage=None, out=folder / "warm", db=db, json_out=True)
            with opened(file, None, db) as o:
                resolved = resolve(o.proposal, o.name, o.market, o.cache)
                card = compute(o.proposal, resolved, o.market)
                warm = folder / f"out-{n}-warm"
                warm.mkdir()
                with contextlib.redirect_stdout(io.StringIO()):  # fills the caches, untimed
                    tail_now(o, card, warm, write_xlsx)
                walls: dict[str, list[float]] = {name: [] for name in tails}
                cpus: dict[str, list[float]] = {name: [] for name in tails}
                for r in range(args.rounds):
                    for name, (tail, workbook) in tails.items():
                        out = folder / f"out-{n}-{r}-{name.split()[0]}"
                        out.mkdir()
                        wall, cpu = time.perf_counter(), time.process_time()
                        with contextlib.redirect_stdout(io.StringIO()):
                            tail(o, card, out, workbook)
                        walls[name].append(time.perf_counter() - wall)
                        cpus[name].append(time.process_time() - cpu)
                        print(f"{n:,} candidates, round {r + 1}, {name}: "
                              f"{walls[name][-1]:.2f} s wall, {cpus[name][-1]:.2f} s CPU",
                              flush=True)
            (old, new), (old_cpu, new_cpu) = ([statistics.median(v[name]) for name in tails]
                                              for v in (walls, cpus))
            print(f"{n:,} candidates, the report part (medians of {args.rounds}): baseline "
                  f"{old:.2f} s wall, {old_cpu:.2f} s CPU; now {new:.2f} s wall, "
                  f"{new_cpu:.2f} s CPU; now / baseline {new / old:.2f} wall, "
                  f"{new_cpu / old_cpu:.2f} CPU", flush=True)
    print("uptime after:", subprocess.run(uptime, capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
