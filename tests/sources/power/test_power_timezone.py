"""Naive local times -> UTC (sources.timezone): the scalar helper the bench readers use and
the zone check the power readers' require_tz shares."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sources.errors import ParseError
from sources.power.frame import require_tz
from sources.timezone import local_to_utc, require_zone


def wall(text: str) -> datetime:
    """A naive local wall time, as the tools write them."""
    return datetime.fromisoformat(text)


NEW_YORK = require_zone("America/New_York", source="t", path="p", where="w")


def test_ordinary_local_time() -> None:
    # 2026-07-01 12:00 EDT (UTC-4) = 16:00 UTC
    assert local_to_utc(wall("2026-07-01 12:00"), NEW_YORK, source="t", path="p",
                        where="w") == datetime(2026, 7, 1, 16, tzinfo=UTC)


def test_skipped_local_time_is_refused() -> None:
    # 2026-03-08: New York clocks jump 02:00 -> 03:00, so 02:30 never happens
    with pytest.raises(ParseError, match=r"t: p: stamp: .*does not exist in America/New_York"):
        local_to_utc(wall("2026-03-08 02:30"), NEW_YORK, source="t", path="p",
                     where="stamp")


def test_repeated_local_time_is_refused() -> None:
    # 2026-11-01: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST)
    with pytest.raises(ParseError, match=r"t: p: stamp: .*ambiguous in America/New_York"):
        local_to_utc(wall("2026-11-01 01:30"), NEW_YORK, source="t", path="p",
                     where="stamp")


def test_hour_after_the_repeat_is_placed() -> None:
    # 2026-11-01 02:30 EST (UTC-5, after the repeat) = 07:30 UTC
    assert local_to_utc(wall("2026-11-01 02:30"), NEW_YORK, source="t", path="p",
                        where="w") == datetime(2026, 11, 1, 7, 30, tzinfo=UTC)


@pytest.mark.parametrize("name", ["Mars/Olympus", "../etc/passwd", ""])
def test_unknown_zone_names_the_field(name: str) -> None:
    with pytest.raises(ParseError, match="unknown timezone") as err:
        require_zone(name, source="t", path="p", where="--tz")
    assert err.value.where == "--tz"
    with pytest.raises(ParseError, match="unknown timezone") as err:
        require_tz(name, source="nvidia-smi", path="n.csv", where="timestamp column")
    assert err.value.where == "timestamp column"
