"""`scorecard run | head -1`: a reader that leaves early ends the printing, not the run. The
report files are written, the run is published, and the exit code is 0 with nothing on
stderr about it (it was 1, invalid input's code, and no message); `explain`, `diff` and
`sources` end as quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import store
from pipeline.run import slug
from schemas.proposal import parse

EXAMPLE = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"


def _into_a_closed_pipe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`scorecard ARGS` in a process of its own whose stdout is a real pipe that nobody
    reads any more: its read end is closed before the process starts, so its first write
    meets EPIPE, as after `head -1` has its line and exits."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "pipeline", *args], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300, check=False,
                              cwd=cwd)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [(), ("--json",)])
def test_a_closed_pipe_ends_the_printing_quietly(tmp_path: Path, args: tuple[str, ...]) -> None:
    db = tmp_path / "s.duckdb"
    done = _into_a_closed_pipe(tmp_path, "run", "--db", str(db), *args)
    assert done.returncode == 0, done.stderr
    # the store's note is the only line on stderr: no traceback, no "Exception ignored"
    assert done.stderr.startswith("new store at ") and done.stderr.count("\n") == 1, \
        done.stderr
    name = parse(EXAMPLE.read_text(encoding="utf-8"), EXAMPLE).proposal.name
    folder = tmp_path / "scorecard-out" / slug(name) / "2026-10"
    # the files are written and the run published as on a terminal (a --json run writes
    # none and publishes nothing)
    for suffix in ("json", "html", "xlsx", "csv", "parquet"):
        assert (folder / f"scorecard.{suffix}").exists() == (args == ()), suffix
    con = store.connect(db, read_only=True)
    try:
        assert (store.published(con, "2026-10", name) is not None) == (args == ())
    finally:
        con.close()


def test_explain_diff_and_sources_end_quietly_too(tmp_path: Path) -> None:
    db = str(tmp_path / "s.duckdb")
    assert _into_a_closed_pipe(tmp_path, "run", "--db", db).returncode == 0
    for args in (["explain", "onprem-fr-h200-fp8", "cpm"], ["explain", "onprem-fr-h200-fp8",
                 "cpm", "--json"], ["diff", "2026-10", "2026-10"],
                 ["diff", "2026-10", "2026-10", "--json"], ["sources"]):
        done = _into_a_closed_pipe(tmp_path, *args, "--db", db)
        assert done.returncode == 0, (args, done.stderr)
        # the store's note at most: no traceback, no "Exception ignored"
        assert all(line.startswith("store with no ingested data at ")
                   for line in done.stderr.splitlines()), (args, done.stderr)
