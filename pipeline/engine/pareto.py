"""Non-dominated sorting of eligible candidates over the policy's objectives.

A dominates B when A is at least as good on every objective and strictly better on one.
Rank 1 is the frontier; removing it, the next frontier is rank 2, and so on. The dominance
pairs are found in blocks of candidates against all the others (numpy), so memory grows with
the pairs found, never with an n x n frame in one piece; a rank is then 1 + the highest rank
among a candidate's dominators (the peeling above, done in one pass in an order where every
dominator comes before what it dominates).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from schemas.outputs import OBJECTIVES

#: dominators compared against every candidate at once
BLOCK = 256


def _oriented(frame: pl.DataFrame, objectives: Sequence[str]) -> np.ndarray:
    """(candidates, objectives), higher is better; a missing figure is NaN (it neither
    dominates nor is dominated on that objective)."""
    if not objectives:
        return np.empty((frame.height, 0))
    return np.column_stack([
        frame[OBJECTIVES[o][0]].cast(pl.Float64).fill_null(np.nan).to_numpy()
        * OBJECTIVES[o][1] for o in objectives])


def _pairs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dominator, dominated) row indices, dominators compared in blocks of BLOCK rows."""
    found_a, found_b = [], []
    for start in range(0, len(values), BLOCK):
        block = values[start:start + BLOCK, None]
        dom = np.all(block >= values[None], axis=2) & np.any(block > values[None], axis=2)
        a, b = np.nonzero(dom)
        found_a.append((a + start).astype(np.int64))
        found_b.append(b.astype(np.int64))
    empty = np.empty(0, dtype=np.int64)
    return (np.concatenate(found_a) if found_a else empty,
            np.concatenate(found_b) if found_b else empty)


def dominance_pairs(frame: pl.DataFrame, objectives: Sequence[str], id_col: str = "id"
                    ) -> pl.DataFrame:
    """(dominator, dominated) id pairs among the rows of `frame`."""
    ids = frame[id_col].cast(pl.String())
    a, b = _pairs(_oriented(frame, objectives))
    return pl.DataFrame({"dominator": ids.gather(a), "dominated": ids.gather(b)},
                        schema={"dominator": pl.String(), "dominated": pl.String()})


def pareto_ranks(frame: pl.DataFrame, objectives: Sequence[str], id_col: str = "id"
                 ) -> pl.DataFrame:
    """id, pareto_rank, dominated_by (sorted list of ids) for every row of `frame`."""
    ids = frame[id_col].cast(pl.String())
    values = _oriented(frame, objectives)
    dominator, dominated = _pairs(values)
    k = len(ids)
    # every dominator is lexicographically greater (>= everywhere, > once; NaN never
    # dominates), so a descending lexicographic order puts it first
    order = np.lexsort(tuple(-np.nan_to_num(values[:, j], nan=0.0)
                             for j in reversed(range(values.shape[1])))) if values.size \
        else np.arange(k)
    by_dominated = np.argsort(dominated, kind="stable")
    starts = np.searchsorted(dominated[by_dominated], np.arange(k + 1))
    sources = dominator[by_dominated]
    rank = np.ones(k, dtype=np.int64)
    for x in order:
        lo, hi = starts[x], starts[x + 1]
        if hi > lo:
            rank[x] = rank[sources[lo:hi]].max() + 1
    # dominated_by: each candidate's dominators, sorted by id
    id_order = ids.arg_sort().to_numpy()
    position = np.empty(k, dtype=np.int64)
    position[id_order] = np.arange(k)
    paired = np.lexsort((position[dominator], dominated))
    lists = pl.DataFrame({"at": dominated[paired], "dominator": ids.gather(dominator[paired])},
                         schema={"at": pl.Int64(), "dominator": pl.String()}).group_by(
        "at", maintain_order=True).agg("dominator")
    every = pl.DataFrame({"at": np.arange(k)}, schema={"at": pl.Int64()}).join(
        lists, on="at", how="left", maintain_order="left")
    return pl.DataFrame({id_col: ids, "pareto_rank": rank}).with_columns(
        every["dominator"].fill_null(pl.lit([], dtype=pl.List(pl.String())))
        .alias("dominated_by")).sort(id_col)
