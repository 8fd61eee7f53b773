"""nvidia-smi `--query-gpu=timestamp,index,power.draw,... --format=csv[,nounits] -l S|-lms MS`.

The header names the queried fields joined by ", ", with the unit in brackets (`power.draw
[W]`); the brackets stay in the header even with `nounits`, where values are bare numbers.
Values can be `[N/A]` / `[Not Supported]` (kept as null power with a note). `timestamp` is
local wall time without a timezone, so `tz` is required. Appended runs repeat the header
(dropped); a logger killed mid-write leaves a last line without its newline: that row is kept
with null power and a note, or dropped when even its timestamp is cut.

`parse` reads a whole file; `parts` reads an open file part by part (each part: the header
line and the next `part_bytes` of whole lines, parsed by `parse`), so a 10-million-row log is
never held whole; None when the file does not start with its header line (then `parse` of the
whole file says what is wrong).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from io import BufferedIOBase

import numpy as np
import polars as pl

from schemas.fields import FIELDS
from sources.errors import ParseError
from sources.power.frame import (
    NOT_AVAILABLE,
    canonical,
    decode,
    first_line,
    local_to_utc,
    require_tz,
)

try:  # the compiled scan is optional: built where a C compiler is (pyproject.toml)
    from sources.power._nvidia_smi_scan import scan as _scan
except ImportError:  # without it the general (polars) path reads every file
    _scan = None  # type: ignore[assignment]
scan = _scan

TOOL = "nvidia-smi"

_HEADER = re.compile(r"^\s*timestamp\s*,.*\bpower\.draw", re.IGNORECASE)
_NOHEADER = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?, ")
_POWER_FIELDS = ("power.draw", "power.draw.average", "power.draw.instant")
_HEADER_UNIT = re.compile(r"^(?P<name>[\w.]+)\s*(\[(?P<unit>[^\]]*)\])?$")


def detect(data: bytes, path: str) -> bool:
    first = first_line(data)
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


#: The shortest clean reading line ("2026/11/20 00:00:00,0,1\n"): rows per byte, for sizing.
_SHORTEST_LINE = 24


def _fast(data: bytes | bytearray, start: int, cols: dict[str, tuple[int, str | None]],
          power_name: str, zone: str) -> pl.DataFrame | None:
    """The common case, read by the compiled scan: every line after the header one complete
    reading (sources/power/_nvidia_smi_scan.c). The lines are split at newlines into one range
    per core, each scanned in a thread (the scan releases the GIL) into its own arrays, which
    become the chunks of the frame (no copy). None when any line needs the general path in
    `parse` (blank or repeated header lines, [N/A], values the scan leaves alone, DST), which
    then reads the file and names what is wrong."""
    stop, parts = len(data), os.cpu_count() or 1
    if start >= stop or scan is None:
        return None  # a header alone, or no compiled scan
    cuts = sorted({start, stop, *(data.find(b"\n", start + (stop - start) * k // parts) + 1
                                  for k in range(1, parts))} - {0})
    layout = (len(cols), cols["timestamp"][0], cols["index"][0], cols[power_name][0])

    def scan_part(a: int, b: int) -> pl.DataFrame | None:
        # room for the most lines the range can hold: pages never written cost nothing
        size = (b - a) // _SHORTEST_LINE + 1
        micros, index = np.empty(size, np.int64), np.empty(size, np.int64)
        watts = np.empty(size, np.float64)
        rows = scan(data, a, b, *layout, micros, index, watts)
        if rows < 0:
            return None
        return pl.DataFrame({"sample_utc": micros[:rows], "gpu_index": index[:rows],
                             "power_w": watts[:rows]})

    with ThreadPoolExecutor(len(cuts) - 1) as pool:
        scanned = list(pool.map(scan_part, cuts[:-1], cuts[1:]))
    chunks = [chunk for chunk in scanned if chunk is not None]
    if len(chunks) < len(scanned):
        return None
    frame = pl.concat(chunks, rechunk=False)
    top, limit = frame["gpu_index"].max(), FIELDS["gpu_index"].le
    if not isinstance(top, int) or (limit is not None and top > limit):
        return None  # no rows, or an index out of bounds: the general path reports it
    # each GPU's label made once, then gathered: no number formatting per row
    labels = pl.Series([str(i) for i in range(top + 1)])
    frame = frame.with_columns(
        local_to_utc(pl.col("sample_utc").cast(pl.Datetime("us")), zone),
        device_id=labels.gather(frame["gpu_index"]), series_id=pl.lit(TOOL),
        measurement_boundary=pl.lit("gpu_board"))
    if frame["sample_utc"].null_count():  # a local time that DST skips or repeats
        return None
    return canonical(frame)


def parse(data: bytes | bytearray, *, path: str, tz: str | None = None) -> pl.DataFrame:
    # Only the head is decoded: the lines go to the scan or the CSV reader as bytes (the
    # scan takes ASCII only; the CSV reader rejects invalid UTF-8 itself). Eager on purpose
    # (faster than the lazy engine here).
    head = decode(bytes(data[:65536]), source=TOOL, path=path) if data[:65536].strip() else ""
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
        fast = _fast(data, offset + len(first.encode("utf-8")) + 1, cols, power_name, zone)
        if fast is not None:
            return fast
    try:  # nvidia-smi never quotes fields; only the columns used are read
        raw = pl.read_csv(bytes(memoryview(data)[offset:]), has_header=False,
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


def parts(file: BufferedIOBase, *, path: str, tz: str | None, part_bytes: int
          ) -> Iterator[pl.DataFrame] | None:
    """The file's samples, part by part (see the module's docstring). Line numbers in a
    part's errors count from the part: the caller reads the whole file to name the line."""
    first = file.readline()
    if not _HEADER.match(first.decode("utf-8", errors="replace")) or not first.endswith(b"\n"):
        return None  # BOM, blank lines, no header, a header alone: the whole-file path

    def read() -> Iterator[pl.DataFrame]:
        while True:  # the header and the part read into one buffer: no copy of the part
            block = bytearray(len(first) + part_bytes)
            block[:len(first)] = first
            got = file.readinto(memoryview(block)[len(first):])
            if not got:
                return
            del block[len(first) + got:]
            if not block.endswith(b"\n"):
                block += file.readline()  # up to the end of the line (or of the file)
            yield parse(block, path=path, tz=tz)

    return read()


def gpu_names(data: bytes) -> tuple[str, ...]:
    """The GPU names of the log's `name` column (`--query-gpu=timestamp,index,name,...`), from
    its first 64 kB (a name does not change within a log; the first samples list every GPU
    logged), in order of first appearance; () when the query has no `name`. Reads nothing
    else: the samples are `parse`'s."""
    top = data[:65536]
    lines = top.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip().splitlines()
    if len(lines) < 2 or not _HEADER.match(lines[0]):
        return ()
    header = [field.strip() for field in lines[0].split(",")]
    names = [_HEADER_UNIT.match(field) for field in header]
    position = next((i for i, m in enumerate(names) if m and m["name"].lower() == "name"), None)
    if position is None:
        return ()
    seen: dict[str, None] = {}
    # a head of 64 kB (or more) may end inside a line: that line, cut ("NVIDIA H100 80GB HBM"
    # for "NVIDIA H100 80GB HBM3"), is left out unless the head ends at a line end
    cut = len(data) >= 65536 and not top.endswith((b"\n", b"\r"))
    for line in lines[1:-1] if cut else lines[1:]:
        cells = line.split(",")
        if len(cells) == len(header) and cells[position].strip() not in NOT_AVAILABLE:
            seen.setdefault(cells[position].strip(), None)
    return tuple(seen)

