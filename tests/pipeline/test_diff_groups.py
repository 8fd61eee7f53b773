"""Which input group each of a market's figures belongs to in the diff: `changed_groups` and
`compose` must agree, so that the market with every changed group swapped in is B's (the
diff's B figures are computed on it)."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from pipeline.engine.questions.diff import ELECTRICITY, FX, GRID, METHOD, changed_groups, compose
from pipeline.engine.resolved import Market


def _figures(m: Market) -> dict[str, object]:
    """Every compared field of a market (frames as rows: polars frames do not compare with
    ==)."""
    return {f.name: (getattr(m, f.name).rows() if isinstance(getattr(m, f.name), pl.DataFrame)
                     else getattr(m, f.name))
            for f in dataclasses.fields(Market) if f.compare}


def _scaled(frame: pl.DataFrame | None, column: str, factor: float) -> pl.DataFrame:
    assert frame is not None
    return frame.with_columns(pl.col(column) * factor)


@pytest.mark.parametrize(("field", "column", "group"), [
    # the ECB rates declared amounts in other currencies are converted at: compose swaps
    # them with the FX group, so a change of them alone is an FX change (it was listed as
    # method/assumptions, and the composed B kept A's rates)
    ("fx", "units_per_eur", FX),
    ("prices", "price_eur_per_mwh", ELECTRICITY),
    ("intensities", "intensity_gco2e_per_kwh", GRID),
    ("residual_mixes", "intensity_gco2e_per_kwh", GRID),
    ("tariff_components", "network_eur_per_kwh", ELECTRICITY),
    ("embodied", "kgco2e", METHOD),
])
def test_a_change_is_its_group_s_and_swapping_the_changed_groups_in_gives_b(
        market: Market, field: str, column: str, group: str) -> None:
    a = dataclasses.replace(market)  # a fresh copy (its row-lookup cache empty)
    b = dataclasses.replace(a, **{field: _scaled(getattr(a, field), column, 1.1)})
    groups = changed_groups(a, b)
    assert groups == [group]
    assert _figures(compose(a, b, frozenset(groups))) == _figures(b) != _figures(a)
