"""MLPerf Power: PTDaemon `spl.txt` (wall power from a SPEC PTDaemon analyzer) and the
`power_begin`/`power_end` window that loadgen writes to `mlperf_log_detail.txt`.

`spl.txt` lines: `Time,MM-DD-YYYY HH:MM:SS.fff,Watts,W,Volts,V,Amps,A,PF,pf,Mark,<session>_<ranging
|testing>` at ~1 Hz, local time of the director machine (`tz` required; current submissions
use UTC). Boundary `wall`: the analyzer measures the whole system under test at the socket.
Readings <= 0 W are kept as null power (the submission checker skips them too). The series is
the Mark, so ranging and testing runs are kept apart.
"""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl

from sources.errors import ParseError
from sources.power.frame import canonical, decode, local_to_utc, require_tz, text_lines

TOOL = "ptdaemon"
_LINE = (r"^Time,(\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}(?:\.\d+)?),Watts,([^,]*),Volts,([^,]*),"
         r"Amps,([^,]*),PF,([^,]*),Mark,(.*?)\s*$")


def detect(data: bytes, path: str) -> bool:
    first = data[:4096].lstrip().split(b"\n", 1)[0]
    return first.startswith(b"Time,") and b",Watts," in first


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    text = decode(data, source=TOOL, path=path)
    zone = require_tz(tz, source=TOOL, path=path, where="Time field")
    lines = text_lines(text).filter(
        pl.col("text").str.strip_chars() != "")
    parts = lines.with_columns(pl.col("text").str.extract_groups(_LINE).alias("m")).unnest("m")
    bad = parts.filter(pl.col("1").is_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}", "not a PTDaemon sample line")
    watts = pl.col("2").cast(pl.Float64, strict=False)
    bad = parts.filter(watts.is_null())
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]} Watts", f"not a number: "
                         f"{bad['2'][0]!r}")
    out = parts.select(
        local_to_utc(pl.col("1").str.strptime(pl.Datetime("us"), "%m-%d-%Y %H:%M:%S%.f"),
                     zone).alias("sample_utc"),
        device_id=pl.lit("ptdaemon"),
        series_id=pl.col("6"),
        measurement_boundary=pl.lit("wall"),
        power_w=pl.when(watts > 0).then(watts),
        note=pl.when(watts <= 0).then(pl.lit("PTDaemon reading <= 0 W")),
        line=pl.col("line"),
    )
    missing = out.filter(pl.col("sample_utc").is_null())
    if missing.height:
        raise ParseError(TOOL, path, f"line {missing['line'][0]}",
                         f"local time does not exist or is ambiguous in {zone} (DST change)")
    return canonical(out)


def power_window(detail: bytes, *, path: str, tz: str = "UTC") -> tuple[datetime, datetime]:
    """(power_begin, power_end) from `mlperf_log_detail.txt`, as UTC (current loadgen writes
    UTC; older runs need the director's `timezone` from power/client.json)."""
    text = decode(detail, source="mlperf", path=path)
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if '"power_begin"' not in line and '"power_end"' not in line:
            continue
        try:
            record = json.loads(line.split(":::MLLOG", 1)[1])
            found[record["key"]] = record["value"]
        except (IndexError, KeyError, json.JSONDecodeError):
            raise ParseError("mlperf", path, f"line {number}", "unreadable MLLOG record") from None
    if "power_begin" not in found or "power_end" not in found:
        raise ParseError("mlperf", path, "power_begin/power_end", "not in this log")
    zone = require_tz(tz, source="mlperf", path=path, where="power_begin")
    stamps = pl.DataFrame({"s": [found["power_begin"], found["power_end"]]}).select(
        local_to_utc(pl.col("s").str.strptime(pl.Datetime("us"), "%m-%d-%Y %H:%M:%S%.f",
                                              strict=False), zone))["s"]
    if stamps.null_count():
        raise ParseError("mlperf", path, "power_begin/power_end",
                         f"unreadable times {found['power_begin']!r}, {found['power_end']!r}")
    begin, end = stamps.to_list()
    if not end > begin:
        raise ParseError("mlperf", path, "power_end", "power_end is not after power_begin")
    return begin, end
