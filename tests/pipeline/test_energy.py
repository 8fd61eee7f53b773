"""Energy over a window (DESIGN section 7): worked examples computed by hand, and properties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.evidence.power.energy import EnergyError, Window, joules_per_token, window_energy
from sources.power import dcgm, nvidia_smi

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "power"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def samples(times: list[float], device: str, *, power: list[float | None] | None = None,
            counter: list[float | None] | None = None, series: str = "s",
            boundary: str = "gpu_board") -> pl.DataFrame:
    n = len(times)
    return pl.DataFrame({
        "sample_utc": [at(t) for t in times],
        "device_id": [device] * n,
        "gpu_index": [None] * n,
        "series_id": [series] * n,
        "measurement_boundary": [boundary] * n,
        "power_w": power if power is not None else [None] * n,
        "energy_counter_j": counter if counter is not None else [None] * n,
        "note": [None] * n,
    }, schema={"sample_utc": pl.Datetime("us", "UTC"), "device_id": pl.String,
               "gpu_index": pl.Int64, "series_id": pl.String,
               "measurement_boundary": pl.String, "power_w": pl.Float64,
               "energy_counter_j": pl.Float64, "note": pl.String})


def issue_example() -> pl.DataFrame:
    # Two GPUs sampled at 1 Hz, t = 0..4 s (issue 4 worked example).
    return pl.concat([
        samples([0, 1, 2, 3, 4], "gpu0", power=[300, 500, 500, 500, 300]),
        samples([0, 1, 2, 3, 4], "gpu1", power=[200, 400, 400, 400, 200]),
    ])


def test_issue_worked_example_trapezoid() -> None:
    result = window_energy(issue_example(), Window(at(1), at(3)), origin="example")
    # GPU0 over [1, 3]: (500+500)/2*1 + (500+500)/2*1 = 1000 J; GPU1: 400*2 = 800 J; sum 1800 J.
    assert result.energy_j == pytest.approx(1800.0)
    assert result.method == "trapezoid"
    # 1800 J / 2 s = 900 W
    assert result.average_power_w == pytest.approx(900.0)
    # 900 tokens in the window: 1800 / 900 = 2.0 J/token
    assert result.joules_per_token(900) == pytest.approx(2.0)
    assert result.gpus == ("gpu0", "gpu1")
    # samples at t=1,2,3 are in the window (x2 GPUs = 6); t=0 and t=4 outside (x2 = 4)
    assert (result.samples_in_window, result.samples_outside_window) == (6, 4)
    # idle power from samples outside the window: GPU0 mean(300, 300) + GPU1 mean(200, 200)
    assert result.idle_power_w == pytest.approx(500.0)


def test_issue_worked_example_counter() -> None:
    # 1,000,000 mJ = 1,000 J at t=1 and 2,800,000 mJ = 2,800 J at t=3: 1,800 J.
    frame = samples([1, 3], "gpu0", counter=[1_000.0, 2_800.0])
    result = window_energy(frame, Window(at(1), at(3)), origin="counter")
    assert result.energy_j == pytest.approx(1800.0)
    assert result.method == "counter"


def test_counter_preferred_and_interpolated_at_edges() -> None:
    # Counter 0, 1000, 2000 J at t=0, 10, 20 (100 W); power says 999 W, which is ignored.
    frame = samples([0, 10, 20], "g", power=[999, 999, 999], counter=[0, 1000, 2000])
    result = window_energy(frame, Window(at(5), at(15)), origin="c")
    # counter linear between readings: 500 J at t=5, 1500 J at t=15 -> 1000 J
    assert result.energy_j == pytest.approx(1000.0)
    assert result.method == "counter"


def test_counter_reset_uses_power_else_lower_bound() -> None:
    # Counter 100, 200, 50, 150 J at t=0..3 with 100 W throughout: the drop at t=2 is a reset.
    with_power = samples([0, 1, 2, 3], "g", power=[100] * 4, counter=[100, 200, 50, 150])
    result = window_energy(with_power, Window(at(0), at(3)), origin="r")
    # intervals: 100 J (counter) + 100 J (reset: trapezoid of 100 W over 1 s) + 100 J = 300 J
    assert result.energy_j == pytest.approx(300.0)
    assert len(result.resets) == 1
    assert result.resets[0].at_utc == at(2)
    assert (result.resets[0].before_j, result.resets[0].after_j) == (200.0, 50.0)
    assert "counter_resets:1" in result.stability_reasons
    no_power = samples([0, 1, 2, 4], "g", counter=[100, 200, 50, 250])
    # without power, the reset interval is filled at the median power of the other intervals:
    # 100 J / 1 s = 100 W and 200 J / 2 s = 100 W -> 100 W x 1 s; total 100 + 100 + 200 = 400 J
    assert window_energy(no_power, Window(at(0), at(4)), origin="r").energy_j == pytest.approx(
        400.0)
    pair = samples([0, 10], "g", counter=[500, 100])
    with pytest.raises(EnergyError, match=r"dropped from 500\.0 J to 100\.0 J"):
        window_energy(pair, Window(at(0), at(10)), origin="pair")


def test_nvidia_smi_fixture_gap_na_truncated() -> None:
    frame = nvidia_smi.parse((FIXTURES / "nvidia_smi_2gpu_gap_na_truncated.csv").read_bytes(),
                             path="f.csv", tz="Europe/Paris")
    start = datetime(2026, 11, 20, 10, 0, 1, tzinfo=UTC)  # 11:00:01 Paris
    result = window_energy(frame, Window(start, start + timedelta(seconds=8)), origin="f.csv")
    # GPU0 constant 300 W, GPU1 constant 400 W over 8 s: 2400 + 3200 = 5600 J
    assert result.energy_j == pytest.approx(5600.0)
    # GPU0 has no samples at 11:00:05..07: the 4 s interval 04 -> 08 is > 3 x the 1 s period
    assert [(g.device_id, g.duration_s, g.kind) for g in result.gaps] == [("0", 4.0, "gap")]
    # GPU1's [N/A] at 11:00:06 leaves a 2 s interval: not a gap (<= 3 s), but noted
    assert any("power.draw was [N/A]" in n for n in result.notes)
    assert any("truncated last line" in n for n in result.notes)
    whole = window_energy(frame, None, origin="f.csv")
    # the whole common span 11:00:00..11:00:10: 300*10 + 400*10 = 7000 J
    assert whole.energy_j == pytest.approx(7000.0)


def test_dcgm_pair_gives_counter_energy() -> None:
    frame = dcgm.parse((FIXTURES / "dcgm_scrapes_2gpu.prom").read_bytes(), path="d.prom")
    result = window_energy(frame, None, origin="d.prom")
    # GPU0: 5,003,000 - 5,000,000 J = 3,000 J; GPU1: 7,004,000 - 7,000,000 = 4,000 J
    assert result.energy_j == pytest.approx(7000.0)
    # over the 10 s between scrapes: 700 W (= 300 W + 400 W, as the gauges say)
    assert result.average_power_w == pytest.approx(700.0)
    assert result.method == "counter"
    # 2 readings per GPU, 10 s: flagged, not dropped
    assert result.stability_reasons == ("few_samples:2", "short_window:10s")
    assert not result.stable


def test_window_not_covered_is_an_error() -> None:
    frame = samples([0, 1, 2, 3], "g", power=[100] * 4)
    with pytest.raises(EnergyError, match="does not cover the window for device g"):
        window_energy(frame, Window(at(0), at(20)), origin="short.csv")


def test_short_edge_is_extended_and_reported() -> None:
    # 1 Hz log from t=1 to t=10 at 100 W; window [0, 10]: 1 s missing at the start (<= 3 s).
    frame = samples(list(range(1, 11)), "g", power=[100] * 10)
    result = window_energy(frame, Window(at(0), at(10)), origin="e")
    # 9 s integrated + 1 s extended at the edge power: 100 * 10 = 1000 J
    assert result.energy_j == pytest.approx(1000.0)
    assert [(g.kind, g.duration_s) for g in result.gaps] == [("before_first_sample", 1.0)]


def test_boundaries_are_never_summed() -> None:
    frame = pl.concat([samples([0, 10], "g", power=[100, 100]),
                       samples([0, 10], "meter", power=[1000, 1000], boundary="wall")])
    default = window_energy(frame, None, origin="b")
    # the narrowest boundary by default: 100 W * 10 s = 1000 J, with a note
    assert (default.boundary, default.energy_j) == ("gpu_board", pytest.approx(1000.0))
    assert any("never summed" in n for n in default.notes)
    wall = window_energy(frame, None, origin="b", boundary="wall")
    # 1000 W * 10 s
    assert (wall.boundary, wall.energy_j) == ("wall", pytest.approx(10000.0))


def test_one_device_read_twice_is_counted_once() -> None:
    frame = pl.concat([samples([0, 1, 2], "g", power=[100] * 3, series="exporter-a"),
                       samples([0.5, 1.5], "g", power=[100] * 2, series="exporter-b")])
    result = window_energy(frame, Window(at(0), at(2)), origin="two")
    # only exporter-a (covers the window, more samples): 100 W * 2 s = 200 J
    assert result.energy_j == pytest.approx(200.0)
    assert any("also read by 'exporter-b'" in n for n in result.notes)


def test_idle_power_is_that_of_the_chosen_stream_outside_the_band() -> None:
    # exporter-a (chosen) reads g at t = 0..10 s: 100 W, 250 W at t = 3 and 7, 400 W at
    # t = 4..6. Window [4, 6] with u = 1: the band [3, 7] is busy; idle readings are t = 0, 1,
    # 2, 8, 9, 10 at 100 W -> 100 W (without the band: (6 x 100 + 2 x 250) / 8 = 137.5 W).
    # exporter-b's 900 W readings of the same GPU are not counted.
    power_a = [100.0] * 3 + [250.0] + [400.0] * 3 + [250.0] + [100.0] * 3
    frame = pl.concat([samples(list(range(11)), "g", power=power_a, series="exporter-a"),
                       samples([0.5, 9.5], "g", power=[900.0] * 2, series="exporter-b")])
    result = window_energy(frame, Window(at(4), at(6), uncertainty_s=1), origin="idle")
    assert result.idle_power_w == pytest.approx(100.0)
    # readings in [4, 6]: t = 4, 5, 6; the other 8 of exporter-a are outside
    assert (result.samples_in_window, result.samples_outside_window) == (3, 8)


def test_no_idle_power_when_a_device_has_no_reading_outside() -> None:
    # gpu1 is read only inside the window [1, 3]: no idle figure for it, so none in all
    frame = pl.concat([samples([0, 1, 2, 3, 4], "gpu0", power=[300.0] * 5),
                       samples([1, 2, 3], "gpu1", power=[200.0] * 3)])
    result = window_energy(frame, Window(at(1), at(3)), origin="busy")
    assert result.idle_power_w is None
    # gpu0 300 W x 2 s + gpu1 200 W x 2 s = 1000 J
    assert result.energy_j == pytest.approx(1000.0)


def test_alignment_uncertainty_gives_a_range() -> None:
    result = window_energy(issue_example(), Window(at(1), at(3), uncertainty_s=0.5),
                           origin="u")
    # window shifted to [0.5, 2.5]: GPU0 (400+500)/2*0.5 + 500 + 500*0.5 = 975 J, GPU1
    # (300+400)/2*0.5 + 400 + 400*0.5 = 775 J -> 1750 J; shifted to [1.5, 3.5]: same by symmetry
    assert result.energy_range_j == (pytest.approx(1750.0), pytest.approx(1800.0))
    assert "clock_uncertainty:0.5s_of_2s" in result.stability_reasons


def test_naive_window_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        Window(datetime(2026, 1, 1), datetime(2026, 1, 2))  # noqa: DTZ001


def test_joules_per_token_without_tokens_is_null() -> None:
    assert joules_per_token(100.0, 0) is None


times_strategy = st.lists(st.floats(0.1, 5.0), min_size=2, max_size=30)


@settings(max_examples=30, deadline=None)
@given(steps=times_strategy, watts=st.floats(0.0, 5000.0, allow_subnormal=False),
       lo=st.floats(0.0, 1.0), hi=st.floats(0.0, 1.0))
def test_trapezoid_of_a_constant(steps: list[float], watts: float, lo: float,
                                 hi: float) -> None:
    times = [sum(steps[:i]) for i in range(len(steps) + 1)]
    span = times[-1]
    a, b = sorted((lo * span, hi * span))
    if b - a < 1e-3:
        return
    frame = samples(times, "g", power=[watts] * len(times))
    result = window_energy(frame, Window(at(a), at(b)), origin="p",)
    # constant power x duration (window bounds rounded to the microsecond)
    assert result.energy_j == pytest.approx(watts * (b - a), rel=1e-6, abs=watts * 2e-6 + 1e-9)


@settings(max_examples=30, deadline=None)
@given(steps=times_strategy, data=st.data())
def test_energy_is_additive_and_never_negative(steps: list[float], data: st.DataObject) -> None:
    times = [round(sum(steps[:i]), 3) for i in range(len(steps) + 1)]
    if times[-1] - times[0] < 0.01 or len(set(times)) != len(times):
        return
    watts = data.draw(st.lists(st.floats(0.0, 2000.0, allow_subnormal=False), min_size=len(times),
                               max_size=len(times)))
    a, m, b = sorted(data.draw(st.lists(st.floats(times[0], times[-1]), min_size=3,
                                        max_size=3)))
    a, m, b = (round(x, 3) for x in (a, m, b))
    if not (m - a > 1e-3 and b - m > 1e-3):
        return
    frame = samples(times, "g", power=watts)
    left = window_energy(frame, Window(at(a), at(m)), origin="p").energy_j
    right = window_energy(frame, Window(at(m), at(b)), origin="p").energy_j
    whole = window_energy(frame, Window(at(a), at(b)), origin="p").energy_j
    assert left >= 0 and right >= 0
    assert left + right == pytest.approx(whole, rel=1e-9, abs=1e-6)


def test_long_log_small_window() -> None:
    # 2 h at 1 Hz: 200 W until t=3600 s, then 300 W; a 10 s window at [3600, 3610]
    times = list(range(7201))
    watts = [200.0 if t <= 3600 else 300.0 for t in times]
    frame = samples(times, "g", power=watts)
    result = window_energy(frame, Window(at(3600), at(3610)), origin="long")
    # first second ramps 200 -> 300 W: 250 J, then 9 s x 300 W = 2700 J: 2950 J
    assert result.energy_j == pytest.approx(2950.0)
    # 11 samples inside (t = 3600..3610), 7201 - 11 outside
    assert (result.samples_in_window, result.samples_outside_window) == (11, 7190)
    # idle: samples more than 0 s outside: 3600 at 200 W and 3590 at 300 W
    assert result.idle_power_w == pytest.approx((3600 * 200 + 3590 * 300) / 7190)


def test_window_inside_one_long_interval() -> None:
    # counter read only at t=0 (0 J) and t=10,000 s (1,000,000 J): 100 W on average
    frame = samples([0, 10_000], "g", counter=[0.0, 1_000_000.0])
    result = window_energy(frame, Window(at(5000), at(5010)), origin="zeus-like")
    # 10 s of the interval at its average power: 1000 J (pro-rated, and noted)
    assert result.energy_j == pytest.approx(1000.0)
    assert any("pro-rated" in n for n in result.notes)


def test_one_measurement_window_is_not_extended() -> None:
    # Zeus-like: one 100 s measurement window, counter 0 J at t=0 and 40,000 J at t=100 (400 W)
    frame = samples([0, 100], "g", counter=[0.0, 40_000.0])
    # a benchmark window [0, 250] runs 150 s past it: its one interval is the device's whole
    # "median period", so 3 x 100 s of tolerance used to extend it at 400 W to
    # 40,000 + 150 x 400 = 100,000 J; nothing is known after t=100: an error
    with pytest.raises(EnergyError, match=r"does not cover the window for device g: it covers "
                       r"2026-01-01T00:00:00\+00:00 \.\. 2026-01-01T00:01:40\+00:00"):
        window_energy(frame, Window(at(0), at(250)), origin="zeus.csv")
    # the window within it is fine: [0, 100] is the counter's 40,000 J
    assert window_energy(frame, Window(at(0), at(100)), origin="zeus.csv"
                         ).energy_j == pytest.approx(40_000.0)


def test_long_clean_window_is_stable() -> None:
    # 1 Hz for 200 s at 250 W, window [50, 170]: 120 s x 250 W = 30,000 J, no flag
    frame = samples(list(range(201)), "g", power=[250.0] * 201)
    result = window_energy(frame, Window(at(50), at(170), uncertainty_s=1.0), origin="ok")
    assert result.energy_j == pytest.approx(30000.0)
    # 1 s of uncertainty is 0.8 % of 120 s (under 1 %); 121 samples; no gaps, no resets
    assert (result.stable, result.stability_reasons) == (True, ())
