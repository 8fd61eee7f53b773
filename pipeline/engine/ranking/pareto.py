"""Non-dominated sorting of eligible candidates over the policy's objectives, and the
shortlist of a large proposal.

A dominates B when A is at least as good on every objective and strictly better on one.
Rank 1 is the frontier; removing it, the next frontier is rank 2, and so on. Candidates are
taken in an order where every dominator comes before what it dominates (descending
lexicographic), in blocks of BLOCK: a block is compared against the candidates before it
(numpy, BLOCK x n booleans at a time, never an n x n frame nor the list of dominance pairs), so
a rank is 1 + the highest rank among a candidate's dominators in one pass, memory grows
linearly with the candidates and time with their pairs.

`dominated_by` names at most DOMINATED_BY_LISTED of the *frontier* candidates that dominate a
candidate (sorted by id), and `dominated_by_count` counts every candidate dominating it: each
row stays bounded (listing every dominator grew the CSV quadratically: 3.7 MB at 1,000
candidates, 33 MB at 3,000).

The shortlist (`shortlist`): above SHORTLIST_ABOVE candidates, only the frontier and its
neighbourhood go on to the Monte Carlo, the tables and the charts. A candidate's distance
to the frontier is the least x such that some frontier candidate f is at most x x |f's value|
better than it on every objective (0 on the frontier); the shortlist is every eligible
candidate at a distance <= SHORTLIST_MARGIN, nearest first, at most SHORTLIST_MAX of them
(the Monte Carlo's memory grows with them: benchmarks/monte_carlo.py measured 1,000 x 10,000
draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from schemas.outputs import OBJECTIVES

#: candidates compared against the others at once
BLOCK = 256
#: the frontier candidates `dominated_by` names at most
DOMINATED_BY_LISTED = 5
#: a proposal of up to this many candidates is shortlisted whole
SHORTLIST_ABOVE = 100
#: a shortlisted candidate is within this share of a frontier candidate on every objective
SHORTLIST_MARGIN = 0.05
#: the most candidates shortlisted (the frontier first, then the nearest)
SHORTLIST_MAX = 1000


def _oriented(frame: pl.DataFrame, objectives: Sequence[str]) -> np.ndarray:
    """(candidates, objectives), higher is better; a missing figure is NaN (it neither
    dominates nor is dominated on that objective)."""
    if not objectives:
        return np.empty((frame.height, 0))
    return np.column_stack([
        frame[OBJECTIVES[o][0]].cast(pl.Float64).fill_null(np.nan).to_numpy()
        * OBJECTIVES[o][1] for o in objectives])


def _dominates(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) booleans: row i of `a` dominates row j of `b`."""
    ge = np.all(a[:, None] >= b[None], axis=2)
    return ge & np.any(a[:, None] > b[None], axis=2)


def pareto_ranks(frame: pl.DataFrame, objectives: Sequence[str], id_col: str = "id"
                 ) -> pl.DataFrame:
    """id, pareto_rank, dominated_by (at most DOMINATED_BY_LISTED frontier ids dominating
    it, sorted), dominated_by_count (every candidate dominating it) for every row of
    `frame`."""
    ids = frame[id_col].cast(pl.String())
    values = _oriented(frame, objectives)
    k = len(ids)
    # every dominator is lexicographically greater (>= everywhere, > once; NaN never
    # dominates), so a descending lexicographic order puts it first
    order = np.lexsort(tuple(-np.nan_to_num(values[:, j], nan=0.0)
                             for j in reversed(range(values.shape[1])))) if values.size \
        else np.arange(k)
    ordered = values[order]
    rank_in_order = np.ones(k, dtype=np.int64)
    count_in_order = np.zeros(k, dtype=np.int64)
    for start in range(0, k, BLOCK):
        block = ordered[start:start + BLOCK]
        before = _dominates(ordered[:start], block)  # (start, b)
        count_in_order[start:start + len(block)] = before.sum(axis=0)
        best = np.where(before, rank_in_order[:start, None], 0).max(axis=0, initial=0)
        within = _dominates(block, block)  # dominators come first in the order
        count_in_order[start:start + len(block)] += within.sum(axis=0)
        for j in range(len(block)):
            above = rank_in_order[start:start + j][within[:j, j]]
            rank_in_order[start + j] = max(best[j], above.max(initial=0)) + 1
    rank = np.empty(k, dtype=np.int64)
    rank[order] = rank_in_order
    count = np.empty(k, dtype=np.int64)
    count[order] = count_in_order
    # dominated_by: the first DOMINATED_BY_LISTED frontier dominators by id
    frontier = np.flatnonzero(rank == 1)
    frontier = frontier[ids.gather(frontier).arg_sort().to_numpy()]
    at, named = [], []
    for start in range(0, k, BLOCK):
        dom = _dominates(values[frontier], values[start:start + BLOCK])  # (f, b)
        keep = dom & (np.cumsum(dom, axis=0) <= DOMINATED_BY_LISTED)
        f, b = np.nonzero(keep)
        by_column = np.lexsort((f, b))
        at.append(b[by_column] + start)
        named.append(frontier[f[by_column]])
    where = np.concatenate(at) if at else np.empty(0, dtype=np.int64)
    who = np.concatenate(named) if named else np.empty(0, dtype=np.int64)
    lists = pl.DataFrame({"at": where, "dominator": ids.gather(who)},
                         schema={"at": pl.Int64(), "dominator": pl.String()}).group_by(
        "at", maintain_order=True).agg("dominator")
    every = pl.DataFrame({"at": np.arange(k)}, schema={"at": pl.Int64()}).join(
        lists, on="at", how="left", maintain_order="left")
    return pl.DataFrame({id_col: ids, "pareto_rank": rank}).with_columns(
        every["dominator"].fill_null(pl.lit([], dtype=pl.List(pl.String())))
        .alias("dominated_by"), pl.Series("dominated_by_count", count)).sort(id_col)


def frontier_distance(frame: pl.DataFrame, objectives: Sequence[str], frontier: np.ndarray
                      ) -> np.ndarray:
    """Each row's distance to the frontier rows `frontier` (indices into `frame`): the least x
    such that some frontier row f is better by at most x x |f| on every objective; a missing
    figure on either side counts as no gap (it is not compared, as in dominance); a gap from a
    frontier value of 0 is infinite. 0 on the frontier."""
    values = _oriented(frame, objectives)
    best = values[frontier]
    scale = np.abs(best)
    distance = np.full(len(values), np.inf)
    if not len(frontier):
        return distance
    for start in range(0, len(values), BLOCK):
        block = values[start:start + BLOCK]
        gap = np.nan_to_num(best[None] - block[:, None], nan=0.0).clip(min=0.0)  # (b, f, o)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(gap > 0, gap / scale[None], 0.0)
        distance[start:start + len(block)] = share.max(axis=2, initial=0.0).min(axis=1)
    return distance


def shortlist(frame: pl.DataFrame, objectives: Sequence[str], margin: float = SHORTLIST_MARGIN,
              most: int = SHORTLIST_MAX) -> pl.DataFrame:
    """id, shortlisted, frontier_distance for the rows of `frame` (eligible candidates with
    their pareto_rank): shortlisted are the rows at a frontier distance <= `margin`, nearest
    first (ties by id), at most `most`. The caller shortlists every candidate of a proposal of
    SHORTLIST_ABOVE candidates or fewer."""
    distance = frontier_distance(frame, objectives,
                                 np.flatnonzero(frame["pareto_rank"].to_numpy() == 1))
    out = pl.DataFrame({"id": frame["id"], "frontier_distance": distance}).with_row_index("at")
    kept = out.filter(pl.col("frontier_distance") <= margin).sort(
        "frontier_distance", "id").head(most)["at"]
    return out.with_columns(pl.col("at").is_in(kept.implode()).alias("shortlisted")).select(
        "id", "shortlisted", pl.when(pl.col("frontier_distance").is_finite())
        .then(pl.col("frontier_distance")).alias("frontier_distance"))
