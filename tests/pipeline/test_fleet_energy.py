"""A fleet's power samples in Parquet (`pipeline.evidence.power.fleet`): the energy DuckDB computes
over the files equals the in-memory path's (`pipeline.evidence.power.energy.window_energy`, read
from a CSV of the same samples), over days read a day (or part of one) at a time as over one
day, with the same per-GPU rows as the one query where the chunks give them and that query
where they cannot; the query is the same in Spark SQL and Trino as in docs/energy.md, a day
partition holding another day's samples is not pruned, and a bad file in the folder is
named."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest
from proposals import measured
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.power.energy import Window, window_energy
from pipeline.evidence.power.fleet import FleetError, energy_sql, fleet_energy
from pipeline.evidence.power.logs import power_from_evidence
from schemas.power import POWER_SAMPLES
from sources.power.frame import canonical
from sources.power.registry import read_power

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]

# Two GPUs at 1 Hz for 10 s (t = 0..10 after T0). GPU "A": a ramp, 100 + 10 t W. GPU "B":
# 200 W, silent from t = 4 to t = 8 (a 4 s interval: a gap, more than 3 x its 1 s period).
# Over the window [2.5 s, 7.5 s] (trapezoid, power linear between readings):
#   A: integral of 100 + 10 t from 2.5 to 7.5 = 100 x 5 + 5 x (7.5^2 - 2.5^2) = 500 + 250 = 750 J
#   B: 200 W x 5 s = 1,000 J (the gap's interval 4..8 integrated at its linear 200 W)
#   total 1,750 J over 5 s: 350 W average.
# Idle power, the mean power outside the window: A at t = 0, 1, 2, 8, 9, 10:
# (100 + 110 + 120 + 180 + 190 + 200) / 6 = 150 W; B 200 W: 350 W.
# Unstable: B has 2 readings in it (< 10), 5 s < 60 s, gaps 4 s / (5 s x 2 GPUs) = 40% > 5%.
# In the window: A's readings at t = 3..7 (5), B's at 3 and 4 (2): 7; outside 11 + 8 - 7 = 12.
READINGS = [("A", s, 100.0 + 10 * s) for s in range(11)] + [
    ("B", s, 200.0) for s in (0, 1, 2, 3, 4, 8, 9, 10)]
WINDOW = Window(datetime(2026, 11, 20, 11, 0, 2, 500_000, tzinfo=UTC),
                datetime(2026, 11, 20, 11, 0, 7, 500_000, tzinfo=UTC))


def _write_csv(path: Path) -> Path:
    lines = [f"2026/11/20 11:00:{s:02d}.000, {gpu}, {watts:.2f} W\n"
             for s, gpu, watts in sorted((s, g, w) for g, s, w in READINGS)]
    path.write_text("timestamp, uuid, power.draw [W]\n" + "".join(lines))
    return path


def _write_parquet(folder: Path, frame: pl.DataFrame) -> Path:
    """`frame` (gpu_uuid, timestamp_utc, power_w[, energy_j]) as Parquet partitioned by day,
    as the fleet layout has it (DuckDB COPY ... PARTITION_BY)."""
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(f"COPY (SELECT *, strftime(timestamp_utc, '%Y-%m-%d') AS day FROM frame) "
                f"TO '{folder}' (FORMAT parquet, PARTITION_BY (day))")
    return folder


def _fleet_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {"gpu_uuid": [g for g, _, _ in READINGS],
         "timestamp_utc": [T0.replace(second=s) for _, s, _ in READINGS],
         "power_w": [w for _, _, w in READINGS]},
        schema={"gpu_uuid": pl.String, "timestamp_utc": pl.Datetime("us", "UTC"),
                "power_w": pl.Float64})


def test_trapezoid_over_parquet_equals_the_csv_path(tmp_path: Path) -> None:
    csv = power_from_evidence(_write_csv(tmp_path / "smi.csv"), WINDOW.start_utc,
                              WINDOW.end_utc, "UTC").energy
    fleet, files = fleet_energy(_write_parquet(tmp_path / "fleet", _fleet_frame()), WINDOW)
    assert len(files) == 1 and "day=2026-11-20" in files[0]
    assert csv.energy_j == pytest.approx(1750.0)
    assert fleet.energy_j == pytest.approx(csv.energy_j, rel=1e-12)
    assert fleet.average_power_w == pytest.approx(350.0)
    assert fleet.idle_power_w == pytest.approx(csv.idle_power_w) == pytest.approx(350.0)
    assert (fleet.samples_in_window, fleet.samples_outside_window) == (
        csv.samples_in_window, csv.samples_outside_window) == (7, 12)
    assert fleet.gaps == csv.gaps and [(g.device_id, g.duration_s) for g in fleet.gaps] == [
        ("B", 4.0)]
    assert (fleet.method, fleet.gpus, fleet.stability_reasons) == (
        csv.method, csv.gpus, csv.stability_reasons) == (
        "trapezoid", ("A", "B"), ("few_samples:2", "short_window:5s", "large_gaps:40.0%"))


def test_the_whole_span_and_an_edge_extended_equal_the_in_memory_path(tmp_path: Path) -> None:
    csv_path = _write_csv(tmp_path / "smi.csv")
    folder = _write_parquet(tmp_path / "fleet", _fleet_frame())
    # None: the span both GPUs cover, 0..10 s. A: 100 x 10 + 5 x 100 = 1,500 J; B: 2,000 J
    whole = power_from_evidence(csv_path, None, None, "UTC").energy
    fleet, _ = fleet_energy(folder)
    assert fleet.energy_j == pytest.approx(whole.energy_j) == pytest.approx(3500.0)
    assert fleet.window == whole.window
    # a window starting 1 s before the logs (within 3 x the 1 s period): extended at the first
    # interval's power. A: 1 s x 105 W (its first interval's mean, (100 + 110) / 2) + 105 J
    # (0..1 s) = 210 J; B: 1 s x 200 W + 200 J = 400 J; 610 J
    early = Window(datetime(2026, 11, 20, 10, 59, 59, tzinfo=UTC), T0.replace(second=1))
    ours, _ = fleet_energy(folder, early)
    theirs = power_from_evidence(csv_path, early.start_utc, early.end_utc, "UTC").energy
    assert ours.energy_j == pytest.approx(theirs.energy_j) == pytest.approx(610.0)
    assert ours.gaps == theirs.gaps
    far = Window(datetime(2026, 11, 20, 10, 59, 50, tzinfo=UTC), T0.replace(second=5))
    with pytest.raises(ValueError, match="does not cover the window for device A"):
        fleet_energy(folder, far)


def test_counter_with_a_reset_equals_the_in_memory_path(tmp_path: Path) -> None:
    # one GPU at 100 W, its counter 100 t J, reset to 0 at t = 5 then counting on (100 (t - 5))
    # Over [2.5 s, 7.5 s]: 2.5..4 = 150 J, 4..5 the reset interval integrated from power =
    # 100 J, 5..7.5 = 250 J: 500 J, one reset reported.
    seconds = range(11)
    counter = [100.0 * s if s < 5 else 100.0 * (s - 5) for s in seconds]
    frame = pl.DataFrame({"gpu_uuid": ["A"] * 11,
                          "timestamp_utc": [T0.replace(second=s) for s in seconds],
                          "power_w": [100.0] * 11, "energy_j": counter},
                         schema={"gpu_uuid": pl.String,
                                 "timestamp_utc": pl.Datetime("us", "UTC"),
                                 "power_w": pl.Float64, "energy_j": pl.Float64})
    samples = POWER_SAMPLES.validate(canonical(frame.select(
        sample_utc="timestamp_utc", device_id="gpu_uuid", power_w="power_w",
        energy_counter_j="energy_j", series_id=pl.lit("fleet"),
        measurement_boundary=pl.lit("gpu_board"))), origin="test")
    memory = window_energy(samples, WINDOW, origin="test")
    fleet, _ = fleet_energy(_write_parquet(tmp_path / "fleet", frame), WINDOW)
    assert memory.method == fleet.method == "counter"
    assert fleet.energy_j == pytest.approx(memory.energy_j) == pytest.approx(500.0)
    assert fleet.resets == memory.resets and len(fleet.resets) == 1
    assert fleet.stability_reasons == memory.stability_reasons


def test_a_bad_file_in_the_folder_is_named(tmp_path: Path) -> None:
    folder = _write_parquet(tmp_path / "fleet", _fleet_frame())
    broken = folder / "day=2026-11-21" / "part-0.parquet"
    broken.parent.mkdir()
    broken.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(FleetError, match=r"day=2026-11-21/part-0\.parquet: not a readable"):
        fleet_energy(folder, WINDOW)
    broken.unlink()
    con = duckdb.connect()
    con.execute(f"COPY (SELECT 'A' AS gpu_uuid, TIMESTAMPTZ '2026-11-21 00:00:00+00' AS "
                f"timestamp_utc) TO '{broken}' (FORMAT parquet)")
    with pytest.raises(FleetError, match=r"part-0\.parquet: no column 'power_w'"):
        fleet_energy(folder, WINDOW)
    con.execute(f"COPY (SELECT 'A' AS gpu_uuid, TIMESTAMPTZ '2026-11-21 00:00:00+00' AS "
                f"timestamp_utc, -5.0::DOUBLE AS power_w) TO '{broken}' (FORMAT parquet)")
    with pytest.raises(FleetError, match=r"part-0\.parquet: a sample .* outside 0\.\.50000 W"):
        fleet_energy(folder, WINDOW)
    # a NaN has no min or max in the footer (its NaN count is): the scan looks at the values
    con.execute(f"COPY (SELECT 'A' AS gpu_uuid, TIMESTAMPTZ '2026-11-21 00:00:00+00' AS "
                f"timestamp_utc, 'nan'::DOUBLE AS power_w) TO '{broken}' (FORMAT parquet)")
    with pytest.raises(FleetError, match=r"part-0\.parquet: a sample .* outside 0\.\.50000 W"):
        fleet_energy(folder, WINDOW)


def test_the_spark_query_is_the_one_docs_show() -> None:
    """docs/energy.md shows what `scorecard evidence sql` prints for Spark over a 6-hour window
    (a change to the SQL not made in the docs fails)."""
    docs = (ROOT / "docs" / "energy.md").read_text()
    printed = CliRunner().invoke(app, [
        "evidence", "sql", "fleet/", "--dialect", "spark", "--window-start",
        "2026-11-08T06:00:00+00:00", "--window-end", "2026-11-08T12:00:00+00:00"])
    assert printed.exit_code == 0, printed.output
    assert "```sql\n" + printed.stdout + "```" in docs


def test_a_candidate_measured_from_parquet_samples(tmp_path: Path) -> None:
    """`power = { parquet = "DIR" }`: test_measured_candidate.py's candidate, its power log
    written as the fleet layout, gives the same figures."""
    fixtures = ROOT / "tests" / "fixtures"
    log = fixtures / "scorecard" / "nvidia_smi_sweep_window.csv"
    _, samples = read_power(log.read_bytes(), path=str(log), tz="UTC")
    folder = _write_parquet(tmp_path / "fleet", samples.select(
        gpu_uuid="device_id", timestamp_utc="sample_utc", power_w="power_w"))
    path = tmp_path / "p.toml"
    path.write_text(measured("parquet", f'{{ evidence = "{fixtures / "bench" / "vllm_sweep"}", '
                                        'tz = "UTC" }', f'{{ parquet = "{folder}" }}',
                             allow_outside=True))
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    (lab,) = json.loads(result.stdout)["candidates"]
    # as there: the knee's window 16:01:00-16:01:01 UTC, GPU 0 at 300 W and GPU 1 at 400 W:
    # 700 W / 80 tokens/s = 8.75 J/token; idle from the samples outside it, 2 x 50 W
    assert lab["detail"]["power_grade"] == "measured"
    assert lab["energy_j_per_token"] == pytest.approx(8.75)
    idle = [i for i in lab["inputs"] if i["input"] == "idle_power_w"]
    assert idle and idle[0]["mode"] == pytest.approx(100.0)


def test_evidence_add_refuses_options_it_would_ignore(tmp_path: Path) -> None:
    runner = CliRunner()
    both = runner.invoke(app, ["evidence", "add", str(tmp_path / "a.json"), "--parquet",
                               str(tmp_path)])
    assert both.exit_code == 1 and "adds nothing" in both.output
    stray = runner.invoke(app, ["evidence", "add", str(tmp_path / "a.json"), "--json"])
    assert stray.exit_code == 1
    assert "--window-start, --window-end and --json go with --parquet DIR" in stray.output


# Days of samples, chunked by day (each chunk's window in memory) and combined: the same
# figures as the in-memory path and as the one query over all of them (energy_sql).
DAY0 = datetime(2026, 11, 20, tzinfo=UTC)


def _days_frame(counter: bool = False) -> pl.DataFrame:
    """GPU A at 100 W and GPU B at 200 W, read every 600 s for three days (2026-11-20 00:00
    .. 11-22 23:50); A silent from 11-20 22:50 to 11-21 01:00 (a 7,800 s interval across
    midnight: a gap, > 3 x 600 s). With `counter`, energy_j counts 100 t and 200 t J, B's
    reset to 0 across the same midnight (between 23:50 and 00:00) and counting on from
    there."""
    rows = []
    for i in range(3 * 144):
        at = i * 600
        for gpu, watts in (("A", 100.0), ("B", 200.0)):
            if gpu == "A" and 22 * 3600 + 3000 < at < 25 * 3600:
                continue
            joules = watts * at
            if gpu == "B" and at >= 86_400:
                joules = watts * (at - 86_400)
            rows.append((gpu, DAY0.timestamp() + at, watts, joules))
    frame = pl.DataFrame(rows, schema=["gpu_uuid", "t", "power_w", "energy_j"], orient="row")
    frame = frame.with_columns(
        timestamp_utc=pl.from_epoch((pl.col("t") * 1e6).cast(pl.Int64), "us")
        .dt.replace_time_zone("UTC")).drop("t")
    return frame if counter else frame.drop("energy_j")


def _in_memory(frame: pl.DataFrame, window: Window | None):
    samples = POWER_SAMPLES.validate(canonical(frame.select(
        sample_utc="timestamp_utc", device_id="gpu_uuid", power_w="power_w",
        energy_counter_j=pl.col("energy_j") if "energy_j" in frame.columns
        else pl.lit(None, pl.Float64), series_id=pl.lit("fleet"),
        measurement_boundary=pl.lit("gpu_board"))), origin="test")
    return window_energy(samples, window, origin="test")


def _same(ours, theirs) -> None:
    assert ours.energy_j == pytest.approx(theirs.energy_j, rel=1e-12)
    assert ours.method == theirs.method
    assert (ours.gaps, ours.resets, ours.gpus) == (theirs.gaps, theirs.resets, theirs.gpus)
    assert (ours.samples_in_window, ours.samples_outside_window) == (
        theirs.samples_in_window, theirs.samples_outside_window)
    assert ours.idle_power_w == (None if theirs.idle_power_w is None
                                 else pytest.approx(theirs.idle_power_w, rel=1e-12))
    assert ours.stability_reasons == theirs.stability_reasons


ACROSS = Window(datetime(2026, 11, 20, 22, tzinfo=UTC), datetime(2026, 11, 21, 2, tzinfo=UTC))


@pytest.mark.parametrize("counter", [False, True])
def test_days_chunked_equal_the_in_memory_path(tmp_path: Path, counter: bool) -> None:
    frame = _days_frame(counter)
    folder = _write_parquet(tmp_path / "fleet", frame)
    # across midnight, 22:00 .. 02:00 (14,400 s): A 100 W x 14,400 s = 1,440,000 J, B 200 W
    # x 14,400 s = 2,880,000 J (the counter's reset interval 23:50 .. 00:00 integrated from
    # its 200 W): 4,320,000 J; A's gap 22:50 .. 01:00 is the interval between two chunks
    ours, files = fleet_energy(folder, ACROSS)
    assert len(files) == 3
    assert ours.energy_j == pytest.approx(4_320_000.0)
    assert [(g.device_id, g.duration_s) for g in ours.gaps] == [("A", 7800.0)]
    assert len(ours.resets) == (1 if counter else 0)
    _same(ours, _in_memory(frame, ACROSS))
    # the whole span, 11-20 00:00 .. 11-22 23:50 (258,600 s) at 300 W: 77,580,000 J
    span, _ = fleet_energy(folder)
    assert span.energy_j == pytest.approx(77_580_000.0)
    _same(span, _in_memory(frame, None))
    inside = Window(datetime(2026, 11, 22, 6, 5, tzinfo=UTC),
                    datetime(2026, 11, 22, 7, 1, tzinfo=UTC))
    _same(fleet_energy(folder, inside)[0], _in_memory(frame, inside))


def _rows_both_ways(folder: Path, window: Window, chunk_rows: int = 8_000_000):
    """The per-GPU rows of the chunks' pass and of energy_sql's one query over the same
    samples near the window (pipeline.evidence.power.fleet's own steps, on one connection)."""
    from pipeline.evidence.power import fleet
    from pipeline.evidence.power.energy import EnergyParams

    con = fleet._connect()
    files, columns = fleet._files(con, folder)
    has_counter = "energy_j" in columns
    scan = fleet._scan(con, folder, files, has_counter, "day", spans=False)
    method = fleet._method(scan.devices, "test", [])
    a, b = window.start_utc.timestamp(), window.end_utc.timestamp()
    lo, hi = a - 3600, b + 3600
    _, chunked = fleet._chunked(con, folder, scan, a, b, lo, hi, method, EnergyParams(),
                                has_counter, chunk_rows)
    cursor = con.execute(energy_sql(fleet._source(folder), a, b, lo, hi, method,
                                    has_counter=has_counter, day_column=scan.day_column))
    names = [c[0] for c in cursor.description]
    single = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    return scan, chunked, single


@pytest.mark.parametrize("counter", [False, True])
@pytest.mark.parametrize("chunk_rows", [8_000_000, 100])
def test_the_chunks_rows_are_the_one_querys(tmp_path: Path, counter: bool,
                                             chunk_rows: int) -> None:
    """Per GPU, every figure the energy is finished from; with 100 rows a chunk, each day of
    282 or 288 rows (A's six silent readings on either side of the midnight of 11-21 are
    missing: 2 x 144 - 6) is cut into 3 chunks of 8 hours."""
    folder = _write_parquet(tmp_path / "fleet", _days_frame(counter))
    scan, chunked, single = _rows_both_ways(folder, ACROSS, chunk_rows)
    assert scan.key == "hash(gpu_uuid)" and scan.day_column == "day"
    assert scan.day_rows == {"2026-11-20": 282, "2026-11-21": 282, "2026-11-22": 288}
    assert chunked is not None
    by_id = {r["device_id"]: r for r in single}
    assert sorted(by_id) == sorted(r["device_id"] for r in chunked) == ["A", "B"]
    for row in chunked:
        theirs = by_id[row["device_id"]]
        for key, value in row.items():
            if key in ("gaps", "resets"):
                assert sorted(value) == sorted(theirs[key] or []), key
            elif isinstance(value, float):
                assert value == pytest.approx(theirs[key], rel=1e-12), key
            else:
                assert value == theirs[key], key


def test_a_windows_scan_takes_each_gpus_span_only_when_an_edge_needs_it(tmp_path: Path) -> None:
    """For a window, the folder's first and last reading come from the footers and each GPU's
    from a second pass only when asked (`_fill_spans`): A and B both read from 11-20 00:00
    to 11-22 23:50 (DAY0 + 0 .. DAY0 + 431 x 600 s = 258,600 s)."""
    from pipeline.evidence.power import fleet

    folder = _write_parquet(tmp_path / "fleet", _days_frame())
    con = fleet._connect()
    files, _ = fleet._files(con, folder)
    scan = fleet._scan(con, folder, files, False, "day", spans=False)
    first, last = DAY0.timestamp(), DAY0.timestamp() + 258_600
    assert scan.span == (first, last)
    assert [(d["device_id"], d["first"], d["last"]) for d in scan.devices] == [
        ("A", None, None), ("B", None, None)]
    fleet._fill_spans(con, folder, scan)
    assert [(d["device_id"], d["first"], d["last"]) for d in scan.devices] == [
        ("A", first, last), ("B", first, last)]
    spanned = fleet._scan(con, folder, files, False, "day", spans=True)
    assert spanned.devices == scan.devices and spanned.span == scan.span


def test_a_day_partition_holding_another_days_samples_is_not_pruned(tmp_path: Path) -> None:
    """A sample filed under the wrong day would be skipped by pruning on `day`: the files'
    footers show it, and the folder is read without pruning (the same energy)."""
    frame = _days_frame()
    con = duckdb.connect()
    con.register("frame", frame)
    folder = tmp_path / "fleet"
    # every sample of 11-21 00:00 .. 00:50 filed under day=2026-11-20
    con.execute(f"""COPY (SELECT *, CASE WHEN timestamp_utc < TIMESTAMPTZ '2026-11-21 01:00:00+00'
                              THEN '2026-11-20' ELSE strftime(timestamp_utc, '%Y-%m-%d') END
                              AS day FROM frame)
                   TO '{folder}' (FORMAT parquet, PARTITION_BY (day))""")
    ours, _ = fleet_energy(folder, ACROSS)
    assert ours.energy_j == pytest.approx(4_320_000.0)
    _same(ours, _in_memory(frame, ACROSS))


def test_a_reset_without_power_takes_the_one_query(tmp_path: Path) -> None:
    """A counter reset between readings without power is filled at the GPU's median counter
    power, which the chunks do not know: the one query gives it. B's counter only (no power),
    reset across the midnight of 11-21: the interval 23:50 .. 00:00 filled at 200 W."""
    frame = _days_frame(counter=True).with_columns(
        power_w=pl.when(pl.col("gpu_uuid") == "B").then(None).otherwise(pl.col("power_w")))
    folder = _write_parquet(tmp_path / "fleet", frame)
    _, chunked, _ = _rows_both_ways(folder, ACROSS)
    assert chunked is None
    ours, _ = fleet_energy(folder, ACROSS)
    assert ours.energy_j == pytest.approx(4_320_000.0)
    _same(ours, _in_memory(frame, ACROSS))


def test_a_chunk_slower_than_the_period_takes_the_one_query(tmp_path: Path) -> None:
    """A chunk keeps as gap candidates its intervals longer than 3 x its own shortest one; a
    day read every 600 s where the GPU's median period is 60 s (read every 60 s on the other
    two days) has gaps shorter than that (every one of its 600 s intervals, > 3 x 60 s): the
    one query gives them."""
    stamps = [DAY0.timestamp() + s for s in range(0, 86_400, 600)] + [
        DAY0.timestamp() + s for s in range(86_400, 3 * 86_400, 60)]
    frame = pl.DataFrame({"gpu_uuid": ["A"] * len(stamps), "power_w": [100.0] * len(stamps),
                          "t": stamps}).with_columns(
        timestamp_utc=pl.from_epoch((pl.col("t") * 1e6).cast(pl.Int64), "us")
        .dt.replace_time_zone("UTC")).drop("t")
    folder = _write_parquet(tmp_path / "fleet", frame)
    window = Window(datetime(2026, 11, 20, 12, tzinfo=UTC), datetime(2026, 11, 21, 1, tzinfo=UTC))
    _, chunked, _ = _rows_both_ways(folder, window)
    assert chunked is None
    # 12:00 .. 01:00 at 100 W: 4,680,000 J; the 600 s intervals 12:00 .. 00:00 are 72 gaps
    ours, _ = fleet_energy(folder, window)
    assert ours.energy_j == pytest.approx(4_680_000.0)
    assert len(ours.gaps) == 72
    _same(ours, _in_memory(frame, window))


@pytest.mark.parametrize("counter", [False, True])
@pytest.mark.parametrize(("start", "end", "joules", "gaps"), [
    # 23:55 before the first readings (a day with no partition) .. 01:00: 3,900 s x 300 W,
    # both GPUs' 300 s before their first reading extended (within 3 x 600 s) and reported
    (datetime(2026, 11, 19, 23, 55, tzinfo=UTC), datetime(2026, 11, 20, 1, tzinfo=UTC),
     1_170_000.0, 2),
    # 11-22 23:00 .. 11-23 00:05, 900 s after the last readings (23:50): 3,900 s x 300 W
    (datetime(2026, 11, 22, 23, tzinfo=UTC), datetime(2026, 11, 23, 0, 5, tzinfo=UTC),
     1_170_000.0, 2),
    # the last minute of 11-20, inside A's gap: 60 s x 300 W
    (datetime(2026, 11, 20, 23, 59, tzinfo=UTC), datetime(2026, 11, 21, tzinfo=UTC), 18_000.0, 1),
    # one whole day, midnight to midnight: 86,400 s x 300 W, A's gap overlapping it
    (datetime(2026, 11, 21, tzinfo=UTC), datetime(2026, 11, 22, tzinfo=UTC), 25_920_000.0, 1),
])
def test_windows_at_the_edges_and_midnights(tmp_path: Path, counter: bool, start: datetime,
                                            end: datetime, joules: float, gaps: int) -> None:
    frame = _days_frame(counter)
    window = Window(start, end)
    ours, _ = fleet_energy(_write_parquet(tmp_path / "fleet", frame), window)
    assert ours.energy_j == pytest.approx(joules)
    assert len(ours.gaps) == gaps
    _same(ours, _in_memory(frame, window))


def test_one_file_without_day_partitions(tmp_path: Path) -> None:
    """No `day` partition to prune by: the chunks are the same UTC days, read by time alone
    (the same 4,320,000 J across the midnight of 11-21, 77,580,000 J over the span)."""
    frame = _days_frame(counter=True)
    (tmp_path / "fleet").mkdir()
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(f"COPY frame TO '{tmp_path / 'fleet' / 'all.parquet'}' (FORMAT parquet)")
    for window, joules in ((ACROSS, 4_320_000.0), (None, 77_580_000.0)):
        ours, files = fleet_energy(tmp_path / "fleet", window)
        assert len(files) == 1 and ours.energy_j == pytest.approx(joules)
        _same(ours, _in_memory(frame, window))


def test_files_whose_footers_lack_nan_counts(tmp_path: Path) -> None:
    """polars writes no NaN counts in the footers: the bounds are then taken by the scan (the
    same figures as the DuckDB-written files, across the midnight of 11-21: 4,320,000 J)."""
    frame = _days_frame()
    for day, part in frame.group_by(pl.col("timestamp_utc").dt.date()):
        (tmp_path / "fleet" / f"day={day[0]}").mkdir(parents=True)
        part.write_parquet(tmp_path / "fleet" / f"day={day[0]}" / "part-0.parquet")
    from pipeline.evidence.power import fleet

    con = fleet._connect()
    files, _ = fleet._files(con, tmp_path / "fleet")
    assert not fleet._stated(con, files)
    duckdb_written = _write_parquet(tmp_path / "by_duckdb", frame)
    assert fleet._stated(con, fleet._files(con, duckdb_written)[0])
    # their time statistics are there all the same: a window's scan takes the folder's span
    # from them, not each GPU's (DAY0 .. DAY0 + 431 x 600 s)
    scan = fleet._scan(con, tmp_path / "fleet", files, False, "day", spans=False)
    assert scan.span == (DAY0.timestamp(), DAY0.timestamp() + 258_600)
    assert all(d["first"] is None for d in scan.devices)
    ours, _ = fleet_energy(tmp_path / "fleet", ACROSS)
    assert ours.energy_j == pytest.approx(4_320_000.0)
    _same(ours, _in_memory(frame, ACROSS))


def test_a_last_reading_at_midnight_is_counted(tmp_path: Path) -> None:
    """The span's last readings exactly at 11-23 00:00 sit in the day=2026-11-23 partition:
    the span's last chunk (11-22 00:00 .. 11-23 00:00, end included) reads that partition
    too. 11-20 00:00 .. 11-23 00:00 (259,200 s) at 300 W: 77,760,000 J."""
    frame = _days_frame()
    last = frame.filter(pl.col("timestamp_utc") == pl.col("timestamp_utc").max()).with_columns(
        pl.col("timestamp_utc") + pl.duration(minutes=10))
    frame = pl.concat([frame, last])
    assert last["timestamp_utc"].to_list()[0] == datetime(2026, 11, 23, tzinfo=UTC)
    span, _ = fleet_energy(_write_parquet(tmp_path / "fleet", frame))
    assert span.energy_j == pytest.approx(77_760_000.0)
    _same(span, _in_memory(frame, None))
