"""`scorecard run | head -1`: a reader that leaves early ends the printing, not the run. The
report files are written, the run is published, and the exit code is 0 with nothing on
stderr about it (it was 1, invalid input's code, and no message)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _run_into_a_closed_pipe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`scorecard run ARGS` in a process of its own whose stdout is a real pipe that nobody
    reads any more: its read end is closed before the process starts, so its first write
    meets EPIPE, as after `head -1` has its line and exits."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "pipeline", "run", *args], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300, check=False,
                              cwd=cwd)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [(), ("--json",)])
def test_a_closed_pipe_ends_the_printing_quietly(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _run_into_a_closed_pipe(tmp_path, "--db", str(tmp_path / "s.duckdb"), *args)
    assert done.returncode == 0, done.stderr
    # the store's note is the only line on stderr: no traceback, no "Exception ignored"
    assert done.stderr.startswith("new store at ") and done.stderr.count("\n") == 1, \
        done.stderr
    folder = tmp_path / "scorecard-out" / "sovereign-70b-inference-platform-example" / "2026-10"
    # the files are written as on a terminal (a --json run writes none)
    assert (folder / "scorecard.html").exists() == (args == ())
