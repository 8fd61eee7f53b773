"""The scorecard's figures are declared once (schemas/outputs.toml), each name carries its unit,
a name the store also declares has the same unit there, and a slip in the file is an error."""

from __future__ import annotations

import tomllib

import pytest

from schemas.fields import FIELDS
from schemas.outputs import (
    CONTRACT_FIGURES,
    DECLARATIONS,
    OBJECTIVES,
    OUTPUTS,
    RANGED,
    SHOWN_IN,
    columns_for,
    layout,
    parse,
)

#: unit -> the parts a column carrying it must hold in its name (unitless shares, ratios,
#: probabilities and counts need none)
UNIT_IN_NAME = {
    "tokens/s": ("_per_s",), "W": ("_w",), "EUR/kWh": ("_eur_per_kwh",),
    "gCO2e/kWh": ("_gco2e_per_kwh",), "EUR/h": ("_eur_per_hour",), "EUR": ("_eur",),
    "months": ("_months",), "1/year": ("_per_year",), "EUR/year": ("_eur_per_year",),
    "EUR/(kW month)": ("_eur_per_kw_month",), "kgCO2e": ("_kgco2e",), "years": ("_years",),
    "EUR/Mtok": ("_eur_per_mtok",), "J/token": ("_j_per_token",),
    "kWh/Mtok": ("_kwh_per_mtok",), "gCO2e/Mtok": ("_gco2e_per_mtok",),
    "level 0-4": ("_level",), "tokens/day": ("_per_day",),
    "EUR/month": ("monthly_", "_eur"), "MWh/year": ("annual_", "_mwh"),
    "tCO2e/year": ("annual_", "_tco2e"),
    "requests/s": ("_per_s",), "tokens": ("_tokens",), "s": ("_s",),
    "Wh/request": ("_wh_per_request",), "gCO2e/request": ("_gco2e_per_request",),
    "Mtok": ("_mtok",),
}
UNITLESS = {"share", "ratio", "probability", "count"}


def test_each_figure_is_declared_once() -> None:
    text = DECLARATIONS.read_text(encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text + '\n[cpm_eur_per_mtok]\nunit = "EUR/Mtok"\n')


@pytest.mark.parametrize("entry", [
    {"unit": "EUR/Mtok", "title": "CPM"},  # no meaning
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "units": "EUR"},  # misspelt key
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "better": "cheaper"},
    {"unit": 3, "title": "CPM", "meaning": "m"},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "decimals": 2.5},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "decimals": -1},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "decimals": True},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "ranged": "yes"},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "integer": 1},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "short": 4},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "shown_in": ["html"]},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "shown_in": "csv"},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "shown_in": ["csv", "csv"]},
    # an objective needs its direction; a range its decimals and a table; the summary its
    # decimals; the full scorecard reads its figures from the scorecard table
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "objective": "cpm"},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "ranged": True, "decimals": 3},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "ranged": True, "shown_in": ["csv"]},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "shown_in": ["summary"]},
    {"unit": "EUR/Mtok", "title": "CPM", "meaning": "m", "decimals": 3,
     "shown_in": ["scorecard"]},
])
def test_a_slip_in_a_declaration_is_an_error(entry: dict) -> None:
    with pytest.raises(ValueError, match="cpm_eur_per_mtok"):
        parse({"cpm_eur_per_mtok": entry})


def test_units_show_in_column_names() -> None:
    for name, output in OUTPUTS.items():
        if output.unit in UNITLESS:
            continue
        assert output.unit in UNIT_IN_NAME, f"{name}: add a rule for unit {output.unit!r}"
        for part in UNIT_IN_NAME[output.unit]:
            assert part in name, f"{name} carries {output.unit}"


def test_a_name_the_store_declares_too_has_the_same_unit() -> None:
    shared = set(OUTPUTS) & set(FIELDS)
    assert shared  # price_eur_per_hour, embodied_kgco2e
    for name in shared:
        assert OUTPUTS[name].unit == FIELDS[name].unit, name


def test_labels_carry_the_unit() -> None:
    assert OUTPUTS["cpm_eur_per_mtok"].label == "CPM (EUR/Mtok)"
    assert OUTPUTS["sovereignty_level"].better == "higher"
    assert all(o.better in (None, "lower", "higher") for o in OUTPUTS.values())


def test_an_objective_is_named_once() -> None:
    twice = {"better": "lower", "objective": "cpm", "unit": "EUR/Mtok", "title": "CPM",
             "meaning": "m"}
    with pytest.raises(ValueError, match=r"cpm_eur_per_mtok_2.*objective 'cpm'"):
        parse({"cpm_eur_per_mtok": twice, "cpm_eur_per_mtok_2": twice})


def test_the_roles_give_each_output_its_columns_in_the_files_order() -> None:
    assert columns_for("summary") == ("cpm_eur_per_mtok", "energy_j_per_token",
                                      "carbon_gco2e_per_mtok")
    assert columns_for("json") == CONTRACT_FIGURES
    assert RANGED == ("cpm_eur_per_mtok", "energy_j_per_token", "electricity_eur_per_mtok",
                      "carbon_gco2e_per_mtok", "carbon_market_gco2e_per_mtok")
    assert OBJECTIVES["carbon_market"] == ("carbon_market_gco2e_per_mtok", -1)
    assert OBJECTIVES["sovereignty"] == ("sovereignty_level", 1)
    assert OBJECTIVES["cpm"] == ("cpm_eur_per_mtok", -1)
    order = list(OUTPUTS)
    for output in SHOWN_IN:
        shown = columns_for(output)
        assert shown and list(shown) == sorted(shown, key=order.index)
    with pytest.raises(ValueError, match="pdf"):
        columns_for("pdf")
    assert layout(("a", "b"), lead=("id",), beside={"a": ("a_grade",)}) == (
        "id", "a", "a_grade", "b")
