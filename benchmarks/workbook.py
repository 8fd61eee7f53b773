"""Benchmark: writing the XLSX workbook, against the writers it replaced, each run as its
revision really was: the openpyxl writer (issue 15's workbook that computes, issue 18's "XLSX
0.33 s per run") and the xlsxwriter writer that wrote cell by cell (issue 18's "1,000
candidates in seconds": now each sheet's body is written column by column as XML text).

    uv run python benchmarks/workbook.py [--sizes 7,1000] [--runs 5] [--baseline REV]
        [--cells REV]

The results: the bundled example's (tests/fixtures/reports/example_scorecard.json, 7
candidates) and the same with its candidates copied under new ids up to each size (1,000: the
Scorecard and Inputs sheets 1,000 rows each). A baseline writer is reports/files/xlsx.py (or
reports/xlsx.py before 56ef949) in its revision's whole source tree, exported from git
(`--baseline`: the last commit with the openpyxl writer; `--cells`: the last with the
cell-by-cell xlsxwriter one), running in a child process with that tree alone on sys.path
(benchmarks/child_process.py `Baseline`); it reads the same result as JSON once per size
(untimed) and writes it when asked, timing itself (wall, and CPU by `time.process_time`). The
current writer runs in this process on the same result, validated once per size (untimed).
Round after round (`--runs`), each writer writes once, in turn. Prints per size each round's
wall and CPU seconds per writer, then the medians, each one's ratio to the current writer's
(now / it) and the file sizes; then the import time of each library in fresh processes
(`python -X importtime -c "import openpyxl"`, median of `--runs`: `scorecard run` no longer
imports openpyxl) and `uptime`'s load average before and after.

The baselines used to be the old writer's module loaded beside today's reports package; since
the engine returns a typed `Result` that today's `reports.frames` reads by attribute, that mix
no longer runs, and it timed neither revision as it was. Both revisions run with this install's
Python and libraries: openpyxl is a dev dependency now; 3ee3501 also depended on altair, which
is no longer installed and which its workbook writer's imports do not reach. Without git or
openpyxl, a baseline says why and is skipped.
"""

from __future__ import annotations

import argparse
import json
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

from child_process import Baseline, exported  # noqa: E402

from reports.files.xlsx import write_xlsx  # noqa: E402
from schemas.result import Result  # noqa: E402

EXAMPLE = ROOT / "tests" / "fixtures" / "reports" / "example_scorecard.json"
BASELINE = "3ee3501"  # reports/xlsx.py written with openpyxl
CELLS = "56ef949"  # reports/files/xlsx.py written with xlsxwriter, cell by cell


def baseline_writer(rev: str, folder: Path, name: str) -> Baseline | None:
    """Revision `rev`'s workbook writer in a child process of its own, or None (said why)."""
    try:
        tree = exported(rev, folder)
        module = ("reports.files.xlsx" if (tree / "reports" / "files" / "xlsx.py").exists()
                  else "reports.xlsx")  # moved at 56ef949
        if "openpyxl" in (tree / Path(*module.split("."))).with_suffix(".py").read_text("utf-8"):
            import openpyxl  # noqa: F401
        return Baseline(tree, "workbook", module)
    except (subprocess.CalledProcessError, FileNotFoundError, ImportError,
            RuntimeError) as err:
        print(f"no {name} baseline ({err})")
        return None


def scaled(result: dict[str, Any], size: int) -> dict[str, Any]:
    """`result` with its candidates copied under new ids up to `size` rows."""
    base = result["candidates"]
    copies = [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}-{i}")
              for i in range(size)]
    return dict(result, candidates=copies if size != len(base) else base)


def import_seconds(module: str) -> float:
    """The cumulative import time of `module` in a fresh interpreter (-X importtime)."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         check=True, capture_output=True, text=True).stderr
    line = next(x for x in reversed(err.splitlines()) if x.rstrip().endswith(f"| {module}"))
    return int(line.split("|")[1]) / 1e6


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="7,1000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE, help="the openpyxl writer's revision")
    parser.add_argument("--cells", default=CELLS,
                        help="the cell-by-cell xlsxwriter writer's revision")
    args = parser.parse_args()
    print("load before:", uptime(), flush=True)
    example = json.loads(EXAMPLE.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        found = {f"openpyxl {args.baseline}": baseline_writer(args.baseline, folder, "openpyxl"),
                 f"per cell {args.cells}": baseline_writer(args.cells, folder, "per cell")}
        baselines = {name: child for name, child in found.items() if child is not None}
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                result = scaled(example, size)
                document = folder / f"result-{size}.json"
                document.write_text(json.dumps(result), encoding="utf-8")
                typed = Result.model_validate(result)
                names = [*baselines, "now"]
                walls: dict[str, list[float]] = {name: [] for name in names}
                cpus: dict[str, list[float]] = {name: [] for name in names}
                for r in range(args.runs):
                    for name in names:
                        out = folder / f"{name.split()[0]}-{size}.xlsx"
                        if name == "now":
                            wall, cpu = time.perf_counter(), time.process_time()
                            write_xlsx(typed, out)
                            walls[name].append(time.perf_counter() - wall)
                            cpus[name].append(time.process_time() - cpu)
                        else:
                            answer = baselines[name].ask(json=str(document), out=str(out))
                            walls[name].append(answer["wall_s"])
                            cpus[name].append(answer["cpu_s"])
                        print(f"{size:,} candidates, round {r + 1}, {name}: "
                              f"{walls[name][-1]:.3f} s wall, {cpus[name][-1]:.3f} s CPU",
                              flush=True)
                now, now_cpu = statistics.median(walls["now"]), statistics.median(cpus["now"])
                print(f"{size:,} candidates (medians of {args.runs}): " + "; ".join(
                    f"{name} {statistics.median(walls[name]):.3f} s wall, "
                    f"{statistics.median(cpus[name]):.3f} s CPU"
                    + ("" if name == "now" else
                       f" (now / it {now / statistics.median(walls[name]):.2f} wall, "
                       f"{now_cpu / statistics.median(cpus[name]):.2f} CPU)")
                    + f", {(folder / f'{name.split()[0]}-{size}.xlsx').stat().st_size / 1024:.0f}"
                      " KB"
                    for name in names), flush=True)
        finally:
            for child in baselines.values():
                child.close()
    imports = {m: statistics.median(import_seconds(m) for _ in range(args.runs))
               for m in ("openpyxl", "xlsxwriter")}
    print(f"import: openpyxl {imports['openpyxl']:.3f} s, xlsxwriter "
          f"{imports['xlsxwriter']:.3f} s, ratio {imports['xlsxwriter'] / imports['openpyxl']:.2f}")
    print("load after:", uptime())


if __name__ == "__main__":
    main()
