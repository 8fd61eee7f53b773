"""Property tests for market parsers: any well-formed Energy-Charts series or OMIE day parses
to one row per published value, with starts strictly increasing and the right resolution."""

from __future__ import annotations

import json
from datetime import date

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sources.errors import ParseError
from sources.http import redact_url
from sources.market import energy_charts, omie

START = 1_761_429_600  # 2025-10-25T22:00:00Z


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.sampled_from([900, 3600]), min_size=1, max_size=60),
       prices=st.data())
def test_energy_charts_rows_follow_the_timestamps(steps: list[int], prices: st.DataObject
                                                  ) -> None:
    seconds = [START]
    for step in steps:
        seconds.append(seconds[-1] + step)
    values = prices.draw(st.lists(
        st.one_of(st.none(), st.floats(-500, 4000, allow_nan=False)),
        min_size=len(seconds), max_size=len(seconds)))
    body = json.dumps({"license_info": "CC BY 4.0", "unix_seconds": seconds, "price": values,
                       "unit": "EUR / MWh", "deprecated": False}).encode()
    frame = energy_charts.parse_prices(body, url="https://x/price", bzn="FR", vintage="2025-10",
                                       fetched_on=date(2025, 10, 26))
    assert frame.height == sum(v is not None for v in values)
    assert frame["interval_start_utc"].is_sorted() and frame["interval_start_utc"].n_unique() \
        == frame.height
    expected = {s: ("15min" if d == 900 else "hour")
                for s, d in zip(seconds, [*steps, steps[-1]], strict=True)}
    got = dict(zip(frame["interval_start_utc"].dt.epoch("s").to_list(),
                   frame["resolution"].to_list(), strict=True))
    assert all(expected[s] == r for s, r in got.items())


@settings(max_examples=30, deadline=None)
@given(periods=st.sampled_from([23, 24, 25, 92, 96, 100]),
       price=st.floats(-100, 3000, allow_nan=False))
def test_omie_day_has_one_row_per_period_and_zone(periods: int, price: float) -> None:
    lines = ["MARGINALPDBC;"] + [f"2025;11;03;{p};{price:.2f};{price:.2f};"
                                 for p in range(1, periods + 1)] + ["*"]
    data = "\n".join(lines).encode("latin-1")
    # 2025-11-03 lasts 24 h in Madrid: only 24 hours or 96 quarter-hours are a whole day;
    # any other count is refused, or read (and noted) as an excerpt
    if periods not in (24, 96):
        with pytest.raises(ParseError, match="incomplete file"):
            omie.parse_marginal(data, url="https://x", vintage="2025-11",
                                fetched_on=date(2025, 11, 3))
    frame = omie.parse_marginal(data, url="https://x", vintage="2025-11",
                                fetched_on=date(2025, 11, 3), partial_ok=True)
    assert frame.height == 2 * periods
    step = 15 if periods > 25 else 60
    for zone in ("ES", "PT"):
        starts = frame.filter(pl.col("zone") == zone)["interval_start_utc"]
        assert (starts.diff().drop_nulls().dt.total_minutes() == step).all()


@given(secret=st.text(alphabet="ABCDEGHIJKLMNOPQSTUVWXYZ0123456789+/=", min_size=4,
                      max_size=40))
def test_redacted_url_never_holds_the_secret(secret: str) -> None:
    url = f"https://api.example/x?zone=FR&api_key={secret}&a=1"
    shown = redact_url(url, {"api_key"})
    assert secret not in shown.replace("zone=FR", "").replace("a=1", "")
    assert "api_key=***" in shown
