"""The methodology section's own text: the unit and currency conversions applied before the
metric formulas, and the definitions of DESIGN sections 1 and 7, as a committee reads them
(docs/methodology.md holds the full version). Text only: no formula is evaluated here, and the
metric formulas come from the result (`formulas`), never from here.
"""

from __future__ import annotations

#: (conversion, formula, unit, where it is computed): the steps before the metric formulas.
#: The metric formulas themselves are not here: the result carries them (`formulas`, the
#: engine's own text) and the report prints that, so the two cannot drift apart.
CONVERSIONS: tuple[tuple[str, str, str, str], ...] = (
    ("Price conversion", "wholesale_eur_per_kwh = price_eur_per_mwh / 1000", "EUR per kWh",
     "pipeline/engine/metrics.py"),
    ("FX", "price_eur_per_hour = price_original_per_hour / units_per_eur (ECB reference rate "
     "of the latest TARGET day on or before the price's date)", "EUR per hour",
     "sources/offers.py"),
)

#: (term, definition)
DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Goodput", "Output tokens of requests that met the SLO, per second, at the operating "
     "point (the knee of a concurrency sweep); raw throughput is shown beside it, never "
     "instead of it."),
    ("SLO pass", "A request passes when it completed inside the observation window with TTFT "
     "<= slo.ttft_ms, TPOT <= slo.tpot_ms (when set) and largest gap <= slo.max_itl_ms (when "
     "set)."),
    ("Knee", "The highest load level whose SLO attainment is >= slo.attainment and whose "
     "percentile limits are met; its token goodput is the throughput used for every metric."),
    ("Energy over a window", "The integral of power over the window (trapezoid, gaps "
     "reported), or the difference of an energy counter where one exists."),
    ("Boundary", "gpu_board, node or wall; the facility figure multiplies by the PUE whatever "
     "the boundary, so a gpu_board figure gives a lower bound. Boundaries are never summed."),
    ("Sovereignty level", "4 on-prem or colocation in the EU/EEA under the buyer's control; 3 "
     "EU provider, EU region, qualification covering the offer (SecNumCloud, EUCS high); 2 EU "
     "provider in an EU region, no non-EU extraterritorial law; 1 non-EU provider in an EU "
     "region; 0 outside the EU/EEA or unknown."),
    ("Eligibility", "Sovereignty at or above policy.min_sovereignty and every objective "
     "computable; an excluded candidate is shown with every reason."),
    ("Pareto rank", "Non-dominated sorting over the policy's objectives among eligible "
     "candidates: rank 1 is the frontier; A dominates B when A is at least as good on every "
     "objective and strictly better on one."),
    ("Ranges and probabilities", "Where inputs are given as ranges (low, mode, high), a Monte "
     "Carlo draws them: p5-p95 of each metric, P(frontier) = share of draws in which the "
     "candidate is on the frontier, pairwise P(A cheaper than B)."),
    ("Grades", "measured (own traces and power logs), production (vLLM metrics), reference "
     "(a public source with URL, date, licence), estimated (a model), declared (typed into "
     "the proposal with a source)."),
)

#: sovereignty level -> a few words for the summary table, and the one-line legend under it
#: (the full rubric is under DEFINITIONS and in pipeline/engine/ranking/sovereignty.py)
SOVEREIGNTY_WORDS: dict[int, str] = {
    4: "own, EU",
    3: "qualified EU cloud",
    2: "EU provider",
    1: "non-EU provider",
    0: "outside EU or unknown",
}
SOVEREIGNTY_LEGEND = ("Sovereignty level: 4 own or colocated hardware in the EU/EEA; 3 EU "
                      "cloud qualified for immunity from non-EU law (SecNumCloud); 2 EU provider "
                      "in an EU region; 1 non-EU provider (e.g. under the US CLOUD Act) in an EU "
                      "region; 0 outside the EU/EEA or unknown.")
