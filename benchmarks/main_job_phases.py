"""Where the main job's time goes (issue 33): `scorecard run` of the bundled example, warm, in
fresh processes, each phase timed in CPU seconds of the process (user + system: on a machine
others load, the wall time counts their work too, the CPU time much less so) and wall seconds.

Each run is one child process that imports as `scorecard run` does (the base libraries, the CLI,
then `pipeline.run`), then runs `pipeline.run.execute` with its steps wrapped by timers: the
names `execute` calls (`opened` and, inside it, `read_market`; `resolve`, `compute`,
`to_contract`, `dumps`, `print_summary`, `write_outputs`) are replaced in their modules by
timed versions for that process only; what is left of `execute` is counted as "the rest" (the
stored run waited for, the folder swapped in). The interpreter's start-up and teardown are
the process's whole wall time, measured by the parent, minus the child's own. Medians over
--runs, with the run-to-run spread (min-max), beside the bare imports of duckdb, polars,
pydantic and numpy in the same rounds.

    uv run python benchmarks/main_job_phases.py [--runs 5]
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BASELINE = [sys.executable, "-c", "import duckdb, polars, pydantic, numpy"]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def child() -> None:
    """In the child: import, run with timed steps, print the phases as JSON on stderr's last
    line (the command's own output goes to stdout)."""
    spent: dict[str, list[float]] = {}
    begin = _clock()

    def add(name: str, start: tuple[float, float]) -> None:
        now = _clock()
        wall, cpu = spent.setdefault(name, [0.0, 0.0])
        spent[name] = [wall + now[0] - start[0], cpu + now[1] - start[1]]

    import duckdb  # noqa: F401
    import numpy  # noqa: F401
    import polars  # noqa: F401
    import pydantic  # noqa: F401
    add("imports: duckdb, polars, pydantic, numpy", begin)
    start = _clock()
    from pipeline.cli import frozen_imports
    add("imports: typer and the CLI", start)
    start = _clock()
    with frozen_imports("pipeline.run"):
        import pipeline.run as run
    add("imports: pipeline.run and what it imports", start)

    import pipeline.workspace as workspace

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = _clock()
            try:
                return function(*args, **kwargs)
            finally:
                add(name, start)
        return wrapper

    opened = run.opened  # a context manager: its entry (and exit) timed

    @contextmanager
    def timed_opened(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = _clock()
        manager = opened(*args, **kwargs)
        value = manager.__enter__()
        add("open: proposal parsed, store opened, market read", start)
        try:
            yield value
        finally:
            start = _clock()
            manager.__exit__(None, None, None)
            add("close the store", start)

    workspace.read_market = timed("  of which the market read", workspace.read_market)
    run.opened = timed_opened  # type: ignore[assignment]
    for name in ("resolve", "compute", "to_contract", "dumps", "print_summary",
                 "write_outputs"):
        setattr(run, name, timed(name, getattr(run, name)))
    start = _clock()
    code = run.execute(None, vintage=None, out=None, db=None, json_out=False)
    add("execute (whole)", start)
    add("process (to the end of execute)", begin)
    if code:
        raise SystemExit(f"scorecard run exited {code}")
    print(json.dumps(spent), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return
    runs: list[dict[str, list[float]]] = []
    baseline: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        load = os.getloadavg()[0]
        subprocess.run([sys.executable, __file__, "--child"], cwd=folder, check=True,
                       capture_output=True)  # cold: the store made, the charts rendered
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(BASELINE, check=True)
            baseline.append(time.perf_counter() - start)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, __file__, "--child"], cwd=folder,
                                  check=True, capture_output=True, text=True)
            whole = time.perf_counter() - start
            spent = json.loads(done.stderr.strip().splitlines()[-1])
            spent["start-up and teardown (wall outside the child's clock)"] = [
                whole - spent["process (to the end of execute)"][0], float("nan")]
            runs.append(spent)
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {args.runs} runs; "
          f"bare imports of the four base libraries {statistics.median(baseline):.3f} s wall "
          f"(median; min {min(baseline):.3f}, max {max(baseline):.3f})")
    market = "  of which the market read"
    steps = [n for n in runs[0] if n != market]
    steps.insert(steps.index("open: proposal parsed, store opened, market read") + 1, market)
    steps.sort(key=lambda name: name.startswith(("execute", "process", "start")))
    inside = {"resolve", "compute", "to_contract", "dumps", "print_summary", "write_outputs",
              "open: proposal parsed, store opened, market read", "close the store"}
    for name in steps:
        walls = [r[name][0] for r in runs]
        cpus = [r[name][1] for r in runs]
        cpu = "" if any(c != c for c in cpus) else (
            f"CPU {statistics.median(cpus):.3f} s ({min(cpus):.3f}-{max(cpus):.3f})")
        print(f"{name:<45} wall {statistics.median(walls):.3f} s ({min(walls):.3f}-"
              f"{max(walls):.3f})  {cpu}")
    rest = [r["execute (whole)"][1] - sum(r[n][1] for n in inside) for r in runs]
    print(f"{'execute: the rest (stored run waited for, folder swapped)':<45} CPU "
          f"{statistics.median(rest):.3f} s ({min(rest):.3f}-{max(rest):.3f})")


if __name__ == "__main__":
    main()
