"""Non-dominated sorting, on cases small enough to check by eye."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from pipeline.engine.pareto import dominance_pairs, pareto_ranks


def _frame(rows: list[tuple[str, float, float, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["id", "cpm_eur_per_mtok", "carbon_gco2e_per_mtok",
                                      "sovereignty_level"], orient="row")


def test_ranks_and_dominators() -> None:
    frame = _frame([
        ("a", 1.0, 100.0, 2),  # cheapest: frontier
        ("b", 2.0, 50.0, 4),   # cleanest and most sovereign: frontier
        ("c", 2.0, 100.0, 2),  # a: cheaper, rest equal; b: same cpm, cleaner, more sovereign
        ("d", 3.0, 120.0, 1),  # worse than a, b and c everywhere: dominated by all
    ])
    ranks = pareto_ranks(frame, ["cpm", "carbon", "sovereignty"])
    got = {r["id"]: (r["pareto_rank"], r["dominated_by"]) for r in ranks.iter_rows(named=True)}
    # peeling: {a, b} -> rank 1; then c (dominated by a and b only) -> rank 2; then d -> rank 3
    assert got == {"a": (1, []), "b": (1, []), "c": (2, ["a", "b"]), "d": (3, ["a", "b", "c"])}


def test_equal_candidates_do_not_dominate_each_other() -> None:
    frame = _frame([("a", 1.0, 1.0, 2), ("b", 1.0, 1.0, 2)])
    assert dominance_pairs(frame, ["cpm", "carbon", "sovereignty"]).height == 0


rows = st.lists(st.tuples(st.floats(0.1, 10), st.floats(0, 500), st.integers(0, 4)),
                min_size=1, max_size=12)


@given(rows)
def test_frontier_is_never_dominated(values: list[tuple[float, float, int]]) -> None:
    frame = _frame([(f"c{i}", *v) for i, v in enumerate(values)])
    objectives = ["cpm", "carbon", "sovereignty"]
    ranks = pareto_ranks(frame, objectives)
    pairs = dominance_pairs(frame, objectives)
    frontier = set(ranks.filter(pl.col("pareto_rank") == 1)["id"])
    assert frontier, "a non-empty set always has a frontier"
    assert not frontier & set(pairs["dominated"])
    # every candidate off the frontier is dominated by someone one rank better
    rank_of = dict(zip(ranks["id"], ranks["pareto_rank"], strict=True))
    for r in ranks.filter(pl.col("pareto_rank") > 1).iter_rows(named=True):
        assert any(rank_of[d] == r["pareto_rank"] - 1 for d in r["dominated_by"])
