"""The result contract: the `scorecard run --json` document (scorecard.json, docs/reports.md) as
typed models. The engine builds a `Result`, every report reads one, a stored run is read back
with `Result.model_validate_json`, and docs/result.schema.json is generated from it.

The document is written with the keys it was built with (`document`): a key that is absent
in some results (a candidate's `sizing` without a demand, `monthly_cost_reason` with one, the
demand keys not given, a source's `source`) is left out rather than written as null. Keys
added after the first results were stored have defaults, so an older stored result still
reads; the published schema requires every key but those that may be absent (`_absent`).
`Result` and `CandidateResult` allow more keys than they name (the contract is extended, never
narrowed); every other object is closed.
"""

# no `from __future__ import annotations`: pydantic would read every field's annotation back
# from its string (an eval each) when it builds the models at import
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

#: a number as it was computed or read: an integer stays one (4400 is not written 4400.0)
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
#: a figure: a number, or null when it cannot be computed (its reason in the notes)
Figure = Number | None
#: a value of a free-form column (a candidate's `detail`)
Scalar = str | bool | int | float | None


def _absent(*names: str) -> Any:
    """A json_schema_extra that leaves `names` out of the schema's required keys: they are
    absent from some documents."""
    def drop(schema: dict[str, Any]) -> None:
        schema["required"] = [k for k in schema.get("required", []) if k not in names]
        if not schema["required"]:
            del schema["required"]
    return drop


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_serialization_defaults_required=True)


class Range(_Closed):
    """A figure known only within bounds: triangular(low, mode, high)."""

    low: Number
    mode: Number
    high: Number


class Source(_Closed):
    """A cited source: a reference-table row, a market snapshot or an evidence file."""

    model_config = ConfigDict(json_schema_extra=_absent("source"))

    kind: str
    subject: str
    url: str | None
    date: str | None
    licence: str | None
    snapshot_sha256: str | None
    #: the citation of hardware declared in the proposal
    source: str | None = None


class Slo(_Closed):
    """The proposal's SLO (docs/proposal.md)."""

    ttft_ms: Number
    tpot_ms: Number | None
    max_itl_ms: Number | None
    attainment: Number
    ttft_p99_ms: Number | None
    tpot_p99_ms: Number | None


class Weights(_Closed):
    """`policy.choose = { weights = {...} }`: a weighted score over the objectives."""

    weights: dict[str, Number]


class QualityPolicy(_Closed):
    """`policy.quality`. Defaults: keys a result stored before them lacks."""

    reference: str
    tasks: list[str]
    max_drop: Number
    unvalidated: Literal["allow"] | None = None
    unvalidated_reason: str | None = None


class Policy(_Closed):
    """The proposal's policy (docs/proposal.md). Defaults: keys a result stored before them
    lacks, at the proposal's defaults."""

    min_sovereignty: int
    allow_estimates: bool = True
    objectives: list[str]
    choose: str | Weights = "cpm"
    token_basis: Literal["output", "total"] = "output"
    quality: QualityPolicy | None = None
    #: which carbon figure the `carbon` objective ranks on (GHG Protocol Scope 2)
    carbon_basis: Literal["location", "market"] = "location"
    min_seal: dict[str, int] | None = None
    regulation_as_of: date | None = None


class Demand(_Closed):
    """The proposal's demand, the keys it gives (redundancy_instances when above 0)."""

    model_config = ConfigDict(json_schema_extra=_absent(
        "tokens_per_day", "requests_per_s", "prompt_tokens", "output_tokens",
        "prompt_tokens_p95", "output_tokens_p95", "redundancy_instances"))

    tokens_per_day: Number | Range | None = None
    requests_per_s: Number | Range | None = None
    prompt_tokens: Number | None = None
    output_tokens: Number | None = None
    prompt_tokens_p95: Number | None = None
    output_tokens_p95: Number | None = None
    peak_factor: Number | Range
    headroom: Number | Range
    redundancy_instances: int | None = None


class UncertaintySettings(_Closed):
    draws: int
    seed: int
    distribution: str


class Input(_Closed):
    """One input of a candidate's figures: its value (a range's low, mode, high), grade, the
    proposal key or market row it comes from, its source."""

    input: str
    unit: str | None
    low: Figure
    mode: Figure
    high: Figure
    grade: str | None
    key: str
    source: str | None


class Percentiles(_Closed):
    p5: Figure
    p50: Figure
    p95: Figure


class Formula(_Closed):
    """A metric step with its unit and the formula the engine computes it with."""

    name: str
    unit: str
    formula: str


class PublishedPerRequest(_Closed):
    """Another system's published figures for one request, with what they count: context
    for the candidates' per-request figures, never one of them (sources/reference/
    per_request_published.csv)."""

    system: str
    request_description: str
    per_request_boundary: str
    published_wh_per_request: Number | None
    published_gco2e_per_request: Number | None
    published_accounting: Literal["market_based", "location_based", "lifecycle"]
    note: str | None
    source_url: str
    source_date: str
    licence: str
    snapshot_sha256: str


class EvidenceConfiguration(_Closed):
    """One engine configuration of a candidate's benchmark evidence (runs are pooled only
    within one): its settings (docs/evidence.md, Configurations), the GPUs it records, its
    output-token goodput under the SLO at its operating point (the knee of its own sweep, else
    its run or the mean of its runs at one level) in total and per GPU (on its recorded GPU
    count, else the candidate's gpu_count), the knee's concurrency, whether some load level
    meets the SLO, whether the candidate takes it, and how many runs it holds."""

    configuration: dict[str, str]
    label: str
    gpus: int | None
    goodput_tokens_per_s: Figure
    goodput_per_gpu_tokens_per_s: Figure
    knee_concurrency: Figure
    passes: bool
    chosen: bool
    runs: int


class EvidenceCheck(_Closed):
    """One check on the evidence a candidate's input is read from (docs/evidence.md, "Evidence
    that fits"): the input's declaration (`throughput`), the check (`identity`, `SLO
    attainment`, `SLO p99 TTFT`, `SLO p99 TPOT`, `token basis`, `Little's law`), its outcome
    and what it found (the figures compared, or why it could not be checked)."""

    input: str
    check: str
    outcome: Literal["passed", "failed", "not checked"]
    detail: str | None


class QualityTask(_Closed):
    """One task of policy.quality: the candidate's score, the reference's, the drop (positive
    = worse; reference - value, or value - reference where lower is better), the combined
    standard error sqrt(se^2 + se_ref^2), and whether drop - stderr <= max_drop. Without a
    policy the value and its stderr only."""

    task: str
    metric: str
    value: Figure
    reference_value: Figure
    drop: Figure
    stderr: Figure
    within_tolerance: bool | None


class Quality(_Closed):
    """A candidate's quality evidence (lm-evaluation-harness) against policy.quality's
    reference candidate (null without a policy)."""

    reference: str | None
    tasks: list[QualityTask]
    #: `proxy`: results on another accelerator declared to stand in (`quality.proxy`)
    grade: Literal["measured", "proxy"]


class CandidateSizing(_Closed):
    """A candidate's fleet at the demand: instances for the peak, what is billed, its cost a
    month (the margins' share in it, a TCO's total over its amortisation), its yearly energy
    and carbon, and the request-level figures beside them (null without a request shape).
    Defaults: keys a result stored before them lacks."""

    capacity: Literal["provisioned", "elastic"] = "provisioned"  # older results: provisioned
    instances: int | None
    binding: Literal["goodput", "Little's law"] | None = None
    billed_instances: Figure = None
    utilisation: Figure
    monthly_cost_eur: Figure
    headroom_instances: int | None = None
    monthly_headroom_cost_eur: Figure = None
    monthly_redundancy_cost_eur: Figure = None
    period_cost_eur: Figure = None
    annual_mwh: Figure
    annual_tco2e: Figure
    goodput_instances: int | None = None
    littles_law_instances: int | None = None
    request_duration_s: Figure = None
    replica_requests_per_s: Figure = None
    request_tpot_s: Figure = None
    request_duration_p95_s: Figure = None
    payback_months: Figure = None
    payback_reason: str | None = None
    payback_versus: str | None = None
    electricity_share_of_tco: Figure = None


class SizingRow(CandidateSizing):
    """`sizing`: one candidate's fleet, named."""

    candidate: str


class RubricRow(_Closed):
    """One objective of the EU Cloud Sovereignty Framework for a candidate: the SEAL level the
    facts held support (null: not established, it needs the framework's own assessment) and
    the evidence (docs/sovereignty.md)."""

    objective: str
    title: str
    weight_pct: Number
    seal: int | None = Field(ge=0, le=4)
    evidence: str


class GateOutcome(_Closed):
    """A regulatory gate on a candidate (pipeline/engine/ranking/gates.py): a `fail` excludes it."""

    gate: str
    legal_basis: str
    requirement: str
    status: Literal["pass", "fail", "needs_data", "not_applicable"]
    reason: str
    source_url: str
    source_date: str | None


class MixPart(_Closed):
    """One part of a mix at its chosen base size (pipeline/engine/fleet/mixes.py): its tokens, cost
    and carbon, each also as its share of the mix's."""

    part: Literal["base", "burst"]
    id: str
    sovereignty_level: int = Field(ge=0, le=4)
    #: the base's serving instances (its spares not counted); null for the burst
    instances: int | None
    tokens_share: Number
    mtok_per_month: Number
    monthly_cost_eur: Number
    cost_share: Figure
    #: the part's own figures at the tokens it serves (null: it serves none, or not computable)
    cpm_eur_per_mtok: Figure
    energy_j_per_token: Figure
    carbon_gco2e_per_mtok: Figure
    carbon_kgco2e_per_month: Figure
    carbon_share: Figure


class LevelShare(_Closed):
    level: int = Field(ge=0, le=4)
    tokens_share: Number


class MixSplit(_Closed):
    """`mix`: a hybrid candidate's split between its own base and its burst (absent for any
    other candidate). `base_instances` null: no base size is allowed (see the exclusion)."""

    base: str
    burst: str
    base_instances: int | None
    max_base_instances: int
    #: mix.min_share_at_level (null without one) and the share at that level the mix serves
    policy_level: int | None
    policy_share: Figure
    policy_share_met: Figure
    parts: list[MixPart]
    #: the share of the tokens served at each sovereignty level, highest first
    tokens_share_by_level: list[LevelShare]
    #: what the split's figures are: the [demand] month's ("month"), or under a plan the
    #: horizon's ("horizon": each part's share of the horizon's tokens and of its discounted
    #: cost, its mean month's tokens, cost and carbon, its own horizon CPM, J/token, carbon);
    #: a result written before the key was a month's
    split_over: Literal["month", "horizon"] = "month"


class CandidateResult(_Open):
    """One candidate: the contract keys (pipeline/engine/scorecard.py CONTRACT_KEYS), then
    what the reports read. Defaults: keys a result stored before them lacks."""

    model_config = ConfigDict(json_schema_extra=_absent("sizing", "mix"))

    id: str
    label: str
    deployment: Literal["on_prem", "cloud", "api", "mix"]
    provider: str
    zone: str
    tokens_per_s: Figure
    tokens_per_s_grade: str | None
    cost_eur_per_hour: Figure
    cpm_eur_per_mtok: Figure
    energy_j_per_token: Figure
    energy_boundary: str | None
    facility_kwh_per_mtok: Figure
    electricity_eur_per_mtok: Figure
    carbon_gco2e_per_mtok: Figure
    sovereignty_level: int = Field(ge=0, le=4)
    eligible: bool
    exclusion_reason: str | None
    pareto_rank: int | None
    #: the frontier candidates dominating it, at most 5 sorted by id
    #: (pipeline/engine/ranking/pareto.py; a result stored before dominated_by_count lists every
    #: dominator)
    dominated_by: list[str] | None
    #: how many candidates dominate it (null: not ranked, or a result stored before the count)
    dominated_by_count: int | None = Field(default=None, ge=0)
    #: whether the shortlist kept it for the Monte Carlo, the tables and the charts (null: a
    #: result stored before the shortlist, which had every candidate)
    shortlisted: bool | None = None
    capacity: Literal["provisioned", "elastic"] | None = None
    token_basis: Literal["output", "total"] | None = None
    notes: list[str]
    #: metric -> its p5, p50, p95 over the Monte Carlo draws (null: the metric had no draws)
    uncertainty: dict[str, Percentiles | None] = Field(default_factory=dict)
    p_frontier: Figure = None
    sovereignty_reasons: list[str] = Field(default_factory=list)
    embodied_gco2e_per_mtok: Figure = None
    #: the zone's sub-daily prices and intensities weighted by the workload profile, and the
    #: electricity and carbon per Mtok from them (null without sub-daily data)
    wholesale_eur_per_kwh_profile: Figure = None
    grid_gco2e_per_kwh_profile: Figure = None
    electricity_eur_per_mtok_time_matched: Figure = None
    carbon_gco2e_per_mtok_time_matched: Figure = None
    #: market-based carbon (contracts, else the residual mix) beside the location-based one,
    #: and the figures of one mean request (null without the demand's request shape)
    carbon_market_gco2e_per_mtok: Figure = None
    facility_wh_per_request: Figure = None
    carbon_gco2e_per_request: Figure = None
    carbon_market_gco2e_per_request: Figure = None
    #: every configuration of the benchmark evidence ([] without throughput evidence)
    evidence_configurations: list[EvidenceConfiguration] = Field(default_factory=list)
    #: the settings of the configuration taken (null without throughput evidence)
    evidence_configuration: dict[str, str] | None = None
    #: quality evidence against the reference (null without quality evidence)
    quality: Quality | None = None
    #: the EU Cloud Sovereignty Framework rubric, one row per objective ([]: a result stored
    #: before the key)
    sovereignty_rubric: list[RubricRow] = Field(default_factory=list)
    #: the regulatory gates of the candidate's data centre and the policy's SEAL minimum
    gates: list[GateOutcome] = Field(default_factory=list)
    #: the checks on the candidate's evidence, per input ([] without evidence files, or in a
    #: result stored before the key)
    evidence_checks: list[EvidenceCheck] = Field(default_factory=list)
    #: the fleet at the demand (absent without a demand)
    sizing: CandidateSizing | None = None
    #: a mix's split (absent for any other candidate)
    mix: MixSplit | None = None
    inputs: list[Input] = Field(default_factory=list)
    #: every other column of the candidate's row: the metric steps, grades and sources
    detail: dict[str, Scalar]


class PairwiseScope(_Closed):
    """The candidates `pairwise` compares, every pair among them, and the rule that chose them."""

    metric: str
    candidates: list[str]
    pairs: int
    rule: str


class Pairwise(_Closed):
    """P(a's metric < b's) over the Monte Carlo draws."""

    a: str
    b: str
    metric: str
    p_a_lower: Figure


class Tornado(_Closed):
    """A candidate's metric with one input at its low and at its high, the others at their
    modes."""

    candidate: str
    metric: str
    input: str
    low: Number
    high: Number
    metric_at_low: Figure
    metric_at_high: Figure
    swing: Figure


class CurvePoint(_Closed):
    tokens_per_day: Number
    cpm_eur_per_mtok: Figure


class BreakEven(_Closed):
    """An on-prem candidate's CPM over a curve of daily volumes, the cloud candidate and CPM
    it is compared with, and the volume from which it stays at or below it (null when it
    does not by the curve's end). `basis`: "sized", its fleet sized at each volume as the
    scorecard sizes it at the demand (the demand scaled, from a hundredth to ten times it);
    "one_instance", without a demand, one instance swept over its utilisation."""

    candidate: str
    versus: str
    versus_cpm_eur_per_mtok: Figure
    tokens_per_day: Figure
    curve: list[CurvePoint]
    basis: Literal["sized", "one_instance"] = "one_instance"


class Excluded(_Closed):
    id: str
    reason: str | None


class CostSplit(_Closed):
    """A TCO candidate's month: its capital annuity and the rest."""

    capex_eur_per_month: Figure
    opex_eur_per_month: Figure


class Change(_Closed):
    """An input crossing that would make another candidate the choice (docs/decision.md)."""

    key: str
    input: str
    unit: str
    candidates: list[str]
    current: Number
    threshold: Number
    direction: str
    within_stated_range: bool
    text: str


class Recommendation(_Closed):
    """The one answer at the demand (docs/decision.md, the recommendation)."""

    model_config = ConfigDict(json_schema_extra=_absent("monthly_cost_reason"))

    candidate: str | None
    rule: str
    runner_up: str | None
    excluded: list[Excluded]
    monthly_cost_eur: Figure
    annual_cost_eur: Figure
    cost_split: CostSplit | None
    what_would_change_it: list[Change]
    p_chosen_cheapest: Figure
    reason: str
    #: why there is no monthly cost (present only without a demand)
    monthly_cost_reason: str | None = None


class ScanLeftOut(_Closed):
    """An offer a scan considered and left out, with why (it does not fit the model in
    memory at any of the scan's precisions, or a filter of the scan keeps it out)."""

    offer: str
    region: str
    pricing: str
    reason: str


class ScanSummary(_Closed):
    """One `[[scan]]` of the proposal (pipeline/inputs/market/scan.py): the offers of the vintage it
    considered, those that fit the model in memory, those its filters kept, the candidates
    generated from them (one per kept offer and fitting precision) and how many of those the
    policy left eligible."""

    scan: int
    model: str
    precisions: list[str]
    #: tokens of one sequence the KV cache had to hold beside the weights
    context_tokens: int
    offers_considered: int
    offers_fitting: int
    offers_kept: int
    candidates_generated: int
    candidates_eligible: int
    #: the generated candidates' ids
    generated: list[str]
    left_out: list[ScanLeftOut]


#: the candidates' figures a plan makes the horizon's (the scorecard's CPM, energy and carbon;
#: the first month's CPM stays as first_month_cpm_eur_per_mtok)
PLAN_FIGURES = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
                "carbon_market_gco2e_per_mtok")


class PlanPurchase(_Closed):
    """One month's order of own nodes of a purchase plan (pipeline/engine/fleet/plan.py): the
    nodes first_node to last_node (count of them), bought together; months counted from the
    horizon's start (0), a month m running from m - 1 to m."""

    #: the first month whose demand needs them
    needed_month: int
    ordered_at_month: Number
    serves_from_month: Number
    count: int = Field(ge=1)
    first_node: int = Field(ge=1)
    last_node: int = Field(ge=1)
    months_served: Number
    #: one node's annuity outstanding balance at the horizon's end (a TCO node; else null)
    book_value_per_node_at_horizon_eur: Figure


class PlanMonth(_Closed):
    """One month of a purchase plan: the demand, the own nodes serving, the share of the
    month they serve, what the own fleet and the fallback cost, what goes unserved."""

    month: int
    demand_tokens_per_day: Figure
    serving_instances: Figure
    own_share: Figure
    own_cost_eur: Figure
    fallback_cost_eur: Figure
    unserved_mtok: Figure
    own_capacity_tokens_per_day: Figure


class PlanSchedule(_Closed):
    """A candidate's purchase plan over the horizon, at the inputs' modes."""

    candidate: str
    fallback: str | None
    lead_time_months: Number
    cpm_eur_per_mtok: Figure
    first_month_cpm_eur_per_mtok: Figure
    #: the horizon's cost and tokens, discounted at the plan's cost of capital
    cost_pv_eur: Figure
    mtok_pv: Figure
    #: one order per month whose fleet grows
    purchases: list[PlanPurchase]
    months: list[PlanMonth]
    #: said when no own node can serve inside the horizon (lead time >= its months)
    note: str | None = None


class PlanBreakEven(_Closed):
    """From which month (and demand) an own candidate's month costs no more per token than
    the cheapest eligible cloud's at that month's demand (null: not within the horizon),
    with the Monte Carlo's p5 and p95 of that month."""

    candidate: str
    versus: str
    from_month: int | None
    from_tokens_per_day: Figure
    from_month_p5: Figure
    from_month_p95: Figure
    #: said when no own node can serve inside the horizon (lead time >= its months)
    note: str | None = None


class Plan(_Closed):
    """The plan over the horizon ([horizon] growth_per_year or demand_by_month)."""

    months: int
    cost_of_capital_per_year: Number
    cost_of_capital_source: str
    growth_per_year: Range | Number | None
    demand_by_month: list[Number] | None
    #: the recommended candidate's plan first, then the cheapest eligible own one's
    schedules: list[PlanSchedule]
    break_even: list[PlanBreakEven]


class PartialMonth(_Closed):
    """A vintage whose own market data were fetched before its month ended."""

    #: the UTC day of the latest fetch
    through: str
    days_covered: int
    days_in_month: int
    #: days_covered / days_in_month
    share_of_month: float


class Result(_Open):
    """The `scorecard run --json` document (scorecard.json). Defaults: keys a result stored
    before them lacks."""

    #: `plan` is absent without a demand path
    model_config = ConfigDict(json_schema_extra=_absent("plan"))

    proposal: str
    #: sha256 of the parsed proposal: with the name, the identity runs are stored under
    proposal_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    vintage: str = Field(pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])$")
    #: how much of its month the vintage's own market data cover, when they were fetched
    #: before it ended (null: a complete month, no data of its own, or a result stored
    #: before the key)
    partial_month: PartialMonth | None = None
    generated_at: str
    code_version: str
    sources: list[Source]
    slo: Slo
    policy: Policy
    example_data: bool
    uncertainty: UncertaintySettings | None = None
    pairwise: list[Pairwise] = Field(default_factory=list)
    #: which pairs `pairwise` gives: every pair up to 40 eligible candidates, beyond that the
    #: chosen candidate, the runner-up and the frontier
    pairwise_scope: PairwiseScope | None = None
    tornado: list[Tornado] = Field(default_factory=list)
    sizing: list[SizingRow] = Field(default_factory=list)
    demand: Demand | None = None
    break_even: list[BreakEven] = Field(default_factory=list)
    recommendation: Recommendation | None = None
    token_basis: Literal["output", "total"] = "output"
    #: every metric step in evaluation order ([]: a result stored before the key)
    formulas: list[Formula] = Field(default_factory=list)
    #: other systems' published per-request figures, beside the candidates' own ([]: a
    #: result stored before the key)
    published_per_request: list[PublishedPerRequest] = Field(default_factory=list)
    #: the proposal's [[scan]]s, each with its counts ([]: none, or a result stored before
    #: the key)
    scans: list[ScanSummary] = Field(default_factory=list)
    #: the plan over the horizon (absent without a demand path)
    plan: Plan | None = None
    candidates: list[CandidateResult]

    def document(self) -> dict[str, Any]:
        """The document as plain data, with the keys it was built or read with:
        `pipeline.workspace.dumps` writes it."""
        return self.model_dump(exclude_unset=True)


def result_schema() -> dict[str, Any]:
    """The JSON Schema of the document the engine writes."""
    return Result.model_json_schema(mode="serialization")


class DiffFigures(_Closed):
    """A candidate's figures at one vintage of a diff: the metrics whose change is attributed
    (`Diff.metrics`), its Pareto rank, eligibility and sovereignty level."""

    cpm_eur_per_mtok: Figure
    electricity_eur_per_mtok: Figure
    carbon_gco2e_per_mtok: Figure
    #: (null: a result stored before market-based carbon)
    carbon_market_gco2e_per_mtok: Figure = None
    pareto_rank: int | None
    eligible: bool
    sovereignty_level: int


class MetricChange(_Closed):
    """One metric of one candidate from A to B, and its change split between the causes
    (`Diff.causes`; null when a figure it needs is missing)."""

    a: Figure
    b: Figure
    change: Figure
    #: the change over A (null when A is 0 or missing)
    relative: Figure
    by_cause: dict[str, Figure]


class DiffCandidate(_Closed):
    """One candidate of a diff: B's, then those gone in B."""

    id: str
    label: str
    status: Literal["in both", "new in B", "gone in B"]
    a: DiffFigures | None
    b: DiffFigures | None
    #: metric -> its change (null unless the candidate is in both)
    change: dict[str, MetricChange] | None
    #: "3 -> 1", "excluded -> 2" (null when the rank did not change)
    rank_change: str | None
    frontier_change: Literal["entered the frontier", "left the frontier"] | None
    #: `input: old -> new` for each input that differs between the stored and recomputed A
    changed_inputs: list[str]


class DiffRecommendation(_Closed):
    """The recommendation (`Result.recommendation`) at A and at B: is the candidate to pay for
    still the same, and how the CPM of the one recommended at B moved."""

    #: the candidate recommended at A (null: no candidate was eligible)
    a: str | None
    #: the candidate recommended at B (null: no candidate is eligible)
    b: str | None
    #: whether B recommends another candidate than A
    changed: bool
    #: the CPM change of the candidate recommended at B, its candidate's `change` (null when
    #: none is recommended; `a`, the change and its causes null when it is new in B)
    cpm_eur_per_mtok: MetricChange | None


class BaselineRun(_Closed):
    """The stored run a diff's A is: the published scorecard of vintage A."""

    vintage: str
    proposal: str
    proposal_sha256: str
    #: the proposal file it was run from, relative to the diffed proposal's folder when under
    #: it, else its file name (null: stored before sources were)
    proposal_source: str | None
    generated_at: str


class Diff(_Closed):
    """The `scorecard diff --json` document (pipeline/compare.py): per candidate, the metrics
    at vintages A and B, the change and its attribution to each cause, rank and frontier
    changes."""

    proposal: str
    vintage_a: str
    vintage_b: str
    generated_at: str
    code_version: str
    #: "stored": A is the scorecard stored for vintage A; "recomputed": A computed today
    baseline: Literal["stored", "recomputed"]
    baseline_run: BaselineRun | None
    #: the market input groups whose data differ between A and B
    changed_groups: list[str]
    #: vintage -> source -> the vintage whose rows it gives
    rows_used: dict[str, dict[str, str]]
    causes: list[str]
    metrics: list[str]
    notes: list[str]
    candidates: list[DiffCandidate]
    #: vintage (A or B) -> how much of its month its own data cover, for a partial month only
    partial_months: dict[str, PartialMonth] = {}
    #: the recommendation at A and at B (null: A's stored scorecard predates recommendations)
    recommendation: DiffRecommendation | None = None

    def document(self) -> dict[str, Any]:
        """The document as plain data: `pipeline.workspace.dumps` writes it."""
        return self.model_dump()


def diff_schema() -> dict[str, Any]:
    """The JSON Schema of the diff document."""
    return Diff.model_json_schema(mode="serialization")
