"""What the benchmark scripts share: one figure set per fresh child process, and baselines run
as an old revision really was, whole, in a child process of their own.

- `peak_rss_gb`: this process's peak RSS from VmHWM (`ru_maxrss` would carry the parent's
  over exec).
- `figures`: the child's wall seconds since a start time, CPU seconds (user + sys) and peak
  RSS, with any further figures given, as one JSON line on stdout.
- `measured`: a script run with `--child` and its arguments in a fresh process, its JSON line
  read back, with the whole process's wall seconds as `process_s`.
- `exported`: a revision's whole source tree (`git archive`) in a folder.
- `Baseline`: a child process that imports the project from such a tree only (today's tree
  taken off its sys.path), sets up once (untimed) and then, for each request the parent sends,
  runs one baseline tail and answers with its own wall and CPU seconds (`time.process_time`:
  every thread of the child, none of the parent). The parent sends a request between its own
  timed runs, so the two interleave round by round, each warm in its own process: an old
  revision's writer can no longer be loaded beside today's modules (it hands them a dict where
  they now read a typed `Result`), and a mix of the two would time neither.

This file is also the child: `python child_process.py TREE KIND ARGS...` (KIND `workbook` or
`report`); it imports only the standard library before the tree is on sys.path.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MARK = "@@baseline "  # the child's answers, told apart from whatever the old code prints


def peak_rss_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1e6
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def figures(begin: float, **more: Any) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall_s": time.perf_counter() - begin,
                      "cpu_s": usage.ru_utime + usage.ru_stime,
                      "peak_rss_gb": peak_rss_gb(), **more}))


def measured(script: str, *args: str) -> dict[str, Any]:
    begin = time.perf_counter()
    out = subprocess.run([sys.executable, script, "--child", *args],
                         check=True, capture_output=True, text=True)
    found: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    found["process_s"] = time.perf_counter() - begin
    return found


SCAN = Path("sources/power")  # the compiled nvidia-smi scan: git holds its C source only


def exported(rev: str, folder: Path) -> Path:
    """Revision `rev`'s source tree, whole, in a new folder under `folder`. Git holds no
    compiled extension, so this install's compiled scan is copied in when the revision's C
    source is the same byte for byte (otherwise the tree has none, as a fresh checkout)."""
    tree = folder / f"tree-{rev}"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for source in (tree / SCAN).glob("*.c"):
        if (ROOT / SCAN / source.name).read_bytes() == source.read_bytes():
            for built in (ROOT / SCAN).glob(f"{source.stem}.*.so"):
                (tree / SCAN / built.name).write_bytes(built.read_bytes())
    return tree


class Baseline:
    """The child process running revision `tree`'s code (see the module docstring)."""

    def __init__(self, tree: Path, kind: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(tree), kind, *args], cwd=tree,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.ask()  # set up: its first answer names the files its code came from
        stray = [f for f in ready["code"] if not Path(f).resolve().is_relative_to(tree.resolve())]
        if stray:
            self.close()
            raise RuntimeError(f"the baseline child loaded code from outside {tree}: {stray}")

    def ask(self, **request: Any) -> dict[str, Any]:
        """One request (none: wait for the set-up); the child's answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if request:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        for line in self.process.stdout:
            if line.startswith(MARK):
                answer: dict[str, Any] = json.loads(line[len(MARK):])
                return answer
        raise RuntimeError(f"the baseline child ended (exit {self.process.wait()})")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _answer(out: Any, **figures: Any) -> None:
    out.write(MARK + json.dumps(figures) + "\n")
    out.flush()


def _code() -> list[str]:
    """The files of the project's modules this process has loaded."""
    return [m.__file__ for name, m in list(sys.modules.items())
            if name.split(".")[0] in ("pipeline", "reports", "schemas", "sources")
            and getattr(m, "__file__", None)]


def _timed(run: Any, *args: Any) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run(*args)
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def _child() -> None:
    """The child's side: the tree first on sys.path and today's tree off it."""
    import contextlib
    import importlib
    import io

    tree, kind, args = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    here = {str(ROOT), str(ROOT / "benchmarks"), str(Path(__file__).resolve().parent)}
    sys.path[:] = [str(tree)] + [p for p in sys.path if str(Path(p or ".").resolve()) not in here]
    out = sys.stdout
    sys.stdout = io.StringIO()  # whatever the old code prints is not an answer
    requests = (json.loads(line) for line in sys.stdin)
    if kind == "workbook":
        # `args`: the writer's module (reports.xlsx before 56ef949, reports.files.xlsx since)
        write_xlsx = importlib.import_module(args[0]).write_xlsx
        documents: dict[str, Any] = {}
        _answer(out, code=_code())
        for request in requests:
            if request["json"] not in documents:  # read once per size, untimed
                documents.clear()
                documents[request["json"]] = json.loads(Path(request["json"]).read_text("utf-8"))
            _answer(out, **_timed(write_xlsx, documents[request["json"]], Path(request["out"])))
    elif kind == "report":
        # `args`: the store, the proposal, the warm-up folder, the stamp; the tail as
        # pipeline.run.execute at 4fdd196 wrote the files, from its result on: walked for
        # bidi and control characters, dumped, stored in line, scorecard.json, the summary,
        # then the report files (walked again, charts from the store's cache)
        from pipeline import store
        from pipeline.engine.scorecard import compute, to_contract
        from pipeline.run import execute
        from pipeline.store import caches
        from pipeline.workspace import code_version, dumps, opened
        from reports.cells import plain_all
        from reports.figures.charts import rendering_cache
        from reports.files.outputs import write_outputs
        from reports.summary import print_summary

        db, file, warm, stamp = Path(args[0]), Path(args[1]), Path(args[2]), args[3]
        execute(file, vintage=None, out=warm / "json", db=db, json_out=True)  # loads the store

        def tail(o: Any, card: Any, folder: Path) -> None:
            result = plain_all(to_contract(card, stamp, code_version()))
            document = dumps(result)
            store.save_run(o.con, result, "a" * 64, "baseline", document)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "scorecard.json").write_text(document, encoding="utf-8")
            print_summary(result)
            with rendering_cache(caches.ChartCache(o.con)):
                write_outputs(result, folder)

        with opened(file, None, db) as o:
            card = compute(o.proposal, o.name, o.market)
            tail(o, card, warm / "files")  # fills the chart cache, untimed
            _answer(out, code=_code())
            for request in requests:
                with contextlib.redirect_stdout(io.StringIO()):
                    figures = _timed(tail, o, card, Path(request["out"]))
                _answer(out, **figures)
    else:
        raise SystemExit(f"unknown baseline kind {kind!r}")


if __name__ == "__main__":
    _child()
