"""A fleet's power samples in Parquet (`pipeline.evidence.fleet`): the energy DuckDB computes
over the files equals the in-memory path's (`pipeline.evidence.energy.window_energy`, read
from a CSV of the same samples), the query is the same in Spark SQL and Trino as in
docs/energy.md, and a bad file in the folder is named."""

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
from pipeline.evidence.energy import Window, window_energy
from pipeline.evidence.fleet import FleetError, energy_sql, fleet_energy
from pipeline.evidence.power import power_from_evidence
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


def test_the_spark_and_trino_queries_are_the_ones_docs_show() -> None:
    """docs/energy.md shows the query each engine runs over the layout, for a 6-hour window
    read with a 60 s margin (rendered here: a change to the SQL not made in the docs fails)."""
    docs = (ROOT / "docs" / "energy.md").read_text()
    a = datetime(2026, 11, 8, 6, tzinfo=UTC).timestamp()
    b = datetime(2026, 11, 8, 12, tzinfo=UTC).timestamp()
    for dialect, source in DOCS_SOURCES.items():
        assert energy_sql(dialect, source, a, b, a - 60, b + 60, "trapezoid") in docs, dialect


DOCS_SOURCES = {"duckdb": "read_parquet('fleet/**/*.parquet', hive_partitioning = true)",
                "spark": "fleet_power", "trino": "hive.telemetry.fleet_power"}


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
