"""The report folder is replaced whole (pipeline/folders.py): a run's files appear together or
not at all, whatever stops it, and two writers never mix their files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from pipeline.folders import FolderBusy, NotAFolder, _signals_held, replaced

ROOT = Path(__file__).resolve().parents[2]
FILES = {"scorecard.json", "scorecard.html", "scorecard.xlsx", "scorecard.csv",
         "scorecard.parquet"}
OWNED = {"a.txt", "b.txt"}


def test_a_block_that_ends_replaces_the_old_set_and_one_that_raises_keeps_it(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    with replaced(out, OWNED) as staging:
        (staging / "a.txt").write_text("first")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]
    with pytest.raises(RuntimeError), replaced(out, OWNED) as staging:
        (staging / "b.txt").write_text("second, half done")
        raise RuntimeError("cut short")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]  # the old set, untouched
    with replaced(out, OWNED) as staging:
        (staging / "b.txt").write_text("second")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"]  # no file of the old set left
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]


def test_what_a_killed_writer_left_is_cleaned_and_its_old_set_put_back(tmp_path: Path) -> None:
    # killed between the two renames: the old set moved aside, the new one not yet in place
    (tmp_path / ".out.old-999").mkdir()
    (tmp_path / ".out.old-999" / "a.txt").write_text("old set")
    (tmp_path / ".out.tmp-998").mkdir()
    with pytest.raises(RuntimeError), replaced(tmp_path / "out", OWNED):
        raise RuntimeError("this run fails too")
    assert (tmp_path / "out" / "a.txt").read_text() == "old set"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]


def test_a_second_writer_and_a_file_in_the_way_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with replaced(out, OWNED), \
            pytest.raises(FolderBusy, match="another scorecard run is writing"), \
            replaced(out, OWNED):
        pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotAFolder, match="is a file, not a folder"), \
            replaced(tmp_path / "file", OWNED):
        pass


def test_a_folder_holding_other_files_is_never_replaced(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`--out ~/Desktop` or `--out .` must not take the folder's other files with it (they were
    moved aside and deleted, found in review): such a folder is refused, left as it was."""
    desktop = tmp_path / "desktop"
    desktop.mkdir()
    (desktop / "thesis.docx").write_text("months of work")
    (desktop / "a.txt").write_text("a report file")
    with pytest.raises(NotAFolder, match=r"holds 1 file\(s\) or folder\(s\) that are not "
                       r"this report's \(thesis.docx\)"), replaced(desktop, OWNED):
        pass
    monkeypatch.chdir(desktop)
    with pytest.raises(NotAFolder, match=r"thesis\.docx"), replaced(Path(), OWNED):
        pass
    assert sorted(p.name for p in desktop.iterdir()) == ["a.txt", "thesis.docx"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["desktop"]


def test_a_linked_folder_and_glob_characters_in_its_name(tmp_path: Path) -> None:
    # the link's target is replaced (the link stays a link to it); a name like 'q*' or
    # 'report[1]' is no pattern for the clean-up (it removed another folder's files before)
    target = tmp_path / "report[1]"
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    (tmp_path / ".report[1]x.tmp-42").mkdir()  # another folder's writer at work
    for text in ("first", "second"):
        with replaced(link, OWNED) as staging:
            (staging / "a.txt").write_text(text)
    assert link.is_symlink() and (link / "a.txt").read_text() == "second"
    assert (tmp_path / ".report[1]x.tmp-42").exists()


def scorecard(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pipeline", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def one_run(out: Path) -> str:
    """The proposal every file of `out` is from, after checking they are all there and agree."""
    assert {p.name for p in out.iterdir()} == FILES
    name = json.loads((out / "scorecard.json").read_text())["proposal"]
    for table in (pl.read_csv(out / "scorecard.csv"), pl.read_parquet(out / "scorecard.parquet")):
        assert set(table["proposal"]) == {name}
    return str(name)


def test_sigterm_or_a_second_proposal_leave_one_whole_set(tmp_path: Path) -> None:
    """A run of another proposal into the same --out, stopped by SIGTERM at several moments
    (before, while and after it writes): the folder holds the old set or the new one, whole,
    and a stopped run says "terminated" and exits 143 (143 with no word, beside a 0-byte
    XLSX and the old files, before)."""
    out, db = tmp_path / "out", str(tmp_path / "s.duckdb")
    example = (ROOT / "pipeline" / "example_proposal.toml").read_text()
    other = tmp_path / "other.toml"
    other.write_text(example.replace('name = "', 'name = "Other ', 1))
    first = scorecard("run", "--out", str(out), "--db", db)
    assert first.wait(timeout=120) == 0, first.communicate()[1]
    old = one_run(out)
    outcomes = set()
    for delay in (0.5, 1.2, 1.8, 2.5, 3.5):
        run = scorecard("run", str(other), "--out", str(out), "--db", db)
        time.sleep(delay)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=120)
        # -15: the signal came while Python was still starting, before the CLI took SIGTERM
        # over (a busy machine), or once the command was done and had given it back (-2, an
        # unhandled KeyboardInterrupt, before); the folder is whole either way (below)
        assert run.returncode in (0, 143, -signal.SIGTERM), err
        if run.returncode == 143:
            assert err.rstrip().endswith("terminated"), err
        assert one_run(out) in (old, f"Other {old}")
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == [
            ".out.lock"]
        outcomes.add(run.returncode)
    assert 143 in outcomes  # at least one run was really cut short


def test_out_naming_a_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "report").write_text("not a folder")
    run = scorecard("run", "--out", str(tmp_path / "report"), "--db", str(tmp_path / "s.duckdb"))
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1  # 3, "unexpected error (a bug)", before
    assert f"{tmp_path / 'report'}: is a file, not a folder" in err
    assert (tmp_path / "report").read_text() == "not a folder"


def test_a_signal_during_the_swap_is_delivered_once_it_is_done() -> None:
    """A SIGTERM between the two renames would leave no report folder: it is held and
    delivered after them (a signal mask did not hold it: DuckDB's threads take signals too)."""
    seen: list[str] = []

    def handler(signum: int, frame: object) -> None:
        seen.append("handled")
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(KeyboardInterrupt), _signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # a handler would have run by now
            seen.append("swap done")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == ["swap done", "handled"]


def test_a_command_cut_short_keeps_its_code_under_python_m(tmp_path: Path) -> None:
    """`python -m pipeline` of a command cut short exits 130 (Ctrl-C) even when a
    KeyboardInterrupt has already crossed C code that ran Python (here `PyRun_SimpleString`,
    as an extension's initialisation may do while the command imports): CPython marks the
    interrupt unhandled for the process and `python -m` then exited by SIGINT (-2), whatever
    the SystemExit said; seen as test_sigterm_or_a_second_proposal_leave_one_whole_set's
    "terminated" run exiting -2 under load."""
    (tmp_path / "cut_short.py").write_text(
        "import ctypes, runpy, sys\n"
        "import pipeline.cli as cli\n"
        "@cli.app.command('boom')\n"
        "def boom() -> None:\n"
        "    # the interrupt crosses C code running Python (the last such call marks it)\n"
        "    ctypes.pythonapi.PyRun_SimpleString(b'raise KeyboardInterrupt')\n"
        "    raise KeyboardInterrupt\n"
        "sys.argv = ['scorecard', 'boom']\n"
        "runpy.run_module('pipeline', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-m", "cut_short"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.rstrip().endswith("interrupted")
