"""What every power reader shares: the canonical column set and the local-time rule.

Naive timestamps (nvidia-smi, dmon, CodeCarbon, PTDaemon) are local wall time of the logging
machine. They are converted with a timezone the caller states; a missing timezone is an
error naming the file, never a silent guess.
"""

from __future__ import annotations

import polars as pl

from schemas.power import POWER_COLUMNS
from sources.errors import ParseError
from sources.timezone import require_zone

NOT_AVAILABLE = ("[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "[GPU is lost]", "-", "")


def canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """Add absent canonical columns as nulls, cast, and order them as the table declares."""
    return frame.select(
        (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in POWER_COLUMNS.items()
    )


def require_tz(tz: str | None, *, source: str, path: str, where: str) -> str:
    """The caller's timezone for naive timestamps, checked to be a real IANA name."""
    if tz is None:
        raise ParseError(source, path, where, "timestamps have no timezone; give one "
                         "explicitly (tz='Europe/Paris', --tz UTC, ...)")
    require_zone(tz, source=source, path=path, where=where)
    return tz


def local_to_utc(naive: pl.Expr, tz: str) -> pl.Expr:
    """Naive local datetimes -> UTC. Times that do not exist or are ambiguous (DST changes)
    become null and are reported by the caller, never shifted silently."""
    if tz in ("UTC", "Etc/UTC"):  # no DST: skip the per-value zone lookups
        return naive.dt.cast_time_unit("us").dt.replace_time_zone("UTC")
    return (naive.dt.replace_time_zone(tz, ambiguous="null", non_existent="null")
            .dt.convert_time_zone("UTC").dt.cast_time_unit("us"))


def decode(data: bytes, *, source: str, path: str) -> str:
    """The file as text; empty files and non-UTF-8 bytes are parse errors."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ParseError(source, path, f"byte {err.start}", "not UTF-8 text") from None
    if not text.strip():
        raise ParseError(source, path, "file", "empty file")
    if "\x00" in text:
        raise ParseError(source, path, f"character {text.index(chr(0))}", "NUL byte in text")
    return text


def read_text_csv(data: bytes, *, source: str, path: str,
                  truncate_ragged_lines: bool = False) -> pl.DataFrame:
    """The file (decoded as `decode` does) as a CSV of strings; a CSV polars cannot read is a
    parse error naming the file."""
    text = decode(data, source=source, path=path)
    try:
        return pl.read_csv(text.encode(), infer_schema=False,
                           truncate_ragged_lines=truncate_ragged_lines)
    except pl.exceptions.PolarsError as err:
        raise ParseError(source, path, "csv", str(err).split("\n", 1)[0]) from None


def first_line(data: bytes) -> str:
    """The first line of the first 8 KiB, for format sniffing: BOM dropped, bad bytes
    replaced (detection never fails; parse reports them)."""
    return data[:8192].decode("utf-8", errors="replace").lstrip("\ufeff").split("\n", 1)[0]


def text_lines(text: str) -> pl.DataFrame:
    """One row per line (`line` numbered from 1, `text`), for line-oriented formats."""
    return pl.DataFrame({"text": pl.Series(text.splitlines(), dtype=pl.String)}
                        ).with_row_index("line", offset=1)


EPOCH_LIMIT_S = 4_102_444_800.0  # 2100-01-01: later epoch values are unit mistakes or noise


def from_epoch_s(seconds: pl.Expr) -> pl.Expr:
    """Epoch seconds (float) -> UTC datetime (us); null outside 1970..2100, for the caller to
    report."""
    ok = (seconds >= 0) & (seconds < EPOCH_LIMIT_S)
    return _utc_micros(pl.when(ok).then((seconds * 1e6).round()).cast(pl.Int64))


def from_epoch_ns(nanos: pl.Expr) -> pl.Expr:
    """Epoch ns (integer) -> UTC datetime (us, nearest); null outside 1970..2100 as above.

    Done in integers: through float seconds (ns / 1e9) a 2026 time keeps only ~0.24 us of
    resolution (2^-22 s), so e.g. ...123_456_499 ns would come out as ...123_457 us, not ...456.
    """
    ok = (nanos >= 0) & (nanos < int(EPOCH_LIMIT_S) * 1_000_000_000)
    return _utc_micros(pl.when(ok).then((nanos + 500) // 1000))


def _utc_micros(micros: pl.Expr) -> pl.Expr:
    return pl.from_epoch(micros, "us").dt.replace_time_zone("UTC")
