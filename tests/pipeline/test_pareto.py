"""Non-dominated sorting and the shortlist, on cases small enough to check by eye."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.engine.ranking.pareto import DOMINATED_BY_LISTED, pareto_ranks, shortlist


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
    got = {r["id"]: (r["pareto_rank"], r["dominated_by"], r["dominated_by_count"])
           for r in ranks.iter_rows(named=True)}
    # peeling: {a, b} -> rank 1; then c (dominated by a and b only) -> rank 2; then d -> rank 3;
    # dominated_by names the frontier dominators (a, b), the count counts c too
    assert got == {"a": (1, [], 0), "b": (1, [], 0), "c": (2, ["a", "b"], 2),
                   "d": (3, ["a", "b"], 3)}


def test_dominated_by_names_at_most_five_frontier_candidates() -> None:
    # seven frontier candidates f0..f6 trading CPM (1..7) against carbon (70..10), all at
    # level 4; x (CPM 8, carbon 80, level 3) is worse than each of them on every objective
    frame = _frame([*((f"f{i}", 1.0 + i, 70.0 - 10 * i, 4) for i in range(7)),
                    ("x", 8.0, 80.0, 3)])
    ranks = pareto_ranks(frame, ["cpm", "carbon", "sovereignty"]).filter(pl.col("id") == "x")
    assert DOMINATED_BY_LISTED == 5
    # the first five by id of the seven, and the count of all seven
    assert ranks.row(0, named=True) == {"id": "x", "pareto_rank": 2,
                                        "dominated_by": ["f0", "f1", "f2", "f3", "f4"],
                                        "dominated_by_count": 7}


def test_equal_candidates_do_not_dominate_each_other() -> None:
    frame = _frame([("a", 1.0, 1.0, 2), ("b", 1.0, 1.0, 2)])
    ranks = pareto_ranks(frame, ["cpm", "carbon", "sovereignty"])
    assert ranks["pareto_rank"].to_list() == [1, 1]
    assert ranks["dominated_by_count"].to_list() == [0, 0]


def test_the_shortlist_rule_worked_by_hand() -> None:
    # objectives: CPM (lower), carbon (lower), sovereignty (higher); frontier a and b
    frame = _frame([
        ("a", 1.00, 100.0, 3),  # frontier: distance 0
        ("b", 2.00, 50.0, 3),   # frontier: distance 0
        # c against a: CPM 0.04/1.00 = 4 % worse, carbon 4/100 = 4 %, level equal -> 0.04
        ("c", 1.04, 104.0, 3),
        # d against a: CPM 6 % worse -> 0.06; against b: carbon 51/50 = 102 % -> 1.02; min 0.06
        ("d", 1.06, 101.0, 3),
        # e against b: CPM 0.05/2.00 = 2.5 %, carbon 1/50 = 2 % -> 0.025
        ("e", 2.05, 51.0, 3),
        # f against a: level 2 for 3 = 1/3 worse -> 0.333 (b: carbon 102 %) -> 0.333
        ("f", 1.01, 101.0, 2),
    ])
    objectives = ["cpm", "carbon", "sovereignty"]
    ranked = frame.join(pareto_ranks(frame, objectives), on="id", maintain_order="left")
    assert ranked["pareto_rank"].to_list() == [1, 1, 2, 2, 2, 2]
    out = shortlist(ranked, objectives, margin=0.05)
    got = dict(zip(out["id"], out["frontier_distance"], strict=True))
    assert got == pytest.approx({"a": 0.0, "b": 0.0, "c": 0.04, "d": 0.06, "e": 0.025,
                                 "f": 1 / 3})
    # within 5 % of a frontier candidate on every objective: a, b, c, e
    assert out.filter(pl.col("shortlisted"))["id"].to_list() == ["a", "b", "c", "e"]
    # at most 3: the nearest first (a, b at 0, then e at 0.025), c left out
    capped = shortlist(ranked, objectives, margin=0.05, most=3)
    assert capped.filter(pl.col("shortlisted"))["id"].to_list() == ["a", "b", "e"]


rows = st.lists(st.tuples(st.floats(0.1, 10), st.floats(0, 500), st.integers(0, 4)),
                min_size=1, max_size=12)


@given(rows)
def test_frontier_is_never_dominated(values: list[tuple[float, float, int]]) -> None:
    frame = _frame([(f"c{i}", *v) for i, v in enumerate(values)])
    objectives = ["cpm", "carbon", "sovereignty"]
    ranks = pareto_ranks(frame, objectives)
    frontier = ranks.filter(pl.col("pareto_rank") == 1)
    assert frontier.height, "a non-empty set always has a frontier"
    assert frontier["dominated_by_count"].to_list() == [0] * frontier.height
    # every candidate off the frontier is dominated by a frontier candidate (dominance is
    # transitive), which it names
    for r in ranks.filter(pl.col("pareto_rank") > 1).iter_rows(named=True):
        assert r["dominated_by"] and set(r["dominated_by"]) <= set(frontier["id"])
        assert r["dominated_by_count"] >= r["pareto_rank"] - 1


def _peeled(frame: pl.DataFrame, objectives: list[str]) -> dict[str, tuple[int, list[str]]]:
    """The definition, pair by pair: dominators, then fronts peeled off one at a time."""
    from pipeline.engine.ranking.pareto import OBJECTIVES

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
    got = {r["id"]: (r["pareto_rank"], r["dominated_by"], r["dominated_by_count"])
           for r in ranks.iter_rows(named=True)}
    peeled = _peeled(frame, objectives)
    frontier = {k for k, (rank, _) in peeled.items() if rank == 1}
    assert got == {k: (rank, [d for d in by if d in frontier][:DOMINATED_BY_LISTED], len(by))
                   for k, (rank, by) in peeled.items()}
    assert ranks["id"].to_list() == sorted(got)


def test_ranks_across_blocks_equal_the_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    # 60 candidates compared in blocks of 7: dominators in earlier blocks and in the same block
    import random

    from pipeline.engine.ranking import pareto

    monkeypatch.setattr(pareto, "BLOCK", 7)
    rng = random.Random(30)
    frame = _frame([(f"c{i:02d}", float(rng.randint(1, 6)), float(rng.randint(1, 6)),
                     rng.randint(0, 4)) for i in range(60)])
    objectives = ["cpm", "carbon", "sovereignty"]
    ranks = pareto_ranks(frame, objectives)
    peeled = _peeled(frame, objectives)
    frontier = {k for k, (rank, _) in peeled.items() if rank == 1}
    assert max(rank for rank, _ in peeled.values()) > 3  # deep enough to exercise the order
    assert {r["id"]: (r["pareto_rank"], r["dominated_by"], r["dominated_by_count"])
            for r in ranks.iter_rows(named=True)} == {
        k: (rank, [d for d in by if d in frontier][:DOMINATED_BY_LISTED], len(by))
        for k, (rank, by) in peeled.items()}
