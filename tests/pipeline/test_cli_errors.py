"""The CLI's last word on errors that escape a command, in a real process: the store held by
another process waits, then exits 1 with one line (no duckdb traceback); an unexpected
exception exits 3 with a one-line summary, its traceback only under --debug."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
import typer

from pipeline import store
from pipeline.cli import app


def scorecard(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os
    return subprocess.run([sys.executable, "-c", "from pipeline.cli import app; app()", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_store_in_use_waits_then_exits_1_on_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    holder = store.connect(db)  # this process holds the file for writing
    try:
        started = time.monotonic()
        done = scorecard("sources", "--db", str(db), env={"SCORECARD_STORE_WAIT_S": "1"})
        took = time.monotonic() - started
    finally:
        holder.close()
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    # one line saying it waits, one saying it gave up (an error, said as every error is):
    # no traceback
    assert lines == [f"{db}: store in use by another scorecard process; waiting up to 1 s",
                     f"error: {db}: store in use by another scorecard process (waited 1 s; "
                     "set SCORECARD_STORE_WAIT_S to wait longer)"]
    assert "Traceback" not in done.stderr and took >= 1


def test_a_store_freed_while_waiting_is_opened(tmp_path: Path) -> None:
    import os
    db = tmp_path / "s.duckdb"
    holder = store.connect(db)
    child = subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli import app; app()", "sources", "--db",
         str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "SCORECARD_STORE_WAIT_S": "60"})
    try:
        assert child.stderr is not None
        said = child.stderr.readline()  # the child says it waits: it is waiting now
        holder.close()  # the other process finishes
        out, rest = child.communicate(timeout=120)
    finally:
        holder.close()
        child.kill()
    assert child.returncode == 0, said + rest
    assert said == f"{db}: store in use by another scorecard process; waiting up to 60 s\n"
    assert "ovhcloud: provides" in out


def test_readers_open_read_only(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    store.connect(db).close()
    reader = store.connect(db, read_only=True)  # readers open read-only: no table created
    with pytest.raises(duckdb.Error):
        reader.execute("CREATE TABLE t (x INT)")
    reader.close()


def _boom_app() -> typer.Typer:
    """An app of the CLI's own class, with a command that fails as a bug would."""
    test_app = type(app)()

    @test_app.callback()
    def options(debug: bool = typer.Option(False, "--debug")) -> None:
        test_app.debug = debug  # type: ignore[attr-defined]

    @test_app.command()
    def boom() -> None:
        {}["missing"]  # a KeyError, as a bug would raise

    @test_app.command()
    def other() -> None: ...

    return test_app


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_exception_exits_3_traceback_only_with_debug(
        debug: bool, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        _boom_app()(["--debug", "boom"] if debug else ["boom"])
    assert caught.value.code == 3
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last == ("scorecard: unexpected error (a bug; please report it): KeyError: "
                    "'missing'; run `scorecard --debug ...` for the traceback")
    assert ("Traceback (most recent call last)" in err) is debug


def _interrupted_app() -> typer.Typer:
    """An app of the CLI's own class whose commands are cut short as a Ctrl-C cuts them: in
    Python code, in a DuckDB statement, and in the Python code of an Arrow stream DuckDB
    reads (DuckDB then reports an error naming the KeyboardInterrupt)."""
    import threading

    import pyarrow as pa

    test_app = type(app)()

    @test_app.callback()
    def options() -> None: ...

    @test_app.command()
    def python() -> None:
        raise KeyboardInterrupt

    @test_app.command()
    def statement() -> None:
        con, done = duckdb.connect(), threading.Event()

        def interrupt() -> None:  # until the statement ends (one sent before it would be lost)
            while not done.wait(0.1):
                con.interrupt()

        threading.Thread(target=interrupt, daemon=True).start()
        try:
            con.execute("SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3"
                        ).fetchall()
        finally:
            done.set()

    @test_app.command()
    def stream() -> None:
        def batches() -> Iterator[pa.RecordBatch]:
            yield pa.record_batch([pa.array([1, 2], pa.int32())], names=["x"])
            raise KeyboardInterrupt

        con = duckdb.connect()
        con.execute("CREATE TABLE t (x INTEGER)")
        con.register("s", pa.RecordBatchReader.from_batches(
            pa.schema([("x", pa.int32())]), batches()))
        con.execute("INSERT INTO t SELECT * FROM s")

    return test_app


@pytest.mark.parametrize("where", ["python", "statement", "stream"])
def test_a_ctrl_c_exits_130_saying_interrupted(where: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # typer exits 130 on a KeyboardInterrupt, saying nothing; DuckDB's interrupt (its own
    # InterruptException, or an error naming the KeyboardInterrupt of a stream it read) had
    # exited 3 as "a bug"
    with pytest.raises(SystemExit) as caught:
        _interrupted_app()([where])
    assert caught.value.code == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "interrupted"
