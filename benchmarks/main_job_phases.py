"""Where the main job's time goes (issue 33): `scorecard run` of the bundled example, warm, in
fresh processes, each phase timed in CPU seconds of the process (user + system: on a machine
others load, the wall time counts their work too, the CPU time much less so) and wall seconds.

Each run is one child process that imports as `scorecard run` does (the CLI, then with the
cyclic garbage collector off the base libraries and `pipeline.run`), then calls the CLI's app
with `run`, as the `scorecard` command does (typer reads the command line, then
`pipeline.run.execute` runs), with the steps of `execute` wrapped by timers: each name of
STEPS is replaced in its module by a timed version for that process only. Before the run the
script checks that each step is still there and still called where STEPS says it is
(`pipeline.run.execute` names it), and after the run that each was called: a refactor that
moves a step fails here naming it, rather than timing nothing. What is left of `execute` is
counted as "the rest" (the stored run waited for, the folder swapped in). The store's write of
the run goes on in a thread of its own while the report files are made: its row is that
thread's wall and CPU (`time.thread_time`), which overlap the steps after it (their CPU, the
process's, counts that thread's too). The interpreter's
start-up and teardown are the process's whole wall time, measured by the parent, minus the
child's own. Medians over --runs, with the run-to-run spread (min-max), beside the bare imports
of duckdb, polars, pydantic and numpy in the same rounds.

    uv run python benchmarks/main_job_phases.py [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BASELINE = [sys.executable, "-c", "import duckdb, polars, pydantic, numpy"]

OPEN = "open: proposal parsed, store opened, market read"
CLOSE = "close the store"
SAVE = "the run stored (in a thread, overlapping what follows)"
PARSE = "typer: the command line read, up to execute"
#: (module, name, caller, label): `module.name` is timed; `caller` is the function of
#: pipeline.run that calls it (checked to name it). Labels indented by two spaces are part of
#: the step above them and not counted again in "the rest".
STEPS = (
    ("pipeline.workspace", "read_market", "pipeline.workspace.opened",
     "  of which the market read"),
    ("pipeline.run", "_announce_store", "pipeline.run._opened_and_announced",
     "the store announced (bundled only?)"),
    ("pipeline.run", "resolve", "pipeline.run.execute", "resolve"),
    ("pipeline.run", "compute", "pipeline.run.execute", "compute (the engine)"),
    ("pipeline.run", "contract_data", "pipeline.run.execute",
     "contract_data (the result's plain data)"),
    ("pipeline.run", "validated", "pipeline.run.execute", "validated (pydantic) and dumps"),
    ("pipeline.run", "dumps", "pipeline.run.validated", "  of which dumps (JSON text)"),
    ("pipeline.run", "plain_json", "pipeline.run.execute", "plain_json (foreign text check)"),
    ("pipeline.run", "print_summary", "pipeline.run.execute", "print_summary (terminal)"),
    ("pipeline.run", "write_outputs", "pipeline.run.execute", "write_outputs (report files)"),
)


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _function(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name, None)


def _names(function: Any) -> set[str]:
    """The global and attribute names a function's code (and the code nested in it) uses; a
    decorated function (`contextmanager`) is looked at through `__wrapped__`."""
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    code = getattr(function, "__code__", None)
    found: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        current = stack.pop()
        found.update(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return found


def checked_steps() -> list[tuple[types.ModuleType, str, str]]:
    """STEPS with their modules, each checked to exist and to be called where STEPS says;
    a step that is not exits naming it."""
    found = []
    for module_name, name, caller, label in STEPS:
        module = importlib.import_module(module_name)
        if not callable(getattr(module, name, None)):
            raise SystemExit(f"benchmarks/main_job_phases.py: step {label.strip()!r}: "
                             f"{module_name} has no `{name}` any more; update STEPS to the "
                             "steps pipeline.run.execute calls today")
        calling = _function(caller)
        if calling is None or name not in _names(calling):
            raise SystemExit(f"benchmarks/main_job_phases.py: step {label.strip()!r}: "
                             f"{caller} does not call `{name}` any more; update STEPS to the "
                             "steps pipeline.run.execute calls today")
        found.append((module, name, label))
    for dotted in ("pipeline.run.opened", "pipeline.store.save_run"):
        if not callable(_function(dotted)):
            raise SystemExit(f"benchmarks/main_job_phases.py: {dotted} is not there any "
                             "more; update the script to today's pipeline.run.execute")
    return found


def child() -> None:
    """In the child: import, run with timed steps, print the phases as JSON on stderr's last
    line (the command's own output goes to stdout)."""
    spent: dict[str, list[float]] = {}
    begin = _clock()

    def add(name: str, start: tuple[float, float],
            clock: Callable[[], tuple[float, float]] = _clock) -> None:
        now = clock()
        wall, cpu = spent.setdefault(name, [0.0, 0.0])
        spent[name] = [wall + now[0] - start[0], cpu + now[1] - start[1]]

    # in the command's order: the CLI first (the `scorecard` script imports it), then, with
    # the collector off, `pipeline.run`, whose first imports are the four base libraries;
    # imported before the CLI, their ~100,000 objects made a full collection land in typer's
    # import (about 30 ms that `scorecard run` never pays)
    from pipeline.cli import frozen_imports
    add("imports: typer and the CLI", begin)
    with frozen_imports("pipeline.run"):
        start = _clock()
        import duckdb  # noqa: F401
        import numpy  # noqa: F401
        import polars  # noqa: F401
        import pydantic  # noqa: F401
        add("imports: duckdb, polars, pydantic, numpy", start)
        start = _clock()
        import pipeline.run as run
        add("imports: pipeline.run and what it imports", start)

    import pipeline.store as store

    steps = checked_steps()

    def timed(name: str, function: Callable[..., Any],
              clock: Callable[[], tuple[float, float]] = _clock) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                add(name, start, clock)
        return wrapper

    opened = run.opened  # a context manager: its entry (and exit) timed

    @contextmanager
    def timed_opened(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = _clock()
        manager = opened(*args, **kwargs)
        value = manager.__enter__()
        add(OPEN, start)
        try:
            yield value
        finally:
            start = _clock()
            manager.__exit__(None, None, None)
            add(CLOSE, start)

    def thread_clock() -> tuple[float, float]:
        return time.perf_counter(), time.thread_time()

    for module, name, label in steps:
        setattr(module, name, timed(label, getattr(module, name)))
    run.opened = timed_opened  # type: ignore[assignment]
    store.save_run = timed(SAVE, store.save_run, thread_clock)  # type: ignore[assignment]
    execute = run.execute
    called = _clock()

    def timed_execute(*args: Any, **kwargs: Any) -> int:
        add(PARSE, called)
        start = _clock()
        try:
            return execute(*args, **kwargs)
        finally:
            add("execute (whole)", start)
            add("process (to the end of execute)", begin)

    run.execute = timed_execute  # type: ignore[assignment]
    from pipeline.cli import app
    try:
        app(args=["run"], prog_name="scorecard")
    except SystemExit as done:
        if done.code:
            raise SystemExit(f"scorecard run exited {done.code}") from None
    missed = [label.strip() for *_, label in STEPS if label not in spent]
    missed += [label for label in (PARSE, OPEN, CLOSE, SAVE) if label not in spent]
    if missed:
        raise SystemExit("benchmarks/main_job_phases.py: step(s) not called by "
                         f"pipeline.run.execute: {', '.join(missed)}; update STEPS")
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
    order = ["imports: typer and the CLI", "imports: duckdb, polars, pydantic, numpy",
             "imports: pipeline.run and what it imports", PARSE, OPEN,
             *(label for *_, label in STEPS), SAVE, CLOSE, "execute (whole)",
             "process (to the end of execute)",
             "start-up and teardown (wall outside the child's clock)"]
    for name in order:
        walls = [r[name][0] for r in runs]
        cpus = [r[name][1] for r in runs]
        cpu = "" if any(c != c for c in cpus) else (
            f"CPU {statistics.median(cpus):.3f} s ({min(cpus):.3f}-{max(cpus):.3f})")
        print(f"{name:<58} wall {statistics.median(walls):.3f} s ({min(walls):.3f}-"
              f"{max(walls):.3f})  {cpu}")
    inside = [OPEN, CLOSE, *(label for *_, label in STEPS if not label.startswith("  "))]
    rest = [r["execute (whole)"][1] - sum(r[n][1] for n in inside) for r in runs]
    print(f"{'execute: the rest (stored run waited for, folder swapped)':<58} CPU "
          f"{statistics.median(rest):.3f} s ({min(rest):.3f}-{max(rest):.3f})")

if __name__ == "__main__":
    main()
