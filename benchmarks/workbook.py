"""Benchmark: writing the XLSX workbook, the openpyxl writer it replaced (the baseline, read
from git history) against the xlsxwriter one (issue 15's workbook that computes, issue 18's
"XLSX 0.33 s per run").

    uv run python benchmarks/workbook.py [--sizes 7,1000] [--runs 5] [--baseline REV]

The results: the bundled example's (tests/fixtures/reports/example_scorecard.json, 7
candidates) and the same with its candidates copied under new ids up to each size (1,000: the
Scorecard and Inputs sheets 1,000 rows each). Both writers run in this process on the same
result, alternately, `--runs` times each; prints per size the median wall time of each, the
ratio new / old measured in the same run, and the file sizes; then the import time of each
library in fresh processes (`python -X importtime -c "import openpyxl"`, median of `--runs`:
`scorecard run` no longer imports openpyxl) and `uptime`'s load average.
The baseline writer is reports/files/xlsx.py at `--baseline` (the last commit with the openpyxl
writer), loaded as a module beside the current reports package; without git or openpyxl it
says so and times the new writer alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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

EXAMPLE = ROOT / "tests" / "fixtures" / "reports" / "example_scorecard.json"
BASELINE = "3ee3501"  # reports/files/xlsx.py written with openpyxl


def baseline_writer(rev: str, folder: Path) -> Callable[[dict[str, Any], Path], None] | None:
    try:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:reports/files/xlsx.py"],
                                check=True, capture_output=True, text=True).stdout
        import openpyxl  # noqa: F401
    except (subprocess.CalledProcessError, FileNotFoundError, ImportError) as err:
        print(f"no baseline ({err}): timing the new writer alone")
        return None
    path = folder / "xlsx_openpyxl.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("xlsx_openpyxl", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    writer: Callable[[dict[str, Any], Path], None] = module.write_xlsx
    return writer


def scaled(result: dict[str, Any], size: int) -> dict[str, Any]:
    """`result` with its candidates copied under new ids up to `size` rows."""
    base = result["candidates"]
    copies = [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}-{i}")
              for i in range(size)]
    return dict(result, candidates=copies if size != len(base) else base)


def timed(writer: Callable[[dict[str, Any], Path], None], result: dict[str, Any],
          path: Path) -> float:
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
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    example = json.loads(EXAMPLE.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = baseline_writer(args.baseline, folder)
        print(f"{'candidates':>10}  {'openpyxl s':>10}  {'xlsxwriter s':>12}  "
              f"{'new/old':>7}  {'old KB':>7}  {'new KB':>7}")
        for size in (int(s) for s in args.sizes.split(",")):
            result = scaled(example, size)
            olds, news = [], []
            for _ in range(args.runs):
                if old is not None:
                    olds.append(timed(old, result, folder / "old.xlsx"))
                news.append(timed(write_xlsx, result, folder / "new.xlsx"))
            new_s = statistics.median(news)
            old_s = statistics.median(olds) if olds else None
            old_kb = (folder / "old.xlsx").stat().st_size / 1024 if olds else None
            print(f"{size:>10}  {old_s if old_s is None else f'{old_s:.3f}':>10}  "
                  f"{new_s:>12.3f}  "
                  f"{'' if old_s is None else f'{new_s / old_s:.2f}':>7}  "
                  f"{'' if old_kb is None else f'{old_kb:.0f}':>7}  "
                  f"{(folder / 'new.xlsx').stat().st_size / 1024:>7.0f}")
    imports = {m: statistics.median(import_seconds(m) for _ in range(args.runs))
               for m in ("openpyxl", "xlsxwriter")}
    print(f"import: openpyxl {imports['openpyxl']:.3f} s, xlsxwriter "
          f"{imports['xlsxwriter']:.3f} s, ratio {imports['xlsxwriter'] / imports['openpyxl']:.2f}")
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
