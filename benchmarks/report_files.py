"""Benchmark: what `scorecard run` does after the engine (issue 18's "1,000 candidates in
seconds", the report part), now against revision 4fdd196 run whole in a child process,
interleaved round by round.

    uv run python benchmarks/report_files.py [--sizes 7,1000] [--rounds 3] [--baseline REV]

The proposals are benchmarks/candidates.py's (the bundled example's candidates copied, half
near-duplicates). Each side computes its own engine result once per size, untimed, from the
same proposal and the same bundled data, each on a temporary store of its own (`execute
--json` loads it first), then fills its caches with one untimed tail. Then, round after round,
each tail runs on its result, into a folder of its own:

- baseline: revision `--baseline`'s source tree exported whole (`git archive`) and run in a
  child process with that tree alone on sys.path (benchmarks/child_process.py `Baseline`):
  its `pipeline.run.execute` tail from the result on: the contract walked for bidi and
  control characters, dumped, stored in line, scorecard.json, the terminal summary, then the
  report files with the result walked again and the workbook written cell by cell, charts
  from its store's cache (the scorecard table had none then). The child times itself (wall,
  and CPU by `time.process_time`: its threads, not the parent's) and answers each request.
- now: in this process, `pipeline.run`'s tail: dumped, its text scanned
  (`reports.cells.plain_json`), stored in a thread (`_meanwhile`) while scorecard.json, the
  summary and the files are written, the result's frames built once, charts and the
  scorecard table from the store's caches.

The baseline used to load only the old workbook writer beside today's modules; since the
engine returns a typed `Result` that today's `reports.frames` reads by attribute, that mix no
longer runs, and it timed neither revision as it was. Both sides now run with the Python and
libraries of this install (4fdd196's pyproject differs from today's by xlsxwriter, now
pinned to 3.3.1, the version installed, and by jinja2, added since).

Prints per size each round's wall and CPU seconds, the medians and the ratio now / baseline
(CPU is the steadier figure on a shared machine), and `uptime`'s load average before and
after.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from candidates import proposal  # noqa: E402
from child_process import Baseline, exported  # noqa: E402

from pipeline.engine.scorecard import compute, to_contract  # noqa: E402
from pipeline.inputs import resolve  # noqa: E402
from pipeline.run import _keep, _meanwhile, execute  # noqa: E402
from pipeline.store import caches  # noqa: E402
from pipeline.workspace import Opened, code_version, dumps, opened  # noqa: E402
from reports.cells import plain_all, plain_json  # noqa: E402
from reports.figures.charts import rendering_cache  # noqa: E402
from reports.files import outputs  # noqa: E402
from reports.files.xlsx import write_xlsx  # noqa: E402
from reports.frames import frames_of  # noqa: E402
from reports.html.report import write_html  # noqa: E402
from reports.html.scorecard_table import table_cache  # noqa: E402
from reports.summary import print_summary  # noqa: E402
from schemas.result import Result  # noqa: E402

BASELINE = "4fdd196"  # before issue 18's report-part work
STAMP = "2026-12-01T00:00:00+00:00"


def files(o: Opened, result: Result, folder: Path) -> None:
    """The report files, as write_outputs writes them (no PDF, no diff): the result's frames
    built once for all of them."""
    frames = frames_of(result)
    with rendering_cache(caches.ChartCache(o.con)), table_cache(caches.TableCache(o.con)):
        write_html(result, folder / "scorecard.html", None, frames=frames)
        write_xlsx(result, folder / "scorecard.xlsx", frames)
        outputs.write_csv(result, folder / "scorecard.csv", frames)
        outputs.write_parquet(result, folder / "scorecard.parquet", frames)


def tail_now(o: Opened, card: Any, folder: Path) -> None:
    result = to_contract(card, STAMP, code_version())
    document = dumps(result.document())
    if not plain_json(document):
        result = Result.model_validate(plain_all(result.document()))
        document = dumps(result.document())
    with _meanwhile(_keep(o, result, "b" * 64, "now", document, False)):
        (folder / "scorecard.json").write_text(document, encoding="utf-8")
        print_summary(result)
        files(o, result, folder)


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
        tree = exported(args.baseline, folder)
        names = (f"baseline {args.baseline}", "now")
        for n in (int(s) for s in args.sizes.split(",")):
            file = folder / f"candidates_{n}.toml"
            file.write_text(proposal(n), encoding="utf-8")
            warm = folder / f"warm-{n}"
            warm.mkdir()
            before = Baseline(tree, "report", str(folder / f"baseline-{n}.duckdb"), str(file),
                              str(warm / "baseline"), STAMP)
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                execute(file, vintage=None, out=warm / "json", db=db, json_out=True)
            try:
                with opened(file, None, db) as o:
                    resolved = resolve(o.proposal, o.name, o.market, o.cache)
                    card = compute(o.proposal, resolved, o.market)
                    (warm / "now").mkdir()
                    with contextlib.redirect_stdout(io.StringIO()):  # fills the caches
                        tail_now(o, card, warm / "now")
                    walls: dict[str, list[float]] = {name: [] for name in names}
                    cpus: dict[str, list[float]] = {name: [] for name in names}
                    for r in range(args.rounds):
                        for name in names:
                            out = folder / f"out-{n}-{r}-{name.split()[0]}"
                            if name == "now":
                                out.mkdir()
                                wall, cpu = time.perf_counter(), time.process_time()
                                with contextlib.redirect_stdout(io.StringIO()):
                                    tail_now(o, card, out)
                                walls[name].append(time.perf_counter() - wall)
                                cpus[name].append(time.process_time() - cpu)
                            else:
                                answer = before.ask(out=str(out))
                                walls[name].append(answer["wall_s"])
                                cpus[name].append(answer["cpu_s"])
                            print(f"{n:,} candidates, round {r + 1}, {name}: "
                                  f"{walls[name][-1]:.2f} s wall, {cpus[name][-1]:.2f} s CPU",
                                  flush=True)
            finally:
                before.close()
            (old, new), (old_cpu, new_cpu) = ([statistics.median(v[name]) for name in names]
                                              for v in (walls, cpus))
            print(f"{n:,} candidates, the report part (medians of {args.rounds}): baseline "
                  f"{old:.2f} s wall, {old_cpu:.2f} s CPU; now {new:.2f} s wall, "
                  f"{new_cpu:.2f} s CPU; now / baseline {new / old:.2f} wall, "
                  f"{new_cpu / old_cpu:.2f} CPU", flush=True)
    print("uptime after:", subprocess.run(uptime, capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
