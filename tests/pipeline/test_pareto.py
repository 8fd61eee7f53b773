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


def _peeled(frame: pl.DataFrame, objectives: list[str]) -> dict[str, tuple[int, list[str]]]:
    """The definition, pair by pair: dominators, then fronts peeled off one at a time."""
    from pipeline.engine.pareto import OBJECTIVES

    rows = {r["id"]: [None if r[OBJECTIVES[o][0]] is None else r[OBJECTIVES[o][0]]
                      * OBJECTIVES[o][1] for o in objectives]
            for r in frame.iter_rows(named=True)}

    def beats(a: list[float | None], b: list[float | None]) -> bool:
        if None in a or None in b:
            return False
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(
            x > y for x, y in zip(a, b, strict=True))

    by = {b: sorted(a for a in rows if a != b and beats(rows[a], rows[b])) for b in rows}
    rank, remaining, front = {}, set(rows), 0
    while remaining:
        front += 1
        top = {b for b in remaining if not set(by[b]) & remaining}
        rank.update(dict.fromkeys(top, front))
        remaining -= top
    return {b: (rank[b], by[b]) for b in rows}


near = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 1e-9, 0.5]),
                          st.floats(0, 50), st.integers(0, 4) | st.none()),
                min_size=1, max_size=25)


@given(near)
def test_ranks_and_dominators_equal_the_definition(values: list[tuple[int, float, float,
                                                                     int | None]]) -> None:
    # Near-duplicates (a CPM of 1, 2 or 3 moved by 1e-9), exact ties, missing figures (None):
    # the blockwise ranks and dominator lists are those of peeling pair by pair.
    frame = _frame([(f"c{i:02d}", 1.0 + base + nudge, carbon, level)
                    for i, (base, nudge, carbon, level) in enumerate(values)])
    objectives = ["cpm", "carbon", "sovereignty"]
    ranks = pareto_ranks(frame, objectives)
    got = {r["id"]: (r["pareto_rank"], r["dominated_by"]) for r in ranks.iter_rows(named=True)}
    assert got == _peeled(frame, objectives)
    assert ranks["id"].to_list() == sorted(got)
