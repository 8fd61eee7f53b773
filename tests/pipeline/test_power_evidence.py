"""The scorecard's entry point: measured power from a file or a folder of logs."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from pipeline.evidence.power.energy import EnergyError
from pipeline.evidence.power.logs import _read_ahead, power_from_evidence, power_from_snapshots
from schemas.table import ValidationFailed
from sources.errors import ParseError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "power"
NVSMI = FIXTURES / "nvidia_smi_2gpu_gap_na_truncated.csv"


def test_file_with_window() -> None:
    start = datetime(2026, 11, 20, 10, 0, 1, tzinfo=UTC)
    evidence = power_from_evidence(NVSMI, start, start + timedelta(seconds=8), "Europe/Paris",
                                   uncertainty_s=1.0)
    # 300 W + 400 W constant: 700 W average, 5600 J over 8 s
    assert evidence.average_power_w == pytest.approx(700.0)
    assert evidence.energy_j == pytest.approx(5600.0)
    assert (evidence.boundary, evidence.grade, evidence.method) == (
        "gpu_board", "measured", "trapezoid")
    assert evidence.files[0].sha256 == hashlib.sha256(NVSMI.read_bytes()).hexdigest()
    assert evidence.files[0].tool == "nvidia-smi"
    # the window shifted by +/-1 s still lies within the log; constant power: same energy
    assert evidence.energy.energy_range_j == (pytest.approx(5600.0), pytest.approx(5600.0))
    # 700 W at 350 tokens/s would be 2 J/token: 5600 J / 2800 tokens
    assert evidence.joules_per_token(2800) == pytest.approx(2.0)
    summary = json.loads(json.dumps(evidence.as_dict(), sort_keys=True))
    # GPU "0" lacks 11:00:05..07 local: the 4 s interval 04 -> 08 is a gap (> 3 x 1 s)
    assert summary["gaps"] == [{"device_id": "0", "start_utc": "2026-11-20T10:00:04+00:00",
                                "end_utc": "2026-11-20T10:00:08+00:00", "duration_s": 4.0,
                                "kind": "gap"}]
    assert summary["window_s"] == 8.0


def test_folder_skips_other_files(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "dcgm_scrapes_2gpu.prom", tmp_path / "dcgm.prom")
    (tmp_path / "bench.json").write_text('{"duration": 10}')
    evidence = power_from_evidence(tmp_path, None, None)
    # DCGM counters: 3000 J + 4000 J over 10 s
    assert evidence.energy_j == pytest.approx(7000.0)
    assert evidence.method == "counter"
    assert any("bench.json: not a power log; skipped" in n for n in evidence.notes)


def test_missing_timezone_names_the_file() -> None:
    with pytest.raises(ParseError, match=r"nvidia_smi_2gpu_gap_na_truncated\.csv.*timezone"):
        power_from_evidence(NVSMI, None, None)


def test_log_not_covering_the_window() -> None:
    start = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
    with pytest.raises(EnergyError, match="does not cover the window"):
        power_from_evidence(NVSMI, start, start + timedelta(seconds=60), "Europe/Paris")


def test_half_a_window_is_refused() -> None:
    with pytest.raises(ValueError, match="both"):
        power_from_evidence(NVSMI, datetime(2026, 1, 1, tzinfo=UTC), None, "UTC")


SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "samples" / "amd"


def test_snapshot_pair_fixture() -> None:
    start = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
    evidence = power_from_snapshots(FIXTURES / "amdsmi_energy_start.csv",
                                    FIXTURES / "amdsmi_energy_end.csv",
                                    start, start + timedelta(seconds=10))
    # GPU0 4000 - 1000 = 3000 J, GPU1 6000 - 2000 = 4000 J: 7000 J over 10 s = 700 W
    assert evidence.energy_j == pytest.approx(7000.0)
    assert evidence.average_power_w == pytest.approx(700.0)
    assert evidence.method == "counter"


def test_snapshot_pair_bad_value_names_both_files(tmp_path: Path) -> None:
    end = tmp_path / "end.csv"
    end.write_text("gpu,total_energy_consumption\n0,4000.0\n1,-6000.0\n")  # J >= 0
    start = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
    # the bad value is in the end file: the origin names it, not only the start file
    with pytest.raises(ValidationFailed, match=r"amdsmi_energy_start\.csv -> .*end\.csv"):
        power_from_snapshots(FIXTURES / "amdsmi_energy_start.csv", end,
                             start, start + timedelta(seconds=10))


def test_snapshot_pair_real_samples_refused() -> None:
    start_file = SAMPLES / "amdsmi_metric_E_gpu_metrics_energy_start.csv"
    end_file = SAMPLES / "amdsmi_metric_E_gpu_metrics_energy_end.csv"
    if not start_file.exists():
        pytest.skip("amd samples absent")
    start = datetime(2026, 8, 12, 17, 0, 0, tzinfo=UTC)
    # every counter is lower in the "end" file (GPU0: 416,143,212 J -> 339,360,563 J): no figure
    with pytest.raises(EnergyError, match=r"device 0 dropped from 416143212\.215 J"):
        power_from_snapshots(start_file, end_file, start, start + timedelta(minutes=30))


def test_folder_walk_leaves_hidden_folders_out(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "dcgm_scrapes_2gpu.prom", tmp_path / "dcgm.prom")
    # a notebook's checkpoint copy of another log: not evidence (read, it would need a tz)
    hidden = tmp_path / ".ipynb_checkpoints"
    hidden.mkdir()
    shutil.copy(FIXTURES / "nvidia_smi_nounits.csv", hidden / "power-checkpoint.csv")
    evidence = power_from_evidence(tmp_path, None, None)
    # the DCGM log alone: 3000 J + 4000 J over 10 s
    assert evidence.energy_j == pytest.approx(7000.0)
    assert [Path(f.path).name for f in evidence.files] == ["dcgm.prom"]


def test_parts_read_ahead_come_in_order_errors_in_their_turn_and_stopping_stops() -> None:
    # the power log's parts are parsed one ahead in a thread (pipeline.evidence.power.logs)
    made: list[int] = []
    first_made = threading.Event()

    def parts(fail_at: int | None = None) -> Iterator[pl.DataFrame]:
        for k in range(100):
            if k == fail_at:
                raise ParseError("nvidia-smi", "smi.csv", "line 3", "bad")
            made.append(k)
            first_made.set()
            yield pl.DataFrame({"k": [k]})

    with _read_ahead(parts()) as ahead:
        assert [f["k"][0] for f in ahead] == list(range(100))
    made.clear()
    with _read_ahead(parts(fail_at=2)) as ahead:
        assert [next(ahead)["k"][0], next(ahead)["k"][0]] == [0, 1]
        with pytest.raises(ParseError, match="line 3"):
            next(ahead)
    made.clear()
    with _read_ahead(parts()) as ahead:
        assert next(ahead)["k"][0] == 0
    # the block left: the reader stops within a part or two, and is gone
    assert len(made) <= 3 and made == list(range(len(made)))
    made.clear()
    first_made.clear()
    with _read_ahead(parts()):  # reading starts on entering the block, before any is taken
        assert first_made.wait(timeout=30) and made[:1] == [0]
    assert not [t for t in threading.enumerate() if t.name == "power-log-parts"]
