"""Compute a scorecard: resolve inputs, apply the metric identities, gate on policy, rank.

The result is one frame (one row per candidate, proposal order) plus the provenance list; the
JSON contract (DESIGN section 9) and every report are rendered from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from pipeline.metrics import add_metrics
from pipeline.pareto import OBJECTIVES, pareto_ranks
from pipeline.proposal import Proposal
from pipeline.resolve import Market, resolve

#: The contract keys of each candidate, in the order reports show them.
CONTRACT_KEYS = (
    "id", "label", "deployment", "provider", "zone", "tokens_per_s", "tokens_per_s_grade",
    "cost_eur_per_hour", "cpm_eur_per_mtok", "energy_j_per_token", "energy_boundary",
    "facility_kwh_per_mtok", "electricity_eur_per_mtok", "carbon_gco2e_per_mtok",
    "sovereignty_level", "eligible", "exclusion_reason", "pareto_rank", "dominated_by",
)


@dataclass(frozen=True)
class Scorecard:
    proposal: Proposal
    vintage: str
    table: pl.DataFrame
    sources: list[dict[str, Any]]

    @property
    def uses_example_data(self) -> bool:
        return bool(self.table["example_data"].any())


def compute(proposal: Proposal, path: str, mkt: Market) -> Scorecard:
    inputs, sources = resolve(proposal, path, mkt)
    table = _gate(add_metrics(inputs), proposal)
    objectives = list(proposal.policy.objectives)
    eligible = table.filter(pl.col("eligible"))
    ranks = pareto_ranks(eligible, objectives) if eligible.height else pl.DataFrame(
        schema={"id": pl.String(), "pareto_rank": pl.Int64(),
                "dominated_by": pl.List(pl.String())})
    table = table.join(ranks, on="id", how="left", maintain_order="left")
    return Scorecard(proposal, mkt.vintage, table, sources)


def _gate(table: pl.DataFrame, proposal: Proposal) -> pl.DataFrame:
    """Eligible = sovereignty at or above the policy minimum and every objective computable."""
    minimum = proposal.policy.min_sovereignty
    reasons = [
        pl.when(pl.col("sovereignty_level") < minimum).then(
            pl.format(f"sovereignty level {{}} is below the policy minimum {minimum}",
                      "sovereignty_level")),
        *[pl.when(pl.col(OBJECTIVES[o][0]).is_null()).then(
            pl.lit(f"{OBJECTIVES[o][0]} is not computable (see notes)"))
          for o in proposal.policy.objectives],
    ]
    return table.with_columns(
        pl.concat_str(reasons, separator="; ", ignore_nulls=True).alias("exclusion_reason"),
    ).with_columns(
        pl.when(pl.col("exclusion_reason") == "").then(None)
        .otherwise(pl.col("exclusion_reason")).alias("exclusion_reason"),
    ).with_columns(pl.col("exclusion_reason").is_null().alias("eligible"))


def to_contract(card: Scorecard, generated_at: str, code_version: str) -> dict[str, Any]:
    """The `--json` object of DESIGN section 9 (contract keys first, more after)."""
    candidates = []
    for row in card.table.iter_rows(named=True):
        item = {k: row[k] for k in CONTRACT_KEYS}
        item["notes"] = row["notes"]
        item["detail"] = {k: v for k, v in row.items() if k not in item}
        candidates.append(item)
    return {
        "proposal": card.proposal.proposal.name,
        "vintage": card.vintage,
        "generated_at": generated_at,
        "code_version": code_version,
        "sources": card.sources,
        "slo": card.proposal.slo.model_dump(),
        "policy": card.proposal.policy.model_dump(),
        "example_data": card.uses_example_data,
        "candidates": candidates,
    }
