"""Every field is declared once, physical units show in the column name, and the generated
schemas reject the unit slips the bounds are there for."""

from __future__ import annotations

import tomllib
from datetime import date

import polars as pl
import pytest

import schemas.architecture
import schemas.evidence
import schemas.market
import schemas.power
from schemas.fields import DECLARATIONS, FIELDS, parse
from schemas.table import Table, ValidationFailed

#: unit -> the endings a column carrying it may have (counts such as tokens need none)
SUFFIXES = {
    "W": ("_w",), "J": ("_j",), "s": ("_s",), "GB": ("_gb",), "GB/s": ("_gb_per_s",),
    "TFLOP/s": ("_tflops",), "EUR/h": ("_eur_per_hour",), "currency/h": ("_per_hour",),
    "EUR/(GPU h)": ("_eur_per_gpu_hour",), "EUR/MWh": ("_eur_per_mwh",),
    "EUR/kWh": ("_eur_per_kwh",),
    "gCO2e/kWh": ("_gco2e_per_kwh",), "kgCO2e": ("_kgco2e",), "requests/s": ("_per_s",),
    "tokens/s": ("_per_s",), "currency/EUR": ("_per_eur",),
    "Wh/request": ("_wh_per_request",), "gCO2e/request": ("_gco2e_per_request",),
    "kW": ("_kw",), "%": ("_pct",), "currency/Mtok": ("_per_mtok",),
}
COUNTS = {"parameters", "experts", "GPU", "dimensions", "tokens", "heads", "layers",
          "requests"}

TABLES = [t for module in (schemas.market, schemas.architecture, schemas.evidence,
                           schemas.power)
          for t in vars(module).values() if isinstance(t, Table)]


def test_units_show_in_column_names() -> None:
    for name, field in FIELDS.items():
        if field.unit is None or field.unit in COUNTS:
            continue
        assert field.unit in SUFFIXES, f"{name}: add a suffix rule for unit {field.unit!r}"
        assert name.endswith(SUFFIXES[field.unit]), f"{name} carries {field.unit}"


def test_every_table_column_is_declared_and_tables_have_distinct_names() -> None:
    assert len({t.name for t in TABLES}) == len(TABLES) >= 12
    for table in TABLES:
        for column in table.columns:
            assert column in FIELDS, f"{table.name}.{column} is not declared"


def test_a_field_cannot_be_declared_twice() -> None:
    text = DECLARATIONS.read_text(encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text + '\n[power_w]\ndtype = "Float64"\ndescription = "again"\n')


@pytest.mark.parametrize(("entry", "complaint"), [
    ({"dtype": "Float64"}, "declares dtype, description"),  # no description
    ({"dtype": "Float64", "description": "x", "lt": 1}, "declares dtype, description"),
    ({"dtype": "float", "description": "x"}, "dtype is one of"),
    ({"dtype": "Float64", "description": "x", "le": "50"}, "le mistyped"),
    ({"dtype": "Float64", "description": "x", "ge": True}, "ge mistyped"),
    ({"dtype": "String", "description": "x", "isin": "a"}, "isin mistyped"),
    ({"dtype": "String", "description": 3}, "description mistyped"),
])
def test_a_slip_in_a_declaration_is_an_error_naming_the_field(
        entry: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=f"^power_w: .*{complaint}"):
        parse({"power_w": entry})


def test_declarations_read_into_fields() -> None:
    (field,) = parse({"x_w": {"dtype": "Float64", "description": "d", "unit": "W", "ge": 0,
                              "le": 5e4, "isin": ["a"], "pattern": "^a$"}}).values()
    assert (field.dtype, field.unit, field.ge, field.le, field.gt, field.isin, field.pattern) == (
        pl.Float64(), "W", 0, 5e4, None, ("a",), "^a$")
    assert FIELDS["sample_utc"].dtype == pl.Datetime("us", "UTC")


def test_bounds_catch_unit_slips() -> None:
    from schemas.market import ELECTRICITY_PRICES, HARDWARE

    board = {"gpu": ["H100-SXM-80GB"], "gpu_vendor": ["NVIDIA"], "form_factor": ["SXM"],
             "memory_gb": [80.0], "memory_bandwidth_gb_per_s": [3350.0],
             "bf16_dense_tflops": [989.5], "fp8_dense_tflops": [1979.0],
             "tdp_w": [700_000.0],  # 700 kW: mW read as W
             "source_url": ["https://x"], "source_date": [date(2026, 1, 1)], "licence": ["x"]}
    with pytest.raises(ValidationFailed, match="tdp_w"):
        HARDWARE.validate(pl.DataFrame(board), "test")
    price = pl.DataFrame({
        "vintage": ["2026-01"], "zone": ["FR"],
        "interval_start_utc": pl.Series([None], dtype=pl.Datetime("us", "UTC")),
        "resolution": ["hour"], "price_eur_per_mwh": [58_000.0],  # EUR/kWh x 1e6 slip
        "price_basis": ["day_ahead"], "source_url": ["https://x"],
        "source_date": [date(2026, 1, 1)], "licence": ["x"]})
    with pytest.raises(ValidationFailed) as caught:
        ELECTRICITY_PRICES.validate(price, "prices.csv")
    report = caught.value.report()
    # both problems in one lazy report: the bound and the missing key part
    assert "price_eur_per_mwh" in report and "interval_start_utc" in report
