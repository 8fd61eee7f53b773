"""A big power log inspected part by part (issue 27, R15: `pipeline.evidence.power.streamed`,
the samples written as a fleet's Parquet and DuckDB computing over them) gives the figures of
the whole-file path (`pipeline.evidence.power.energy.window_energy` over the log read whole),
over the whole span and over a window with its uncertainty, whatever the parts' size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import pipeline.evidence.power.streamed as streamed
from pipeline.evidence.inspection import power_summary
from pipeline.evidence.power.energy import Window, window_energy
from pipeline.evidence.power.logs import power_from_evidence, read_power_files
from pipeline.evidence.power.streamed import streamed_energy

T0 = datetime(2026, 11, 20, 23, 59, 50, tzinfo=UTC)  # t = 10 s is midnight: two UTC days


def _log(path: Path) -> Path:
    """nvidia-smi at 1 Hz for t = 0..20 s. GPU 0: 100 + 10 t W. GPU 1: 200 W, `[N/A]` at
    t = 5 (a sample without power, skipped with its note) and silent from t = 8 to 12 (the
    interval 7..13 s, 6 s, is a gap: more than 3 x its median period of 1 s)."""
    lines = ["timestamp, index, power.draw [W]\n"]
    for s in range(21):
        stamp = (T0 + timedelta(seconds=s)).strftime("%Y/%m/%d %H:%M:%S.000")
        lines.append(f"{stamp}, 0, {100 + 10 * s:.2f} W\n")
        if s == 5:
            lines.append(f"{stamp}, 1, [N/A]\n")
        elif not 8 <= s <= 12:
            lines.append(f"{stamp}, 1, 200.00 W\n")
    path.write_text("".join(lines))
    return path


def _same(ours, theirs) -> None:  # type: ignore[no-untyped-def]
    assert ours.energy_j == pytest.approx(theirs.energy_j, abs=1.0)  # to the joule
    assert ours.energy_j == pytest.approx(theirs.energy_j, rel=1e-12)
    assert (ours.window, ours.method, ours.boundary, ours.gpus, ours.gaps, ours.resets) == (
        theirs.window, theirs.method, theirs.boundary, theirs.gpus, theirs.gaps, theirs.resets)
    assert (ours.samples_in_window, ours.samples_outside_window) == (
        theirs.samples_in_window, theirs.samples_outside_window)
    assert ours.idle_power_w == (None if theirs.idle_power_w is None
                                 else pytest.approx(theirs.idle_power_w, rel=1e-12))
    if theirs.energy_range_j is None:
        assert ours.energy_range_j is None
    else:
        assert ours.energy_range_j == pytest.approx(theirs.energy_range_j, rel=1e-12)
    assert (ours.stability_reasons, ours.notes) == (theirs.stability_reasons, theirs.notes)


@pytest.mark.parametrize("part_bytes", [64, 16 << 20])  # parts of about one line; one part
def test_part_by_part_gives_the_whole_files_figures(tmp_path: Path, part_bytes: int) -> None:
    log = _log(tmp_path / "smi.csv")
    samples, _, _ = read_power_files(log, tz="UTC")
    # The whole span, 0..20 s: GPU 0 100 x 20 + 5 x 20^2 = 4,000 J; GPU 1 200 W x 20 s =
    # 4,000 J (linear across the gap): 8,000 J. Unstable: 20 s < 60 s; gaps 6 s / (20 s x 2)
    # = 15 % > 5 %.
    whole = streamed_energy(log, None, tz="UTC", always=True, part_bytes=part_bytes, peak=True)
    assert whole is not None
    assert whole.result.energy_j == pytest.approx(8000.0)
    assert whole.result.stability_reasons == ("short_window:20s", "large_gaps:15.0%")
    assert [(g.device_id, g.duration_s) for g in whole.result.gaps] == [("1", 6.0)]
    _same(whole.result, window_energy(samples, None, origin=str(log)))
    # readings: GPU 0 21, GPU 1 21 - 1 [N/A] - 5 silent = 15: 36 of the 37 rows; the peak is
    # at t = 20 s: 300 + 200 = 500 W
    assert (whole.samples, whole.file.rows, whole.peak_power_w) == (36, 37, 500.0)
    # a run (logs.power_from_evidence) does not ask for the peak: no second scan of the parts
    unasked = streamed_energy(log, None, tz="UTC", always=True, part_bytes=part_bytes)
    assert unasked is not None and unasked.peak_power_w is None
    # [2.5 s, 17.5 s] +/- 0.5 s. GPU 0: 100 x 15 + 5 x (17.5^2 - 2.5^2) = 3,000 J, GPU 1
    # 3,000 J: 6,000 J. Shifted to [2, 17]: 1,500 + 5 x (289 - 4) + 3,000 = 5,925 J; to
    # [3, 18]: 1,500 + 5 x (324 - 9) + 3,000 = 6,075 J. Idle, the readings outside [2, 18]
    # (t = 0, 1, 19, 20): GPU 0 (100 + 110 + 290 + 300) / 4 = 200 W, GPU 1 200 W: 400 W.
    window = Window(T0 + timedelta(seconds=2.5), T0 + timedelta(seconds=17.5), 0.5)
    part = streamed_energy(log, window, tz="UTC", always=True, part_bytes=part_bytes)
    assert part is not None
    assert part.result.energy_j == pytest.approx(6000.0)
    assert part.result.energy_range_j == pytest.approx((5925.0, 6075.0))
    assert part.result.idle_power_w == pytest.approx(400.0)
    _same(part.result, window_energy(samples, window, origin=str(log)))


def test_inspect_of_a_big_log_is_computed_part_by_part_to_the_same_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path / "smi.csv")
    start, end = T0 + timedelta(seconds=2.5), T0 + timedelta(seconds=17.5)
    whole_summary = power_summary([log], tz="UTC")
    whole_evidence = power_from_evidence(log, start, end, "UTC", uncertainty_s=0.5)
    monkeypatch.setattr(streamed, "STREAM_BYTES", 0)  # every log is big
    summary = power_summary([log], tz="UTC")
    evidence = power_from_evidence(log, start, end, "UTC", uncertainty_s=0.5)
    for key in ("energy_j", "mean_power_w", "peak_power_w"):
        assert summary["power_log"][key] == pytest.approx(whole_summary["power_log"][key],
                                                          rel=1e-12)
    keep = {k: v for k, v in summary["power_log"].items()
            if k not in ("energy_j", "mean_power_w", "peak_power_w")}
    assert keep == {k: v for k, v in whole_summary["power_log"].items()
                    if k not in ("energy_j", "mean_power_w", "peak_power_w")}
    assert summary["power_log"]["samples"] == 36
    assert evidence.files == whole_evidence.files and evidence.notes == whole_evidence.notes
    _same(evidence.energy, whole_evidence.energy)
    # a log with no part reader (here a folder) is read whole, as before
    assert streamed_energy(tmp_path, None, tz="UTC", always=True) is None


def test_a_log_under_the_threshold_is_read_whole(tmp_path: Path) -> None:
    assert streamed_energy(_log(tmp_path / "smi.csv"), None, tz="UTC") is None
