"""Inputs the CLI must refuse with exit 1, a message naming the path or value and what to do,
and nothing written: through the real CLI (typer's CliRunner on `pipeline.cli.app`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()


def scorecard(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _folders(tmp_path: Path) -> dict[str, Path]:
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a benchmark, not a power log\n")
    return {"empty": empty, "other": other}


@pytest.mark.parametrize("kind", ["empty", "other"])
def test_inspect_of_a_folder_without_a_run_is_refused(tmp_path: Path, kind: str) -> None:
    folder = _folders(tmp_path)[kind]
    code, out, err = scorecard("evidence", "inspect", str(folder), "--ttft-ms", "1500")
    assert code == 1, out
    assert out == ""  # no table of zero runs
    assert f"{folder}: files: no benchmark run found" in err
    assert "give benchmark result files or folders of them" in err  # what to do
    if kind == "other":
        assert "(1 file(s) skipped" in err


@pytest.mark.parametrize("kind", ["empty", "other"])
def test_add_of_a_folder_without_evidence_is_refused_and_writes_no_store(
        tmp_path: Path, kind: str) -> None:
    folder = _folders(tmp_path)[kind]
    db = tmp_path / "s.duckdb"
    code, out, err = scorecard("evidence", "add", str(folder), "--db", str(db))
    assert code == 1, out
    assert f"{folder}: files: no benchmark result or power log found" in err
    assert "--format or --power-format" in err  # what to do
    assert not db.exists()  # refused before the store is opened


def test_a_vintage_after_this_month_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    code, stdout, err = scorecard("run", "--db", str(db), "--out", str(out), "--vintage",
                                  "2099-01")
    assert code == 1, stdout
    assert "--vintage '2099-01' is after this month" in err
    assert "leave --vintage out for the latest loaded" in err
    assert not db.exists() and not out.exists()


def test_this_month_is_a_vintage_run_takes(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    this_month = datetime.now(UTC).strftime("%Y-%m")
    code, _, err = scorecard("run", "--db", str(tmp_path / "s.duckdb"), "--json", "--vintage",
                             this_month)
    assert code == 0, err


ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "fixtures" / "bench" / "vllm_detailed_small.json"


def _unreadable(tmp_path: Path) -> Path:
    """A folder whose one benchmark file is recognised (a vLLM result's head) but cannot be
    read: it is cut off in the middle of its JSON."""
    folder = tmp_path / "cut"
    folder.mkdir()
    (folder / "run.json").write_bytes(BENCH.read_bytes()[:300])
    return folder


def test_add_of_a_folder_none_of_whose_files_can_be_read_is_refused(tmp_path: Path) -> None:
    folder, db = _unreadable(tmp_path), tmp_path / "s.duckdb"
    code, out, err = scorecard("evidence", "add", str(folder), "--db", str(db))
    assert code == 1, out
    assert f"{folder}: files: no file could be read, nothing was added" in err
    assert f"{folder / 'run.json'}: skipped, it could not be read: " in err  # which, and why
    assert "fix or remove the files" in err  # what to do
    assert not db.exists()  # the store the command would have made is not left behind


def test_an_unreadable_file_leaves_nothing_in_an_existing_store(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "s.duckdb"
    code, _, err = scorecard("evidence", "add", str(BENCH), "--db", str(db))
    assert code == 0, err
    code, _, _ = scorecard("evidence", "add", str(_unreadable(tmp_path)), "--db", str(db))
    assert code == 1
    con = duckdb.connect(str(db), read_only=True)
    # the one good file's snapshot only: none of the cut file's bytes were kept
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(1,)]
    con.close()


def test_a_refused_add_removes_the_folders_it_made_for_its_store(tmp_path: Path) -> None:
    # --db new/sub/s.duckdb: connect makes new/ and new/sub/ and the store, the cut file is
    # refused after: the store, and both folders, are removed (new/ was left behind before)
    folder, db = _unreadable(tmp_path), tmp_path / "new" / "sub" / "s.duckdb"
    code, out, _ = scorecard("evidence", "add", str(folder), "--db", str(db))
    assert code == 1, out
    assert not (tmp_path / "new").exists()
    # a folder that was there before is kept: only what the command made goes
    (tmp_path / "kept").mkdir()
    db = tmp_path / "kept" / "sub" / "s.duckdb"
    code, out, _ = scorecard("evidence", "add", str(folder), "--db", str(db))
    assert code == 1, out
    assert (tmp_path / "kept").is_dir() and not (tmp_path / "kept" / "sub").exists()


def test_a_store_connect_cannot_set_up_is_not_left_behind(tmp_path: Path) -> None:
    # a table whose column no schema field declares: its DDL fails after DuckDB has made the
    # file; connect raises and removes the file and the folder it made (both stayed before)
    from pipeline import store
    from schemas.table import Table

    bad = Table(name="core__bad", description="", columns=("no_such_field_x",), key=())
    db = tmp_path / "made" / "s.duckdb"
    with pytest.raises(KeyError):
        store.connect(db, tables=(bad,))
    assert not (tmp_path / "made").exists()
