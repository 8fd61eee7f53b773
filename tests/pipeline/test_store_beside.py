"""Big raw snapshots kept beside the store (`pipeline.store.snapshots`, issue 33): their bytes
in `<store file>.raw/<sha256[:2]>/<sha256>.zst`, zstd, named by the meta row; read back checked
against their sha256; a missing or altered file an error naming it and the snapshot and saying
how to restore it, and restored by adding the same bytes (or the unchanged file) again; one
file per sha256; the sweep removes a killed write's temporary and the file of a row it
deletes (once committed, never in a caller's transaction), never a complete file no row names
(a store moved or restored without its folder keeps its files); a failed write names the file;
the view's `beside_path`; an older store (no such column, its snapshots in parts) read and
upgraded as it is. Real DuckDB files, real files, a child process for a write the system
refuses, a threshold of a few bytes instead of 16 MiB files."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.cli import last_word
from pipeline.evidence.power.logs import add_power_logs
from pipeline.store import snapshots
from pipeline.store.errors import SnapshotFileError, SnapshotWriteError
from pipeline.store.snapshots import save_snapshot_chunks

#: 6,000 bytes (a 37-byte line 162 times = 5,994, "tail\n" 5, "x" 1): above the tests'
#: threshold of 1,000; repeated, so zstd makes them far smaller (checked: under a tenth)
DATA = b"2026/11/20 11:00:00.000, 0, 300.00 W\n" * 162 + b"tail\n" + b"x"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # the first four bytes of every zstd frame (RFC 8878)


def beside(db: Path, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    return db.with_name(db.name + ".raw") / digest[:2] / f"{digest}.zst"


def meta(con: duckdb.DuckDBPyConnection, digest: str) -> list[tuple[object, ...]]:
    return con.execute("SELECT size_bytes, beside_path FROM raw_snapshot_meta WHERE "
                       "sha256 = ?", [digest]).fetchall()


def linked(con: duckdb.DuckDBPyConnection, digest: str) -> None:
    """A load that read the snapshot, so the sweep keeps it."""
    store.record_failure(con, "s", "2026-11", [digest], "parse error: x")


def test_a_big_snapshot_is_kept_beside_the_store_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "stores" / "mine.duckdb"  # follows the store's path (--db, SCORECARD_DB)
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    file = beside(db, DATA)
    assert len(DATA) == 6000 and digest == hashlib.sha256(DATA).hexdigest()
    assert file.is_file() and file.read_bytes()[:4] == ZSTD_MAGIC
    assert file.stat().st_size < len(DATA) // 10
    assert meta(con, digest) == [(6000, f"{digest[:2]}/{digest}.zst")]
    assert con.execute("SELECT count(*) FROM raw_snapshot_parts").fetchall() == [(0,)]
    assert store.snapshot_content(con, digest) == DATA
    linked(con, digest)
    con.close()
    reader = store.connect(db, read_only=True)  # a reader reads it too
    assert store.snapshot_content(reader, digest) == DATA
    [snapshot] = store.latest_load_snapshots(reader, "s", "2026-11")
    assert snapshot.content == DATA
    assert not list(file.parent.glob("*.tmp"))  # nothing left of the write


def test_a_snapshot_up_to_the_threshold_and_one_in_memory_stay_in_parts(tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=6000)
    assert meta(con, digest) == [(6000, None)]  # 6,000 bytes are not above 6,000
    assert not (tmp_path / "s.duckdb.raw").exists()
    memory = store.connect(":memory:")  # no file to keep anything beside
    digest = store.save_snapshot(memory, DATA, source="s", url="https://a", beside_over=1000)
    assert meta(memory, digest) == [(6000, None)]
    assert store.snapshot_content(memory, digest) == DATA


def test_bytes_in_chunks_are_hashed_as_written_and_others_keep_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = hashlib.sha256(DATA).hexdigest()
    chunks = [DATA[:2500], DATA[2500:5000], DATA[5000:]]  # three zstd frames, one file
    save_snapshot_chunks(con, digest, iter(chunks), source="power", url="file:///x",
                         size=6000, beside_over=1000)
    assert store.snapshot_content(con, digest) == DATA
    # the same length but another byte (the file changed while it was added): refused,
    # neither row nor file nor temporary kept
    other = DATA[:-1] + b"y"
    wrong = hashlib.sha256(other[::-1]).hexdigest()  # not the digest of `other`
    with pytest.raises(OSError, match=f"no longer hash to {wrong}"):
        save_snapshot_chunks(con, wrong, iter([other]), source="power", url="file:///y",
                             size=6000, beside_over=1000)
    assert meta(con, wrong) == []
    assert [p.name for p in db.with_name("s.duckdb.raw").rglob("*.zst*")] == [f"{digest}.zst"]


def test_one_file_per_sha256_and_a_file_left_without_its_row_is_reused(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    file = beside(db, DATA)
    written = file.stat().st_mtime_ns, file.stat().st_ino
    store.save_snapshot(con, DATA, source="s", url="https://b", beside_over=1000)  # kept: no-op
    assert con.execute("SELECT url FROM raw_snapshot_meta").fetchall() == [("https://a",)]
    # its row gone (a process killed after the rename, before its commit): the file is
    # reused, not written again, as its bytes hash to the name
    con.execute("DELETE FROM raw_snapshot_meta")

    def unread() -> Iterator[bytes]:
        raise AssertionError("the chunks of a reused file are read")
        yield b""

    save_snapshot_chunks(con, digest, unread(), source="s", url="https://c", size=6000,
                         beside_over=1000)
    assert (file.stat().st_mtime_ns, file.stat().st_ino) == written
    assert meta(con, digest) == [(6000, f"{digest[:2]}/{digest}.zst")]
    assert store.snapshot_content(con, digest) == DATA
    # a file under the name holding other bytes is not reused: written again
    con.execute("DELETE FROM raw_snapshot_meta")
    file.write_bytes(b"not zstd")
    store.save_snapshot(con, DATA, source="s", url="https://d", beside_over=1000)
    assert store.snapshot_content(con, digest) == DATA


def test_a_missing_or_altered_file_is_an_error_naming_it_and_the_snapshot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa

    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="ecb", url="https://ecb/x", beside_over=1000)
    file = beside(db, DATA)
    kept = file.read_bytes()
    # other bytes of the same length, compressed as the store does: a hash of their own
    file.write_bytes(pa.Codec("zstd").compress(DATA[:-1] + b"y", asbytes=True))
    with pytest.raises(SnapshotFileError) as altered:
        store.snapshot_content(con, digest)
    assert str(altered.value).startswith(f"{file}: altered: the file of raw snapshot {digest} "
                                         "(source ecb, https://ecb/x) holds 6000 bytes")
    file.write_bytes(kept[:-8])  # cut short
    with pytest.raises(SnapshotFileError, match=f"{file}: .*raw snapshot {digest}"):
        store.snapshot_content(con, digest)
    file.write_bytes(b"plain text, not zstd")
    with pytest.raises(SnapshotFileError, match=f"unreadable as zstd .*raw snapshot {digest}"):
        store.snapshot_content(con, digest)
    file.unlink()
    with pytest.raises(SnapshotFileError) as missing:
        store.snapshot_content(con, digest)
    assert str(missing.value).startswith(f"{file}: missing: the file of raw snapshot {digest}")
    # the CLI says it on one line and exits 1 (a StoreError), no traceback; a source that
    # reads it fails alone (a ValueError, as `pipeline.ingest.pull` catches)
    assert last_word(missing.value) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing" in err and "Traceback" not in err
    assert isinstance(missing.value, ValueError)


def test_the_sweep_removes_a_swept_rows_file_and_temporaries_never_a_file_no_row_names(
        tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    kept = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    linked(con, kept)
    other = DATA + b"!"
    orphan = store.save_snapshot(con, other, source="s", url="https://b", beside_over=1000)
    raw = db.with_name("s.duckdb.raw")
    stray = raw / "zz" / f"{'z' * 64}.zst"  # no row names it: another store's, perhaps
    stray.parent.mkdir()
    stray.write_bytes(b"x")
    temporary = beside(db, DATA).with_name(f"{kept}.zst.4242.tmp")  # a killed write's
    temporary.write_bytes(b"half")
    notes = raw / "ab" / "notes.tmp"  # someone's file, not a write's temporary
    notes.parent.mkdir()
    notes.write_text("mine")
    empty = raw / "cd"
    empty.mkdir()
    con.close()
    con = store.connect(db)  # every writer sweeps
    # the orphan's row and, by its name, its file; the temporary; the empty subfolder
    assert meta(con, orphan) == [] and not beside(db, other).exists()
    assert not temporary.exists() and not empty.exists()
    # never a complete file no row names, nor anything else
    assert stray.read_bytes() == b"x" and notes.read_text() == "mine"
    assert beside(db, DATA).exists() and store.snapshot_content(con, kept) == DATA
    assert snapshots.sweep_orphans(con) == 0


def test_a_store_moved_or_restored_without_its_folder_loses_no_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 33's review: `mv a.duckdb moved/`, then a command at the old path made a new store
    # there whose sweep emptied a.duckdb.raw; restoring an older copy of the file did the same
    db = tmp_path / "a.duckdb"
    con = store.connect(db)
    first = store.save_snapshot(con, DATA, source="power", url="file:///log.csv",
                                beside_over=1000)
    linked(con, first)
    con.close()
    older = tmp_path / "older.duckdb"
    older.write_bytes(db.read_bytes())  # a copy of the store holding `first` only
    con = store.connect(db)
    second = store.save_snapshot(con, DATA * 2, source="power", url="file:///big.csv",
                                 beside_over=1000)
    linked(con, second)
    con.close()
    files = sorted(p.name for p in db.with_name("a.duckdb.raw").rglob("*.zst"))
    assert files == sorted([f"{first}.zst", f"{second}.zst"])
    capsys.readouterr()
    # the file restored from its older copy: its writer's sweep keeps the second's file
    older.replace(db)
    store.connect(db).close()
    assert sorted(p.name for p in db.with_name("a.duckdb.raw").rglob("*.zst")) == files
    # the file moved without its folder: a new store at the old path says so, deletes nothing
    (tmp_path / "moved").mkdir()
    db.replace(tmp_path / "moved" / "a.duckdb")
    con = store.connect(db)
    err = capsys.readouterr().err
    assert f"{db.with_name('a.duckdb.raw')}: already beside the new store {db}" in err
    assert "nothing in it is deleted" in err
    con.close()
    store.connect(db).close()  # and its next writer's sweep neither
    assert sorted(p.name for p in db.with_name("a.duckdb.raw").rglob("*.zst")) == files
    # the folder put back beside the moved file: its snapshots read again
    db.with_name("a.duckdb.raw").replace(tmp_path / "moved" / "a.duckdb.raw")
    moved = store.connect(tmp_path / "moved" / "a.duckdb", read_only=True)
    assert store.snapshot_content(moved, first) == DATA


def test_a_sweep_within_a_callers_transaction_deletes_no_file(tmp_path: Path) -> None:
    # the rows' deletion is the caller's to commit or roll back: rolled back, the row names
    # its file again, which must still be there
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    con.execute("BEGIN TRANSACTION")
    assert snapshots.sweep_orphans(con) == 1
    assert meta(con, digest) == []
    con.execute("ROLLBACK")
    assert meta(con, digest) == [(6000, f"{digest[:2]}/{digest}.zst")]
    assert store.snapshot_content(con, digest) == DATA
    # swept in a transaction of its own: the row, then its file once committed
    assert snapshots.sweep_orphans(con) == 1
    assert meta(con, digest) == [] and not beside(db, DATA).exists()


def test_an_older_store_keeps_its_parts_and_gets_the_column_from_a_writer(
        tmp_path: Path) -> None:
    # a store from before files beside it: no beside_path column, a big snapshot in parts
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=10**9)
    linked(con, digest)
    con.execute("ALTER TABLE raw_snapshot_meta DROP COLUMN beside_path")
    con.close()
    reader = store.connect(db, read_only=True)  # read as it is
    assert store.snapshot_content(reader, digest) == DATA
    assert [s.content for s in store.latest_load_snapshots(reader, "s", "2026-11")] == [DATA]
    reader.close()
    con = store.connect(db)
    assert meta(con, digest) == [(6000, None)]  # the column added, the parts where they were
    assert store.snapshot_content(con, digest) == DATA
    more = store.save_snapshot(con, DATA * 2, source="s", url="https://b", beside_over=1000)
    assert store.snapshot_content(con, more) == DATA * 2 and beside(db, DATA * 2).exists()


_KILLED = """
import sys, time
from pipeline import store
from pipeline.store.snapshots import save_snapshot_chunks

con = store.connect(sys.argv[1])

def chunks():
    yield b"a" * 5000
    print("writing", flush=True)
    time.sleep(60)  # killed here, mid-write
    yield b"b"

save_snapshot_chunks(con, "c" * 64, chunks(), source="s", url="file:///k", size=5001,
                     beside_over=1000)
"""


def test_a_process_killed_mid_write_leaves_nothing_a_writer_keeps(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    store.connect(db).close()
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_KILLED), str(db)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "writing\n"
    temporary = db.with_name("s.duckdb.raw") / "cc" / f"{'c' * 64}.zst.{child.pid}.tmp"
    deadline = time.monotonic() + 10
    while not temporary.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert temporary.exists()  # the write under way, under its temporary name
    child.kill()
    child.wait()
    con = store.connect(db)  # the next writer: no row, no file, no temporary
    assert con.execute("SELECT count(*) FROM raw_snapshot_meta").fetchall() == [(0,)]
    assert not (db.with_name("s.duckdb.raw") / "cc").exists()
    # and the same bytes are kept cleanly by a retry
    data = b"a" * 5000 + b"b"
    digest = store.save_snapshot(con, data, source="s", url="file:///k", beside_over=1000)
    assert store.snapshot_content(con, digest) == data


def small_log(folder: Path) -> Path:
    """60 seconds x 2 GPUs of nvidia-smi lines (~4 KB)."""
    lines = [f"2026/11/20 11:00:{s:02d}.000, {gpu}, 300.00 W\n" for s in range(60)
             for gpu in (0, 1)]
    log = folder / "smi.csv"
    log.write_text("timestamp, index, power.draw [W]\n" + "".join(lines))
    return log


def test_evidence_add_keeps_a_big_log_beside_the_store(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # small_log's ~4 KB: above a 1,000-byte threshold
    log = small_log(tmp_path)
    monkeypatch.setattr(snapshots, "BESIDE_BYTES", 1000)
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    [(_, result)] = add_power_logs(con, [log], tz="UTC")
    assert result.status == "loaded" and result.row_count == 120
    data = log.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert beside(db, data).is_file()
    assert meta(con, digest) == [(len(data), f"{digest[:2]}/{digest}.zst")]
    assert store.snapshot_content(con, digest) == data
    con.close()
    con = store.connect(db)  # linked by its load: the sweep keeps it
    assert store.snapshot_content(con, digest) == data


def test_a_file_saved_in_a_callers_transaction_rolled_back_is_kept_and_reused(
        tmp_path: Path) -> None:
    # a benchmark file's bytes are kept in the transaction that loads its runs: rolled back,
    # its row goes and its file stays, complete (no sweep deletes a file no row names: it may
    # be another store's); the next add of the same bytes reuses it, not writing it again
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    con.execute("BEGIN TRANSACTION")
    digest = store.save_snapshot(con, DATA, source="bench", url="file:///b.json",
                                 beside_over=1000)
    assert store.snapshot_content(con, digest) == DATA
    con.execute("ROLLBACK")
    file = beside(db, DATA)
    assert meta(con, digest) == [] and file.exists()
    written = file.stat().st_mtime_ns, file.stat().st_ino
    snapshots.sweep_orphans(con)
    assert file.exists()
    store.save_snapshot(con, DATA, source="bench", url="file:///b.json", beside_over=1000)
    assert (file.stat().st_mtime_ns, file.stat().st_ino) == written
    assert store.snapshot_content(con, digest) == DATA


def test_a_refused_add_into_a_new_store_leaves_no_raw_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a log above the threshold whose last reading is out of order: refused (exit 1) once its
    # bytes have begun to go beside the store; the new store is removed, its raw folder too
    from typer.testing import CliRunner

    from pipeline.cli import app

    lines = [f"2026/11/20 11:00:{s:02d}.000, {gpu}, 300.00 W\n" for s in range(60)
             for gpu in (0, 1)]
    lines.append("2026/11/20 11:00:00.000, 0, 300.00 W\n")  # behind the one before it
    log = tmp_path / "smi.csv"
    log.write_text("timestamp, index, power.draw [W]\n" + "".join(lines))
    monkeypatch.setattr(snapshots, "BESIDE_BYTES", 1000)
    db = tmp_path / "new" / "s.duckdb"
    result = CliRunner().invoke(app, ["evidence", "add", "--tz", "UTC", str(log), "--db",
                                      str(db)])
    assert result.exit_code == 1 and "out of order" in result.stderr, result.output
    assert not (tmp_path / "new").exists()  # neither the store, nor s.duckdb.raw, nor new/
    # a raw folder that was there before the command is not its to remove
    (tmp_path / "new").mkdir()
    kept = db.with_name("s.duckdb.raw") / "keep.txt"
    kept.parent.mkdir()
    kept.write_text("someone's")
    result = CliRunner().invoke(app, ["evidence", "add", "--tz", "UTC", str(log), "--db",
                                      str(db)])
    assert result.exit_code == 1 and not db.exists() and kept.exists()


def test_adding_the_same_bytes_again_restores_a_missing_or_altered_file(
        tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    digest = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    linked(con, digest)
    file = beside(db, DATA)
    file.unlink()
    store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    assert store.snapshot_content(con, digest) == DATA
    file.write_bytes(b"other bytes")  # altered: written again too
    save_snapshot_chunks(con, digest, iter([DATA[:3000], DATA[3000:]]), source="s",
                         url="https://a", size=6000, beside_over=1000)
    assert store.snapshot_content(con, digest) == DATA
    assert meta(con, digest) == [(6000, f"{digest[:2]}/{digest}.zst")]  # the one row
    # bytes that no longer hash to the digest restore nothing
    file.unlink()
    with pytest.raises(OSError, match="no longer hash to"):
        save_snapshot_chunks(con, digest, iter([DATA[:-1] + b"y"]), source="s",
                             url="https://a", size=6000, beside_over=1000)
    assert not file.exists() and not list(file.parent.glob("*.tmp"))


def test_evidence_add_of_the_unchanged_file_restores_its_missing_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `evidence add` answers "unchanged" from its record of the file's path, size and mtime
    # before reading it: it first checks (a stat) that the file beside the store is there,
    # and writes it again from the file when it is not, as the missing file's error says
    import os

    log = small_log(tmp_path)
    monkeypatch.setattr(snapshots, "BESIDE_BYTES", 1000)
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    [(_, first)] = add_power_logs(con, [log], tz="UTC")
    data = log.read_bytes()
    digest, file = hashlib.sha256(data).hexdigest(), beside(db, data)
    file.unlink()
    with pytest.raises(SnapshotFileError) as missing:
        store.snapshot_content(con, digest)
    assert f"`scorecard evidence add {log}`" in str(missing.value)
    assert f"or put back the folder {db.with_name('s.duckdb.raw')} from a copy" in \
        str(missing.value)
    [(_, again)] = add_power_logs(con, [log], tz="UTC")  # size and mtime as recorded
    assert (again.status, again.load_id) == ("unchanged", first.load_id)
    assert store.snapshot_content(con, digest) == data
    file.unlink()
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched: hashed, unchanged
    [(_, touched)] = add_power_logs(con, [log], tz="UTC")
    assert touched.status == "unchanged" and store.snapshot_content(con, digest) == data
    # an altered file's error says to delete it first (a stat sees it there)
    file.write_bytes(b"not zstd")
    with pytest.raises(SnapshotFileError, match=f"delete it, then add the original file "
                       f"again \\(`scorecard evidence add {log}`"):
        store.snapshot_content(con, digest)


_CAPPED = """
import random, resource, sys
from pipeline import store

con = store.connect(sys.argv[1])
con.execute("CHECKPOINT")
# files this process writes may not grow past 64 KiB (as a full disk would refuse them)
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
data = random.Random(33).randbytes(1 << 20)  # 1 MiB that zstd cannot shrink
try:
    store.save_snapshot(con, data, source="power", url="file:///big.csv", beside_over=1000)
except Exception as error:
    print(type(error).__name__, error.errno, str(error), sep="|")
"""


def test_a_write_beside_the_store_that_fails_names_the_file_and_the_snapshot(
        tmp_path: Path) -> None:
    # a limit on file sizes (`ulimit -f`) in a child process stands in for a full disk: the
    # OS's error ("File too large", errno 27) names no file; the store's names it
    db = tmp_path / "s.duckdb"
    store.connect(db).close()
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(_CAPPED), str(db)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr
    data = random.Random(33).randbytes(1 << 20)  # the child's bytes, their sha256 here
    digest = hashlib.sha256(data).hexdigest()
    kind, errno, message = child.stdout.strip().split("|")
    assert (kind, errno) == ("SnapshotWriteError", "27")
    assert message == (f"{beside(db, data)}: cannot write the file of raw snapshot {digest} "
                       "(file:///big.csv) beside the store: File too large")
    assert not list(db.with_name("s.duckdb.raw").rglob("*.tmp"))  # the temporary removed
    con = store.connect(db)
    assert meta(con, digest) == []  # and no row


def test_the_view_says_where_a_big_snapshot_is_and_an_older_view_is_rebuilt(
        tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    big = store.save_snapshot(con, DATA, source="s", url="https://a", beside_over=1000)
    small = store.save_snapshot(con, b"abc", source="s", url="https://b", beside_over=1000)
    linked(con, big)
    linked(con, small)
    view = "SELECT sha256, content, beside_path FROM raw_snapshots ORDER BY url"
    assert con.execute(view).fetchall() == [(big, None, f"{big[:2]}/{big}.zst"),
                                            (small, b"abc", None)]
    # the view as a store made before it had the column: a writer rebuilds it
    con.execute("CREATE OR REPLACE VIEW raw_snapshots AS SELECT m.sha256, m.source, m.url, "
                "m.params_json, m.fetched_at_utc, m.size_bytes, NULL::BLOB AS content "
                "FROM raw_snapshot_meta m")
    con.close()
    reader = store.connect(db, read_only=True)  # a reader reads it as it is
    assert store.snapshot_content(reader, big) == DATA
    reader.close()
    con = store.connect(db)
    assert con.execute(view).fetchall() == [(big, None, f"{big[:2]}/{big}.zst"),
                                            (small, b"abc", None)]


def test_evidence_add_keeps_a_big_benchmark_file_beside_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the benchmark-file path passes the threshold as the power logs' does (a fetched answer
    # does not): 1,146 bytes above 1,000 beside the store; added again with its file missing,
    # the file is written again (the bytes are read and kept on every add of a benchmark)
    from pipeline.evidence.bench import add_bench_files

    bench = tmp_path / "vllm_detailed_small.json"
    bench.write_bytes((Path(__file__).parents[1] / "fixtures" / "bench" / bench.name
                       ).read_bytes())
    monkeypatch.setattr(snapshots, "BESIDE_BYTES", 1000)
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    [(_, first)] = add_bench_files(con, [bench])
    data = bench.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert len(data) == 1146 and first.status == "loaded"
    assert meta(con, digest) == [(1146, f"{digest[:2]}/{digest}.zst")]
    beside(db, data).unlink()
    [(_, again)] = add_bench_files(con, [bench])
    assert again.status == "unchanged" and store.snapshot_content(con, digest) == data


def test_a_raw_folder_that_is_a_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    # `<store>.raw` made a regular file: the write's error names the file it could not write
    # (the clean-up of its temporary fails the same way, and no longer hides that error)
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    db.with_name("s.duckdb.raw").write_text("not a folder")
    with pytest.raises(SnapshotWriteError) as failed:
        store.save_snapshot(con, DATA, source="s", url="file:///big.csv", beside_over=1000)
    assert str(failed.value).startswith(f"{beside(db, DATA)}: cannot write the file of raw "
                                        "snapshot ")
    assert meta(con, hashlib.sha256(DATA).hexdigest()) == []
