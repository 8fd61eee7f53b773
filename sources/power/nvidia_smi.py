"""nvidia-smi `--query-gpu=timestamp,index,power.draw,... --format=csv[,nounits] -l S|-lms MS`.

The header names the queried fields joined by ", ", with the unit in brackets (`power.draw
[W]`); the brackets stay in the header even with `nounits`, where values are bare numbers.
Values can be `[N/A]` / `[Not Supported]` (kept as null power with a note). `timestamp` is
local wall time without a timezone, so `tz` is required. Appended runs repeat the header
(dropped); a logger killed mid-write leaves a last line without its newline: that row is kept
with null power and a note, or dropped when even its timestamp is cut.
"""

from __future__ import annotations

import re

import polars as pl

from sources.errors import ParseError
from sources.power.frame import NOT_AVAILABLE, canonical, decode, local_to_utc, require_tz

TOOL = "nvidia-smi"

_TIMESTAMP = r"^\s*\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?\s*$"
_HEADER = re.compile(r"^\s*timestamp\s*,.*\bpower\.draw", re.IGNORECASE)
_NOHEADER = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?, ")
_POWER_FIELDS = ("power.draw", "power.draw.average", "power.draw.instant")
_HEADER_UNIT = re.compile(r"^(?P<name>[\w.]+)\s*(\[(?P<unit>[^\]]*)\])?$")


def detect(data: bytes, path: str) -> bool:
    head = data[:4096].decode("utf-8", errors="replace").lstrip("\ufeff")
    first = head.split("\n", 1)[0]
    return bool(_HEADER.match(first) or _NOHEADER.match(first))


def _columns(header: tuple[str | None, ...], path: str) -> dict[str, tuple[int, str | None]]:
    """Field name -> (position, unit in brackets)."""
    out: dict[str, tuple[int, str | None]] = {}
    for pos, raw in enumerate(header):
        name = (raw or "").strip()
        match = _HEADER_UNIT.match(name)
        if not match:
            raise ParseError(TOOL, path, f"header column {pos + 1}",
                             f"cannot read field name {name!r}")
        out[match["name"].lower()] = (pos, match["unit"])
    return out


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    text = decode(data, source=TOOL, path=path)
    first = text.lstrip().split("\n", 1)[0]
    if not _HEADER.match(first):
        raise ParseError(TOOL, path, "line 1", "no header line naming the queried fields "
                         "(logged with --format=csv,noheader?); add the header of the query")
    zone = require_tz(tz, source=TOOL, path=path, where="timestamp column")
    try:  # nvidia-smi never quotes fields
        raw = pl.read_csv(text.lstrip().encode(), has_header=False, infer_schema=False,
                          truncate_ragged_lines=True, quote_char=None)
    except pl.exceptions.PolarsError as err:
        raise ParseError(TOOL, path, "csv", str(err).split("\n", 1)[0]) from None
    cols = _columns(raw.row(0), path)
    if "timestamp" not in cols or ("index" not in cols and "uuid" not in cols):
        raise ParseError(TOOL, path, "header", "query must include timestamp and index or uuid")
    power_name = next((name for name in _POWER_FIELDS if name in cols), None)
    if power_name is None:
        raise ParseError(TOOL, path, "header", "no power.draw column")
    power_pos, unit = cols[power_name]
    if unit not in (None, "W"):
        raise ParseError(TOOL, path, f"header {power_name}",
                         f"power unit is {unit!r}; only W is accepted")

    def col(name: str) -> pl.Expr:
        return pl.col(f"column_{cols[name][0]}").str.strip_chars()

    truncated_tail = not text.endswith("\n")
    frame = (
        raw.with_row_index("line", offset=1)
        .filter(pl.col("line") > 1)
        .filter(pl.any_horizontal(pl.all().exclude("line").is_not_null()))
        .filter(col("timestamp").str.to_lowercase() != "timestamp")  # repeated header
        .with_columns(
            is_last=pl.col("line") == pl.col("line").max(),
            stamp=col("timestamp"),
            power_text=pl.col(f"column_{power_pos}").str.strip_chars()
            .str.strip_suffix(" W").str.strip_chars(),
        )
        .with_columns(cut=pl.col("is_last") & truncated_tail)
    )
    good_stamp = frame["stamp"].str.contains(_TIMESTAMP).fill_null(False)
    bad = frame.filter(~good_stamp & ~frame["cut"])
    if bad.height:
        line, value = bad.row(0, named=True)["line"], bad.row(0, named=True)["stamp"]
        raise ParseError(TOOL, path, f"line {line}", f"bad timestamp {value!r}")
    frame = frame.filter(good_stamp)
    na = frame["power_text"].is_in(list(NOT_AVAILABLE)) | frame["power_text"].is_null()
    number = frame["power_text"].cast(pl.Float64, strict=False)
    bad = frame.filter(number.is_null() & ~na & ~frame["cut"])
    if bad.height:
        row = bad.row(0, named=True)
        raise ParseError(TOOL, path, f"line {row['line']} {power_name}",
                         f"not a power in W: {row['power_text']!r}")
    index = col("index").cast(pl.Int64, strict=False) if "index" in cols else pl.lit(None)
    device = col("uuid") if "uuid" in cols else index.cast(pl.String)
    out = frame.with_columns(number.alias("power")).select(
        local_to_utc(pl.col("stamp").str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f"),
                     zone).alias("sample_utc"),
        device.alias("device_id"),
        index.alias("gpu_index"),
        pl.lit(TOOL).alias("series_id"),
        pl.lit("gpu_board").alias("measurement_boundary"),
        pl.when(pl.col("cut")).then(None).otherwise(pl.col("power")).alias("power_w"),
        pl.when(pl.col("cut")).then(pl.lit("truncated last line: power dropped"))
        .when(pl.col("power").is_null())
        .then(pl.format("{} was {}", pl.lit(power_name), pl.col("power_text")))
        .alias("note"),
        pl.col("line"),
    )
    bad = out.filter(pl.col("device_id").is_null() & pl.col("note").ne_missing(
        "truncated last line: power dropped"))
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}", "no GPU index or uuid")
    out = out.filter(pl.col("device_id").is_not_null())
    missing_time = out.filter(pl.col("sample_utc").is_null())
    if missing_time.height:
        raise ParseError(TOOL, path, f"line {missing_time['line'][0]}",
                         f"local time does not exist or is ambiguous in {zone} (DST change)")
    return canonical(out)
