"""AIPerf telemetry, CodeCarbon, amd-smi, Zeus, PTDaemon and dmon readers: real public samples
(skipped when ../shared/samples is absent) and fixtures we wrote."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from pipeline.evidence.power.energy import Window, window_energy
from sources.bench.aggregates import mlperf
from sources.errors import ParseError
from sources.power import (
    aiperf_telemetry,
    amd_smi,
    codecarbon,
    nvidia_smi_dmon,
    ptdaemon,
    zeus,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures" / "power"


def sample(relative: str) -> bytes:
    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"sample {relative} absent")
    return path.read_bytes()


# --- AIPerf GPU telemetry (real: 20 records, one GPU read through two DCGM exporters) -------

AIPERF = "aiperf/qwen_concurrency1_gpu_telemetry_export.jsonl"


def test_aiperf_telemetry_real_sample() -> None:
    data = sample(AIPERF)
    assert aiperf_telemetry.detect(data, AIPERF)
    frame = aiperf_telemetry.parse(data, path=AIPERF)
    assert frame.height == 20
    # 1762551530946074466 ns -> 2025-11-07 21:38:50.946074 UTC (466 ns rounds down)
    assert frame["sample_utc"][0] == datetime(2025, 11, 7, 21, 38, 50, 946074, tzinfo=UTC)
    # 32.62748095 MJ -> 32,627,480.95 J
    assert frame["energy_counter_j"][0] == pytest.approx(32_627_480.95)
    assert frame["power_w"][0] == 30.257
    assert frame["device_id"].unique().to_list() == ["GPU-ef6ef310-f8e2-cef9-036e-8f12d59b5ffc"]
    assert sorted(frame["series_id"].unique().to_list()) == [
        "http://localhost:9400/metrics", "http://localhost:9402/metrics"]


def test_aiperf_telemetry_real_sample_energy() -> None:
    frame = aiperf_telemetry.parse(sample(AIPERF), path=AIPERF)
    result = window_energy(frame, None, origin=AIPERF)
    # counted once, from the :9400 stream (first by name among equals): counter
    # 32.627733932 - 32.62748095 MJ = 0.000252982 MJ = 252.982 J over
    # 21:38:53.941907 - 21:38:50.946074 = 2.995833 s -> 84.44 W
    assert result.method == "counter"
    assert result.energy_j == pytest.approx(252.982, abs=1e-3)
    assert result.average_power_w == pytest.approx(252.982 / 2.995833, rel=1e-6)
    assert result.gpus == ("GPU-ef6ef310-f8e2-cef9-036e-8f12d59b5ffc",)
    trapezoid = window_energy(frame, None, origin=AIPERF, method="trapezoid")
    # the averaged power gauge lags the ramp from 30 W to 120 W: trapezoid of the :9400
    # gauge = 0.333 s x (30.257/2 + 32.051 + 58.911 + 91.541 + 113.989 + 119.638 + 119.809
    # + 119.482 + 119.863 + 119.776/2) ~= 283 J, 12 % above the counter: why counters win
    assert trapezoid.energy_j == pytest.approx(283.0, rel=0.005)


def test_aiperf_telemetry_bad_line_is_named() -> None:
    data = b'{"timestamp_ns": 1, "gpu_index": 0, "telemetry_data": {"gpu_power_usage": 1}}\n{oops\n'
    with pytest.raises(ParseError, match="line 2"):
        aiperf_telemetry.parse(data, path="t.jsonl")


def test_aiperf_schema_1_5_names() -> None:
    data = (b'{"timestamp_ns": 1795935600000000000, "gpu_index": 3, "gpu_uuid": "GPU-z", '
            b'"telemetry_data": {"nvidia_power_usage": 500.0, '
            b'"nvidia_energy_consumption": 1.5}}\n')
    frame = aiperf_telemetry.parse(data, path="n.jsonl")
    # 1.5 MJ = 1,500,000 J
    assert (frame["power_w"][0], frame["energy_counter_j"][0]) == (500.0, 1_500_000.0)



def _telemetry(stamp_ns: int) -> bytes:
    return (f'{{"timestamp_ns": {stamp_ns}, "gpu_index": 0, "gpu_uuid": "GPU-z", '
            '"telemetry_data": {"gpu_power_usage": 100.0}}\n').encode()


def test_aiperf_timestamp_rounds_to_the_nearest_microsecond() -> None:
    # 1795935600.123456789 s: 789 ns rounds up to ...457 us (the same rule as every epoch
    # reader; it used to be floored to ...456); 1795935600 s = 2026-11-29T07:00:00Z
    frame = aiperf_telemetry.parse(_telemetry(1_795_935_600_123_456_789), path="r.jsonl")
    assert frame["sample_utc"][0] == datetime(2026, 11, 29, 7, 0, 0, 123457, tzinfo=UTC)


def test_aiperf_timestamp_at_2100_is_refused() -> None:
    # 4,102,444,800 s = 2100-01-01, the first instant past the epoch bound of every reader
    # (from_epoch_s has `< 2100`; this one used to accept it with `<=`)
    with pytest.raises(ParseError, match=r"line 1: timestamp_ns is not epoch ns"):
        aiperf_telemetry.parse(_telemetry(4_102_444_800_000_000_000), path="b.jsonl")

# --- CodeCarbon -----------------------------------------------------------------------------

CODECARBON = "codecarbon/tests_emissions_valid_headers_current.csv"


def test_codecarbon_current_header_real_sample() -> None:
    data = sample(CODECARBON)
    assert codecarbon.detect(data, CODECARBON)
    frame = codecarbon.parse(data, path=CODECARBON, tz="UTC")
    # one run, no GPU tracked (gpu_count empty, gpu_energy 0): node rows only, 0 J then
    # 0.00057442898176 kWh x 3.6e6 = 2067.944 J
    assert frame["measurement_boundary"].unique().to_list() == ["node"]
    assert frame["energy_counter_j"].to_list() == [0.0, pytest.approx(2067.9443343)]
    # stop 2021-09-23T15:04:51, duration 161.20380687713623 s -> start 15:02:09.796193
    assert frame["sample_utc"].to_list() == [
        datetime(2021, 9, 23, 15, 2, 9, 796193, tzinfo=UTC),
        datetime(2021, 9, 23, 15, 4, 51, tzinfo=UTC)]
    result = window_energy(frame, None, origin=CODECARBON)
    # 2067.944 J / 161.2038 s = 12.828 W (the file's cpu_power 0.27 + ram_power 12.88 ~ 13.15 W
    # are means of CodeCarbon's own samples, not energy / duration)
    assert result.average_power_w == pytest.approx(12.828, abs=1e-3)
    assert result.boundary == "node"


def test_codecarbon_old_header_with_gpu() -> None:
    data = (FIXTURES / "codecarbon_2x_emissions_gpu.csv").read_bytes()
    assert codecarbon.detect(data, "cc.csv")
    frame = codecarbon.parse(data, path="cc.csv", tz="Europe/Paris")
    gpu = frame.filter(pl.col("measurement_boundary") == "gpu_board")
    # gpu_energy 0.002 kWh = 7200 J over the run's 20 s; stop 12:00:20 Paris = 11:00:20 UTC
    assert gpu["energy_counter_j"].to_list() == [0.0, pytest.approx(7200.0)]
    assert gpu["sample_utc"].to_list() == [datetime(2026, 11, 20, 11, 0, 0, tzinfo=UTC),
                                           datetime(2026, 11, 20, 11, 0, 20, tzinfo=UTC)]
    result = window_energy(frame, Window(datetime(2026, 11, 20, 11, 0, 5, tzinfo=UTC),
                                         datetime(2026, 11, 20, 11, 0, 15, tzinfo=UTC)),
                           origin="cc.csv")
    # gpu_board by default; 7200 J / 20 s = 360 W average over the run, 10 s of it = 3600 J
    assert (result.boundary, result.energy_j) == ("gpu_board", pytest.approx(3600.0))
    assert any("pro-rated" in note for note in result.notes)


def test_codecarbon_needs_tz() -> None:
    with pytest.raises(ParseError, match="timezone"):
        codecarbon.parse(sample(CODECARBON), path=CODECARBON)


# --- amd-smi --------------------------------------------------------------------------------

AMD_WATCH = "amd/amdsmi_watch_gpu_metrics_EXCERPT_first_tick.csv"


def test_amd_smi_watch_real_sample() -> None:
    data = sample(AMD_WATCH)
    assert amd_smi.detect(data, AMD_WATCH)
    frame = amd_smi.parse(data, path=AMD_WATCH)
    # 2 GPU rows of the first tick; timestamp 1786553852 = 2026-08-12 16:57:32 UTC
    assert frame["gpu_index"].to_list() == [0, 1]
    assert frame["power_w"].to_list() == [238.0, 242.0]
    assert frame["sample_utc"][0] == datetime(2026, 8, 12, 16, 57, 32, tzinfo=UTC)


def test_amd_smi_energy_snapshots_real_samples() -> None:
    start = sample("amd/amdsmi_metric_E_gpu_metrics_energy_start.csv")
    end = sample("amd/amdsmi_metric_E_gpu_metrics_energy_end.csv")
    assert amd_smi.detect(start, "s.csv")
    before = amd_smi.parse_snapshot(start, path="s.csv")
    after = amd_smi.parse_snapshot(end, path="e.csv")
    assert before["gpu_index"].to_list() == list(range(8))
    assert before["energy_counter_j"][0] == 416143212.215
    # the trap FORMATS.md warns of: every counter is lower at the end (339,360,563 J on GPU0)
    assert (after["energy_counter_j"] < before["energy_counter_j"]).all()
    with pytest.raises(ParseError, match="snapshot has no time"):
        amd_smi.parse(start, path="s.csv")


def test_amd_smi_stream_with_repeated_header_and_blank_lines() -> None:
    data = (b"timestamp,gpu,socket_power,total_energy_consumption\n"
            b"1795935600,0,500,1000.0\n\n"
            b"timestamp,gpu,socket_power,total_energy_consumption\n"
            b"1795935601,0,N/A,1500.0\n\n"
            b"1795935602,0,500,2000.0\n")
    frame = amd_smi.parse(data, path="a.csv")
    assert frame["power_w"].to_list() == [500.0, None, 500.0]
    # counter 1000 -> 2000 J over 2 s
    assert window_energy(frame, None, origin="a.csv").energy_j == pytest.approx(1000.0)


# --- Zeus -----------------------------------------------------------------------------------


def test_zeus_windows() -> None:
    data = (FIXTURES / "zeus_monitor.csv").read_bytes()
    assert zeus.detect(data, "z.csv")
    frame = zeus.parse(data, path="z.csv")
    # 2 windows x 2 GPUs x (start, end) = 8 readings
    assert frame.height == 8
    bench = Window(datetime(2026, 11, 29, 7, 0, 0, tzinfo=UTC),
                   datetime(2026, 11, 29, 7, 0, 10, tzinfo=UTC))
    result = window_energy(frame, bench, origin="z.csv")
    # the "bench" window: 3000 J (GPU0) + 4000 J (GPU1) over 10 s = 7000 J, 700 W
    assert result.energy_j == pytest.approx(7000.0)
    assert result.method == "counter"


# --- PTDaemon -------------------------------------------------------------------------------

SPL = "mlperf/v1.0_Krai_rpi4coral_resnet50_offline_ranging_spl_EXCERPT_first33lines.txt"
DETAIL = "mlperf/v4.1_AMD_8xMI300X-TURIN_llama2-70b-99_Server_run_1_mlperf_log_detail_EXCERPT.txt"


def test_ptdaemon_real_spl() -> None:
    data = sample(SPL)
    assert ptdaemon.detect(data, SPL)
    frame = ptdaemon.parse(data, path=SPL, tz="UTC")
    assert frame.height == 33
    assert frame["measurement_boundary"].unique().to_list() == ["wall"]
    assert frame["series_id"].unique().to_list() == ["2021-03-03_00-42-01_ranging"]
    # the submission checker's metric: mean of Watts = 119.62 / 33 = 3.6248 W
    assert frame["power_w"].mean() == pytest.approx(3.624848, abs=1e-6)
    result = window_energy(frame, None, origin=SPL)
    # 00:42:30.170 .. 00:43:02.170 = 32 s; trapezoid 115.32 J -> 3.604 W (the last samples
    # ramp from 3.59 to 5.55 W and count half at the edge, so below the plain mean)
    assert result.window.duration_s == pytest.approx(32.0)
    assert result.energy_j == pytest.approx(115.324, abs=1e-3)


def test_power_window_of_the_real_detail_log() -> None:
    # the power window is the MLPerf run's own window, read by the bench reader
    (run,) = mlperf.parse(sample(DETAIL), path=DETAIL)
    # "07-26-2024 17:09:33.653" .. "07-26-2024 17:21:08.611", UTC
    assert run.started_at_utc == datetime(2024, 7, 26, 17, 9, 33, 653000, tzinfo=UTC)
    assert run.ended_at_utc is not None
    assert (run.ended_at_utc - run.started_at_utc).total_seconds() == pytest.approx(694.958)


def test_ptdaemon_non_sample_line_is_named() -> None:
    data = b"Time,03-03-2021 00:42:30.170,Watts,3.04,Volts,1,Amps,1,PF,1,Mark,x\ngarbage\n"
    with pytest.raises(ParseError, match="line 2"):
        ptdaemon.parse(data, path="p.txt", tz="UTC")


# --- nvidia-smi dmon ------------------------------------------------------------------------


def test_dmon_fixture() -> None:
    data = (FIXTURES / "nvidia_smi_dmon_2gpu.txt").read_bytes()
    assert nvidia_smi_dmon.detect(data, "d.txt")
    frame = nvidia_smi_dmon.parse(data, path="d.txt", tz="Europe/Paris")
    # 6 full rows; the repeated header pair skipped; the cut last line dropped
    assert frame.height == 6
    assert frame["power_w"].null_count() == 1
    result = window_energy(frame, None, origin="d.txt")
    # GPU0 300 W x 2 s + GPU1 400 W x 2 s ('-' at 11:00:01 skipped, linear across) = 1400 J
    assert result.energy_j == pytest.approx(1400.0)


def test_dmon_without_date_time_is_refused() -> None:
    data = b"# gpu   pwr gtemp\n# Idx     W     C\n    0    37    19\n"
    with pytest.raises(ParseError, match="-o DT"):
        nvidia_smi_dmon.parse(data, path="d.txt", tz="UTC")


def test_codecarbon_empty_energy_cell_is_null_and_named() -> None:
    from sources.power import codecarbon

    # the current CodeCarbon header; two runs, the second's energy_consumed cell empty (as in
    # real 2.4.3 files): it loads, its counter readings null with the line named
    header = ("timestamp,project_name,run_id,duration,emissions,energy_consumed,gpu_energy,"
              "gpu_count")
    data = (f"{header}\n"
            "2024-05-02T10:00:00,p,a,100.0,0.001,0.001,0,0\n"
            "2024-05-02T11:00:00,p,b,100.0,0.001,,0,0\n").encode()
    frame = codecarbon.parse(data, path="emissions.csv", tz="Europe/Paris")
    node = frame.filter(frame["series_id"] == "a")
    # run a: 0 J at 07:58:20 UTC, 0.001 kWh = 3,600 J at 08:00:00 UTC (CEST = UTC+2)
    assert node["energy_counter_j"].to_list() == [0.0, 3600.0]
    empty = frame.filter(frame["series_id"] == "b")
    assert empty["energy_counter_j"].to_list() == [None, None]
    assert set(empty["note"]) == {
        "energy_consumed empty in the file (line 3): no node energy for this run"}
    # a cell that is there but not a number is an error naming the line and the column
    bad = data.replace(b",0.001,,0,0", b",0.001,lots,0,0")
    with pytest.raises(ParseError, match=r"line 3 energy_consumed.*not a number: 'lots'"):
        codecarbon.parse(bad, path="emissions.csv", tz="Europe/Paris")


def test_prometheus_query_range_dcgm() -> None:
    from sources.power import prometheus_range
    from sources.power.registry import detect_format as power_format

    path = Path(__file__).resolve().parents[2] / "fixtures" / "power" / (
        "prometheus_query_range_dcgm_2gpu.json")
    data = path.read_bytes()
    assert power_format(data, str(path)) == "prometheus-range"
    frame = prometheus_range.parse(data, path=str(path))
    # 2 GPUs x 11 points; GPU-0 at 300 W, its counter 1,000,000 mJ = 1,000 J at the start
    assert frame.height == 22
    gpu0 = frame.filter(pl.col("device_id") == "GPU-0")
    assert gpu0["power_w"].unique().to_list() == [300.0]
    assert gpu0["energy_counter_j"][0] == pytest.approx(1000.0)
    assert gpu0["series_id"][0] == "node1" and gpu0["gpu_index"][0] == 0
    assert gpu0["sample_utc"][0] == datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
    # the counters over 10 s: 3,000 + 4,000 J
    result = window_energy(frame, None, origin=str(path))
    assert result.energy_j == pytest.approx(7000.0) and result.method == "counter"
    bad = data.replace(b'"300"', b'"NaN"', 1)
    where = r"data\.result\[0\] \(DCGM_FI_DEV_POWER_USAGE gpu 0\) point 0"
    with pytest.raises(ParseError, match=where):
        prometheus_range.parse(bad, path=str(path))
    # the answer envelope is the vLLM reader's (sources/prometheus.py): an error answer is
    # refused with Prometheus' own words, and an answer appended twice (curl >>) is read,
    # its repeated readings taken once
    with pytest.raises(ParseError, match="Prometheus answered an error: bad query"):
        prometheus_range.parse(b'{"status": "error", "error": "bad query"}', path=str(path))
    twice = prometheus_range.parse(data + b"\n" + data, path=str(path))
    assert twice.equals(prometheus_range.parse(data, path=str(path)))
