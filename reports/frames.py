"""The result (schemas/result.py: DESIGN section 9, plus the decision-engine keys) as flat
frames.

Every report (HTML tables, XLSX sheets, CSV and Parquet) is built from these frames, so a
column and its order are chosen in one place; a run builds them once (`Frames`) and hands
them to every renderer. Column names carry their unit, as in the store;
`HEADERS` gives the human label (with the unit) that spreadsheets show, built from the
declarations of schemas/outputs.py.

A result stored before a key was added reads it at its default: empty frames (or null
columns), and the renderers say "not computed for this proposal".
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from reports.page import eur
from schemas.outputs import OUTPUTS, PERCENTILES, RANGED, Output, columns_for, layout
from schemas.result import CandidateResult, Change, Percentiles, PlanMonth, PlanSchedule, Result


@dataclass(frozen=True)
class Metric:
    """A figure tables print with fixed decimals: its declaration (schemas/outputs.toml)."""

    output: Output
    decimals: int

    @property
    def unit(self) -> str:
        return self.output.unit

    @property
    def label(self) -> str:
        return self.output.label

    @property
    def short_label(self) -> str:
        """The narrower name with the unit, for tight tables: "Elec. (EUR/Mtok)"."""
        return f"{self.output.short or self.output.title} ({self.unit})"


#: column -> metric, each figure declared with its decimals: HEADERS, the scorecard table, the
#: terminal summary and the diff take names, units and decimals from here
METRICS: dict[str, Metric] = {k: Metric(o, o.decimals) for k, o in OUTPUTS.items()
                              if o.decimals is not None}


def in_sentence(column: str) -> str:
    """A declared figure's name inside a sentence: lower case, an acronym (CPM) kept as it
    is."""
    title = OUTPUTS[column].title
    return title if title.isupper() else title.lower()


#: column -> label with unit, for every column a person reads (metric labels from METRICS).
HEADERS: dict[str, str] = {
    "id": "Candidate id",
    "cost_model": "Cost model",
    "label": "Candidate",
    "deployment": "Deployment",
    "provider": "Provider",
    "zone": "Zone",
    "region": "Region",
    "gpu": "GPU",
    "gpu_count": "GPUs (count)",
    "tokens_per_s_grade": "Goodput grade",
    "cost_grade": "Cost grade",
    "power_grade": "Power grade",
    "energy_boundary": "Energy boundary",
    "electricity_grade": "Electricity grade",
    "grid_grade": "Grid grade",
    "eligible": "Eligible",
    "exclusion_reason": "Exclusion reason",
    "pareto_rank": "Pareto rank (1 = frontier)",
    "dominated_by": "Dominated by (frontier, at most 5)",
    "shortlisted": "Shortlisted",
    **{k: OUTPUTS[k].label for k in ("average_power_w", "pue", "electricity_eur_per_kwh",
                                      "grid_gco2e_per_kwh", "sovereignty_level", "p_frontier",
                                      "dominated_by_count", "frontier_distance_share")},
    **{k: m.label for k, m in METRICS.items()},
    **{f"{m}_{p}": f"{OUTPUTS[m].label} {p}" for m in RANGED for p in PERCENTILES},
}

#: the scorecard table's figures (declared shown in "csv"), and those of them with p5/p50/p95
#: columns (after the others)
SCORECARD_FIGURES = columns_for("csv")
SCORECARD_RANGED = tuple(m for m in RANGED if m in SCORECARD_FIGURES)
#: the dtypes of the scorecard table's keys that are no figure (a figure's: Float64, or Int64
#: for a whole number)
_KEY_TYPES: dict[str, pl.DataType] = {
    "id": pl.String(), "label": pl.String(), "deployment": pl.String(),
    "provider": pl.String(), "zone": pl.String(), "gpu": pl.String(), "gpu_count": pl.Int64(),
    "tokens_per_s_grade": pl.String(), "cost_grade": pl.String(),
    "energy_boundary": pl.String(), "eligible": pl.Boolean(), "exclusion_reason": pl.String(),
    "pareto_rank": pl.Int64(), "dominated_by": pl.String(), "shortlisted": pl.Boolean(),
}
_SCORECARD_COLUMNS: dict[str, pl.DataType] = {
    **{c: _KEY_TYPES[c] if c in _KEY_TYPES else pl.Int64() if OUTPUTS[c].integer
       else pl.Float64()
       for c in layout(
           SCORECARD_FIGURES, lead=("id", "label", "deployment", "provider", "zone", "gpu",
                                    "gpu_count"),
           beside={"tokens_per_s": ("tokens_per_s_grade",),
                   "cost_eur_per_hour": ("cost_grade",),
                   "energy_j_per_token": ("energy_boundary",),
                   "sovereignty_level": ("eligible", "exclusion_reason", "pareto_rank",
                                         "dominated_by", "dominated_by_count", "shortlisted",
                                         "frontier_distance_share")})},
    **{f"{m}_{p}": pl.Float64() for m in SCORECARD_RANGED for p in PERCENTILES},
}


def ranges(candidate: CandidateResult) -> dict[str, Percentiles]:
    """metric -> its p5, p50, p95: the engine's `uncertainty`, without the metrics that had no
    draws (null there)."""
    return {m: r for m, r in candidate.uncertainty.items() if r and r.p5 is not None}


def value(candidate: CandidateResult, key: str) -> Any:
    """A key the candidate holds, else the same key under `detail` (inputs live there), else
    None."""
    if key in candidate.model_fields_set:
        return getattr(candidate, key)
    return candidate.detail.get(key)


def figure(candidate: CandidateResult | None, key: str) -> float | None:
    """A number under the candidate's `detail` (None without the candidate, the key or a
    number)."""
    found = None if candidate is None else candidate.detail.get(key)
    return found if isinstance(found, int | float) else None


def scorecard_frame(result: Result) -> pl.DataFrame:
    """One row per candidate in the proposal's order: the scorecard table of the exports."""
    rows = []
    for c in result.candidates:
        spread = ranges(c)
        row = {k: value(c, k) for k in _SCORECARD_COLUMNS}
        row["dominated_by"] = "; ".join(c.dominated_by or []) or None
        for m in SCORECARD_RANGED:
            for p in PERCENTILES:
                row[f"{m}_{p}"] = None if m not in spread else getattr(spread[m], p)
        rows.append(row)
    return pl.DataFrame(rows, schema=_SCORECARD_COLUMNS)


def has_ranges(result: Result) -> bool:
    return any(ranges(c) for c in result.candidates)


def has_p_frontier(result: Result) -> bool:
    return any(c.p_frontier is not None for c in result.candidates)


_BREAKDOWN_COLUMNS: dict[str, pl.DataType] = {
    "id": pl.String(), "cost_model": pl.String(), "tokens_per_s": pl.Float64(),
    "cost_eur_per_hour": pl.Float64(),
    "average_power_w": pl.Float64(), "energy_boundary": pl.String(), "pue": pl.Float64(),
    "electricity_eur_per_kwh": pl.Float64(), "grid_gco2e_per_kwh": pl.Float64(),
    "cpm_eur_per_mtok": pl.Float64(), "energy_j_per_token": pl.Float64(),
    "facility_kwh_per_mtok": pl.Float64(), "electricity_eur_per_mtok": pl.Float64(),
    "carbon_gco2e_per_mtok": pl.Float64(), "embodied_gco2e_per_mtok": pl.Float64(),
}


def breakdown_frame(result: Result) -> pl.DataFrame:
    """Per candidate: every input beside every metric it feeds (the identities, row by row)."""
    return pl.DataFrame([{k: value(c, k) for k in _BREAKDOWN_COLUMNS}
                         for c in result.candidates], schema=_BREAKDOWN_COLUMNS)


#: input column -> (grade key, source key), for a result without the engine's `inputs` list
#: (name and unit from schemas/outputs.py). The grade of PUE is `declared`: it can only come
#: from the proposal (the candidate or [defaults]).
INPUTS: dict[str, tuple[str | None, str]] = {
    "tokens_per_s": ("tokens_per_s_grade", "tokens_per_s_source"),
    "cost_eur_per_hour": ("cost_grade", "cost_source"),
    "busy_power_w": ("power_grade", "power_source"),
    "pue": (None, "pue_source"),
    "electricity_eur_per_kwh": ("electricity_grade", "electricity_source"),
    "grid_gco2e_per_kwh": ("grid_grade", "grid_source"),
}

_ASSUMPTION_COLUMNS: dict[str, pl.DataType] = {
    "id": pl.String(), "input": pl.String(), "column": pl.String(), "value": pl.Float64(),
    "low": pl.Float64(), "high": pl.Float64(), "unit": pl.String(), "grade": pl.String(),
    "source": pl.String(),
}


def assumptions_frame(result: Result) -> pl.DataFrame:
    """Every input of every candidate, long: one row per (candidate, input)
    (`input_rows`)."""
    return pl.DataFrame([r for c in result.candidates for r in input_rows(c)],
                        schema=_ASSUMPTION_COLUMNS)


def input_rows(c: CandidateResult) -> list[dict[str, Any]]:
    """A candidate's inputs as the assumptions frame's rows: the engine's `inputs` list (with
    low/mode/high of ranged inputs) when the result has it, else the inputs named in INPUTS,
    read from the contract and `detail`."""
    if c.inputs:
        return [{"id": c.id, "input": i.input, "column": i.key, "value": i.mode,
                 "low": i.low, "high": i.high, "unit": i.unit, "grade": i.grade,
                 "source": i.source} for i in c.inputs]
    rows = []
    for column, (grade_key, source_key) in INPUTS.items():
        name, unit = OUTPUTS[column].title, OUTPUTS[column].unit
        figure = value(c, column)
        grade = value(c, grade_key) if grade_key else ("declared" if figure is not None
                                                      else None)
        source = value(c, source_key)
        if column == "busy_power_w" and value(c, "energy_boundary"):
            unit = f"W at {value(c, 'energy_boundary')}"
        if column == "grid_gco2e_per_kwh" and value(c, "grid_basis"):
            source = f"{source} [{value(c, 'grid_basis')}]"
        rows.append({"id": c.id, "input": name, "column": column, "value": figure,
                     "low": None, "high": None, "unit": unit, "grade": grade,
                     "source": source})
    return rows


#: the grades of a figure read from the candidate's own files (benchmark results, power logs,
#: production metrics; a proxy: another model's or precision's, declared)
#: a check the result does not record for an input (yet): shown so, never guessed
NOT_CHECKED = "not checked"
#: the declaration an input comes from (its key `candidates[i].throughput...`) -> the detail
#: key naming its evidence files with their sha256
_FILES_OF = {"throughput": "tokens_per_s_source", "power": "power_source"}


#: the buyer's declarations every candidate shares: the demand (volume and margins) and the
#: workload's hours (an elastic floor's hour-by-hour billing reads them), not a candidate's own
SHARED_KEYS = ("demand.", "workload.")


def own_inputs(c: CandidateResult) -> list[dict[str, Any]]:
    """A candidate's own inputs (`input_rows`) but the buyer's shared ones (SHARED_KEYS)."""
    return [r for r in input_rows(c) if not r["column"].startswith(SHARED_KEYS)]


def _declaration(key: str) -> str | None:
    """The candidate's declaration an input key names (`throughput`, `power`, ...), None for
    a key outside the candidate (a TCO profile, the market, a result without input keys)."""
    found = re.match(r"candidates\[\d+\]\.(\w+)", key)
    return found.group(1) if found else None


def evidence_checks(c: CandidateResult, declaration: str | None) -> list[tuple[str, str]]:
    """What was checked on a candidate's evidence of `declaration` and the outcome, as the
    result records it (`CandidateResult.evidence_checks`): "passed: <detail>" per check; an
    input whose checks the result does not record shows its identity as `NOT_CHECKED`."""
    recorded = [e for e in c.evidence_checks if e.input == declaration]
    if not recorded:
        return [("identity", NOT_CHECKED)]
    return [(e.check, e.outcome if e.detail is None else f"{e.outcome}: {e.detail}")
            for e in recorded]


_EVIDENCE_COLUMNS: dict[str, pl.DataType] = {
    "id": pl.String(), "input": pl.String(), "grade": pl.String(), "key": pl.String(),
    "files": pl.String(), "checks": pl.String(),
}


def evidence_frame(result: Result) -> pl.DataFrame:
    """The fitness of each figure: per candidate and input (`own_inputs`) its grade,
    the key it is read from, for a figure read from the candidate's own files those files
    with their sha256 and what was checked on them (`evidence_checks`: "identity: held:
    ...; SLO attainment: ..."); null for the others (nothing of theirs is checked here)."""
    rows = []
    for c in result.candidates:
        for i in own_inputs(c):
            declaration = _declaration(i["column"])
            files = c.detail.get(_FILES_OF[declaration]) if declaration in _FILES_OF else None
            # read from the candidate's own files (hashed), whatever grade the checks left it
            own = isinstance(files, str) and "(sha256 " in files
            rows.append({
                "id": c.id, "input": i["input"], "grade": i["grade"], "key": i["column"],
                "files": files if own else None,
                "checks": "; ".join(f"{name}: {said}" for name, said in evidence_checks(
                    c, declaration)) if own else None})
    return pl.DataFrame(rows, schema=_EVIDENCE_COLUMNS)


def measured_text(c: CandidateResult) -> str:
    """How much of a candidate's figures is measured, in one sentence: `2 of 9 inputs of x
    are measured (tokens_per_s, busy_power_w); assumed: pue; the other 6 declared or market
    reference data`."""
    inputs = own_inputs(c)
    by_grade: dict[str, list[str]] = {}
    for i in inputs:
        by_grade.setdefault(i["grade"] or "ungraded", []).append(i["input"])
    measured = by_grade.pop("measured", []) + by_grade.pop("production", [])
    said = [f"{len(measured)} of {len(inputs)} inputs of {c.id} are measured"
            + (f" ({', '.join(measured)})" if measured else "")]
    rest = len(inputs) - len(measured)
    for grade in ("proxy", "estimated", "assumed"):
        if names := by_grade.get(grade):
            said.append(f"{grade}: {', '.join(names)}")
            rest -= len(names)
    if rest:
        said.append(f"the other {rest} declared or market reference data")
    return "; ".join(said)


_SOURCE_COLUMNS: dict[str, pl.DataType] = {
    "kind": pl.String(), "subject": pl.String(), "url": pl.String(), "date": pl.String(),
    "licence": pl.String(), "snapshot_sha256": pl.String(),
}


def sources_frame(result: Result) -> pl.DataFrame:
    """The report's Sources table: one row per source (kind, URL, date, licence and file
    hash), its subjects joined ("DE-LU 2025-12, ES 2025-12, ..." for one price file), in the
    order the result lists them. The result's `sources` keep one entry per subject."""
    rows = [{"kind": s.kind, "subject": s.subject, "url": s.url, "date": s.date,
             "licence": s.licence, "snapshot_sha256": s.snapshot_sha256}
            for s in result.sources]
    same = [c for c in _SOURCE_COLUMNS if c != "subject"]
    return (pl.DataFrame(rows, schema=_SOURCE_COLUMNS)
            .group_by(same, maintain_order=True)
            .agg(pl.col("subject").str.join(", "))
            .select(list(_SOURCE_COLUMNS)))


SIZING_COLUMNS: dict[str, pl.DataType] = {
    "candidate": pl.String(), "capacity": pl.String(), "instances": pl.Int64(),
    "billed_instances": pl.Float64(), "utilisation": pl.Float64(),
    "monthly_cost_eur": pl.Float64(), "headroom_instances": pl.Int64(),
    "monthly_headroom_cost_eur": pl.Float64(), "monthly_redundancy_cost_eur": pl.Float64(),
    "period_cost_eur": pl.Float64(), "annual_mwh": pl.Float64(), "annual_tco2e": pl.Float64(),
    "littles_law_instances": pl.Int64(), "goodput_instances": pl.Int64(),
    "binding": pl.String(),
}
#: columns shown only when some candidate has a figure (the Little's-law count needs a
#: request-shaped demand and an operating concurrency; a result stored before the margins
#: were computed has none of theirs)
SIZING_WHEN_PRESENT = ("littles_law_instances", "headroom_instances",
                       "monthly_headroom_cost_eur", "monthly_redundancy_cost_eur",
                       "period_cost_eur")
#: shown beside the Little's-law count only (with one count there is nothing to choose from),
#: and when the result has them
SIZING_WITH_LITTLES_LAW = ("goodput_instances", "binding")

SIZING_HEADERS = {
    "candidate": "Candidate id",
    "capacity": "Capacity (provisioned or elastic)",
    # the busy share of the instance-hours billed
    "utilisation": f"{OUTPUTS['billed_utilisation'].title} (share of billed hours)",
    **{k: OUTPUTS[k].label for k in ("instances", "billed_instances", "monthly_cost_eur",
                                      "annual_mwh", "annual_tco2e",
                                      "littles_law_instances", "goodput_instances")},
    "binding": "Binding count (the larger)",
    # short: the table holds up to thirteen columns within 1280 px
    "headroom_instances": "Headroom (instances)",
    "monthly_headroom_cost_eur": "Headroom (EUR/month)",
    "monthly_redundancy_cost_eur": "Spares (EUR/month)",
    "period_cost_eur": "Over the amortisation (EUR)",
}


def sizing_frame(result: Result) -> pl.DataFrame:
    rows = [r.model_dump(include=set(SIZING_COLUMNS)) for r in result.sizing]
    return _present(pl.DataFrame(rows, schema=SIZING_COLUMNS))


def _present(sizing: pl.DataFrame) -> pl.DataFrame:
    """The sizing frame without the SIZING_WHEN_PRESENT columns no row fills."""
    # the spares' cost is 0 everywhere when no [demand] redundancy_instances is declared
    absent = [c for c in SIZING_WHEN_PRESENT if c in sizing.columns and (
        sizing[c].null_count() == sizing.height
        or (c == "monthly_redundancy_cost_eur" and not (sizing[c].fill_null(0.0) != 0).any()))]
    # a result stored before the binding count has neither
    absent += [c for c in SIZING_WITH_LITTLES_LAW if c in sizing.columns and (
        "littles_law_instances" in absent or sizing[c].null_count() == sizing.height)]
    return sizing.drop(absent)


PAIRWISE_COLUMNS: dict[str, pl.DataType] = {
    "a": pl.String(), "b": pl.String(), "metric": pl.String(), "p_a_lower": pl.Float64(),
}


def pairwise_frame(result: Result) -> pl.DataFrame:
    rows = [r.model_dump() for r in result.pairwise]
    return pl.DataFrame(rows, schema=PAIRWISE_COLUMNS)


BREAK_EVEN_COLUMNS: dict[str, pl.DataType] = {
    "candidate": pl.String(), "versus": pl.String(), "versus_cpm_eur_per_mtok": pl.Float64(),
    "break_even_tokens_per_day": pl.Float64(), "tokens_per_day": pl.Float64(),
    "cpm_eur_per_mtok": pl.Float64(),
}

_CPM, _VOLUME = OUTPUTS["cpm_eur_per_mtok"], OUTPUTS["tokens_per_day"]

BREAK_EVEN_HEADERS = {
    "candidate": "Candidate id", "versus": "Versus (cloud candidate id)",
    "versus_cpm_eur_per_mtok": f"Cloud {_CPM.label}",
    "break_even_tokens_per_day": f"Break-even {_VOLUME.label.lower()}",
    "tokens_per_day": _VOLUME.label, "cpm_eur_per_mtok": f"{_CPM.title} at this volume "
                                                         f"({_CPM.unit})",
}


def break_even_frame(result: Result) -> pl.DataFrame:
    """The break-even curves, long: one row per curve point (an on-prem candidate's CPM at a
    daily volume), with the cloud CPM it is compared with and the crossing volume."""
    rows = [
        {"candidate": b.candidate, "versus": b.versus,
         "versus_cpm_eur_per_mtok": b.versus_cpm_eur_per_mtok,
         "break_even_tokens_per_day": b.tokens_per_day,
         "tokens_per_day": p.tokens_per_day, "cpm_eur_per_mtok": p.cpm_eur_per_mtok}
        for b in result.break_even for p in b.curve
    ]
    return pl.DataFrame(rows, schema=BREAK_EVEN_COLUMNS)


RUBRIC_COLUMNS = {"id": pl.String(), "objective": pl.String(), "title": pl.String(),
                  "weight_pct": pl.Float64(), "seal": pl.Int64(), "evidence": pl.String()}
GATE_COLUMNS = {"id": pl.String(), "gate": pl.String(), "legal_basis": pl.String(),
                "requirement": pl.String(), "status": pl.String(), "reason": pl.String(),
                "source_url": pl.String(), "source_date": pl.String()}


def rubric_frame(result: Result) -> pl.DataFrame:
    """One row per candidate and objective of the EU Cloud Sovereignty Framework: the SEAL
    the facts held support (null: not established) and the evidence."""
    return pl.DataFrame([{"id": c.id, **r.model_dump()} for c in result.candidates
                         for r in c.sovereignty_rubric], schema=RUBRIC_COLUMNS)


def gates_frame(result: Result) -> pl.DataFrame:
    """One row per candidate and regulatory gate, with its outcome, reason and citation."""
    return pl.DataFrame([{"id": c.id, **g.model_dump()} for c in result.candidates
                         for g in c.gates], schema=GATE_COLUMNS)


@dataclass(frozen=True)
class Frames:
    """The result's frames, built once per run (`frames_of`) and handed to every renderer
    that writes a table: the HTML report, the workbook, the CSV and Parquet files."""

    scorecard: pl.DataFrame
    breakdown: pl.DataFrame
    assumptions: pl.DataFrame
    evidence: pl.DataFrame
    sources: pl.DataFrame
    sizing: pl.DataFrame
    pairwise: pl.DataFrame
    break_even: pl.DataFrame
    rubric: pl.DataFrame
    gates: pl.DataFrame

    def only(self, ids: Collection[str]) -> Frames:
        """The frames of a result keeping only the candidates `ids` and their sizing rows (the
        report's listed ones): those rows in their order, and the sizing columns they fill."""
        kept = pl.col("id").is_in(list(ids))
        return replace(
            self, scorecard=self.scorecard.filter(kept), breakdown=self.breakdown.filter(kept),
            assumptions=self.assumptions.filter(kept), evidence=self.evidence.filter(kept),
            rubric=self.rubric.filter(kept), gates=self.gates.filter(kept),
            sizing=_present(self.sizing.filter(pl.col("candidate").is_in(list(ids)))))


def frames_of(result: Result) -> Frames:
    return Frames(scorecard=scorecard_frame(result), breakdown=breakdown_frame(result),
                  assumptions=assumptions_frame(result), evidence=evidence_frame(result),
                  sources=sources_frame(result),
                  sizing=sizing_frame(result), pairwise=pairwise_frame(result),
                  break_even=break_even_frame(result), rubric=rubric_frame(result),
                  gates=gates_frame(result))


#: a declared column name standing alone in an engine sentence (not inside a key path such as
#: `demand.tokens_per_day` or `candidates[1].throughput.tokens_per_s`)
_COLUMN_WORD = re.compile(r"(?<![\w.\[])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w.\]])")


def words(text: str) -> str:
    """An engine sentence as a committee reads it: each declared column name standing alone
    (`cpm_eur_per_mtok`, `tokens_per_s`) becomes its name in words (CPM, goodput); key paths
    and anything undeclared stay as written."""
    def name(match: re.Match[str]) -> str:
        column = match.group(1)
        return in_sentence(column) if column in OUTPUTS else column
    return _COLUMN_WORD.sub(name, text)


def degenerate(low: float | None, high: float | None, decimals: int) -> bool:
    """A p5–p95 range that prints as one number at the given decimals (no spread to show)."""
    return (low is not None and high is not None
            and f"{low:.{decimals}f}" == f"{high:.{decimals}f}")


def recommendation_lines(result: Result) -> tuple[str, list[str]]:
    """The recommendation as a headline and its supporting lines, plain text (each renderer
    escapes it): what to choose and why, its cost at the demand, its chance of being the
    cheapest, and what would change the choice."""
    rec = result.recommendation
    if rec is None:
        return "No recommendation in this result.", []
    basis = result.token_basis
    if rec.candidate is None:
        return f"No candidate to recommend: {words(rec.reason)}", [
            f"{x.id}: {x.reason}" for x in rec.excluded]
    lines = [words(rec.reason), f"Rule: {words(rec.rule)}; CPM per million {basis} tokens."]
    if rec.monthly_cost_eur is not None:
        cost = (f"At the declared demand: {eur(rec.monthly_cost_eur)} a month, "
                f"{eur(rec.annual_cost_eur)} a year")
        split = rec.cost_split
        if split:
            cost += (f" (capex annuity {eur(split.capex_eur_per_month)}, opex "
                     f"{eur(split.opex_eur_per_month)} a month)")
        lines.append(cost + ".")
    elif rec.monthly_cost_reason:
        lines.append(f"Monthly cost: {rec.monthly_cost_reason}.")
    if rec.p_chosen_cheapest is not None:
        lines.append(f"P({rec.candidate} is the cheapest eligible candidate) = "
                     f"{rec.p_chosen_cheapest:.0%} over the Monte Carlo draws.")
    lines += [f"What would change it: {change_text(w)}." for w in rec.what_would_change_it]
    return f"Recommended: {rec.candidate}", lines


def change_text(change: Change) -> str:
    """One `what_would_change_it` entry in words, saying whether the threshold lies within the
    range the proposal states for that input (a crossing outside it is not expected)."""
    text = words(change.text)
    return text + (" (within the stated range)" if change.within_stated_range
                   else " (outside the stated range)")


#: the most candidates a table read at a glance lists: the report's summary, the terminal's
GLANCE_ROWS = 30


def shortlist_note(listed: int, left_out: int, rest: str) -> str:
    """What a shortlisted table says of itself: how many of how many it lists, which ones
    `shortlist` keeps first (it lists them in the proposal's order), and where the `rest`
    are."""
    return (f"{listed:,} of {listed + left_out:,} candidates are listed, chosen in this "
            "priority: the recommendation, the runner-up, the frontier, the other eligible "
            "candidates by cost per token, the excluded, among those the engine shortlisted "
            f"(the frontier and its neighbourhood); {rest}.")


def shortlisted(result: Result) -> Result:
    """The result with only the candidates the engine shortlisted (the charts draw these);
    `result` itself when it shortlisted every one (or was stored before the shortlist)."""
    kept = [c for c in result.candidates if c.shortlisted is not False]
    return result if len(kept) == len(result.candidates) else result.model_copy(
        update={"candidates": kept})


def shortlist(result: Result, limit: int) -> tuple[list[CandidateResult], int]:
    """At most `limit` candidates for a table a reader scans, in the proposal's order, among
    the engine's shortlist (`shortlisted`: the frontier and its neighbourhood,
    pipeline/engine/ranking/pareto.py; every candidate of a result stored before it): the
    recommendation, the runner-up and the frontier first, then the other eligible candidates
    by CPM, then the excluded; and how many were left out (every candidate stays in the CSV,
    the workbook and the JSON)."""
    candidates = [c for c in result.candidates if c.shortlisted is not False]
    left = len(result.candidates) - len(candidates)
    if len(candidates) <= limit:
        return candidates, left
    rec = result.recommendation
    first = set() if rec is None else {rec.candidate, rec.runner_up}

    def order(pair: tuple[int, CandidateResult]) -> tuple[int, float, int]:
        i, c = pair
        cpm = c.cpm_eur_per_mtok
        tier = (0 if c.id in first else 1 if c.pareto_rank == 1 and c.eligible
                else 2 if c.eligible else 3)
        return tier, float("inf") if cpm is None else float(cpm), i

    kept = sorted(sorted(enumerate(candidates), key=order)[:limit], key=lambda pair: pair[0])
    return [c for _, c in kept], left + len(candidates) - limit


def gap_months(s: PlanSchedule) -> list[PlanMonth]:
    """A purchase plan's months its own nodes do not serve in full (before their lead time
    ends): its fallback's, or unserved."""
    return [m for m in s.months if (m.own_share or 0.0) < 1.0]
