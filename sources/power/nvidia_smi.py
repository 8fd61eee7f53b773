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


def _clean_rows(data: bytes, cols: dict[str, tuple[int, str | None]], power_name: str,
                zone: str) -> pl.DataFrame | None:
    """The common case (every line after the header one complete reading): the GPU index
    read as an integer by the CSV reader, the other two converted as they are read, then a
    null count. None when any line needs the flagged path in `parse` (blank or repeated
    header lines, [N/A], bad values, DST), which then names it. A power taken here reads
    the same as there: strip_suffix(" W") then the left padding leaves only what
    strip_chars(" W") would, for any string that then parses."""
    index = f"column_{cols['index'][0]}"
    # streamed: the text columns never exist whole (peak memory -0.5 GB on 10 million rows,
    # and a little faster than reading then converting)
    query = pl.scan_csv(data, has_header=False, skip_lines=1, infer_schema=False,
                        truncate_ragged_lines=True, quote_char=None,
                        schema_overrides={index: pl.Int64}).select(
        local_to_utc(pl.col(f"column_{cols['timestamp'][0]}").str.strptime(
            pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f", strict=False), zone).alias("sample_utc"),
        pl.col(index).alias("gpu_index"),
        pl.col(f"column_{cols[power_name][0]}").str.strip_suffix(" W").str.strip_chars_start(" ")
        .cast(pl.Float64, strict=False).alias("power_w"),
    )
    try:
        out = query.collect(engine="streaming")
    except pl.exceptions.PolarsError:
        return None
    if out.is_empty() or any(out.null_count().row(0)):
        return None
    return out


def _clean_frame(out: pl.DataFrame) -> pl.DataFrame:
    """The canonical frame of `_clean_rows`' typed columns."""
    return canonical(out.with_columns(
        pl.col("gpu_index").cast(pl.String).alias("device_id"),  # " 3" -> "3", as below
        pl.lit(TOOL).alias("series_id"), pl.lit("gpu_board").alias("measurement_boundary")))


def parse(data: bytes, *, path: str, tz: str | None = None) -> pl.DataFrame:
    # Eager on purpose (faster than the lazy engine here). Only the head is decoded: a
    # 10-million-row log goes to the CSV reader as is (it rejects invalid UTF-8 itself).
    head = decode(data[:65536], source=TOOL, path=path) if data[:65536].strip() else ""
    if not head.strip():
        raise ParseError(TOOL, path, "file", "empty file")
    skipped = len(head) - len(head.lstrip())
    offset = len(head[:skipped].encode("utf-8")) + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
    first = head.lstrip().split("\n", 1)[0]
    if not _HEADER.match(first):
        raise ParseError(TOOL, path, "line 1", "no header line naming the queried fields "
                         "(logged with --format=csv,noheader?); add the header of the query")
    zone = require_tz(tz, source=TOOL, path=path, where="timestamp column")
    cols = _columns(tuple(first.rstrip("\r").split(",")), path)
    if "timestamp" not in cols or ("index" not in cols and "uuid" not in cols):
        raise ParseError(TOOL, path, "header", "query must include timestamp and index or uuid")
    power_name = next((name for name in _POWER_FIELDS if name in cols), None)
    if power_name is None:
        raise ParseError(TOOL, path, "header", "no power.draw column")
    unit = cols[power_name][1]
    if unit not in (None, "W"):
        raise ParseError(TOOL, path, f"header {power_name}",
                         f"power unit is {unit!r}; only W is accepted")
    wanted = sorted(cols[name][0] for name in ("timestamp", "index", "uuid", power_name)
                    if name in cols)
    line_shift = head[:skipped].count("\n") + 1
    truncated_tail = not data.endswith(b"\n")
    if line_shift == 1 and not truncated_tail and "index" in cols and "uuid" not in cols:
        clean = _clean_rows(data, cols, power_name, zone)
        if clean is not None:
            return _clean_frame(clean)
    try:  # nvidia-smi never quotes fields; only the columns used are read
        raw = pl.read_csv(data[offset:] if offset else data, has_header=False,
                          infer_schema=False, truncate_ragged_lines=True, quote_char=None,
                          columns=wanted)
    except pl.exceptions.PolarsError as err:
        raise ParseError(TOOL, path, "csv", str(err).split("\n", 1)[0]) from None

    def col(name: str) -> pl.Expr:
        return pl.col(f"column_{cols[name][0]}").str.strip_chars()

    last_line = line_shift + raw.height - 1
    # Rows are flagged, not filtered, until the end: each filter would copy every column of
    # a 10-million-row frame.
    stamp = pl.col(f"column_{cols['timestamp'][0]}")  # first column: never padded
    frame = raw.with_row_index("line", offset=line_shift).with_columns(
        cut=(pl.col("line") == last_line) & truncated_tail,
        naive=stamp.str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f", strict=False),
        # " 412.34 W" -> "412.34" in one pass (the unit was checked in the header)
        power_text=pl.col(f"column_{cols[power_name][0]}").str.strip_chars(" W"),
        index_text=pl.col(f"column_{cols['index'][0]}").str.strip_chars(" ")
        if "index" in cols else pl.lit(None, pl.String),
    )
    del raw
    frame = frame.with_columns(
        index=pl.col("index_text").cast(pl.Int64, strict=False),
        power=pl.col("power_text").cast(pl.Float64, strict=False),
        keep=(pl.col("line") > line_shift) & stamp.is_not_null()  # header, blank lines
        & (stamp != "timestamp")  # repeated header
        & (pl.col("naive").is_not_null() | ~pl.col("cut")),  # a cut timestamp: dropped
    ).with_columns(
        na=pl.col("power").is_null() & (pl.col("power_text").is_in(list(NOT_AVAILABLE))
                                        | pl.col("power_text").is_null()),
        device=col("uuid") if "uuid" in cols
        else pl.when(pl.col("index").is_not_null()).then(pl.col("index_text")),
    )
    problem = (pl.when(pl.col("naive").is_null()).then(pl.lit("timestamp: bad timestamp"))
               .when(pl.col("power").is_null() & ~pl.col("na") & ~pl.col("cut"))
               .then(pl.lit(f"{power_name}: not a power in W"))
               .when(pl.col("device").is_null() & ~pl.col("cut"))
               .then(pl.lit("index: no GPU index or uuid")))
    bad = frame.filter(pl.col("keep") & problem.is_not_null()).head(1).with_columns(
        problem=problem, stamp_text=stamp)
    if bad.height:
        row = bad.row(0, named=True)
        field, what = row["problem"].split(": ", 1)
        raise ParseError(TOOL, path, f"line {row['line']} {field}",
                         f"{what} (timestamp {row['stamp_text']!r}, "
                         f"power {row['power_text']!r})")
    out = frame.select(
        local_to_utc(pl.col("naive"), zone).alias("sample_utc"),
        pl.col("device").alias("device_id"),
        pl.col("index").alias("gpu_index"),
        pl.lit(TOOL).alias("series_id"),
        pl.lit("gpu_board").alias("measurement_boundary"),
        pl.when(pl.col("cut")).then(None).otherwise(pl.col("power")).alias("power_w"),
        # built only where power is missing: formatting 10 million nulls away is not free
        pl.when(pl.col("cut")).then(pl.lit("truncated last line: power dropped"))
        .otherwise(pl.concat_str([pl.lit(f"{power_name} was "),
                                  pl.when(pl.col("power").is_null()).then("power_text")]))
        .alias("note"),
        pl.col("line"),
        pl.col("keep") & pl.col("device").is_not_null(),
    )
    del frame
    out = out.filter("keep")
    missing_time = out.filter(pl.col("sample_utc").is_null())
    if missing_time.height:
        raise ParseError(TOOL, path, f"line {missing_time['line'][0]}",
                         f"local time does not exist or is ambiguous in {zone} (DST change)")
    return canonical(out)
