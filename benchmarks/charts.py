"""Benchmark: the report's charts (issue 18's main job, charts part).

    uv run python benchmarks/charts.py [--rounds 3]
    uv run --with "altair>=6.0" python benchmarks/charts.py   # with the former Altair path

Each figure is one fresh Python process (so vl-convert's V8 warm-up is in it, as in a
`scorecard run`), timed inside the process from before the chart modules are imported to
the last SVG; the rounds are interleaved and the medians printed with their ratio to the
baseline measured in the same run:

- baseline: import vl_convert and draw one trivial chart (the V8 warm-up every path pays);
- altair: the former path (Altair charts, as reports/figures/charts.py drew them at commit 3ee3501:
  two Pareto charts, the tornado, the break-even);
- figures cold: `reports.figures.sections.chart_sections` on the same result, no cache;
- figures warm: the same inside `rendering_cache` with a cache filled by an earlier process
  (what a re-run of an unchanged proposal finds in the store).

The result is the bundled example's (`scorecard run --json` in a temporary folder).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "3ee3501"

BASELINE = """
import time; t = time.perf_counter()
import vl_convert as vlc
vlc.vegalite_to_svg({"mark": "point", "data": {"values": [{"a": 1}]},
                     "encoding": {"x": {"field": "a", "type": "quantitative"}}})
print(time.perf_counter() - t)
"""

ALTAIR = """
import json, sys, time
import reports.frames
result = json.load(open(sys.argv[1]))
sys.path.insert(0, sys.argv[2])
t = time.perf_counter()
import old_charts as charts
for x, y in charts.PARETO_PAIRS:
    charts.pareto_svg(result, x, y)
charts.tornado_svgs(result)
charts.break_even_svg(result)
print(time.perf_counter() - t)
"""

FIGURES = """
import json, sys, time
import reports.frames
from schemas.result import Result
result = Result.model_validate_json(open(sys.argv[1]).read())
t = time.perf_counter()
from reports.figures import charts, sections
drawn, draw = [], charts._draw
charts._draw = lambda spec: drawn.append(spec) or draw(spec)
cache = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
if cache is None:
    sections.chart_sections(result)
else:
    with charts.rendering_cache(cache):
        sections.chart_sections(result)
print(time.perf_counter() - t, len(drawn))
"""

FILL = """
import json, sys
from reports.figures import charts, sections
from schemas.result import Result
cache = {}
with charts.rendering_cache(cache):
    sections.chart_sections(Result.model_validate_json(open(sys.argv[1]).read()))
json.dump(cache, open(sys.argv[2], "w"))
print(len(cache))
"""


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(code: str, *args: str) -> tuple[float, float, list[str]]:
    """(wall s inside the process, CPU s of the whole process, what else it printed)."""
    before = _children_cpu()
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), _children_cpu() - before, out[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result = work / "result.json"
        run = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", "--json"], cwd=work,
                             capture_output=True, text=True, check=False)
        if run.returncode != 0:
            raise SystemExit(f"scorecard run --json failed ({run.returncode}): {run.stderr}")
        result.write_text(run.stdout, encoding="utf-8")
        old = subprocess.run(["git", "show", f"{OLD_COMMIT}:reports/figures/charts.py"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        (work / "old_charts.py").write_text(old, encoding="utf-8")
        cache = work / "cache.json"
        entries = subprocess.run([sys.executable, "-c", FILL, str(result), str(cache)],
                                 cwd=ROOT, check=True, capture_output=True,
                                 text=True).stdout.strip()
        with_altair = importlib.util.find_spec("altair") is not None
        times: dict[str, list[float]] = {"baseline": [], "altair": [], "figures cold": [],
                                         "figures warm": []}
        if not with_altair:  # removed from the dependencies: the former path cannot run
            del times["altair"]
        cpu: dict[str, list[float]] = {name: [] for name in times}
        renders: dict[str, str] = {}
        for _ in range(rounds):
            runs = [("baseline", BASELINE, ()), ("altair", ALTAIR, (str(result), str(work))),
                    ("figures cold", FIGURES, (str(result),)),
                    ("figures warm", FIGURES, (str(result), str(cache)))]
            for name, code, args in runs:
                if name not in times:
                    continue
                seconds, used, extra = timed(code, *args)
                times[name].append(seconds)
                cpu[name].append(used)
                if extra:
                    renders[name] = extra[0]
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"charts of the bundled example, median of {rounds} fresh processes each "
          f"(load average {' '.join(load)}); cache: {entries} SVGs")
    base = statistics.median(times["baseline"])
    altair = statistics.median(times["altair"]) if with_altair else None
    for name, values in times.items():
        median = statistics.median(values)
        drawn = f", {renders[name]} charts drawn" if name in renders else ""
        versus = f"  {median / altair:5.2f}x altair" if altair else ""
        print(f"  {name:<13} {median:6.2f} s  {median / base:5.2f}x baseline{versus}{drawn}"
              f"  (runs: {', '.join(f'{v:.2f}' for v in values)}); whole process CPU "
              f"{statistics.median(cpu[name]):.2f} s")
    if not with_altair:
        print("  altair: not installed, the former path not measured")
    print(json.dumps({k: statistics.median(v) for k, v in times.items()}))
    print("  (wall: inside the process, from importing the chart modules to the last SVG; "
          "CPU: the whole process, interpreter start and imports included)")


if __name__ == "__main__":
    main()
