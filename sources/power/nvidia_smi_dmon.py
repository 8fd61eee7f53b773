"""`nvidia-smi dmon -o DT [-s p...]`: whitespace-aligned columns under `#` header lines.

The first header row names the columns (`#Date Time gpu pwr gtemp ...`), the second gives
units (`#YYYYMMDD HH:MM:SS Idx W C ...`); both repeat periodically and are skipped. `pwr` is
integer W, `-` means not available. Date and Time are local wall time: `tz` required. Without
`-o DT` the output has no time at all and cannot be integrated (refused).
"""

from __future__ import annotations

import polars as pl

from sources.errors import ParseError
from sources.power.frame import (
    NOT_AVAILABLE,
    canonical,
    decode,
    local_to_utc,
    require_tz,
    text_lines,
)

TOOL = "nvidia-smi-dmon"


def detect(data: bytes, path: str) -> bool:
    first = data[:4096].lstrip().split(b"\n", 1)[0]
    tokens = first.lstrip(b"#").split()
    return first.startswith(b"#") and b"gpu" in tokens and b"pwr" in tokens


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    text = decode(data, source=TOOL, path=path)
    lines = text_lines(text)
    headers = lines.filter(pl.col("text").str.starts_with("#"))
    if headers.height < 1:
        raise ParseError(TOOL, path, "line 1", "no '#' header line")
    names = [n.lower() for n in headers["text"][0].lstrip("#").split()]
    units = headers["text"][1].lstrip("#").split() if headers.height > 1 else []
    if "date" not in names or "time" not in names:
        raise ParseError(TOOL, path, "header", "no Date and Time columns: log with "
                         "`nvidia-smi dmon -o DT` so samples can be placed in time")
    if "pwr" not in names or "gpu" not in names:
        raise ParseError(TOOL, path, "header", "no gpu or pwr column (use -s p)")
    pwr = names.index("pwr")
    if len(units) == len(names) and units[pwr] != "W":
        raise ParseError(TOOL, path, "header", f"pwr unit is {units[pwr]!r}; only W accepted")
    zone = require_tz(tz, source=TOOL, path=path, where="Date/Time columns")
    rows = (lines.filter(~pl.col("text").str.starts_with("#")
                         & (pl.col("text").str.strip_chars() != ""))
            .with_columns(tokens=pl.col("text").str.extract_all(r"\S+")))
    cut = not text.endswith("\n")
    short = rows.filter(pl.col("tokens").list.len() != len(names))
    if short.height:
        last = rows["line"].max()
        if not (cut and short.height == 1 and short["line"][0] == last):
            raise ParseError(TOOL, path, f"line {short['line'][0]}",
                             f"{short['tokens'][0].len()} fields, header has {len(names)}")
        rows = rows.filter(pl.col("line") != last)

    def field(name: str) -> pl.Expr:
        return pl.col("tokens").list.get(names.index(name))

    frame = rows.with_columns(
        naive=pl.concat_str([field("date"), field("time")], separator=" ")
        .str.strptime(pl.Datetime("us"), "%Y%m%d %H:%M:%S", strict=False),
        gpu=field("gpu").cast(pl.Int64, strict=False), pwr_text=field("pwr"),
        watts=field("pwr").cast(pl.Float64, strict=False))
    bad = frame.filter(pl.col("naive").is_null() | pl.col("gpu").is_null()
                       | (pl.col("watts").is_null() & ~pl.col("pwr_text").is_in(
                           list(NOT_AVAILABLE))))
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}",
                         f"cannot read date, time, gpu or pwr in {bad['text'][0]!r}")
    out = frame.select(
        local_to_utc(pl.col("naive"), zone).alias("sample_utc"),
        device_id=pl.col("gpu").cast(pl.String), gpu_index="gpu", series_id=pl.lit(TOOL),
        measurement_boundary=pl.lit("gpu_board"), power_w="watts",
        note=pl.when(pl.col("watts").is_null()).then(pl.lit("pwr was -")), line="line")
    missing = out.filter(pl.col("sample_utc").is_null())
    if missing.height:
        raise ParseError(TOOL, path, f"line {missing['line'][0]}",
                         f"local time does not exist or is ambiguous in {zone} (DST change)")
    return canonical(out)
