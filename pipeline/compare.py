"""The job of `scorecard diff` (and of a run's change since the last vintage): the markets of
vintages A and B and the stored scorecard of A read from the store, the proposal resolved and
computed on each market composed of A's and B's input groups, and the change attributed to
its causes by the engine (`pipeline.engine.questions.diff`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import duckdb

from pipeline import store
from pipeline.engine.questions.diff import (
    CAUSES,
    METRICS,
    attribute,
    changed_groups,
    coalitions,
    compose,
    recommendation_change,
)
from pipeline.engine.resolved import Market
from pipeline.engine.scorecard import compute, to_contract
from pipeline.inputs import read_market, resolve
from pipeline.store.vintages import coverage, failed_without_rows, sources_of
from schemas.proposal import Proposal
from schemas.result import BaselineRun, Diff, PartialMonth, Result

POINT_DRAWS = 100


class DiffError(ValueError):
    """A diff that cannot be made (no data for a vintage, a proposal that does not resolve)."""


def diff(con: duckdb.DuckDBPyConnection, vintage_a: str, vintage_b: str, proposal: Proposal,
         path: str, *, generated_at: str, code_version: str, use_stored: bool = True,
         market_b: Market | None = None, cache: Any | None = None) -> Diff:
    """The diff document (`schemas.result.Diff`): per candidate, metrics at A and B, the
    change and its attribution to CAUSES, rank and frontier changes. `market_b` is B's market
    when the caller has already read it (with the proposal's workload), else it is read;
    `cache` is the store evidence files are read back from (`pipeline.inputs.resolve`)."""
    if market_b is not None and market_b.vintage != vintage_b:
        raise ValueError(f"market_b is of vintage {market_b.vintage}, not {vintage_b}")
    for v in (vintage_a, vintage_b):
        if not store.has_loads_up_to(con, v):
            raise DiffError(f"no market data loaded for a vintage up to {v}; run "
                            f"`scorecard ingest --vintage {v}` first")
    market_a = read_market(con, vintage_a, proposal.workload)
    if market_b is None:
        market_b = read_market(con, vintage_b, proposal.workload)
    groups = changed_groups(market_a, market_b)
    contracts = {}
    for taken in coalitions(groups):
        market = compose(market_a, market_b, taken)
        # point figures only: the fewest Monte Carlo draws the engine accepts (the
        # recommendation is chosen on point figures too)
        card = compute(proposal, resolve(proposal, path, market, cache), market,
                       draws=POINT_DRAWS)
        contracts[taken] = to_contract(card, generated_at, code_version)
    results = {taken: {c.id: c for c in contract.candidates}
               for taken, contract in contracts.items()}
    document = (store.stored_scorecard(con, vintage_a, proposal.proposal.name) if use_stored
                else None)
    stored = None if document is None else Result.model_validate_json(document)
    notes = []
    run = None if stored is None else _shown(
        store.published(con, vintage_a, proposal.proposal.name), path)
    if stored is None:
        lead = (f"no stored scorecard of vintage {vintage_a} for this proposal: A is "
                "recomputed" if use_stored else "A is recomputed, as asked (--recompute),")
        notes.append(f"{lead} with today's proposal and code, so evidence and method changes "
                     "cannot be seen; only market changes are attributed")
    else:
        which = run.describe() if run else f"the scorecard stored for vintage {vintage_a}"
        notes.append(f"A is {which}, code {stored.code_version}")
        if run is not None and run.proposal_sha256 != proposal.sha256():
            notes.append(f"the proposal differs from the one published for {vintage_a} "
                         f"(sha256 {proposal.sha256()[:12]} now): evidence and method "
                         "changes include the proposal's")
    partial = {v: p for v in dict.fromkeys((vintage_a, vintage_b))
               if (p := partial_month(con, v)) is not None}
    borrowed = {v: [u for u in sources_of(con, v) if u.used != v]
                for v in dict.fromkeys((vintage_a, vintage_b))}
    for v, lent in borrowed.items():
        for u in lent:
            why = f" (its {v} load failed: {u.failed})" if u.failed else ""
            notes.append(f"{v} has no data of its own from {u.source}{why}: its rows are "
                         f"{u.used}'s")
        for source, error in failed_without_rows(con, v).items():
            notes.append(f"{v} has no data from {source}: its {v} load failed ({error}) and "
                         "no earlier month has its rows")
    if not groups:
        own = ("" if not borrowed[vintage_b] else
               f", because {vintage_b} reuses earlier rows for "
               f"{', '.join(u.source for u in borrowed[vintage_b])}")
        notes.append(f"the market data of {vintage_a} and {vintage_b} are identical for "
                     f"every input group{own}")
    candidates = attribute(groups, results, stored, code_version)
    return Diff(
        proposal=proposal.proposal.name, vintage_a=vintage_a, vintage_b=vintage_b,
        generated_at=generated_at, code_version=code_version,
        baseline="recomputed" if stored is None else "stored", changed_groups=groups,
        baseline_run=None if run is None else BaselineRun(
            vintage=run.vintage, proposal=run.proposal, proposal_sha256=run.proposal_sha256,
            proposal_source=run.source, generated_at=run.generated_at),
        rows_used={v: {u.source: u.used for u in sources_of(con, v)}
                   for v in dict.fromkeys((vintage_a, vintage_b))},
        causes=list(CAUSES), metrics=list(METRICS), notes=notes,
        candidates=candidates, partial_months=partial,
        recommendation=recommendation_change(
            (contracts[frozenset()] if stored is None else stored).recommendation,
            contracts[frozenset(groups)].recommendation, candidates))


def partial_month(con: duckdb.DuckDBPyConnection, vintage: str) -> PartialMonth | None:
    """How much of its month the vintage's own market data cover (`store.vintages.coverage`),
    when that is not all of it: what a diff warns of and a run shows beside its vintage."""
    covered = coverage(con, vintage)
    if covered is None or not covered.partial:
        return None
    return PartialMonth(through=covered.through.isoformat(), days_covered=covered.days,
                        days_in_month=covered.days_in_month, share_of_month=covered.share)


def _shown(run: store.StoredRun | None, path: str) -> store.StoredRun | None:
    """The run with its proposal file as a diff shows it: relative to the folder of today's
    proposal (`path`) when under it, else the file's name (the sha256 beside it says which
    proposal), so that no output a committee reads holds a machine's folders."""
    if run is None or run.source is None or not Path(run.source).is_absolute():
        return run
    source, folder = Path(run.source), Path(path).resolve().parent
    shown = (source.relative_to(folder).as_posix() if source.is_relative_to(folder)
             else source.name)
    return dataclasses.replace(run, source=shown)
