"""The main job (issue 18): the bundled example's `scorecard run`, warm, in at most 2 s wall and
at most 3x the bare imports of its four base libraries, timed as whole processes side by side.

In a temporary folder (its own store), each round runs, one after the other:

  1. baseline: `python -c "import duckdb, polars, pydantic, numpy"`;
  2. run: `scorecard run` of the bundled example (warm: the store already holds the bundled
     data and the charts rendered by the first run);
  3. run, charts re-rendered: the example with its demand changed every round, so every chart's
     spec is new and vl-convert renders it (what a monthly rerun with fresh prices pays);
  4. run, bytecode written: as 2. with PYTHONDONTWRITEBYTECODE unset, so the project's own
     modules are compiled once and read back as a normal environment does (uv compiles the
     installed libraries at install, `[tool.uv] compile-bytecode`; the project's sources are an
     editable install it does not compile; this machine's sessions set the variable);
  5. `scorecard --help`.

One cold run (new store) precedes the rounds and is printed apart. Medians over --rounds, and
each median's ratio to the baseline's.

    uv run python benchmarks/main_job.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

BIN = Path(sys.executable).parent
BASELINE = [sys.executable, "-c", "import duckdb, polars, pydantic, numpy"]
SCORECARD = [str(BIN / "scorecard")]


WRITING = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(args: list[str], cwd: Path, env: dict[str, str] | None = None
          ) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS (MB) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          env=os.environ if env is None else env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def varied_example(folder: Path, round_: int) -> Path:
    """The bundled example with its demand changed: new figures, so new chart specs."""
    text = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
    old = "tokens_per_day = 500_000_000"
    if old not in text:
        raise SystemExit(f"the example's demand line {old!r} is not there: update the benchmark")
    path = folder / f"varied-{round_}.toml"
    path.write_text(text.replace(old, f"tokens_per_day = {500_000_000 + 1_000_000 * round_}"),
                    encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cold, cold_rss = timed([*SCORECARD, "run"], folder)
        times: dict[str, list[float]] = {"baseline": [], "run": [], "run, charts re-rendered": [],
                                          "run, bytecode written": [], "--help": []}
        for i in range(rounds):
            times["baseline"].append(timed(BASELINE, folder)[0])
            times["run"].append(timed([*SCORECARD, "run"], folder)[0])
            times["run, charts re-rendered"].append(
                timed([*SCORECARD, "run", str(varied_example(folder, i))], folder)[0])
            times["run, bytecode written"].append(
                timed([*SCORECARD, "run"], folder, WRITING)[0])
            times["--help"].append(timed([*SCORECARD, "--help"], folder)[0])
    base = statistics.median(times["baseline"])
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} rounds; python "
          f"{sys.version.split()[0]}; PYTHONDONTWRITEBYTECODE="
          f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}")
    print(f"cold run (new store, charts rendered): {cold:.2f} s, peak RSS {cold_rss:.0f} MB")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<26} median {median:6.3f} s  (min {min(values):.3f}, max {max(values):.3f})"
              f"  = {median / base:5.2f}x baseline")
    run = statistics.median(times["run"])
    print(f"target: run <= 2 s ({'met' if run <= 2 else 'not met'}) and <= 3x baseline "
          f"({'met' if run <= 3 * base else 'not met'})")


if __name__ == "__main__":
    main()
