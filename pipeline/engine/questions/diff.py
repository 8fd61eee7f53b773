"""What changed between two vintages of a proposal's scorecard, and why.

The same proposal is computed on the market of vintage A and of vintage B. The market is split
into input groups ("players"): GPU price (offer prices in their own currency), FX (the ECB rate
each offer's price is converted at), electricity price (zone day-ahead means), grid intensity,
and method/assumptions (every other piece of reference data: regions, hardware, provider
facts, ...). Markets mixing the groups of A and B are composed (`compose`), one group swapped
at a time, and each group's share of a metric's change is its Shapley value: the average, over
every order of swapping, of the change it makes when it is swapped in. The shares add up to
the whole change exactly, and do not depend on an arbitrary order (GPU price and FX multiply).
A group whose frames are identical in A and B gets zero and is not enumerated.

When the store holds the scorecard that was rendered for vintage A (`out__scorecard`), the
change is measured from that stored figure: what the committee saw last month. The part that
recomputing A with today's proposal and code changes (stored A -> recomputed A) is attributed to
"evidence" when only throughput or power figures differ, else to "method/assumptions" (PUE,
declared costs, TCO parameters, any other resolved input, code version), and the inputs that
changed are listed. Derived figures (the TCO's hourly cost, which holds electricity = power x
PUE x tariff) are not compared: they move with the evidence.

Here: which groups changed (`changed_groups`), the composed markets (`compose`), the
attribution of the results computed on them (`attribute`) and the recommendation at A and B
(`recommendation_change`). Reading the markets and the stored
scorecard, and computing each composed market's result, is the job's (pipeline/compare.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import polars as pl

from pipeline.engine.resolved import Market
from schemas.fx import convert_to_eur
from schemas.outputs import OUTPUTS, RANGED
from schemas.result import (
    CandidateResult,
    DiffCandidate,
    DiffFigures,
    DiffRecommendation,
    MetricChange,
    Recommendation,
    Result,
)

GPU_PRICE = "GPU price"
FX = "FX"
ELECTRICITY = "electricity price"
GRID = "grid intensity"
EVIDENCE = "evidence"
METHOD = "method/assumptions"
CAUSES = (GPU_PRICE, FX, ELECTRICITY, GRID, EVIDENCE, METHOD)

#: The metrics whose change is attributed: the ranged figures per million tokens (cost,
#: electricity, carbon: what prices, FX and the grid move), as schemas/outputs.toml declares
#: them.
METRICS = tuple(m for m in RANGED if OUTPUTS[m].unit.endswith("/Mtok"))
OFFER_KEY = ["provider_id", "offer_id", "region", "pricing_model"]
#: Candidate keys (top level or `detail`) that come from benchmark and power evidence: the
#: resolved throughput and power inputs (`pipeline.inputs.evidence`), their grades and the
#: boundary.
_EVIDENCE_INPUTS = ("tokens_per_s", "tokens_per_s_grade", "busy_power_w", "idle_power_w",
                    "power_grade", "energy_boundary")
#: Besides every other resolved input (`inputs`: PUE, TCO parameters, prices, ...).
_OTHER_INPUTS = ("cost_grade",)
_TOLERANCE = 1e-12
#: Two figures closer than this relative to the larger are the same figure: float noise
#: (a sum taken in another order, a figure read back from JSON) is not listed as an input
#: change (docs/monthly.md states it); the attribution still adds up to the whole change.
RELATIVE_TOLERANCE = 1e-9


def _with_rates_of(offers: pl.DataFrame, other: pl.DataFrame) -> pl.DataFrame:
    """`offers` priced at `other`'s exchange rate for the same offer (where `other` has the
    offer and converted it), through the one conversion `schemas.fx.convert_to_eur`:
    each price is looked up at the date of the rate it borrows."""
    if offers.is_empty():
        return offers
    theirs = other.filter(pl.col("fx_units_per_eur").is_not_null()).select(
        *OFFER_KEY, pl.col("fx_date").alias("_their_date"),
        pl.col("fx_units_per_eur").alias("_their_rate"))
    joined = offers.join(theirs, on=OFFER_KEY, how="left", maintain_order="left")
    rate_date = pl.coalesce("_their_date", "fx_date")
    rate = pl.coalesce("_their_rate", "fx_units_per_eur")
    rates = joined.filter(pl.col("currency") != "EUR").select(
        pl.col("currency"), rate_date.alias("rate_date"), rate.alias("units_per_eur"),
    ).unique(maintain_order=True)
    staged = joined.with_columns(
        pl.col("source_date").alias("_observed"),
        pl.when(pl.col("currency") != "EUR").then(rate_date).otherwise(pl.col("source_date"))
        .alias("source_date"),
    ).drop("fx_date", "fx_units_per_eur", "price_eur_per_hour", "price_eur_per_gpu_hour",
           "_their_date", "_their_rate")
    converted = convert_to_eur(staged, rates)
    return converted.with_columns(pl.col("_observed").alias("source_date")).drop(
        "_observed").select(offers.columns).sort(OFFER_KEY)


def _profile_columns(frame: pl.DataFrame | None, group: str) -> list[str]:
    """The columns of the workload-weighted profile frame that belong to a group."""
    if frame is None:
        return []
    prefix = ("wholesale", "price") if group == ELECTRICITY else ("grid",)
    return [c for c in frame.columns if c.startswith(prefix)]


def _compose_profile(a: pl.DataFrame | None, b: pl.DataFrame | None, electricity: bool,
                     grid: bool) -> pl.DataFrame | None:
    """Per zone, the profile-weighted price of one vintage beside the intensity of the
    other (the frame holds both, one column set per group)."""
    if electricity == grid or a is None or b is None:
        # Both groups from one vintage, or only one vintage has sub-daily data: the whole
        # frame follows the electricity group.
        return b if electricity else a
    price_from, grid_from = (b, a) if electricity else (a, b)
    prices = price_from.select("zone", *_profile_columns(price_from, ELECTRICITY))
    grids = grid_from.select("zone", *_profile_columns(grid_from, GRID))
    return prices.join(grids, on="zone", how="full", coalesce=True).sort("zone").select(
        [c for c in a.columns if c in prices.columns or c in grids.columns])


def _profile_rows(group: str) -> Callable[[pl.DataFrame], pl.DataFrame]:
    """The zones of the profile frame that have the group's weighted figure, with its columns:
    a zone whose month gained hourly prices but no hourly intensities has a row with a null
    intensity, which is no grid figure, so grid intensity has not changed."""
    def rows(frame: pl.DataFrame) -> pl.DataFrame:
        columns = _profile_columns(frame, group)
        return frame.select("zone", *columns).filter(pl.any_horizontal(
            pl.col(c).is_not_null() for c in columns if c.endswith("_profile")))
    return rows


Columns = list[str] | Callable[[pl.DataFrame], pl.DataFrame] | None

#: The Market fields each market group's figures are in (what `compose` swaps for it), with
#: the columns compared (None: all; the offers hold two groups' figures) or the rows and
#: columns (the workload profile: one column set per group, and only the zones that have the
#: group's figure). Every other compared field is method/assumptions'.
GROUP_FIELDS: dict[str, tuple[tuple[str, Columns], ...]] = {
    GPU_PRICE: (("offers", [*OFFER_KEY, "price_original_per_hour", "currency", "gpu",
                            "gpu_count"]),),
    # the rates of the offers' prices, and of amounts declared in other currencies
    FX: (("offers", [*OFFER_KEY, "fx_units_per_eur"]), ("fx", None)),
    ELECTRICITY: (("prices", ["zone", "month", "price_eur_per_mwh"]),
                  # an all-in tariff's network costs and taxes
                  ("tariff_components", ["country", "consumption_band", "year",
                                         "network_eur_per_kwh", "taxes_levies_eur_per_kwh"]),
                  ("profile", _profile_rows(ELECTRICITY))),
    GRID: (("intensities", ["zone", "year", "intensity_gco2e_per_kwh",
                            "emission_factor_basis"]),
           # the market-based side of the grid
           ("residual_mixes", ["country", "year", "intensity_gco2e_per_kwh"]),
           ("profile", _profile_rows(GRID))),
}


#: the fields two groups share, each composed from both vintages
_SHARED = ("offers", "profile")


def compose(a: Market, b: Market, taken: frozenset[str]) -> Market:
    """The market of A with the groups in `taken` swapped for B's: each group's fields
    (GROUP_FIELDS) from B, the offers' prices and rates and the profile's column sets from
    the vintage of their own group, the rest from B when method/assumptions is taken."""
    gpu, fx = GPU_PRICE in taken, FX in taken
    base, other = (b.offers, a.offers) if gpu else (a.offers, b.offers)
    offers = base if gpu == fx else _with_rates_of(base, other)
    rest = b if METHOD in taken else a
    swapped: dict[str, Any] = {name: getattr(b if group in taken else a, name)
                               for group, fields in GROUP_FIELDS.items()
                               for name, _ in fields if name not in _SHARED}
    return dataclasses.replace(
        rest, vintage=b.vintage if taken else a.vintage, offers=offers,
        profile=_compose_profile(a.profile, b.profile, ELECTRICITY in taken, GRID in taken),
        **swapped)


def _same(x: pl.DataFrame, y: pl.DataFrame, columns: list[str]) -> bool:
    cols = [c for c in columns if c in x.columns and c in y.columns]
    return x.select(cols).sort(cols).equals(y.select(cols).sort(cols))


def changed_groups(a: Market, b: Market) -> list[str]:
    """The market groups whose figures differ between A and B (the others get zero)."""
    grouped = {name for fields in GROUP_FIELDS.values() for name, _ in fields}
    method = tuple((f.name, None) for f in dataclasses.fields(Market)
                   if f.compare and f.name != "vintage" and f.name not in grouped)
    return [group for group, fields in [*GROUP_FIELDS.items(), (METHOD, method)]
            if not all(_same_figure(getattr(a, name), getattr(b, name), columns)
                       for name, columns in fields)]


def _same_figure(x: Any, y: Any, columns: Columns) -> bool:
    """Two vintages' figure: frames equal on `columns` (in any row order), anything else
    equal; a frame one vintage lacks is a change."""
    if isinstance(x, pl.DataFrame) and isinstance(y, pl.DataFrame):
        if callable(columns):
            x, y = columns(x), columns(y)
        return _same(x, y, columns if isinstance(columns, list) else x.columns)
    if isinstance(x, pl.DataFrame) or isinstance(y, pl.DataFrame):
        return False
    return bool(x == y)


def shapley(players: list[str], worth: Callable[[frozenset[str]], float | None]
            ) -> dict[str, float | None]:
    """Each player's Shapley value of `worth` (None when any coalition's worth is None)."""
    n = len(players)
    values: dict[str, float | None] = {}
    for p in players:
        others = [q for q in players if q != p]
        total: float | None = 0.0
        for size in range(n):
            weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
            for coalition in itertools.combinations(others, size):
                with_p, without = worth(frozenset((*coalition, p))), worth(frozenset(coalition))
                if with_p is None or without is None or total is None:
                    total = None
                    break
                total += weight * (with_p - without)
        values[p] = total
    return values


def _inputs(c: CandidateResult, names: tuple[str, ...]) -> dict[str, Any]:
    """Each of `names`: the candidate's key when its document has it, else its `detail`'s."""
    keys = c.model_dump(include=set(names), exclude_unset=True)
    return {k: keys.get(k, c.detail.get(k)) for k in names}


def _resolved_inputs(c: CandidateResult) -> dict[str, Any]:
    """The candidate's resolved numeric inputs other than the evidence ones: the mode, or
    (low, mode, high) for a range."""
    return {i.input: i.mode if i.low == i.mode == i.high else (i.low, i.mode, i.high)
            for i in c.inputs if i.input not in _EVIDENCE_INPUTS}


def _close(x: Any, y: Any) -> bool:
    """Equal, or numbers (or tuples of them) within RELATIVE_TOLERANCE of each other."""
    if isinstance(x, tuple) and isinstance(y, tuple):
        return len(x) == len(y) and all(_close(a, b) for a, b in zip(x, y, strict=True))
    numbers = (int, float)
    if (isinstance(x, numbers) and isinstance(y, numbers)
            and not isinstance(x, bool) and not isinstance(y, bool)):
        return math.isclose(x, y, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)
    return bool(x == y)


def _changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`key: old -> new` for each key whose value differs by more than float noise
    (RELATIVE_TOLERANCE), in the order of `old`, then `new`."""
    return [f"{k}: {' -> '.join(_shown(old.get(k), new.get(k)))}"
            for k in dict.fromkeys([*old, *new]) if not _close(old.get(k), new.get(k))]


#: the significant digits an input change is printed with, as the diff's figures are
_DIGITS = 4


def _shown(old: Any, new: Any) -> tuple[str, str]:
    """An input's old and new value as printed: numbers to _DIGITS significant digits, or as
    many more as it takes to tell the two apart (300,000 -> 300,000.3), a range element by
    element, a missing value n/a, anything else as Python writes it."""
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        pairs = [_shown(x, y) for x, y in zip(old, new, strict=True)]
        return (f"({', '.join(x for x, _ in pairs)})", f"({', '.join(y for _, y in pairs)})")
    if _number(old) and _number(new):
        for digits in range(_DIGITS, 18):
            shown = _rounded(old, digits), _rounded(new, digits)
            if shown[0] != shown[1]:
                return shown
    return _one(old), _one(new)


def _one(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, tuple):
        return f"({', '.join(map(_one, value))})"
    return _rounded(value, _DIGITS) if _number(value) else repr(value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rounded(value: float, digits: int) -> str:
    """`value` rounded to `digits` significant digits, thousands separated, no trailing .0
    (2,800, 0.3, 163.3)."""
    rounded = float(f"{value:.{digits}g}")
    return f"{int(rounded):,}" if rounded.is_integer() and abs(rounded) < 1e15 else f"{rounded:,}"


def _delta(new: Any, old: Any) -> float | None:
    return None if new is None or old is None else new - old


def coalitions(groups: list[str]) -> list[frozenset[str]]:
    """Every set of groups that may be swapped in, the empty one first: the markets whose
    results `attribute` compares."""
    return [frozenset(c) for size in range(len(groups) + 1)
            for c in itertools.combinations(groups, size)]


def attribute(groups: list[str], results: Mapping[frozenset[str], dict[str, CandidateResult]],
              stored: Result | None, code_version: str) -> list[DiffCandidate]:
    """Per candidate (B's, then those gone in B): metrics at A and B, the change and its
    attribution to CAUSES, rank and frontier changes. `results` holds each coalition's
    candidates by id (the contract's, computed on `compose(a, b, taken)`); A is the `stored`
    scorecard when there is one, else the result recomputed on A's market."""
    now = results[frozenset(groups)]
    recomputed_a = results[frozenset()]
    baseline = recomputed_a if stored is None else {c.id: c for c in stored.candidates}
    candidates = []
    for cid, b in now.items():
        a = baseline.get(cid)
        if a is None:
            candidates.append(DiffCandidate(
                id=cid, label=b.label, status="new in B", a=None, b=_figures(b),
                change=None, rank_change=None, frontier_change=None, changed_inputs=[]))
            continue
        changed_inputs, residual_cause = _residual_cause(a, recomputed_a[cid], stored,
                                                         code_version)
        change: dict[str, MetricChange] = {}
        for metric in METRICS:
            by_cause: dict[str, float | None] = dict.fromkeys(CAUSES, 0.0)
            def worth(taken: frozenset[str], m: str = metric, i: str = cid) -> float | None:
                figure: float | None = getattr(results[taken][i], m)
                return figure

            market = shapley(groups, worth)
            by_cause.update(market)
            figure_a, figure_b = getattr(a, metric), getattr(b, metric)
            residual = _delta(getattr(recomputed_a[cid], metric), figure_a)
            if residual is None:
                by_cause[residual_cause] = None
            elif abs(residual) > _TOLERANCE:
                current = by_cause[residual_cause]
                by_cause[residual_cause] = None if current is None else current + residual
            total = _delta(figure_b, figure_a)
            change[metric] = MetricChange(
                a=figure_a, b=figure_b, change=total,
                relative=None if total is None or not figure_a else total / figure_a,
                by_cause={k: None if v is None else _clean(v) for k, v in by_cause.items()})
        candidates.append(DiffCandidate(
            id=cid, label=b.label, status="in both", a=_figures(a), b=_figures(b),
            change=change,
            rank_change=(None if a.pareto_rank == b.pareto_rank else
                         f"{_rank(a)} -> {_rank(b)}"),
            frontier_change=_frontier_change(a, b), changed_inputs=changed_inputs))
    for cid, a in baseline.items():
        if cid not in now:
            candidates.append(DiffCandidate(
                id=cid, label=a.label, status="gone in B", a=_figures(a), b=None,
                change=None, rank_change=None, frontier_change=None, changed_inputs=[]))
    return candidates


def recommendation_change(a: Recommendation | None, b: Recommendation | None,
                          candidates: list[DiffCandidate]) -> DiffRecommendation | None:
    """The recommendation at A and at B, with the CPM change of the candidate recommended at
    B (`attribute`'s, or its CPM at B alone when it is new in B); None when A has none (a
    scorecard stored before recommendations)."""
    if a is None or b is None:
        return None
    chosen = next((c for c in candidates if c.id == b.candidate), None)
    cpm = None
    if chosen is not None and chosen.change is not None:
        cpm = chosen.change["cpm_eur_per_mtok"]
    elif chosen is not None and chosen.b is not None:
        cpm = MetricChange(a=None, b=chosen.b.cpm_eur_per_mtok, change=None, relative=None,
                           by_cause=dict.fromkeys(CAUSES))
    return DiffRecommendation(a=a.candidate, b=b.candidate, changed=a.candidate != b.candidate,
                              cpm_eur_per_mtok=cpm)


def _clean(value: float) -> float:
    """Round away floating-point dust (1e-17) so unchanged figures read as 0."""
    return 0.0 if abs(value) < _TOLERANCE else value


def _figures(c: CandidateResult) -> DiffFigures:
    return DiffFigures.model_validate({
        **{m: getattr(c, m) for m in METRICS}, "pareto_rank": c.pareto_rank,
        "eligible": c.eligible, "sovereignty_level": c.sovereignty_level})


def _rank(c: CandidateResult) -> str:
    return "excluded" if not c.eligible else str(c.pareto_rank)


def _frontier_change(a: CandidateResult, b: CandidateResult
                     ) -> Literal["entered the frontier", "left the frontier"] | None:
    was, now = a.pareto_rank == 1, b.pareto_rank == 1
    return None if was == now else "entered the frontier" if now else "left the frontier"


def _residual_cause(stored: CandidateResult, recomputed: CandidateResult,
                    document: Result | None, code_version: str) -> tuple[list[str], str]:
    """Which inputs differ between the stored and the recomputed A, and the cause the
    difference is attributed to."""
    evidence = _changes(_inputs(stored, _EVIDENCE_INPUTS),
                        _inputs(recomputed, _EVIDENCE_INPUTS))
    others = _changes({**_inputs(stored, _OTHER_INPUTS), **_resolved_inputs(stored)},
                      {**_inputs(recomputed, _OTHER_INPUTS), **_resolved_inputs(recomputed)})
    if document is not None and document.code_version != code_version:
        others.append(f"code_version: {document.code_version!r} -> {code_version!r}")
    return evidence + others, EVIDENCE if evidence and not others else METHOD
