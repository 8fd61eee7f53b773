"""A power log of several runs one after the other (issue 33): a CodeCarbon file appends one
row per tracked run, each `run_id` a run; `evidence inspect` of it alone gives each run's
energy and their sum, not one run's energy and a note per other run."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from samples import sample
from typer.testing import CliRunner

from pipeline.cli.evidence import evidence_app
from pipeline.evidence.power.energy import Window, window_energy
from sources.power import codecarbon

# (run_id, timestamp at the run's end, duration s, energy_consumed kWh)
RUNS = [("run-a", "2021-09-23T15:01:00", "60", "0.001"),
        ("run-b", "2021-09-23T15:03:00", "60", "0.002"),
        ("run-c", "2021-09-23T15:05:00", "60", "0.0005")]


def three_runs(tmp_path: Path) -> Path:
    """The public sample's header and row (CodeCarbon 2.1.3, no GPU), appended three times as
    CodeCarbon appends runs, each with its own run_id, end, duration and energy."""
    lines = sample("codecarbon/tests_emissions_valid_headers_current.csv").read_text(
        ).splitlines()
    header = lines[0].split(",")
    row = next(csv.reader([lines[1]]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for run, stamp, duration, kwh in RUNS:
        values = dict(zip(header, row, strict=True))
        values.update(run_id=run, timestamp=stamp, duration=duration, energy_consumed=kwh)
        writer.writerow(values[name] for name in header)
    path = tmp_path / "emissions.csv"
    path.write_text(out.getvalue())
    return path


def test_each_run_id_of_a_codecarbon_file_is_a_run(tmp_path: Path) -> None:
    # each run: 0 J at its start (end - 60 s), its energy at its end; 0.001 kWh x 3.6e6 =
    # 3,600 J, 0.002 kWh = 7,200 J, 0.0005 kWh = 1,800 J; the sum 12,600 J over 3 x 60 s =
    # 180 s of runs: mean 70 W; the span 15:00:00 (run-a's start) .. 15:05:00 = 300 s
    result = CliRunner().invoke(evidence_app, ["inspect", str(three_runs(tmp_path)), "--tz",
                                               "UTC", "--json"])
    assert result.exit_code == 0, result.output
    p = json.loads(result.stdout)["power_log"]
    assert [(r["run"], r["duration_s"]) for r in p["runs"]] == [
        ("run-a", 60.0), ("run-b", 60.0), ("run-c", 60.0)]
    assert [r["energy_j"] for r in p["runs"]] == pytest.approx([3600.0, 7200.0, 1800.0])
    assert [r["mean_power_w"] for r in p["runs"]] == pytest.approx([60.0, 120.0, 30.0])
    assert p["energy_j"] == pytest.approx(12600.0)
    assert p["mean_power_w"] == pytest.approx(70.0)
    assert (p["span_start_utc"], p["span_end_utc"], p["span_s"]) == (
        "2021-09-23T15:00:00+00:00", "2021-09-23T15:05:00+00:00", 300.0)
    assert p["boundary"] == "node"
    assert not [n for n in p["notes"] if "also read by" in n], p["notes"]
    text = CliRunner().invoke(evidence_app, ["inspect", str(three_runs(tmp_path)), "--tz",
                                             "UTC"])
    assert "energy 12,600.0 J" in text.stdout
    assert "run run-b: 2021-09-23T15:02:00+00:00 .. 2021-09-23T15:03:00+00:00 (60.0 s), " \
           "energy 7,200.0 J, mean 120.0 W" in text.stdout


def test_a_window_inside_one_run_uses_that_run_without_a_note_per_other_run(
        tmp_path: Path) -> None:
    # the window 15:02:15 .. 15:02:45 lies inside run-b (15:02:00 .. 15:03:00, 7,200 J as a
    # counter read at both ends): 30 s of 60 s pro rata = 3,600 J; run-a and run-c do not
    # overlap the window, so they are no "also read by" note
    path = three_runs(tmp_path)
    samples = codecarbon.parse(path.read_bytes(), path=str(path), tz="UTC")
    window = Window(datetime(2021, 9, 23, 15, 2, 15, tzinfo=UTC),
                    datetime(2021, 9, 23, 15, 2, 45, tzinfo=UTC))
    result = window_energy(samples, window, origin=str(path))
    assert result.energy_j == pytest.approx(3600.0)
    assert not [n for n in result.notes if "also read by" in n], result.notes
