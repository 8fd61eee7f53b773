"""The proposal file (DESIGN section 8): what the user compares, under which SLO and policy.

Parsed with pydantic models that forbid unknown keys, so a typo is an error naming the file and
the key rather than a silently ignored setting. Checks that need market data (does this offer or
zone exist in the vintage?) happen when candidates are resolved against the store.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)


class ProposalError(ValueError):
    """An invalid proposal: the message names the file and the key."""

    def __init__(self, path: Path | str, key: str, problem: str):
        self.path = str(path)
        self.key = key
        super().__init__(f"{path}: {key}: {problem}")


class _Strict(BaseModel):
    # allow_inf_nan=False: TOML can spell nan and inf; no figure of ours may be either
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, allow_inf_nan=False)


class Range(_Strict):
    """A number known only within bounds: triangular(low, mode, high)."""

    low: float
    mode: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if not self.low <= self.mode <= self.high:
            raise ValueError("a range needs low <= mode <= high")
        return self


Number = float | Range


def _lower_bound(minimum: float, *, strict: bool) -> AfterValidator:
    """A number (or a range's low end) above `minimum` (strict) or at least `minimum`."""
    word = "positive" if strict and minimum == 0 else (
        f"above {minimum:g}" if strict else f"at least {minimum:g}")

    def check(value: Number | None) -> Number | None:
        low = value.low if isinstance(value, Range) else value
        if low is not None and not (low > minimum if strict else low >= minimum):
            raise ValueError(f"must be {word}, got {low:g}")
        return value

    return AfterValidator(check)


#: a figure that divides or multiplies the others: zero or less makes no sense
Positive = Annotated[Number, _lower_bound(0.0, strict=True)]
#: a cost line or an amount that may be nothing, never less
NonNegative = Annotated[Number, _lower_bound(0.0, strict=False)]


def _upper_share() -> AfterValidator:
    """A share kept free (headroom): below 1, or nothing is left to serve with."""

    def check(value: Number) -> Number:
        high = value.high if isinstance(value, Range) else value
        if not high < 1:
            raise ValueError(f"must be below 1 (a share of goodput kept free), got {high:g}")
        return value

    return AfterValidator(check)


def point(value: Number | None) -> float | None:
    """The value used for point estimates: the number itself, or a range's mode."""
    if isinstance(value, Range):
        return value.mode
    return value


class ProposalMeta(_Strict):
    name: str
    description: str | None = None


class Slo(_Strict):
    ttft_ms: Annotated[float, Field(gt=0)]
    tpot_ms: Annotated[float, Field(gt=0)] | None = None
    max_itl_ms: Annotated[float, Field(gt=0)] | None = None
    attainment: Annotated[float, Field(gt=0, le=1)] = 0.95
    ttft_p99_ms: Annotated[float, Field(gt=0)] | None = None
    tpot_p99_ms: Annotated[float, Field(gt=0)] | None = None


Objective = Literal["cpm", "energy", "carbon", "sovereignty", "electricity"]
DEFAULT_OBJECTIVES: tuple[Objective, ...] = ("cpm", "energy", "carbon", "sovereignty")


class Weights(_Strict):
    """`policy.choose = { weights = { cpm = 0.6, carbon = 0.4 } }`: a weighted score."""

    weights: Annotated[dict[Objective, Annotated[float, Field(ge=0)]], Field(min_length=1)]

    @model_validator(mode="after")
    def _some_weight(self) -> Weights:
        if not sum(self.weights.values()) > 0:
            raise ValueError("at least one weight must be above 0")
        return self


class Policy(_Strict):
    min_sovereignty: Annotated[int, Field(ge=0, le=4)] = 0
    allow_estimates: bool = True  # false: estimated candidates are shown, not ranked
    objectives: list[Objective] = Field(default_factory=lambda: list(DEFAULT_OBJECTIVES),
                                        min_length=1)
    #: how the recommendation picks among the frontier (pipeline/engine/recommend.py)
    choose: Literal["cpm", "carbon", "energy"] | Weights = "cpm"
    #: the tokens every per-token figure (and the demand) counts: output tokens of requests
    #: meeting the SLO, or their input + output tokens
    token_basis: Literal["output", "total"] = "output"


class Defaults(_Strict):
    pue: Number | None = None


class DeclaredThroughput(_Strict):
    tokens_per_s: Positive
    #: prompt tokens per second at the same operating point (read under token_basis = "total")
    input_tokens_per_s: NonNegative | None = None
    source: str


class EvidenceThroughput(_Strict):
    """Benchmark results (a file or a sweep folder) read under the proposal's SLO: measured."""

    evidence: str
    format: str | None = None
    tz: str | None = None


class Calibration(_Strict):
    """A measured run at concurrency 1 on the same hardware: its TPOT (at `context` cached
    tokens) gives the effective bandwidth, its TTFT (for `prompt_tokens`) the compute rate.
    Either typed in with a `source`, or read (p50) from the run at concurrency 1 in
    `evidence`."""

    evidence: str | None = None
    tz: str | None = None
    tpot_ms: Annotated[float, Field(gt=0)] | None = None
    ttft_ms: Annotated[float, Field(gt=0)] | None = None
    context: Annotated[int, Field(ge=1)] | None = None
    prompt_tokens: Annotated[int, Field(ge=1)] | None = None
    source: str | None = None

    @model_validator(mode="after")
    def _stated(self) -> Calibration:
        if self.evidence is None and self.tpot_ms is None and self.ttft_ms is None:
            raise ValueError("give `evidence`, or a measured `tpot_ms` and/or `ttft_ms`")
        if self.evidence is None and not self.source:
            raise ValueError("name the measured run in `source`")
        if (self.tpot_ms is not None or self.evidence) and self.context is None:
            raise ValueError("give `context`: the cached tokens of the measured run")
        return self


class Estimate(_Strict):
    """Design-stage goodput: the roofline ceiling of `model` on the candidate's GPUs (tensor
    parallel over gpu_count) times an efficiency range. Graded `estimated`."""

    model: str
    precision: Literal["bf16", "fp8"] = "bf16"
    batch: Annotated[int, Field(ge=1)]
    context: Annotated[int, Field(ge=1)]
    efficiency: Positive
    calibration: Calibration | None = None


class EstimatedThroughput(_Strict):
    estimate: Estimate


class PowerEstimate(_Strict):
    tdp_fraction: Positive


class EstimatedPower(_Strict):
    """Design-stage power: gpu_count x the GPU's TDP x a fraction range, at the GPU boards."""

    estimate: PowerEstimate
    idle_watts: NonNegative | None = None


class DeclaredPower(_Strict):
    watts: Positive
    idle_watts: NonNegative | None = None
    boundary: Literal["gpu_board", "node", "wall"]
    source: str


class EvidencePower(_Strict):
    """A power log (or folder of logs) aligned to the throughput evidence's window."""

    evidence: str
    format: str | None = None
    tz: str | None = None
    idle_watts: NonNegative | None = None


class DeclaredCost(_Strict):
    """An hourly cost typed in: an all-in on-prem or reserved cost (`pricing = "reserved"`, the
    default) or a cloud's on-demand price. Which hours are billed is the candidate's
    `capacity` (every hour of every sized instance unless it is elastic)."""

    eur_per_hour: Positive
    source: str
    pricing: Literal["on_demand", "reserved"] = "reserved"


class TcoCost(_Strict):
    tco: str


class Capex(_Strict):
    """Purchase cost of one instance in EUR, by line; the lines add up (ranges bound to bound,
    as fully correlated)."""

    gpus: NonNegative = 0.0
    servers: NonNegative = 0.0
    network: NonNegative = 0.0
    installation: NonNegative = 0.0


class Hosting(_Strict):
    """Where the instance is hosted: the organisation's own room (`kind = "own_site"`, a yearly
    cost whatever the load, `eur_per_year`) or a colocation site (`kind = "colocation"`,
    billed per kW of the instance's busy power each month, `eur_per_kw_month`)."""

    kind: Literal["own_site", "colocation"]
    eur_per_year: NonNegative | None = None
    eur_per_kw_month: NonNegative | None = None

    @model_validator(mode="after")
    def _priced_for_its_kind(self) -> Hosting:
        wanted, other = (("eur_per_year", "eur_per_kw_month") if self.kind == "own_site"
                         else ("eur_per_kw_month", "eur_per_year"))
        if getattr(self, wanted) is None or getattr(self, other) is not None:
            raise ValueError(f"hosting of kind {self.kind!r} is priced by {wanted} (and not "
                             f"by {other})")
        return self


class WholesaleTariff(_Strict):
    """The zone's day-ahead price of the vintage x retail_multiplier + grid_fee_eur_per_kwh."""

    basis: Literal["wholesale"]
    retail_multiplier: Positive = 1.0
    grid_fee_eur_per_kwh: NonNegative = 0.0


class ContractTariff(_Strict):
    """A negotiated price per kWh, used instead of the zone's day-ahead price."""

    basis: Literal["contract"]
    eur_per_kwh: Positive


class TcoProfile(_Strict):
    """On-prem total cost of ownership of one instance (node), DESIGN section 7."""

    capex: Capex
    amortisation_months: Annotated[int, Field(ge=1, le=240)]
    cost_of_capital: NonNegative = 0.0
    residual_eur: NonNegative = 0.0
    maintenance_share_per_year: NonNegative = 0.0
    staff_eur_per_year: NonNegative = 0.0
    hosting: Hosting | None = None
    electricity: WholesaleTariff | ContractTariff = Field(
        default_factory=lambda: WholesaleTariff(basis="wholesale"))
    utilisation: Number = 1.0
    source: str


class Demand(_Strict):
    tokens_per_day: Positive
    peak_factor: Annotated[Number, _lower_bound(1.0, strict=False)] = 1.0
    headroom: Annotated[NonNegative, _upper_share()] = 0.2


class Uncertainty(_Strict):
    draws: Annotated[int, Field(ge=100, le=1_000_000)] = 10_000
    seed: int = 20_261_129


class Embodied(_Strict):
    lifetime_years: Positive = Field(
        default_factory=lambda: Range(low=3.0, mode=4.0, high=6.0))


class Workload(_Strict):
    hourly_profile: Annotated[list[float], Field(min_length=24, max_length=24)]
    timezone: str = "Europe/Paris"


class OfferCost(_Strict):
    offer: str
    pricing: Literal["on_demand", "reserved", "spot"] = "on_demand"

    @property
    def provider_id(self) -> str:
        return self.offer.split(":", 1)[0]

    @property
    def offer_id(self) -> str:
        return self.offer.split(":", 1)[1]

    @model_validator(mode="after")
    def _qualified(self) -> OfferCost:
        if ":" not in self.offer:
            raise ValueError("offer must be written 'provider:offer_id', e.g. "
                             "'scaleway:H100-SXM-8-80G'")
        return self


class SovereigntyOverride(_Strict):
    level: Annotated[int, Field(ge=0, le=4)]
    justification: Annotated[str, Field(min_length=20)]


class Candidate(_Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    label: str
    deployment: Literal["on_prem", "cloud"]
    provider: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    zone: str | None = None
    region: str | None = None
    gpu: str
    gpu_count: Annotated[int, Field(ge=1)]
    model: str | None = None
    precision: str | None = None
    engine: str | None = None
    pue: Number | None = None
    utilisation: Number | None = None
    throughput: DeclaredThroughput | EvidenceThroughput | EstimatedThroughput
    power: DeclaredPower | EvidencePower | EstimatedPower | None = None
    cost: DeclaredCost | OfferCost | TcoCost
    electricity_eur_per_kwh: Positive | None = None
    grid_gco2e_per_kwh: NonNegative | None = None
    sovereignty_override: SovereigntyOverride | None = None
    #: how a cloud candidate's instances are held: every sized instance billed every hour
    #: (provisioned), or only busy instance-hours, at least `min_instances` (elastic)
    capacity: Literal["provisioned", "elastic"] = "provisioned"
    min_instances: Annotated[int, Field(ge=0)] | None = None
    #: "override" accepts figures outside their declared plausible range, with a reason
    plausibility: Literal["override"] | None = None
    plausibility_reason: Annotated[str, Field(min_length=10)] | None = None
    example_data: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Candidate:
        if self.deployment == "on_prem" and self.provider != "self":
            raise ValueError("an on_prem candidate has provider = \"self\"")
        if self.deployment == "cloud" and self.provider == "self":
            raise ValueError("a cloud candidate names its provider (scaleway, ovhcloud, ...)")
        if self.deployment == "on_prem" and self.zone is None:
            raise ValueError("an on_prem candidate needs a zone (e.g. \"FR\")")
        if isinstance(self.cost, OfferCost) and self.cost.provider_id != self.provider:
            raise ValueError(f"cost.offer is from {self.cost.provider_id!r} but provider is "
                             f"{self.provider!r}")
        if isinstance(self.cost, TcoCost) and self.deployment != "on_prem":
            raise ValueError("a TCO profile describes own hardware: use it on an on_prem "
                             "candidate")
        if self.deployment == "on_prem" and self.capacity == "elastic":
            raise ValueError("own hardware is always provisioned: capacity = \"elastic\" is "
                             "for a cloud candidate")
        if self.min_instances is not None and self.capacity != "elastic":
            raise ValueError("min_instances is the floor of an elastic fleet: give it with "
                             "capacity = \"elastic\"")
        if (self.plausibility == "override") != (self.plausibility_reason is not None):
            raise ValueError("plausibility = \"override\" goes with a plausibility_reason "
                             "(why the figures outside their plausible range are right)")
        _check_pue(self.pue, "pue")
        _check_share(self.utilisation, "utilisation")
        if isinstance(self.throughput, EstimatedThroughput):
            _check_share(self.throughput.estimate.efficiency, "throughput.estimate.efficiency")
        if isinstance(self.power, EstimatedPower):
            _check_share(self.power.estimate.tdp_fraction, "power.estimate.tdp_fraction")
        return self


def _bounds(value: Number | None) -> tuple[float, float] | None:
    if value is None:
        return None
    if isinstance(value, Range):
        return value.low, value.high
    return value, value


def _check_pue(value: Number | None, name: str) -> None:
    bounds = _bounds(value)
    if bounds is not None and bounds[0] < 1:
        raise ValueError(f"{name} = {bounds[0]} is below 1: a PUE is facility energy over IT "
                         "energy, never less than 1")


def _check_share(value: Number | None, name: str) -> None:
    bounds = _bounds(value)
    if bounds is not None and not (bounds[0] > 0 and bounds[1] <= 1):
        raise ValueError(f"{name} must lie in (0, 1], got {value}")


class Proposal(_Strict):
    proposal: ProposalMeta
    slo: Slo
    policy: Policy = Field(default_factory=Policy)
    defaults: Defaults = Field(default_factory=Defaults)
    tco: dict[str, TcoProfile] = Field(default_factory=dict)
    demand: Demand | None = None
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)
    embodied: Embodied = Field(default_factory=Embodied)
    workload: Workload | None = None
    candidates: Annotated[list[Candidate], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_ids(self) -> Proposal:
        seen: set[str] = set()
        for c in self.candidates:
            if c.id in seen:
                raise ValueError(f"candidate id {c.id!r} is used twice")
            seen.add(c.id)
        _check_pue(self.defaults.pue, "defaults.pue")
        for name, profile in self.tco.items():
            _check_share(profile.utilisation, f"tco.{name}.utilisation")
        for c in self.candidates:
            if isinstance(c.cost, TcoCost) and c.cost.tco not in self.tco:
                known = ", ".join(sorted(self.tco)) or "none defined"
                raise ValueError(f"candidate {c.id!r}: cost.tco = {c.cost.tco!r} names no "
                                 f"[tco.{c.cost.tco}] table (defined: {known})")
        return self


def _is_union_branch(item: Any, node: Any) -> bool:
    """pydantic names the union member it tried (`OfferCost`, `float`, ...) in the location."""
    if not isinstance(item, str) or (isinstance(node, dict) and item in node):
        return False
    return item[:1].isupper() or "[" in item or item in {"float", "int", "str", "bool"}


def _branch(loc: tuple[Any, ...], data: dict[str, Any]) -> tuple[Any, ...] | None:
    """The location up to the deepest union member pydantic tried, or None outside unions."""
    node: Any = data
    last = None
    for i, item in enumerate(loc):
        if _is_union_branch(item, node):
            last = i
            continue
        if isinstance(node, dict):
            node = node.get(item, {})
        elif isinstance(node, list) and isinstance(item, int) and item < len(node):
            node = node[item]
    return None if last is None else loc[:last + 1]


def _key(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """Render a pydantic location as a TOML key path, naming candidates by their id."""
    parts: list[str] = []
    node: Any = data
    for item in loc:
        if isinstance(item, int):
            ident = node[item].get("id") if isinstance(node, list) and item < len(node) \
                and isinstance(node[item], dict) else None
            parts[-1] += f"[{item}]" + (f" (id {ident!r})" if ident else "")
        elif _is_union_branch(item, node):
            continue
        else:
            parts.append(str(item))
        if isinstance(node, dict):
            node = node.get(item, {})
        elif isinstance(node, list) and isinstance(item, int) and item < len(node):
            node = node[item]
    return ".".join(parts) or "(top level)"


def parse(text: str, path: Path | str) -> Proposal:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ProposalError(path, "(syntax)", str(err)) from None
    try:
        return Proposal.model_validate(data)
    except ValidationError as err:
        errors = err.errors()
        # In a union (number or range, declared or offer cost) pydantic reports every branch;
        # a branch of the wrong type ("not a number" for a table) is the least useful, and
        # the branch that got deepest into the table is the one the user meant. At the same
        # depth an unknown key comes before a missing one: a misspelt required key gives both
        # (siblings), and the typo is what the user has to see. Depth first, so the wrong
        # branches' "unknown key" (`estimate` is not a key of a declared throughput) never
        # hides a deeper problem inside the branch meant.
        # Before all that: a union branch none of whose errors is an unknown key fits every key
        # the user wrote, so its errors (a bad value) come first.
        unknown = {_branch(tuple(e["loc"]), data) for e in errors
                   if e["type"] == "extra_forbidden"}
        first = min(errors, key=lambda e: (_branch(tuple(e["loc"]), data) in unknown,
                                           e["type"].endswith("_type"), -len(e["loc"]),
                                           e["type"] != "extra_forbidden"))
        problem = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            problem = "unknown key (check the spelling against `scorecard init`'s example)"
        return _raise(path, _key(tuple(first["loc"]), data), problem, len(errors))


def _raise(path: Path | str, key: str, problem: str, count: int) -> Proposal:
    more = f" (and {count - 1} more problem(s))" if count > 1 else ""
    raise ProposalError(path, key, problem + more)

