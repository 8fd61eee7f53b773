"""The metric identities of DESIGN section 1, checked against hand-worked figures."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.metrics import add_metrics


def _inputs(**overrides: list[float | None]) -> pl.DataFrame:
    base: dict[str, list[float | None]] = {
        "tokens_per_s": [4000.0], "cost_eur_per_hour": [14.0], "power_w": [5600.0],
        "pue": [1.3], "electricity_eur_per_kwh": [0.09], "grid_gco2e_per_kwh": [342.0],
    }
    base.update(overrides)
    height = max(len(v) for v in base.values())
    base = {k: v * height if len(v) == 1 else v for k, v in base.items()}
    return pl.DataFrame(base, schema=dict.fromkeys(base, pl.Float64()))


def test_worked_example_of_issue_2() -> None:
    # 8 x H200 on-prem: 4,000 tokens/s, 5,600 W at the boards, PUE 1.3, 14 EUR/h,
    # 0.09 EUR/kWh, 342 gCO2e/kWh.
    row = add_metrics(_inputs()).row(0, named=True)
    # CPM = 14 / (4000 x 3600 / 1e6) = 14 / 14.4 = 0.97222 EUR/Mtok
    assert row["cpm_eur_per_mtok"] == pytest.approx(0.972222, rel=1e-5)
    # energy = 5600 W / 4000 tokens/s = 1.4 J/token
    assert row["energy_j_per_token"] == pytest.approx(1.4)
    # facility = 1.4 x 1e6 / 3.6e6 x 1.3 = 0.388889 x 1.3 = 0.505556 kWh/Mtok
    assert row["facility_kwh_per_mtok"] == pytest.approx(0.505556, rel=1e-5)
    # electricity = 0.505556 x 0.09 = 0.0455 EUR/Mtok
    assert row["electricity_eur_per_mtok"] == pytest.approx(0.0455, rel=1e-4)
    # carbon = 0.505556 x 342 = 172.9 gCO2e/Mtok
    assert row["carbon_gco2e_per_mtok"] == pytest.approx(172.9, rel=1e-4)


def test_missing_power_gives_null_energy_not_zero() -> None:
    row = add_metrics(_inputs(power_w=[None])).row(0, named=True)
    assert row["cpm_eur_per_mtok"] == pytest.approx(0.972222, rel=1e-5)
    for key in ("energy_j_per_token", "facility_kwh_per_mtok", "electricity_eur_per_mtok",
                "carbon_gco2e_per_mtok"):
        assert row[key] is None, key


positive = st.floats(min_value=1.0, max_value=1e5, allow_nan=False)


@given(tps=positive, more=st.floats(min_value=1.01, max_value=10), cost=positive)
def test_cpm_falls_as_throughput_rises(tps: float, more: float, cost: float) -> None:
    out = add_metrics(_inputs(tokens_per_s=[tps, tps * more], cost_eur_per_hour=[cost, cost]))
    slow, fast = out["cpm_eur_per_mtok"].to_list()
    assert fast < slow


@given(power=positive, tps=positive, pue=st.floats(min_value=1.0, max_value=3.0))
def test_units_round_trip(power: float, tps: float, pue: float) -> None:
    # facility kWh/Mtok back to J/token: x 3.6e6 J/kWh / 1e6 tokens / PUE.
    out = add_metrics(_inputs(power_w=[power], tokens_per_s=[tps], pue=[pue]))
    row = out.row(0, named=True)
    assert row["facility_kwh_per_mtok"] * 3.6e6 / 1e6 / pue == pytest.approx(
        row["energy_j_per_token"], rel=1e-9)
