"""Naive local wall times -> UTC, with a zone the caller names; never a guess.

Tools such as nvidia-smi, vLLM (`date`) and old MLPerf loadgen write local wall time without
an offset. The caller states the zone (an IANA name); a name that is not one, a wall time
that does not exist in that zone (skipped by a DST change: 02:30 on 2026-03-29 in Paris) or
one that happens twice (02:30 on 2026-10-25 in Paris) is an error naming the file and field,
as the frame-wise power readers do (`sources.power.frame.local_to_utc`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sources.errors import ParseError


def require_zone(tz: str, *, source: str, path: str, where: str) -> ZoneInfo:
    """The IANA zone `tz`; an unknown or malformed name is a ParseError at `where`."""
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ParseError(source, path, where, f"unknown timezone {tz!r}") from None


def local_to_utc(naive: datetime, zone: ZoneInfo, *, source: str, path: str,
                 where: str) -> datetime:
    """`naive` read as wall time in `zone`, as an aware UTC datetime.

    A wall time skipped by a DST change does not survive the round trip through UTC (zoneinfo
    shifts it by the gap); one that happens twice has two offsets (fold=0 and fold=1 differ).
    Both are refused rather than resolved one way silently.
    """
    first = naive.replace(tzinfo=zone, fold=0)
    utc = first.astimezone(UTC)
    if utc.astimezone(zone).replace(tzinfo=None) != naive:
        raise ParseError(source, path, where, f"local time {naive.isoformat(' ')} does not "
                         f"exist in {zone.key} (skipped by a DST change)")
    if first.utcoffset() != naive.replace(tzinfo=zone, fold=1).utcoffset():
        raise ParseError(source, path, where, f"local time {naive.isoformat(' ')} is "
                         f"ambiguous in {zone.key} (happens twice at a DST change)")
    return utc
