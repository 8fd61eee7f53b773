"""nvidia-smi CSV reader on fixtures we wrote (no real public nvidia-smi log is confirmed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from sources.errors import ParseError
from sources.power import nvidia_smi

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
