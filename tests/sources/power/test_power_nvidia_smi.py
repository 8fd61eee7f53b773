"""nvidia-smi CSV reader on fixtures we wrote (no real public nvidia-smi log is confirmed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sources.errors import ParseError
from sources.power import nvidia_smi
from sources.power._nvidia_smi_scan import scan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "power"


def _read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_units_na_gap_and_truncated_line() -> None:
    data = _read("nvidia_smi_2gpu_gap_na_truncated.csv")
    assert nvidia_smi.detect(data, "x.csv")
    frame = nvidia_smi.parse(data, path="x.csv", tz="Europe/Paris")
    # 19 data lines + 1 truncated line = 20 rows (GPU0: 8 full + 1 cut, GPU1: 11).
    assert frame.height == 20
    assert frame.filter(pl.col("gpu_index") == 0).height == 9
    # 11:00:00 in Paris in November (UTC+1) is 10:00:00 UTC.
    assert frame["sample_utc"][0] == datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
    # "300.00 W" -> 300.0; "[N/A]" -> null with a note; the cut last line -> null with a note.
    assert frame["power_w"][0] == 300.0
    na = frame.filter(pl.col("power_w").is_null())
    assert na["note"].to_list() == ["power.draw was [N/A]", "truncated last line: power dropped"]
    assert frame["measurement_boundary"].unique().to_list() == ["gpu_board"]


def test_nounits_header_keeps_brackets() -> None:
    frame = nvidia_smi.parse(_read("nvidia_smi_nounits.csv"), path="n.csv", tz="UTC")
    # 3 ticks x 2 GPUs, bare numbers
    assert frame.height == 6
    assert frame["power_w"].to_list() == [300.0, 400.0] * 3
    assert frame["sample_utc"][0] == datetime(2026, 11, 20, 11, 0, 0, tzinfo=UTC)


def test_naive_timestamps_need_a_timezone() -> None:
    with pytest.raises(ParseError, match=r"n\.csv.*timezone"):
        nvidia_smi.parse(_read("nvidia_smi_nounits.csv"), path="n.csv")


def test_repeated_header_and_appended_noheader_sample() -> None:
    data = (b"timestamp, index, power.draw [W]\n2026/11/20 11:00:00.000, 0, 100.00 W\n"
            b"timestamp, index, power.draw [W]\n2026/11/20 11:00:01.000, 0, 200.00 W\n"
            b"2026/11/20 11:00:02.000, 0, 150.00 W\n")
    frame = nvidia_smi.parse(data, path="r.csv", tz="UTC")
    assert frame["power_w"].to_list() == [100.0, 200.0, 150.0]


@pytest.mark.parametrize("unit", ["mW", "kW"])
def test_power_in_other_units_is_refused(unit: str) -> None:
    data = f"timestamp, index, power.draw [{unit}]\n2026/11/20 11:00:00.000, 0, 1\n".encode()
    with pytest.raises(ParseError, match=rf"power unit is '{unit}'"):
        nvidia_smi.parse(data, path="u.csv", tz="UTC")


def test_noheader_file_is_refused_with_advice() -> None:
    data = b"2026/11/20 11:00:00.000, 0, 100.00 W\n"
    assert nvidia_smi.detect(data, "h.csv")
    with pytest.raises(ParseError, match="no header"):
        nvidia_smi.parse(data, path="h.csv", tz="UTC")


def test_bad_value_inside_the_file_names_the_line() -> None:
    data = (b"timestamp, index, power.draw [W]\n2026/11/20 11:00:00.000, 0, abc W\n"
            b"2026/11/20 11:00:01.000, 0, 1.00 W\n")
    with pytest.raises(ParseError, match=r"line 2 power\.draw"):
        nvidia_smi.parse(data, path="b.csv", tz="UTC")


def test_nonexistent_local_time_is_an_error() -> None:
    # 2026-03-29 02:30 does not exist in Paris (clocks jump 02:00 -> 03:00).
    data = b"timestamp, index, power.draw [W]\n2026/03/29 02:30:00.000, 0, 1.00 W\n"
    with pytest.raises(ParseError, match="DST"):
        nvidia_smi.parse(data, path="d.csv", tz="Europe/Paris")


def test_clean_file_reads_the_same_as_through_the_flagged_path() -> None:
    # A clean file takes the one-pass path; the same lines with an [N/A] line appended take
    # the row-flagging path. File lines 2-12 and 14-20 (file line 13 is the [N/A] one) are
    # 18 complete readings; both paths must give the same 18 rows for them.
    lines = _read("nvidia_smi_2gpu_gap_na_truncated.csv").split(b"\n")
    clean = b"\n".join(lines[:12] + lines[13:20]) + b"\n"  # header + 18 complete readings
    fast = nvidia_smi.parse(clean, path="c.csv", tz="Europe/Paris")
    flagged = nvidia_smi.parse(clean + lines[12] + b"\n", path="c.csv", tz="Europe/Paris")
    # 18 readings; the flagged one has the [N/A] reading (GPU 1 at 11:00:06) as a 19th row
    assert fast.height == 18
    assert flagged.height == 19
    assert flagged["note"][18] == "power.draw was [N/A]"
    assert fast.equals(flagged.head(18))
    assert fast["device_id"].to_list()[:2] == ["0", "1"]  # " 0" -> "0", as in the other path
    assert fast["note"].null_count() == 18


# --- the compiled scan (sources/power/_nvidia_smi_scan.c) against the general path ----------
# A file whose lines are all clean readings takes the scan; the same file with an [N/A]
# reading appended takes the general (polars) path. Whatever the lines, the two must agree
# row for row, or fail with the same message.

_NA_LINE = b"2026/11/20 11:00:00.000, 0, [N/A]\n"


def _both_paths(data: bytes, tz: str, na_line: bytes = _NA_LINE) -> tuple[object, object]:
    def read(content: bytes) -> object:
        try:
            return nvidia_smi.parse(content, path="p.csv", tz=tz)
        except ParseError as err:
            return str(err)

    scanned, general = read(data), read(data + na_line)
    if isinstance(general, pl.DataFrame):
        general = general.head(general.height - 1)  # the [N/A] reading
    return scanned, general


def _same(scanned: object, general: object) -> None:
    if isinstance(scanned, pl.DataFrame):
        assert isinstance(general, pl.DataFrame), general
        assert scanned.equals(general)
    else:
        assert scanned == general


_stamps = st.builds(
    lambda moment, fraction: moment.strftime("%Y/%m/%d %H:%M:%S") + fraction,
    st.datetimes(datetime(1969, 12, 31), datetime(2200, 1, 2)),  # noqa: DTZ001 (wall time)
    st.one_of(st.just(""), st.text("0123456789", min_size=0, max_size=9).map("."
                                                                           .__add__)))
_powers = st.builds(
    lambda whole, decimals, unit: f"{whole}{decimals}{unit}",
    st.integers(0, 10**16), st.one_of(st.just(""), st.text("0123456789", max_size=6)
                                      .map(".".__add__)), st.sampled_from(["", " W"]))
_lines = st.lists(st.tuples(_stamps, st.integers(0, 1100), _powers), min_size=1, max_size=40)


@settings(max_examples=300)
@given(lines=_lines, tz=st.sampled_from(["UTC", "Europe/Paris"]))
def test_scan_reads_any_readings_as_the_general_path(
        lines: list[tuple[str, int, str]], tz: str) -> None:
    # the header's " [W]" is kept with nounits too; values with or without " W" read alike
    header = b"timestamp, index, power.draw [W]\n"
    data = header + "".join(f"{s}, {i}, {p}\n" for s, i, p in lines).encode()
    _same(*_both_paths(data, tz))
    # and the scan itself takes every file of what it promises to read: years 1970-2199, a
    # fraction of 1-6 digits or none, at most 15 digits of power (then exact in a double)
    def promised(stamp: str, power: str) -> bool:
        digits = sum(c.isdigit() for c in power)
        return (1970 <= int(stamp[:4]) <= 2199 and len(stamp[19:]) in (0, 2, 3, 4, 5, 6, 7)
                and digits <= 15 and not power.removesuffix(" W").endswith("."))
    out = np.empty(len(lines), np.int64), np.empty(len(lines), np.int64), \
        np.empty(len(lines), np.float64)
    rows = scan(data, len(header), len(data), 3, 0, 1, 2, *out)
    assert (rows == len(lines)) == all(promised(s, p) for s, _, p in lines)


@settings(max_examples=300)
@given(lines=_lines, at=st.integers(0, 10**6), byte=st.integers(0, 255),
       action=st.sampled_from(["replace", "insert", "delete"]))
def test_scan_of_a_damaged_line_agrees_or_gives_way(
        lines: list[tuple[str, int, str]], at: int, byte: int, action: str) -> None:
    # One byte of the data lines replaced, inserted or deleted: the scan reads the file as the
    # general path does, or leaves it to it (and never reads outside the bytes it is given).
    body = bytearray("".join(f"{s}, {i}, {p}\n" for s, i, p in lines).encode())
    at %= len(body)
    if action == "replace":
        body[at] = byte
    elif action == "insert":
        body.insert(at, byte)
    else:
        del body[at]
    data = b"timestamp, index, power.draw [W]\n" + bytes(body)
    if not data.endswith(b"\n"):
        data += b"\n"  # a cut last line is the general path's case, tested above
    _same(*_both_paths(data, "UTC"))


def test_scan_with_more_queried_fields_reads_only_its_three() -> None:
    # --query-gpu=timestamp,name,index,power.draw,utilization.gpu: positions from the header
    data = (b"timestamp, name, index, power.draw [W], utilization.gpu [%]\n"
            b"2026/11/20 11:00:00.250, NVIDIA H100 80GB HBM3, 0, 412.34 W, 97 %\n"
            b"2026/11/20 11:00:00.250, NVIDIA H100 80GB HBM3, 1, 398.10 W, 95 %\n")
    scanned, general = _both_paths(
        data, "UTC", b"2026/11/20 11:00:00.500, NVIDIA H100 80GB HBM3, 0, [N/A], 97 %\n")
    _same(scanned, general)
    assert isinstance(scanned, pl.DataFrame)
    assert scanned["power_w"].to_list() == [412.34, 398.10]
    assert scanned["device_id"].to_list() == ["0", "1"]


def test_scan_refuses_ranges_that_are_not_whole_lines() -> None:
    out = np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.float64)
    line = b"2026/11/20 11:00:00.250, 0, 412.34 W\n"
    # 2026-11-20 is 20,777 days after 1970-01-01: 1970-2025 are 56 x 365 + 14 leap days =
    # 20,454; January to October 2026 304; November 1-19 19. 11:00:00.250 is 39,600.25 s.
    assert scan(line, 0, len(line), 3, 0, 1, 2, *out) == 1
    assert out[0][0] == (20_777 * 86_400 + 39_600) * 1_000_000 + 250_000
    assert (out[1][0], out[2][0]) == (0, 412.34)
    with pytest.raises(ValueError, match="whole lines"):
        scan(line, 0, len(line) - 1, 3, 0, 1, 2, *out)  # stops before the newline
    with pytest.raises(ValueError, match="whole lines"):
        scan(line, 0, len(line) + 1, 3, 0, 1, 2, *out)  # past the end
    with pytest.raises(ValueError, match="distinct"):
        scan(line, 0, len(line), 3, 0, 0, 2, *out)
    # no room for a second row: the scan gives way (row 1 is the 2nd line) instead of writing on
    assert scan(line * 5, 0, len(line) * 5, 3, 0, 1, 2, *out) == -5


def test_scan_reuses_a_repeated_stamp_only_when_the_text_is_the_same() -> None:
    # ".25" and ".250" are one instant written two ways; ".2" is another (a prefix of ".25")
    lines = [b"2026/11/20 11:00:00.25, 0, 1 W", b"2026/11/20 11:00:00.25, 1, 2 W",
             b"2026/11/20 11:00:00.250, 2, 3 W", b"2026/11/20 11:00:00.2, 3, 4 W",
             b"2026/11/20 11:00:00.25, 4, 5 W"]
    data = b"\n".join(lines) + b"\n"
    out = np.empty(5, np.int64), np.empty(5, np.int64), np.empty(5, np.float64)
    assert scan(data, 0, len(data), 3, 0, 1, 2, *out) == 5
    start = out[0][0] - 250_000  # 11:00:00.000
    assert [int(t - start) for t in out[0]] == [250_000, 250_000, 250_000, 200_000, 250_000]
    assert out[2].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_header_alone_has_no_readings() -> None:
    data = b"timestamp, index, power.draw [W]\n"
    assert nvidia_smi.parse(data, path="h.csv", tz="UTC").is_empty()
    # 1 reading: the scan's smallest file
    one = nvidia_smi.parse(data + b"2026/11/20 11:00:00.000, 0, 1 W\n", path="h.csv", tz="UTC")
    assert one["power_w"].to_list() == [1.0]
