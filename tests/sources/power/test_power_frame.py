"""Epoch conversions shared by the power readers (sources/power/frame.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from sources.power.frame import first_line, from_epoch_ns, from_epoch_s


def test_epoch_ns_is_exact_to_the_microsecond() -> None:
    nanos = pl.Series("t", [1_795_935_600_123_456_499, 1_795_935_600_123_456_500, -1,
                            4_102_444_800_000_000_000], dtype=pl.Int64)
    got = nanos.to_frame().select(from_epoch_ns(pl.col("t")))["t"].to_list()
    # 1795935600 s = 2026-11-29T07:00:00Z; 499 ns rounds down, 500 ns up; before 1970 and
    # from 2100-01-01 (4,102,444,800 s) on: null
    assert got == [datetime(2026, 11, 29, 7, 0, 0, 123456, tzinfo=UTC),
                   datetime(2026, 11, 29, 7, 0, 0, 123457, tzinfo=UTC), None, None]
    # through float seconds the first would be 1 us late: a 2026 epoch in f64 keeps 2^-22 s
    # (~0.24 us), so 1795935600.123456499 reads as ...1234565 and rounds up
    via_s = nanos.to_frame().select(from_epoch_s(pl.col("t") / 1e9))["t"][0]
    assert via_s == datetime(2026, 11, 29, 7, 0, 0, 123457, tzinfo=UTC)


def test_first_line_for_sniffing() -> None:
    # BOM dropped, a bad byte replaced rather than raised, only the first line returned
    assert first_line(b"\xef\xbb\xbftimestamp,\xff power.draw [W]\r\n2026/01/01") == (
        "timestamp,\ufffd power.draw [W]\r")
    # a header longer than the old 4 KiB window of three readers is read to 8 KiB
    assert len(first_line(b"a," * 3000 + b"\n")) == 6000
