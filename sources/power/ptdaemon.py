"""MLPerf Power: PTDaemon `spl.txt` (wall power from a SPEC PTDaemon analyzer). The run's
`power_begin`/`power_end` window in `mlperf_log_detail.txt` is read by the MLPerf benchmark
reader (`sources.bench.aggregates.mlperf`, as the run's UTC start and end).

`spl.txt` lines: `Time,MM-DD-YYYY HH:MM:SS.fff,Watts,W,Volts,V,Amps,A,PF,pf,Mark,<session>_<ranging
|testing>` at ~1 Hz, local time of the director machine (`tz` required; current submissions
use UTC). Boundary `wall`: the analyzer measures the whole system under test at the socket.
Readings <= 0 W are kept as null power (the submission checker skips them too). The series is
the Mark, so ranging and testing runs are kept apart.
"""

from __future__ import annotations

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

