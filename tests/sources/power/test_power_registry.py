"""Every power reader has the same shape; detection picks the right one; any bytes give a
frame or a ParseError; bad files load nothing."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.power import POWER_COLUMNS, POWER_SAMPLES, surely_valid
from schemas.table import ValidationFailed
from sources.errors import ParseError
from sources.power.registry import (
    _UNKEYED,
    FORMATS,
    READERS,
    _first_disorder,
    _in_strict_order,
    detect_format,
    read_power,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures" / "power"


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.TOOL)
def test_reader_shape(reader: object) -> None:
    assert isinstance(reader.TOOL, str)  # type: ignore[attr-defined]
    detect = inspect.signature(reader.detect)  # type: ignore[attr-defined]
    assert list(detect.parameters) == ["data", "path"]
    parse = inspect.signature(reader.parse)  # type: ignore[attr-defined]
    assert list(parse.parameters) == ["data", "path", "tz"]
    assert parse.parameters["path"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parse.parameters["tz"].default is None


FILES = {
    FIXTURES / "nvidia_smi_2gpu_gap_na_truncated.csv": "nvidia-smi",
    FIXTURES / "nvidia_smi_nounits.csv": "nvidia-smi",
    FIXTURES / "nvidia_smi_dmon_2gpu.txt": "nvidia-smi-dmon",
    FIXTURES / "dcgm_scrapes_2gpu.prom": "dcgm-exporter",
    FIXTURES / "zeus_monitor.csv": "zeus",
    FIXTURES / "codecarbon_2x_emissions_gpu.csv": "codecarbon",
    SAMPLES / "aiperf/qwen_concurrency1_gpu_telemetry_export.jsonl": "aiperf-telemetry",
    SAMPLES / "codecarbon/tests_emissions_valid_headers_current.csv": "codecarbon",
    SAMPLES / "amd/amdsmi_watch_gpu_metrics_EXCERPT_first_tick.csv": "amd-smi",
    SAMPLES / "mlperf/v1.0_Krai_rpi4coral_resnet50_offline_ranging_spl_EXCERPT_first33lines.txt":
        "ptdaemon",
}


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.name)
def test_detection_and_validated_read(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} absent")
    data = path.read_bytes()
    assert detect_format(data, str(path)) == FILES[path]
    tool, frame = read_power(data, path=str(path), tz="UTC")
    assert tool == FILES[path]
    assert frame.columns == list(POWER_SAMPLES.columns)
    assert frame.height > 0


#: the UTF-8 byte-order mark Notepad and Excel's "CSV UTF-8" put at the start of a file they save
BOM = b"\xef\xbb\xbf"


def _read(data: bytes) -> tuple[str | None, pl.DataFrame | str]:
    """(format detected or None, the frame read or the error)."""
    try:
        tool = detect_format(data, "f")
    except ParseError:
        return None, ""
    try:
        return tool, read_power(data, path="f", tz="UTC")[1]
    except ParseError as err:  # amd-smi energy snapshots are read in pairs, not alone
        return tool, str(err)


@pytest.mark.parametrize("path", sorted(p for folder in (FIXTURES, SAMPLES)
                                        for p in folder.rglob("*") if p.is_file()),
                         ids=lambda p: "/".join(p.parts[-2:]))
def test_a_byte_order_mark_hides_no_format(path: Path) -> None:
    """The readers decode past a leading BOM ("utf-8-sig"), so detection looks past it too:
    a log re-saved with one is the same format (not another: a Prometheus answer was taken
    for DCGM exporter text) read to the same samples; a file no reader knows stays
    unknown."""
    data = path.read_bytes()
    (tool, frame), (bommed_tool, bommed) = _read(data), _read(BOM + data)
    assert bommed_tool == tool
    assert frame.equals(bommed) if isinstance(frame, pl.DataFrame) else bommed == frame


def test_other_samples_are_not_power_logs() -> None:
    others = [p for p in SAMPLES.glob("*/*") if p.is_file() and p not in FILES
              and "amdsmi_metric_E" not in p.name and p.name != "PROVENANCE.md"]
    if not others:
        pytest.skip("samples absent")
    for path in others:
        with pytest.raises(ParseError, match="not a power log"):
            detect_format(path.read_bytes(), str(path))


def test_forced_and_unknown_format() -> None:
    data = (FIXTURES / "zeus_monitor.csv").read_bytes()
    with pytest.raises(ParseError, match="no header"):
        read_power(data, path="z.csv", tz="UTC", format="nvidia-smi")
    with pytest.raises(ParseError, match="unknown format 'watts'"):
        read_power(data, path="z.csv", format="watts")
    assert set(FORMATS) == {r.TOOL for r in READERS}


def test_out_of_order_timestamps() -> None:
    data = (b"timestamp, index, power.draw [W]\n2026/11/20 11:00:01.000, 0, 1.00 W\n"
            b"2026/11/20 11:00:00.000, 0, 1.00 W\n")
    with pytest.raises(ParseError, match=r"sample 2.*out of order for device 0"):
        read_power(data, path="o.csv", tz="UTC")


def test_duplicated_samples() -> None:
    data = (b"timestamp, index, power.draw [W]\n2026/11/20 11:00:00.000, 0, 1.00 W\n"
            b"2026/11/20 11:00:00.000, 0, 1.00 W\n")
    with pytest.raises(ParseError, match="duplicated sample for device 0"):
        read_power(data, path="d.csv", tz="UTC")


def test_implausible_power_fails_validation() -> None:
    # 400 W logged in mW but labelled W: 400,000 W is above the 50 kW bound
    data = b"timestamp, index, power.draw [W]\n2026/11/20 11:00:00.000, 0, 400000.00 W\n"
    with pytest.raises(ValidationFailed, match="power_w"):
        read_power(data, path="m.csv", tz="UTC")


def test_empty_file() -> None:
    with pytest.raises(ParseError):
        read_power(b"", path="e.csv", tz="UTC")


FRAGMENTS = [
    "timestamp, index, power.draw [W]\n", "2026/11/20 11:00:00.000, 0, 300.00 W\n", "[N/A]",
    "#Date Time gpu pwr\n", " 20261120 11:00:00 0 300\n", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1\n",
    "# scrape_utc: 2026-11-20T10:00:00Z\n", '{"timestamp_ns": 1, "telemetry_data": {}}\n',
    "start_time,window_name,elapsed_time,gpu0_energy\n", "1795935600,w,1,5\n",
    "timestamp,duration,emissions,energy_consumed\n", "2026-11-20T12:00:20,1,0,0.1\n",
    "timestamp,gpu,socket_power\n", "1795935600,0,N/A\n", "gpu,total_energy_consumption\n",
    "Time,03-03-2021 00:42:30.170,Watts,3.04,Volts,1,Amps,1,PF,1,Mark,x\n", ",", "\n", "\"",
    "-1", "1e400", "\x00", "é",
]


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=8), junk=st.binary(max_size=20),
       reader=st.sampled_from(READERS), tz=st.sampled_from([None, "UTC", "Europe/Paris"]))
def test_any_bytes_give_a_frame_or_a_parse_error(parts: list[str], junk: bytes,
                                                 reader: object, tz: str | None) -> None:
    data = "".join(parts).encode() + junk
    try:
        frame = reader.parse(data, path="fuzz.bin", tz=tz)  # type: ignore[attr-defined]
    except ParseError as err:
        assert err.path == "fuzz.bin"
        return
    assert list(frame.columns) == list(POWER_SAMPLES.columns)


VALID = sorted(p for p in FIXTURES.iterdir() if p.is_file())


@settings(max_examples=150, deadline=None)
@given(index=st.integers(0, len(VALID) - 1), cut=st.floats(0.0, 1.0),
       insert=st.sampled_from(["", ",", "\n", "x", "-", "[N/A]", "\"", "9" * 30, " W"]),
       tz=st.sampled_from([None, "UTC"]))
def test_damaged_real_shapes_give_a_frame_or_a_parse_error(index: int, cut: float,
                                                            insert: str,
                                                            tz: str | None) -> None:
    original = VALID[index].read_bytes()
    position = int(cut * len(original))
    data = original[:position] + insert.encode() + original[position + 1:]
    reader = FORMATS[detect_format(original, "ok")]
    try:
        frame = reader.parse(data, path="damaged", tz=tz)
    except ParseError as err:
        assert err.path == "damaged"
        return
    assert list(frame.columns) == list(POWER_SAMPLES.columns)


def _one_reading(**change: object) -> pl.DataFrame:
    row: dict[str, object] = {
        "sample_utc": datetime(2026, 11, 20, 10, tzinfo=UTC), "device_id": "0",
        "gpu_index": 0, "series_id": "nvidia-smi", "measurement_boundary": "gpu_board",
        "power_w": 300.0, "energy_counter_j": None, "note": None} | change
    return pl.DataFrame({name: [row[name]] for name in POWER_COLUMNS}, schema=POWER_COLUMNS)


@pytest.mark.parametrize("change", [
    {"power_w": 50_000.5},            # le 50 kW
    {"power_w": -0.1},                # ge 0
    {"power_w": float("nan")},        # NaN is not <= 50 kW
    {"energy_counter_j": -1.0},       # ge 0
    {"gpu_index": 1024},              # le 1023
    {"gpu_index": -1},                # ge 0
    {"measurement_boundary": "rack"},  # not one of BOUNDARIES
    {"device_id": None},              # required
    {"sample_utc": None},             # required
], ids=str)
def test_one_pass_check_refuses_what_pandera_refuses(change: dict[str, object]) -> None:
    # The one-select check passes a frame only when pandera would; pandera then names the row.
    assert surely_valid(_one_reading())
    _UNKEYED.validate(_one_reading(), origin="ok")
    bad = _one_reading(**change)
    assert not surely_valid(bad)
    with pytest.raises(ValidationFailed):
        _UNKEYED.validate(bad, origin="bad")


def test_one_pass_check_wants_the_declared_dtypes() -> None:
    # gpu_index as Int32 instead of the declared Int64: left to pandera (which refuses it)
    assert not surely_valid(_one_reading().with_columns(pl.col("gpu_index").cast(pl.Int32)))
    assert not surely_valid(_one_reading().drop("note"))


@pytest.mark.parametrize("rows", [1, 2, 3, 100])
def test_order_check_in_slices_sees_across_slice_edges(rows: int) -> None:
    # device a: 10:00, 10:02, 10:01 (out of order at row 4); device b: 10:00, 10:01 (fine).
    # Rows in file order: a 10:00, b 10:00, a 10:02, a 10:01, b 10:01 -> the first bad row is
    # index 3 (0-based), whatever the slice size (1 row per slice: every stream's last
    # reading comes only from the carry).
    frame = pl.DataFrame({
        "device_id": ["a", "b", "a", "a", "b"],
        "sample_utc": [datetime(2026, 11, 20, 10, m, tzinfo=UTC) for m in (0, 0, 2, 1, 1)]})
    assert _first_disorder(frame, ["device_id"], rows) == 3
    # without the bad row: in order; then b 10:01 again at the end: row 4 of 5 is found
    assert _first_disorder(frame.filter(pl.int_range(5) != 3), ["device_id"], rows) is None
    twice = pl.concat([frame.filter(pl.int_range(5) != 3), frame.tail(1)])
    assert _first_disorder(twice, ["device_id"], rows) == 4


@pytest.mark.parametrize("rows", [1, 2, 100])  # rows per slice: pairs across slice edges too
def test_strict_order_shortcut_holds_only_for_strictly_ordered_rows(rows: int) -> None:
    def frame(devices: list[str], minutes: list[int]) -> pl.DataFrame:
        return pl.DataFrame({"device_id": devices, "sample_utc": [
            datetime(2026, 11, 20, 10, m, tzinfo=UTC) for m in minutes]})

    # nvidia-smi's pattern: GPUs 0, 1 at 10:00 then at 10:01 -> (time, device) increases
    assert _in_strict_order(frame(["0", "1", "0", "1"], [0, 0, 1, 1]), ["device_id"], rows)
    # GPU 0 twice at 10:00: a duplicate, not strictly increasing
    assert not _in_strict_order(frame(["0", "0", "1"], [0, 0, 0]), ["device_id"], rows)
    # 10:01 then 10:00: out of order
    assert not _in_strict_order(frame(["0", "0"], [1, 0]), ["device_id"], rows)
    # GPU "9" then "10" at one instant: index order, though "10" < "9" as text; a device id
    # compares by its length first (1 < 2), so the shortcut takes it, as the grouped check
    ten = frame(["9", "10", "9", "10"], [0, 0, 1, 1])
    assert _in_strict_order(ten, ["device_id"], rows)
    assert _first_disorder(ten, ["device_id"], rows) is None
    # "10" then "9" at one instant: not that order (2 > 1): no shortcut; the grouped check
    # finds each GPU in order
    backwards = frame(["10", "9", "10", "9"], [0, 0, 1, 1])
    assert not _in_strict_order(backwards, ["device_id"], rows)
    assert _first_disorder(backwards, ["device_id"], rows) is None
    # equal ids are equal both ways: "10" twice at 10:00 is still a duplicate
    assert not _in_strict_order(frame(["9", "10", "10"], [0, 0, 0]), ["device_id"], rows)
