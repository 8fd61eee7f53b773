"""Benchmark: writing the XLSX workbook, against the writers it replaced (baselines read from git
history): the openpyxl writer (issue 15's workbook that computes, issue 18's "XLSX 0.33 s per
run") and the xlsxwriter writer that wrote cell by cell (issue 18's "1,000 candidates in
seconds": now each sheet's body is written column by column as XML text).

    uv run python benchmarks/workbook.py [--sizes 7,1000] [--runs 5] [--baseline REV]
        [--cells REV]

The results: the bundled example's (tests/fixtures/reports/example_scorecard.json, 7
candidates) and the same with its candidates copied under new ids up to each size (1,000: the
Scorecard and Inputs sheets 1,000 rows each). Every writer runs in this process on the same
result, in turn, `--runs` times each; prints per size the median wall time of each, its ratio
to the current writer's measured in the same run, and the file sizes; then the import time of
each library in fresh processes (`python -X importtime -c "import openpyxl"`, median of
`--runs`: `scorecard run` no longer imports openpyxl) and `uptime`'s load average.
A baseline writer is reports/files/xlsx.py at its revision (`--baseline`: the last commit with
the openpyxl writer; `--cells`: the last with the cell-by-cell xlsxwriter one), loaded as a
module beside the current reports package; without git (or openpyxl) it says so and is
skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
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

from reports.files.xlsx import write_xlsx  # noqa: E402
from schemas.result import Result  # noqa: E402

EXAMPLE = ROOT / "tests" / "fixtures" / "reports" / "example_scorecard.json"
BASELINE = "3ee3501"  # reports/files/xlsx.py written with openpyxl
CELLS = "56ef949"  # reports/files/xlsx.py written with xlsxwriter, cell by cell


def baseline_writer(rev: str, folder: Path, name: str
                    ) -> Callable[[dict[str, Any], Path], None] | None:
    try:
        shown = [subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{where}"],
                                capture_output=True, text=True)
                 for where in ("reports/files/xlsx.py", "reports/xlsx.py")]  # moved at 56ef949
        found = next((done for done in shown if done.returncode == 0), shown[0])
        found.check_returncode()
        source = found.stdout
        if "openpyxl" in source:
            import openpyxl  # noqa: F401
    except (subprocess.CalledProcessError, FileNotFoundError, ImportError) as err:
        print(f"no {name} baseline ({err})")
        return None
    # the report modules it imports, where they are now (moved at 56ef949)
    source = re.sub(r"\breports\.(page|first_screen|scorecard_table|report|diff_report|"
                    r"methodology|pdf)\b", r"reports.html.\1", source)
    source = re.sub(r"\breports\.(charts|sections|xlsx|outputs)\b",
                    lambda m: f"reports.{'figures' if m[1] in ('charts', 'sections') else 'files'}"
                              f".{m[1]}", source)
    # reports.cells.spreadsheet_value, which only the openpyxl writer used, is gone: its own copy
    source = source.replace(
        "from reports.cells import spreadsheet_value\n",
        "from reports.cells import spreadsheet_text\n\n\ndef spreadsheet_value(value):\n"
        "    return spreadsheet_text(value) if isinstance(value, str) else value\n")
    path = folder / f"xlsx_{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"xlsx_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except (ImportError, AttributeError) as err:
        print(f"no {name} baseline: {rev}'s writer does not load beside today's code ({err})")
        return None
    writer: Callable[[dict[str, Any], Path], None] = module.write_xlsx
    return writer


def scaled(result: dict[str, Any], size: int) -> dict[str, Any]:
    """`result` with its candidates copied under new ids up to `size` rows."""
    base = result["candidates"]
    copies = [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}-{i}")
              for i in range(size)]
    return dict(result, candidates=copies if size != len(base) else base)


def timed(writer: Callable[[Any, Path], None], result: Any, path: Path) -> float:
    start = time.perf_counter()
    writer(result, path)
    return time.perf_counter() - start


def import_seconds(module: str) -> float:
    """The cumulative import time of `module` in a fresh interpreter (-X importtime)."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         check=True, capture_output=True, text=True).stderr
    line = next(x for x in reversed(err.splitlines()) if x.rstrip().endswith(f"| {module}"))
    return int(line.split("|")[1]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="7,1000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE, help="the openpyxl writer's revision")
    parser.add_argument("--cells", default=CELLS,
                        help="the cell-by-cell xlsxwriter writer's revision")
    args = parser.parse_args()
    example = json.loads(EXAMPLE.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        writers = {"openpyxl": baseline_writer(args.baseline, folder, "openpyxl"),
                   "per cell": baseline_writer(args.cells, folder, "cells"),
                   "now": write_xlsx}
        for size in (int(s) for s in args.sizes.split(",")):
            result = scaled(example, size)
            typed = Result.model_validate(result)  # the revisions' writers read the document
            times: dict[str, list[float]] = {name: [] for name, w in writers.items() if w}
            for _ in range(args.runs):
                for name in times:
                    writer = writers[name]
                    assert writer is not None
                    times[name].append(timed(writer, typed if name == "now" else result,
                                             folder / f"{name}.xlsx"))
            now = statistics.median(times["now"])
            print(f"{size} candidates: " + "; ".join(
                f"{name} {statistics.median(t):.3f} s ("
                f"{statistics.median(t) / now:.2f}x now, "
                f"{(folder / f'{name}.xlsx').stat().st_size / 1024:.0f} KB)"
                for name, t in times.items()), flush=True)
    imports = {m: statistics.median(import_seconds(m) for _ in range(args.runs))
               for m in ("openpyxl", "xlsxwriter")}
    print(f"import: openpyxl {imports['openpyxl']:.3f} s, xlsxwriter "
          f"{imports['xlsxwriter']:.3f} s, ratio {imports['xlsxwriter'] / imports['openpyxl']:.2f}")
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
