"""The JSON contract as models, for the published JSON Schemas: `Result` describes the
`scorecard run --json` document (docs/reports.md), `proposal_schema` the proposal file
(pipeline/engine/proposal.py's models). `scorecard schema proposal|result` prints them; the
copies under docs/ are checked against these in tests/pipeline/test_schemas.py.

The result models allow more keys than they name (the contract is extended, never narrowed):
every key named here is required, a figure that cannot be computed is null.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.proposal import Proposal

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
KINDS = ("proposal", "result")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


Figure = float | None


class Source(_Open):
    """A cited source: a reference-table row, a market snapshot or an evidence file."""

    kind: str
    subject: str
    url: str | None
    date: str | None
    licence: str | None
    snapshot_sha256: str | None


class Input(_Open):
    """One input of a candidate's figures: its value (a range's low, mode, high), grade, the
    proposal key or market row it comes from, its source."""

    input: str
    unit: str | None
    low: Figure
    mode: Figure
    high: Figure
    grade: str
    key: str
    source: str | None


class Percentiles(_Open):
    p5: Figure
    p50: Figure
    p95: Figure


class Formula(_Open):
    name: str
    unit: str
    formula: str


class EvidenceConfiguration(_Open):
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


class QualityTask(_Open):
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


class Quality(_Open):
    """A candidate's quality evidence (lm-evaluation-harness) against policy.quality's
    reference candidate (null without a policy)."""

    reference: str | None
    tasks: list[QualityTask]
    grade: Literal["measured"]


class CandidateResult(_Open):
    """One candidate: the contract keys (pipeline/engine/scorecard.py CONTRACT_KEYS), then
    what the reports read."""

    id: str
    label: str
    deployment: Literal["on_prem", "cloud"]
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
    dominated_by: list[str] | None
    capacity: Literal["provisioned", "elastic"]
    token_basis: Literal["output", "total"]
    notes: list[str]
    uncertainty: dict[str, Percentiles | None]
    p_frontier: Figure
    sovereignty_reasons: list[str]
    embodied_gco2e_per_mtok: Figure
    inputs: list[Input]
    detail: dict[str, Any]
    #: every configuration of the benchmark evidence ([] without throughput evidence)
    evidence_configurations: list[EvidenceConfiguration]
    #: the settings of the configuration taken (null without throughput evidence)
    evidence_configuration: dict[str, str] | None
    #: quality evidence against the reference (null without quality evidence)
    quality: Quality | None


class PairwiseScope(_Open):
    """The candidates `pairwise` compares, every pair among them, and the rule that chose them."""

    metric: str
    candidates: list[str]
    pairs: int
    rule: str


class Result(_Open):
    """The `scorecard run --json` document (scorecard.json)."""

    proposal: str
    #: sha256 of the parsed proposal: with the name, the identity runs are stored under
    proposal_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    vintage: str = Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")
    generated_at: str
    code_version: str
    sources: list[Source]
    slo: dict[str, Any]
    policy: dict[str, Any]
    example_data: bool
    uncertainty: dict[str, Any]
    pairwise: list[dict[str, Any]]
    #: which pairs `pairwise` gives: every pair up to 40 eligible candidates, beyond that the
    #: chosen candidate, the runner-up and the frontier
    pairwise_scope: PairwiseScope
    tornado: list[dict[str, Any]]
    sizing: list[dict[str, Any]] | None
    demand: dict[str, Any] | None
    break_even: list[dict[str, Any]]
    recommendation: dict[str, Any]
    token_basis: Literal["output", "total"]
    formulas: list[Formula]
    candidates: list[CandidateResult]


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of the proposal file or the result document."""
    if kind not in KINDS:
        raise ValueError(f"unknown schema {kind!r}; one of: {', '.join(KINDS)}")
    model: type[BaseModel] = Proposal if kind == "proposal" else Result
    document = model.model_json_schema()
    title = ("inference-scorecard proposal (TOML), docs/proposal.md" if kind == "proposal"
             else "inference-scorecard result (scorecard.json), docs/reports.md")
    return {"$schema": SCHEMA_DIALECT, **document, "title": title}
