"""Non-dominated sorting of eligible candidates over the policy's objectives.

A dominates B when A is at least as good on every objective and strictly better on one.
Rank 1 is the frontier; removing it, the next frontier is rank 2, and so on. The pairwise
comparison is one cross join, so it works the same for candidates or Monte Carlo draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

#: objective name -> (column, +1 when higher is better, -1 when lower is better)
OBJECTIVES: dict[str, tuple[str, int]] = {
    "cpm": ("cpm_eur_per_mtok", -1),
    "energy": ("energy_j_per_token", -1),
    "carbon": ("carbon_gco2e_per_mtok", -1),
    "electricity": ("electricity_eur_per_mtok", -1),
    "sovereignty": ("sovereignty_level", +1),
}


def dominance_pairs(frame: pl.DataFrame, objectives: Sequence[str], id_col: str = "id"
                    ) -> pl.DataFrame:
    """(dominator, dominated) id pairs among the rows of `frame`."""
    scored = frame.select(
        pl.col(id_col).alias("id"),
        *[(pl.col(OBJECTIVES[o][0]).cast(pl.Float64) * OBJECTIVES[o][1]).alias(o)
          for o in objectives],
    )
    pairs = scored.join(scored, how="cross", suffix="_other").filter(
        pl.col("id") != pl.col("id_other"))
    at_least = pl.all_horizontal([pl.col(o) >= pl.col(f"{o}_other") for o in objectives])
    better = pl.any_horizontal([pl.col(o) > pl.col(f"{o}_other") for o in objectives])
    return pairs.filter(at_least & better).select(
        pl.col("id").alias("dominator"), pl.col("id_other").alias("dominated"))


def pareto_ranks(frame: pl.DataFrame, objectives: Sequence[str], id_col: str = "id"
                 ) -> pl.DataFrame:
    """id, pareto_rank, dominated_by (sorted list of ids) for every row of `frame`."""
    pairs = dominance_pairs(frame, objectives, id_col)
    remaining = set(frame[id_col].to_list())
    ranks: dict[str, int] = {}
    rank = 0
    while remaining:
        rank += 1
        live = pairs.filter(pl.col("dominator").is_in(list(remaining))
                            & pl.col("dominated").is_in(list(remaining)))
        dominated = set(live["dominated"].to_list())
        front = remaining - dominated
        ranks.update(dict.fromkeys(front, rank))
        remaining = dominated
    dominated_by = pairs.group_by("dominated").agg(pl.col("dominator").sort().alias(
        "dominated_by")).rename({"dominated": id_col})
    return (
        pl.DataFrame({id_col: list(ranks), "pareto_rank": list(ranks.values())},
                     schema={id_col: pl.String(), "pareto_rank": pl.Int64()})
        .join(dominated_by, on=id_col, how="left")
        .with_columns(pl.col("dominated_by").fill_null(pl.lit([], dtype=pl.List(pl.String()))))
        .sort(id_col)
    )
