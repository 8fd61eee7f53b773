"""metrics.evaluate_arrays (the Monte Carlo's evaluator, and evaluate's) against the steps' polars
expressions (metrics.evaluate_polars): the same figures bit for bit, over numpy arrays that
broadcast."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from pipeline.engine.metrics import (
    COST_MODELS,
    INPUTS,
    STEPS,
    _power,
    evaluate,
    evaluate_arrays,
    evaluate_polars,
)

NAMES = [s.name for s in STEPS]


def readers_of(step: str) -> set[str]:
    """The steps that read `step`, directly or through others."""
    found = {step}
    for s in STEPS:
        if found & set(s.expr().meta.root_names()):
            found.add(s.name)
    return found


#: the annuity's (1 + r) ** n: numpy's vectorised pow may differ from libm's (polars') in the
#: last bit, so these steps agree to 1e-12 relative, every other bit for bit
POW = readers_of("capital_eur_per_hour")


def same(a: np.ndarray, b: np.ndarray, name: str) -> np.ndarray:
    """Equal bit for bit (to 1e-12 relative where the pow enters), NaN (null) matching NaN."""
    exact = (np.isnan(a) & np.isnan(b)) | (a == b)
    if name not in POW:
        return exact
    return exact | (np.abs(a - b) <= 1e-12 * np.abs(a))


def random_inputs(n: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Every input drawn, 30 % of them null; utilisation past 1, a zero cost of capital in
    a fifth of the rows (the annuity's other branch), else 1-10 % a year with a residual at
    most half the capex (the annuity well conditioned), every cost model and capacity."""
    rng = np.random.default_rng(seed)
    cols = {}
    for name in INPUTS:
        v = rng.uniform(0.1, 5.0, n)
        v[rng.random(n) < 0.3] = np.nan
        cols[name] = v
    cols["utilisation"] = rng.uniform(0.0, 1.2, n)
    cols["headroom"] = rng.uniform(0.0, 1.0, n)
    cols["cost_of_capital_per_year"] = np.where(rng.random(n) < 0.2, 0.0,
                                                rng.uniform(0.01, 0.1, n))
    cols["residual_eur"] = cols["capex_eur"] * rng.uniform(0.0, 0.5, n)
    cols["amortisation_months"] = rng.integers(12, 60, n).astype(float)
    models = rng.choice(COST_MODELS, n)
    capacities = rng.choice(["provisioned", "elastic"], n)
    return cols, models, capacities


def polars_of(cols: dict[str, np.ndarray], models: np.ndarray, capacities: np.ndarray
              ) -> pl.DataFrame:
    return evaluate_polars(frame_of(cols, models, capacities))


def frame_of(cols: dict[str, np.ndarray], models: np.ndarray, capacities: np.ndarray
             ) -> pl.DataFrame:
    return pl.DataFrame({**{k: pl.Series(k, v, nan_to_null=True) for k, v in cols.items()},
                         "cost_model": models, "capacity": capacities})


@pytest.mark.parametrize("seed", range(3))
def test_every_step_equals_the_polars_evaluation_bit_for_bit(seed: int) -> None:
    cols, models, capacities = random_inputs(3000, seed)
    expected = polars_of(cols, models, capacities)
    got = evaluate_arrays({**cols, "cost_model": models, "capacity": capacities}, NAMES)
    for name in NAMES:
        a = expected[name].to_numpy().astype(float)
        b = np.broadcast_to(np.asarray(got[name], dtype=float), a.shape)
        assert same(a, b, name).all(), name
    # the figures are not all null: the comparison compares something
    assert expected["cpm_eur_per_mtok"].null_count() < 2000
    assert expected["capital_eur_per_hour"].drop_nulls().len() > 100


def test_a_block_of_one_cost_model_gives_the_same_figures() -> None:
    # A block of one cost model (the Monte Carlo's) computes only the branches its rows take
    # (no TCO lines for a price per hour): every step is still polars' figure.
    cols, models, capacities = random_inputs(3000, 7)
    expected = polars_of(cols, models, capacities)
    for model in COST_MODELS:
        rows = models == model
        got = evaluate_arrays({**{k: v[rows] for k, v in cols.items()},
                               "cost_model": model, "capacity": capacities[rows]}, NAMES)
        for name in NAMES:
            a = expected[name].to_numpy().astype(float)[rows]
            b = np.broadcast_to(np.asarray(got[name], dtype=float), a.shape)
            assert same(a, b, name).all(), (model, name)


def test_fixed_columns_broadcast_against_drawn_ones() -> None:
    # Two candidates x three draws: price fixed per candidate (2, 1), goodput drawn (2, 3),
    # the PUE one number for all. Declared cost, no demand, utilisation 0.5:
    # CPM = price / (tps x 0.5 x 3600 / 1e6): candidate 0 at 10 EUR/h and 1,000 tokens/s:
    # 10 / 1.8 = 5.5556; at 2,000 tokens/s 2.7778.
    price = np.array([[10.0], [20.0]])
    tps = np.array([[1000.0, 2000.0, 4000.0], [1000.0, 1000.0, 1000.0]])
    got = evaluate_arrays({"price_eur_per_hour": price, "tokens_per_s": tps,
                           "utilisation": 0.5, "busy_power_w": 1000.0, "pue": 1.2},
                          ["cpm_eur_per_mtok", "facility_kwh_per_mtok"])
    assert got["cpm_eur_per_mtok"].shape == (2, 3)
    assert got["cpm_eur_per_mtok"][0] == pytest.approx([5.5556, 2.7778, 1.3889], rel=1e-4)
    # the same rows through polars, one row per (candidate, draw)
    rows = pl.DataFrame({"price_eur_per_hour": np.repeat(price.ravel(), 3),
                         "tokens_per_s": tps.ravel(), "utilisation": 0.5,
                         "busy_power_w": 1000.0, "pue": 1.2})
    polars = evaluate_polars(rows)
    for name, value in got.items():
        assert (polars[name].to_numpy() == np.broadcast_to(value, (2, 3)).ravel()).all()


def test_pow_keeps_null_null() -> None:
    # IEEE's pow(1, NaN) and pow(NaN, 0) are 1; polars' null ** x and x ** null are null, and
    # so are evaluate_arrays'. 2 ** 3 = 8; 1.0001 ** 48 within the last bit of libm's.
    got = _power(np.array([1.0, np.nan, 2.0, 1.0001]), np.array([np.nan, 0.0, 3.0, 48.0]))
    assert np.isnan(got[:2]).all()
    assert got[2] == 8.0
    assert got[3] == pytest.approx(math.pow(1.0001, 48.0), rel=1e-15)
    assert {"capital_eur_per_hour", "cost_eur_per_hour", "cpm_eur_per_mtok"} <= POW
    assert "energy_j_per_token" not in POW


@pytest.mark.parametrize("seed", range(2))
def test_evaluate_of_a_frame_is_the_polars_evaluation(seed: int) -> None:
    # evaluate() of a frame goes through evaluate_arrays with libm's pow: the same frame as
    # the polars expressions give, column for column, null for null, bit for bit (the pow
    # included); with a subset of columns too, and without cost_model and capacity (their
    # defaults, declared and provisioned, added as polars adds them).
    cols, models, capacities = random_inputs(500, seed)
    frame = frame_of(cols, models, capacities).with_columns(
        pl.Series("id", [f"c{i}" for i in range(500)]))
    assert evaluate(frame).equals(evaluate_polars(frame))
    wanted = ["id", "cpm_eur_per_mtok", "capital_eur_per_hour", "instances"]
    assert evaluate(frame.lazy(), wanted).equals(evaluate_polars(frame, wanted))
    bare = frame.drop("cost_model", "capacity", "tokens_per_s")
    assert evaluate(bare).equals(evaluate_polars(bare))
    assert evaluate(bare).columns == evaluate_polars(bare).columns


def test_an_input_holding_nan_as_a_value_takes_the_polars_expressions() -> None:
    # NaN (a value, not null) is not null to polars: fill_null keeps it, the step is NaN and
    # so null. retail_multiplier NaN: electricity tariff null (not 0.09 x 1 as a null would).
    frame = pl.DataFrame({"wholesale_eur_per_kwh": [0.09, 0.09],
                          "retail_multiplier": [float("nan"), None]})
    out = evaluate(frame)
    assert out["electricity_eur_per_kwh"].to_list() == [None, 0.09]
    assert out.equals(evaluate_polars(frame))


def test_float32_inputs_are_widened_before_any_arithmetic() -> None:
    # The Monte Carlo hands its float32 draws over as they are: every step computes in
    # float64 from the exactly widened values, so the figures are those of the same values
    # given as float64 (two float32 inputs multiplied in float32 would round differently).
    cols, models, capacities = random_inputs(2000, 3)
    narrow = {k: v.astype(np.float32) for k, v in cols.items()}
    wide = {k: v.astype(np.float64) for k, v in narrow.items()}
    for model in COST_MODELS:
        rows = models == model
        got, expected = (evaluate_arrays({**{k: v[rows] for k, v in given.items()},
                                          "cost_model": model, "capacity": capacities[rows]},
                                         NAMES) for given in (narrow, wide))
        for name in NAMES:
            a = np.asarray(expected[name], dtype=np.float64)
            b = np.asarray(got[name], dtype=np.float64)
            assert np.array_equal(a, b, equal_nan=True), (model, name)


def test_idle_hours_never_draw_more_than_busy_ones() -> None:
    """A derived power's busy and idle fractions are drawn apart (busy 0.2-1.0 x TDP, idle
    0.136-0.238 x TDP), so a draw can put idle above busy: the idle hours then count at busy
    power. 1,000 W busy, 2,000 W idle, busy half the billed hours (no demand: the declared
    utilisation is the billed one): 1,000 x 0.5 + min(2,000, 1,000) x 0.5 = 1,000 W, in the
    arrays (the Monte Carlo) and in polars alike; 400 W idle stays 400: 700 W."""
    cols = {"busy_power_w": np.array([1000.0, 1000.0]), "idle_power_w": np.array([2000.0, 400.0]),
            "utilisation": 0.5, "tokens_per_s": 100.0, "price_eur_per_hour": 1.0}
    got = evaluate_arrays(cols, ["average_power_w"])["average_power_w"]
    assert got.tolist() == [1000.0, 700.0]
    frame = evaluate(pl.DataFrame({k: np.broadcast_to(v, 2) for k, v in cols.items()}),
                     ["average_power_w"])
    assert frame["average_power_w"].to_list() == [1000.0, 700.0]
