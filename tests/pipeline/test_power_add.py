"""`evidence add` of power logs: nvidia-smi read part by part gives what the whole-file
reader gives (rows and errors), the bytes are kept, and an unchanged file is answered without
being read or parsed."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipeline import store
from pipeline.evidence.power.logs import add_power_logs, read_power_files
from pipeline.store import connect, power_samples, snapshots
from pipeline.store.evidence import _wait_through_interrupts, snapshot_meanwhile
from pipeline.store.loads import LoadFailed, load_parts
from schemas.power import POWER_SAMPLES
from sources.errors import ParseError
from sources.power.registry import read_power, read_power_parts

HEADER = "timestamp, index, power.draw [W]\n"


def log(path: Path, seconds: int, *, swap_at: int | None = None) -> Path:
    """2 GPUs, one reading each per second: GPU 0 at 300 + s W, GPU 1 at 400 W. With
    `swap_at`, the readings of that second and the next are written in the wrong order."""
    lines = [f"2026/11/20 11:00:{s:02d}.000, {gpu}, {300 + s if gpu == 0 else 400}.00 W\n"
             for s in range(seconds) for gpu in (0, 1)]
    if swap_at is not None:
        lines[2 * swap_at:2 * swap_at + 4] = (lines[2 * swap_at + 2:2 * swap_at + 4]
                                              + lines[2 * swap_at:2 * swap_at + 2])
    path.write_text(HEADER + "".join(lines))
    return path


def test_parts_give_the_whole_file_rows(tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 40)
    _, whole = read_power(path.read_bytes(), path=str(path), tz="UTC")
    found = read_power_parts(path, tz="UTC", part_bytes=100)  # ~3 lines per part
    assert found is not None
    tool, parts = found
    frames = list(parts)
    assert tool == "nvidia-smi" and len(frames) > 10  # really read in parts
    assert_frame_equal(pl.concat(frames), whole)
    assert whole.height == 80


def test_parts_out_of_order_across_a_part_boundary_say_what_the_whole_file_says(
        tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 40, swap_at=20)
    with pytest.raises(ParseError) as whole:
        read_power(path.read_bytes(), path=str(path), tz="UTC")
    for part_bytes in (100, 1 << 20):
        found = read_power_parts(path, tz="UTC", part_bytes=part_bytes)
        assert found is not None
        with pytest.raises(ParseError) as parted:
            list(found[1])
        assert str(parted.value) == str(whole.value)
        assert "smi.csv" in str(parted.value) and "out of order" in str(parted.value)


def readings(path: Path, rows: list[tuple[int, int]]) -> int:
    """A log of (second, gpu) readings in the order given; the bytes of its first line (the
    length of every line for GPUs 0-9), to cut parts at whole lines."""
    lines = [f"2026/11/20 11:00:{s:02d}.000, {gpu}, 300.00 W\n" for s, gpu in rows]
    path.write_text(HEADER + "".join(lines))
    return len(lines[0])


def test_a_part_behind_the_one_before_is_refused_though_each_is_in_order(
        tmp_path: Path) -> None:
    # part 1 seconds 0-3, part 2 seconds 1-2 (two GPUs each): both parts strictly in (time,
    # GPU) order, the second behind the first at the boundary: GPU 0 at 11:00:01 again
    line = readings(path := tmp_path / "smi.csv",
                    [(s, g) for s in range(4) for g in (0, 1)]
                    + [(s, g) for s in (1, 2) for g in (0, 1)])
    found = read_power_parts(path, tz="UTC", part_bytes=8 * line)
    assert found is not None
    with pytest.raises(ParseError, match="out of order for device 0"):
        list(found[1])


def test_parts_interleaved_at_the_boundary_but_each_gpu_in_order_are_kept(
        tmp_path: Path) -> None:
    # part 1: (0 s, GPU 0), (0, 1), (1, 1); part 2: (1, 0), (2, 0), (2, 1). Across the cut
    # (1 s, GPU 1) is followed by (1 s, GPU 0): not in (time, GPU) order, but each GPU's
    # readings increase (GPU 0: 0, 1, 2; GPU 1: 0, 1, 2), as the whole file's check says
    line = readings(path := tmp_path / "smi.csv",
                    [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1)])
    _, whole = read_power(path.read_bytes(), path=str(path), tz="UTC")
    found = read_power_parts(path, tz="UTC", part_bytes=3 * line)
    assert found is not None
    frames = list(found[1])
    assert [f.height for f in frames] == [3, 3]
    assert_frame_equal(pl.concat(frames), whole)


def test_twelve_gpus_in_index_order_are_in_strict_order(tmp_path: Path) -> None:
    # GPUs 0..11 at each second: "9" before "10" is index order, though not text order; the
    # one-pass order check takes it (a device id compares by length, then text), and a part
    # boundary then needs no grouping. Swapping GPUs 10 and 11 at one second breaks it.
    from sources.power.registry import _check_order

    path = tmp_path / "smi.csv"
    readings(path, [(s, g) for s in range(3) for g in range(12)])
    _, frame = read_power(path.read_bytes(), path=str(path), tz="UTC")
    assert _check_order(frame, "nvidia-smi", str(path)) == ["device_id"]
    readings(path, [(s, g) for s in range(3) for g in [*range(10), 11, 10]])
    _, frame = read_power(path.read_bytes(), path=str(path), tz="UTC")
    assert _check_order(frame, "nvidia-smi", str(path)) is None  # in order per GPU only


def test_a_bad_line_in_a_later_part_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 40)
    text = path.read_text().replace("11:00:30.000, 1, 400.00 W", "11:00:30.000, 1, lots W")
    path.write_text(text)
    found = read_power_parts(path, tz="UTC", part_bytes=100)
    assert found is not None
    with pytest.raises(ParseError) as parted:
        list(found[1])
    # the header is line 1, second s of GPU g on line 2 + 2 s + g: 2 + 60 + 1 = 63
    assert "line 63" in str(parted.value)


def test_formats_without_a_part_reader_are_read_whole(tmp_path: Path) -> None:
    dmon = Path(__file__).resolve().parents[1] / "fixtures" / "power" / "nvidia_smi_dmon_2gpu.txt"
    assert read_power_parts(dmon, tz="UTC") is None


def _samples(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute("SELECT device_id, count(*), sum(power_w), any_value(series_id), "
                       "any_value(measurement_boundary), count(note), count(energy_counter_j) "
                       "FROM core__power_samples GROUP BY ALL ORDER BY 1").fetchall()


def test_add_keeps_the_bytes_and_loads_the_samples_once(tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 40)
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    (_, first), = add_power_logs(con, [path], tz="UTC")
    assert first.status == "loaded" and first.row_count == 80
    # GPU 0: 300 + 301 + ... + 339 = 40 x 300 + (0 + ... + 39) = 12,000 + 780 = 12,780 W;
    # GPU 1: 40 x 400 = 16,000 W; constant columns as the reader wrote them, nulls kept
    assert _samples(con) == [("0", 40, 12780.0, "nvidia-smi", "gpu_board", 0, 0),
                             ("1", 40, 16000.0, "nvidia-smi", "gpu_board", 0, 0)]
    (kept,), = con.execute("SELECT content FROM raw_snapshots WHERE source = 'power'"
                           ).fetchall()
    assert bytes(kept) == path.read_bytes()
    (snapshot,), = con.execute("SELECT DISTINCT snapshot_sha256 FROM core__power_samples"
                               ).fetchall()
    assert con.execute("SELECT count(*) FROM raw_snapshots WHERE sha256 = ?",
                       [snapshot]).fetchall() == [(1,)]

    # touched: hashed again, same bytes: unchanged, nothing parsed or written
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    (_, again), = add_power_logs(con, [path], tz="UTC")
    assert (again.status, again.load_id) == ("unchanged", first.load_id)

    # same size and modification time: answered from the recorded digest, the file not
    # even read (here its bytes were replaced by garbage of the same size, time restored)
    stat = path.stat()
    path.write_bytes(b"x" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (_, unread), = add_power_logs(con, [path], tz="UTC")
    assert (unread.status, unread.load_id) == ("unchanged", first.load_id)

    # another timezone makes other rows: loaded again, replacing that source's rows
    log(path, 40)
    (_, other), = add_power_logs(con, [path], tz="Europe/Paris")
    assert other.status == "loaded" and other.load_id != first.load_id
    assert con.execute("SELECT count(*), min(sample_utc)::VARCHAR FROM core__power_samples"
                       ).fetchall() == [(80, "2026-11-20 10:00:00+00")]  # 11:00 CET = 10:00 UTC


def test_a_bad_log_loads_nothing_and_keeps_no_bytes(tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 40, swap_at=20)
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    with pytest.raises(ParseError, match="out of order"):
        add_power_logs(con, [path], tz="UTC")
    assert con.execute("SELECT count(*) FROM core__power_samples").fetchall() == [(0,)]
    con.close()
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])  # the sweep of unlinked bytes
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(0,)]


def test_a_log_added_is_read_back_from_the_store_not_parsed(tmp_path: Path) -> None:
    path = log(tmp_path / "smi.csv", 10)
    con = connect(tmp_path / "s.duckdb")
    add_power_logs(con, [path], tz="UTC")
    parsed, files, _ = read_power_files(path, tz="UTC")  # outside a store: the file parsed
    stored, stored_files, _ = read_power_files(path, tz="UTC", cache=con)
    assert_frame_equal(stored, parsed)
    assert stored_files == files
    # proof the rows come from the store: doubled there, they read doubled (GPU 1 at 400 W
    # in every one of the 10 seconds -> 800 W); the file itself is unchanged
    con.execute(f"UPDATE {power_samples.READINGS} SET power_w = power_w * 2")
    doubled, _, _ = read_power_files(path, tz="UTC", cache=con)
    assert doubled.filter(pl.col("device_id") == "1")["power_w"].to_list() == [800.0] * 10
    # another timezone is another reading of the bytes: parsed, not taken from the store
    paris, _, _ = read_power_files(path, tz="Europe/Paris", cache=con)
    assert paris.filter(pl.col("device_id") == "1")["power_w"].to_list() == [400.0] * 10
    con.close()


def test_a_touched_log_is_hashed_and_still_read_back_from_the_store(tmp_path: Path) -> None:
    # the modification time moved (a copy, a `touch`): the recorded size and mtime no longer
    # vouch for the bytes, so they are hashed; the same sha256 was loaded with these settings,
    # so the rows still come from the store (doubled there: GPU 1 at 2 x 400 W = 800 W)
    path = log(tmp_path / "smi.csv", 10)
    con = connect(tmp_path / "s.duckdb")
    add_power_logs(con, [path], tz="UTC")
    con.execute(f"UPDATE {power_samples.READINGS} SET power_w = power_w * 2")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    frame, files, _ = read_power_files(path, tz="UTC", cache=con)
    assert frame.filter(pl.col("device_id") == "1")["power_w"].to_list() == [800.0] * 10
    assert files[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    con.close()


def test_bytes_kept_meanwhile_are_kept_before_the_refused_load_that_links_them(
        tmp_path: Path) -> None:
    # the rows are refused by the database (a time that is not one, past the reader): the
    # load is recorded failed, linking the file's bytes, which must be kept by then. The bytes
    # come through a named pipe whose writer waits 0.5 s, so they arrive long after the
    # refusal (milliseconds): a load recorded without waiting for them would leave them
    # unkept when load_parts returns
    data = log(tmp_path / "smi.csv", 10).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    bad = read_power(data, path="smi.csv", tz="UTC")[1].with_columns(
        sample_utc=pl.lit("not a time"))
    pipe = tmp_path / "slow.csv"
    os.mkfifo(pipe)

    def write_late() -> None:
        time.sleep(0.5)
        with pipe.open("wb") as out:
            out.write(data)

    writer = threading.Thread(target=write_late)
    writer.start()
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    with snapshot_meanwhile(con, pipe, digest, source="power", size=len(data)) as kept:
        with pytest.raises(LoadFailed, match="Conversion Error"):
            load_parts(con, "power:bad", "evidence", POWER_SAMPLES, digest, [bad],
                       fingerprint="f", snapshot_kept=kept)
        assert snapshots.snapshot_kept(con, digest)
    writer.join()
    assert store.snapshot_content(con, digest) == data
    assert con.execute("SELECT l.status, s.snapshot_sha256 FROM loads l JOIN load_snapshots s "
                       "USING (load_id)").fetchall() == [("failed", digest)]


def test_bytes_that_changed_while_kept_meanwhile_record_no_load(tmp_path: Path) -> None:
    # hashed at one size, read at another (the file changed): the snapshot is refused, so
    # the load that would link it is rolled back and nothing is recorded or kept
    path = log(tmp_path / "smi.csv", 10)
    digest, size = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size
    rows = read_power(path.read_bytes(), path=str(path), tz="UTC")[1]
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    changed = f"{size} bytes read where {size + 1} were hashed"
    with pytest.raises(OSError, match=changed), snapshot_meanwhile(
            con, path, digest, source="power", size=size + 1) as kept:
        load_parts(con, "power:changed", "evidence", POWER_SAMPLES, digest, [rows],
                   fingerprint="f", snapshot_kept=kept)
    assert con.execute("SELECT (SELECT count(*) FROM loads), (SELECT count(*) FROM "
                       "core__power_samples), (SELECT count(*) FROM raw_snapshot_meta)"
                       ).fetchall() == [(0, 0, 0)]


def test_a_ctrl_c_while_the_snapshot_finishes_is_raised_once_it_is_done() -> None:
    # a KeyboardInterrupt raised by a signal handler 0.1 s into the wait for work that takes
    # 0.4 s: the wait goes on (the snapshot's cursor may not be closed under its thread) and
    # the interrupt comes after. SIGUSR1 with a handler raising it, sent to this thread: with
    # polars loaded, a SIGINT's KeyboardInterrupt comes only once the wait is over anyway
    # (measured), which would let this test pass without the loop
    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    done = threading.Event()
    threading.Timer(0.4, done.set).start()
    before = signal.signal(signal.SIGUSR1, interrupt)
    try:
        threading.Timer(0.1, signal.pthread_kill, [threading.get_ident(), signal.SIGUSR1]
                        ).start()
        start = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            _wait_through_interrupts(done)
        assert done.is_set() and time.perf_counter() - start >= 0.35
    finally:
        signal.signal(signal.SIGUSR1, before)


def test_a_log_added_again_with_another_tz_replaces_its_reading_and_export_agrees(
        tmp_path: Path) -> None:
    """The same nvidia-smi log (21 readings of 2 GPUs, naive times from 16:00:58) added with
    --tz UTC, then Europe/Paris (UTC+2 in August): the later reading replaces the earlier, the
    add says which load it replaced (it printed `loaded` twice, as if both were kept), and
    the store and `export` hold the one reading, 42 rows from 14:00:58 UTC."""
    from datetime import UTC, datetime

    from typer.testing import CliRunner

    from pipeline.cli import app

    log = Path(__file__).resolve().parents[1] / "fixtures" / "scorecard" / \
        "nvidia_smi_sweep_window.csv"
    db, out = tmp_path / "s.duckdb", tmp_path / "export"
    runner = CliRunner()
    first = runner.invoke(app, ["evidence", "add", str(log), "--tz", "UTC", "--db", str(db)])
    assert first.exit_code == 0, first.output
    first_load = first.stdout.split("(load ")[1][:32]
    again = runner.invoke(app, ["evidence", "add", str(log), "--tz", "Europe/Paris", "--db",
                                str(db)])
    assert again.exit_code == 0, again.output
    assert (f"; it replaces load {first_load}, the same file read with other settings, as "
            "--tz or --format)") in again.stdout
    done = runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db)])
    assert done.exit_code == 0, done.output
    con = duckdb.connect(str(db), read_only=True)
    stored = con.execute("SELECT count(*), min(sample_utc) FROM core__power_samples").fetchone()
    exported = [con.execute(f"SELECT count(*), min({column}) FROM read_parquet(?)",
                            [str(out / table / "**" / "*.parquet")]).fetchone()
                for table, column in (("core__power_samples", "sample_utc"),
                                      ("fleet_power_samples", "timestamp_utc"))]
    con.close()
    paris = datetime(2026, 8, 16, 14, 0, 58, tzinfo=UTC)
    assert stored == (42, paris)
    assert exported == [(42, paris), (42, paris)]
