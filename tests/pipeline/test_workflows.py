"""The sequences a user walks, through the CLI on one store: each later command sees what the
earlier ones left (a command alone passing says nothing about the order users run them in)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from schemas.fields import is_vintage

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "fixtures" / "bench" / "vllm_detailed_small.json"
runner = CliRunner()


def scorecard(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def process(*args: str) -> tuple[int, str, str]:
    """`scorecard ARGS` in a process of its own, as a user runs it: its exit code is the
    CLI's last word on an error that escapes a command (CliRunner would report 1 for any)."""
    done = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr


def test_evidence_add_then_run_and_explain_take_the_market_month(tmp_path: Path) -> None:
    """`evidence add` records its load under the vintage `evidence` (no month): the next plain
    `run` and `explain` must still take the latest market month, the bundled data's 2026-10
    (sources/reference/README.md), not `evidence` (they exited 3 before)."""
    db = str(tmp_path / "s.duckdb")
    code, _, err = scorecard("evidence", "add", str(BENCH), "--db", db)
    assert code == 0, err
    code, out, err = scorecard("run", "--db", db, "--json")
    assert code == 0, err
    assert json.loads(out)["vintage"] == "2026-10"
    code, out, err = scorecard("explain", "onprem-fr-h200-fp8", "cpm_eur_per_mtok", "--db", db,
                               "--json")
    assert code == 0, err
    assert json.loads(out)["candidate"] == "onprem-fr-h200-fp8"


@pytest.mark.parametrize("text", ["2026-11\n", "\uff12\uff10\uff12\uff16-11", "2026-13",
                                  "2026-1", " 2026-11"])
def test_a_vintage_is_a_month_in_ascii_digits_and_nothing_else(text: str) -> None:
    assert not is_vintage(text)


def test_a_bogus_vintage_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    code, _, err = scorecard("run", "--db", str(db), "--vintage", "\uff12\uff10\uff12\uff16-11")
    assert code == 1
    assert "is not a month YYYY-MM" in err
    assert not db.exists()  # refused before the store is opened
    assert is_vintage("2026-11")


def _damaged(path: Path) -> Path:
    """A real store with its header overwritten: DuckDB's own 'not a valid database file'."""
    scorecard("run", "--db", str(path), "--json")
    with path.open("r+b") as f:
        f.write(b"\0" * 4096)
    return path


STORES = {
    "empty file": lambda p: (p.write_bytes(b""), p)[1],
    "text file": lambda p: (p.write_text("vintage,zone\n2026-11,FR\n"), p)[1],
    "damaged store": _damaged,
}


@pytest.mark.parametrize("kind", list(STORES))
@pytest.mark.parametrize("command", [("run", "--json"), ("evidence", "add", str(BENCH))])
def test_a_file_that_is_no_store_is_one_line_naming_it_and_exit_1(
        kind: str, command: tuple[str, ...], tmp_path: Path) -> None:
    db = STORES[kind](tmp_path / "s.duckdb")
    before = db.read_bytes()
    code, _, err = process(*command, "--db", str(db))
    assert code == 1, err  # was 3, "unexpected error (a bug)"
    assert f"{db}: not a scorecard store" in err and err.count("\n") == 1
    assert db.read_bytes() == before  # left as it was


def test_a_store_whose_folder_is_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    code, _, err = process("run", "--json", "--db", str(tmp_path / "f" / "s.duckdb"))
    assert code == 1 and f"{tmp_path / 'f' / 's.duckdb'}: cannot make its folder" in err


def test_a_proposal_that_is_no_regular_file_or_too_big_is_refused_before_it_is_read(
        tmp_path: Path) -> None:
    """`scorecard run /dev/zero` read without end before; a device, a pipe or a folder is
    refused up front, a file past MAX_PROPOSAL_BYTES (64 MiB) after that many bytes."""
    import os

    from pipeline.workspace import MAX_PROPOSAL_BYTES
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_PROPOSAL_BYTES + 1))
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'name = "x"\n\xff\xfe')
    expected = {"/dev/zero": "not a regular file", str(fifo): "not a regular file",
                str(tmp_path): "not a regular file",
                str(big): f"larger than {MAX_PROPOSAL_BYTES:,} bytes",
                str(binary): "not UTF-8 text (byte 11)"}
    for path, message in expected.items():
        code, _, err = scorecard("run", path, "--db", str(tmp_path / "s.duckdb"), "--json")
        assert code == 1 and f"{path}: {message}" in err, (path, err)
