"""The proposal file (DESIGN section 8): what the user compares, under which SLO and policy.

Parsed with pydantic models that forbid unknown keys, so a typo is an error naming the file and
the key rather than a silently ignored setting. Where a table takes one of several shapes (a
throughput declared, measured or estimated; a cost typed in, an offer or a TCO profile; ...),
the key the user wrote decides the shape (a discriminated union, `_by_key` and `_by_value`), so
an error is that shape's own and names the key written or forgotten with the allowed values.
Checks that need market data (does this offer or zone exist in the vintage?) happen when
candidates are resolved against the store.
"""

# no `from __future__ import annotations`: pydantic would read every field's annotation back
# from its string (an eval each) when the module defines its ~55 models
import difflib
import hashlib
import json
import math
import re
import tomllib
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError


class ProposalError(ValueError):
    """An invalid proposal: the message names the file and the key."""

    def __init__(self, path: Path | str, key: str, problem: str):
        self.path = str(path)
        self.key = key
        super().__init__(f"{path}: {key}: {problem}")


def _currency_schema(schema: dict[str, Any], model: type) -> None:
    """JSON Schema hook: a money key may name another currency (`usd_per_hour` for
    `eur_per_hour`, `_in_currency`), so each money key also matches as a pattern of three
    letters in place of `eur`, a required one is satisfied by any key of that pattern, and
    the EUR key and another form of it are not both written."""
    properties = schema.get("properties", {})
    patterns: dict[str, Any] = {}
    for field, sub in properties.items():
        parts = field.split("_")
        if "eur" not in parts:
            continue
        i = parts.index("eur")
        pattern = "^" + "_".join("[a-z]{3}" if j == i else re.escape(part)
                                 for j, part in enumerate(parts)) + "$"
        # the other currencies' keys (`eur_per_hour` itself would match the pattern too, and
        # must also validate against it) take the amount alone
        other = pattern.replace("[a-z]{3}", "(?!eur(?:_|$))[a-z]{3}", 1)
        patterns[other] = _amount_only(sub)
        # one form only: beside `eur_per_hour`, no `usd_per_hour` (the parser refuses both)
        schema.setdefault("dependentSchemas", {})[field] = {"propertyNames": {"not": {
            "allOf": [{"pattern": pattern}, {"not": {"const": field}}]}}}
        if field in schema.get("required", []):
            schema["required"].remove(field)
            # at least one key matches the pattern (eur_per_hour or usd_per_hour ...)
            schema.setdefault("allOf", []).append(
                {"not": {"propertyNames": {"not": {"pattern": pattern}}}})
    if patterns:
        schema["patternProperties"] = patterns
    if schema.get("required") == []:
        del schema["required"]


def _amount_only(sub: dict[str, Any]) -> dict[str, Any]:
    """The schema of a money key without its `{ amount, currency }` form: a key naming the
    currency (`usd_per_hour`) takes the amount alone, a number or a range (the parser reads
    it as that amount in that currency, and refuses a table there)."""
    def keep(option: Any) -> bool:
        return not (isinstance(option, dict)
                    and "ForeignMoney" in str(option.get("$ref", "")))

    out = dict(sub)
    for alternatives in ("oneOf", "anyOf"):
        if alternatives in out:
            out[alternatives] = [_amount_only(o) if isinstance(o, dict) else o
                                 for o in out[alternatives] if keep(o)]
    return out


class _Strict(BaseModel):
    # allow_inf_nan=False: TOML can spell nan and inf; no figure of ours may be either.
    # defer_build: a model's validator is built when it is first used, not when the module
    # is imported: validating a proposal builds the whole tree once (the tables nested in it
    # included), so the models are not each built on their own first, which would cost the
    # import and the first parse time (docs/performance.md)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, allow_inf_nan=False,
                              json_schema_extra=_currency_schema, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """An unknown key is named with the closest known one and the keys of the table. A
        money key may name another currency (`usd_per_hour` for `eur_per_hour`): it is read
        as `{ amount = ..., currency = "USD" }` under the EUR key."""
        if isinstance(data, dict):
            data = _currency_keys(data, cls.model_fields)
            allowed = list(cls.model_fields)
            for written in data:
                if written not in cls.model_fields:
                    close = difflib.get_close_matches(str(written), allowed, n=1, cutoff=0.7)
                    hint = f" (did you mean `{close[0]}`?)" if close else ""
                    raise PydanticCustomError(
                        "unknown_key", "unknown key{hint}; the keys of this table are {allowed}",
                        {"key": str(written), "hint": hint, "allowed": ", ".join(allowed)})
        return data


def _in_currency(written: str, field: str) -> str | None:
    """The currency `written` names in place of `eur` in the money key `field`, if it does
    (`usd_per_hour` for `eur_per_hour` -> USD)."""
    if "eur" not in field.split("_") or written == field:
        return None
    parts, wrote = field.split("_"), written.split("_")
    if len(parts) != len(wrote):
        return None
    i = parts.index("eur")
    same = all(a == b for j, (a, b) in enumerate(zip(parts, wrote, strict=True)) if j != i)
    return wrote[i].upper() if same and len(wrote[i]) == 3 and wrote[i].isalpha() else None


def _currency_keys(data: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """`data` with each money key in another currency moved under its EUR key."""
    out = dict(data)
    for written, value in data.items():
        if written in fields:
            continue
        for field in fields:
            currency = _in_currency(str(written), field)
            if currency is not None and field not in data:
                if isinstance(value, dict) and "currency" in value:
                    raise PydanticCustomError(
                        "currency_twice", "`{key}` names the currency already: give the "
                        "amount alone (a number or { low, mode, high }), or write `{field} "
                        "= { amount = ..., currency = ... }`",
                        {"key": str(written), "field": field})
                del out[written]
                out[field] = {"amount": value, "currency": currency}
                break
    return out


#: the custom error type of each union -> the key whose value decides it (`_by_value`)
_DECIDING_VALUE: dict[str, str] = {}

#: a name other keys and files refer to (a candidate's id, a quality reference): plain ASCII,
#: so that it is spelt alike in the JSON, the workbook, the report's anchors and a shell
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
PROVIDER_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
CURRENCY_PATTERN = r"^[A-Z]{3}$"
#: each pattern in words, for its error (pydantic's own message shows the regular expression)
_PATTERN_WORDS = {
    ID_PATTERN: "use ASCII letters, digits, `_`, `.` and `-` only (no accents, no spaces), "
                "starting with a letter or digit",
    PROVIDER_PATTERN: "use lower-case ASCII letters, digits, `_` and `-` only, starting with "
                      "a letter or digit",
    CURRENCY_PATTERN: "give the currency's three-letter ISO 4217 code in capitals (EUR, USD)",
}
#: what a free-text key holds, said when its text is too short
_TEXT_WORDS = {
    "proxy": "a proxy says why evidence of another model, precision or GPU stands in for the "
             "candidate's own (it is graded `proxy`): write that reason as a sentence",
}


def _tag(name: str) -> str:
    """A branch's tag; `_key` leaves the <...> pydantic puts in an error's location out."""
    return f"<{name}>"


def _by_key(what: str, branches: dict[str, type[BaseModel]], help_text: str) -> Discriminator:
    """A union decided by which of `branches`' keys the table has (the first written; else one
    written close to it, a typo then named by the branch as an unknown key)."""
    keys = list(branches)

    def decide(value: Any) -> str | None:
        if isinstance(value, BaseModel):
            return next((_tag(k) for k, cls in branches.items() if isinstance(value, cls)), None)
        if not isinstance(value, dict):
            return None
        for key in keys:
            if key in value or any(_in_currency(str(w), key) for w in value):
                return _tag(key)
        for written in value:
            close = difflib.get_close_matches(str(written), keys, n=1, cutoff=0.7)
            if close:
                return _tag(close[0])
        return None

    listed = ", ".join(f"`{k}`" for k in keys)
    return Discriminator(decide, custom_error_type=f"{what}_shape",
                         custom_error_message=f"{help_text}: give one of the keys {listed}")


def _by_value(what: str, key: str, branches: dict[str, type[BaseModel]]) -> Discriminator:
    """A union decided by the value of `key` (a tariff's `basis`, a hosting's `kind`)."""

    def decide(value: Any) -> str | None:
        if isinstance(value, BaseModel):
            return next((_tag(v) for v, cls in branches.items() if isinstance(value, cls)), None)
        if isinstance(value, dict) and value.get(key) in branches:
            return _tag(str(value[key]))
        return None

    error_type = f"{what}_{key}"
    _DECIDING_VALUE[error_type] = key
    allowed = " or ".join(repr(v) for v in branches)
    return Discriminator(decide, custom_error_type=error_type,
                         custom_error_message=f"{what} needs `{key}` = {allowed}")


def _number_or_range(value: Any) -> str:
    return _tag("range") if isinstance(value, dict | Range) else _tag("number")


class Range(_Strict):
    """A number known only within bounds: triangular(low, mode, high)."""

    low: float
    mode: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if not self.low <= self.mode <= self.high:
            raise ValueError("a range needs low <= mode <= high")
        return self


#: a figure: a number, or a table {low, mode, high}
Number = Annotated[Annotated[float, Tag(_tag("number"))] | Annotated[Range, Tag(_tag("range"))],
                   Discriminator(_number_or_range)]


def _lower_bound(minimum: float, *, strict: bool) -> AfterValidator:
    """A number (or a range's low end) above `minimum` (strict) or at least `minimum`."""
    word = "positive" if strict and minimum == 0 else (
        f"above {minimum:g}" if strict else f"at least {minimum:g}")

    def check(value: Any) -> Any:
        amount = value.amount if isinstance(value, ForeignMoney) else value
        low = amount.low if isinstance(amount, Range) else amount
        if low is not None and not (low > minimum if strict else low >= minimum):
            raise ValueError(f"must be {word}, got {low:g}")
        return value

    return AfterValidator(check)


#: a figure that divides or multiplies the others: zero or less makes no sense
Positive = Annotated[Number, _lower_bound(0.0, strict=True)]
#: a cost line or an amount that may be nothing, never less
NonNegative = Annotated[Number, _lower_bound(0.0, strict=False)]


class ForeignMoney(_Strict):
    """An amount of money in another currency, `{ amount = 120000, currency = "USD" }` (or a
    key naming the currency, `usd_per_hour = 98.3`): converted to EUR at the ECB rate of the
    vintage when the candidate is resolved, the rate recorded in the figure's source."""

    amount: Number
    currency: Annotated[str, Field(pattern=CURRENCY_PATTERN)]


def _money_shape(value: Any) -> str:
    if isinstance(value, ForeignMoney) or (isinstance(value, dict) and "currency" in value):
        return _tag("foreign")
    return _number_or_range(value)


#: declared money: EUR (a number or a range), or an amount in another currency
Money = Annotated[Annotated[float, Tag(_tag("number"))] | Annotated[Range, Tag(_tag("range"))]
                  | Annotated[ForeignMoney, Tag(_tag("foreign"))], Discriminator(_money_shape)]
PositiveMoney = Annotated[Money, _lower_bound(0.0, strict=True)]
NonNegativeMoney = Annotated[Money, _lower_bound(0.0, strict=False)]


def _upper_share(of: str, *, one: bool = False) -> AfterValidator:
    """A share (a range's high end too) below 1, or at most 1 with `one`; `of` says what it
    is a share of. Its low end is `NonNegative`'s."""
    return _upper_bound(1.0, strict=not one, of=of)


def _upper_bound(maximum: float, *, strict: bool = False, of: str | None = None
                 ) -> AfterValidator:
    """A number (or a range's high end) at most `maximum`, or below it when `strict`; `of`
    says what it is, in the error."""
    what = "" if of is None else f" ({of})"

    def check(value: Number) -> Number:
        high = value.high if isinstance(value, Range) else value
        if not (high < maximum if strict else high <= maximum):
            raise ValueError(f"must be {'below' if strict else 'at most'} {maximum:g}{what}, "
                             f"got {high:g}")
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


Objective = Literal["cpm", "energy", "carbon", "sovereignty", "electricity", "carbon_market"]
DEFAULT_OBJECTIVES: tuple[Objective, ...] = ("cpm", "energy", "carbon", "sovereignty")


class Weights(_Strict):
    """`policy.choose = { weights = { cpm = 0.6, carbon = 0.4 } }`: a weighted score."""

    weights: Annotated[dict[Objective, Annotated[float, Field(ge=0)]], Field(min_length=1)]

    @model_validator(mode="after")
    def _some_weight(self) -> Self:
        if not sum(self.weights.values()) > 0:
            raise ValueError("at least one weight must be above 0")
        return self


def _choose_shape(value: Any) -> str:
    return _tag("weights") if isinstance(value, dict | Weights) else _tag("name")



#: a task as the quality policy names it: `mmlu`, `hellaswag:acc_norm`,
#: `gsm8k:exact_match,flexible-extract` (the metric and filter as lm-eval writes them)
def _quality_task(spec: str) -> str:
    if not re.fullmatch(r"[^\s:,]+(:[^\s:,]+(,[^\s:,]+)?)?", spec):
        raise ValueError(f"expected a task as lm-eval names it, optionally with its metric "
                         f"and filter ('mmlu', 'hellaswag:acc_norm', "
                         f"'gsm8k:exact_match,flexible-extract'), got {spec!r}")
    return spec


QualityTask = Annotated[str, AfterValidator(_quality_task)]


class QualityPolicy(_Strict):
    """`policy.quality`: a candidate whose quality evidence drops more than `max_drop`
    (absolute, in the metric's units: 0.01 is one point of a 0-1 accuracy) below the
    `reference` candidate's on any of `tasks`, beyond one combined standard error, is not
    eligible (docs/proposal.md, Quality)."""

    reference: Annotated[str, Field(pattern=ID_PATTERN)]
    tasks: Annotated[list[QualityTask], Field(min_length=1)]
    max_drop: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    #: "allow" keeps a candidate whose precision or engine differs from the reference's and
    #: that has no quality evidence eligible (its quality not validated); without it such a
    #: candidate is not eligible. The reason is printed on the report's first screen.
    unvalidated: Literal["allow"] | None = None
    unvalidated_reason: Annotated[str, Field(min_length=10)] | None = None

    @model_validator(mode="after")
    def _waiver_has_a_reason(self) -> Self:
        if (self.unvalidated == "allow") != (self.unvalidated_reason is not None):
            raise ValueError("unvalidated = \"allow\" goes with an unvalidated_reason (why "
                             "candidates whose quality is not validated may be recommended)")
        return self


#: the EU Cloud Sovereignty Framework's objectives (v1.2.1)
SovObjective = Literal["SOV-1", "SOV-2", "SOV-3", "SOV-4", "SOV-5", "SOV-6", "SOV-7", "SOV-8"]


class Policy(_Strict):
    min_sovereignty: Annotated[int, Field(ge=0, le=4)] = 0
    allow_estimates: bool = True  # false: estimated candidates are shown, not ranked
    objectives: list[Objective] = Field(default_factory=lambda: list(DEFAULT_OBJECTIVES),
                                        min_length=1)
    #: how the recommendation picks among the frontier (pipeline/engine/ranking/recommend.py)
    choose: Annotated[
        Annotated[Literal["cpm", "carbon", "energy", "carbon_market"], Tag(_tag("name"))]
        | Annotated[Weights, Tag(_tag("weights"))],
        Discriminator(_choose_shape)] = "cpm"
    #: the tokens every per-token figure (and the demand) counts: output tokens of requests
    #: meeting the SLO, or their input + output tokens
    token_basis: Literal["output", "total"] = "output"
    #: the quality a candidate must hold against a reference candidate (None: not checked)
    quality: QualityPolicy | None = None
    #: which carbon figure `carbon` names in objectives and choose (GHG Protocol Scope 2):
    #: location-based (the zone's grid) or market-based (the declared contracts, else the
    #: country's residual mix); both are always computed and shown
    carbon_basis: Literal["location", "market"] = "location"

    @model_validator(mode="before")
    @classmethod
    def _carbon_basis(cls, data: Any) -> Any:
        """With the market basis, `carbon` is the market-based figure wherever the policy
        names it (objectives, choose, weights): the objective is named `carbon_market`."""
        if not (isinstance(data, dict) and data.get("carbon_basis") == "market"):
            return data

        def swap(name: Any) -> Any:
            return "carbon_market" if name == "carbon" else name

        data = dict(data)
        objectives = data.get("objectives", list(DEFAULT_OBJECTIVES))
        if isinstance(objectives, list):
            data["objectives"] = list(dict.fromkeys(swap(o) for o in objectives))
        choose = data.get("choose")
        if isinstance(choose, dict) and isinstance(choose.get("weights"), dict):
            data["choose"] = {**choose, "weights": {swap(k): v
                                                    for k, v in choose["weights"].items()}}
        elif choose is not None:
            data["choose"] = swap(choose)
        return data
    #: the EU Cloud Sovereignty Framework's SEAL minimum per objective (`{ "SOV-2" = 2 }`):
    #: a candidate whose rubric supports less is not eligible (docs/sovereignty.md)
    min_seal: dict[SovObjective, Annotated[int, Field(ge=0, le=4)]] | None = None
    #: the day the regulatory gates are assessed on (None: the vintage's first day)
    regulation_as_of: date | None = None


class Defaults(_Strict):
    pue: Number | None = None


class DeclaredThroughput(_Strict):
    tokens_per_s: Positive
    #: prompt tokens per second at the same operating point (read under token_basis = "total")
    input_tokens_per_s: NonNegative | None = None
    source: str


class EvidenceThroughput(_Strict):
    """Benchmark results (a file or a sweep folder) read under the proposal's SLO: measured.
    Runs are pooled only within one configuration (engine settings); with several, the best
    under the SLO by `choose` (goodput per GPU, or total goodput) is taken."""

    evidence: str
    format: str | None = None
    tz: str | None = None
    choose: Literal["goodput_per_gpu", "goodput"] = "goodput_per_gpu"
    #: why evidence of another model or precision stands in for the candidate's
    #: (graded `proxy`; without it such evidence is refused, pipeline/inputs/evidence/identity.py)
    proxy: Annotated[str, Field(min_length=10)] | None = None


class EvidenceQuality(_Strict):
    """lm-evaluation-harness results (a `results_*.json` file or a folder of them), read
    against `policy.quality`: measured."""

    evidence: str
    #: why results on another accelerator stand in for the candidate's (pipeline/inputs/
    #: evidence/identity.py)
    proxy: Annotated[str, Field(min_length=10)] | None = None


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
    #: the run was on another GPU (a reference or [hardware] id), another model (a model-table
    #: id) or another tensor-parallel degree: its MBU and MFU (achieved over that GPU's
    #: datasheet peaks) are applied to the candidate's GPU, instead of its rates
    gpu: str | None = None
    model: str | None = None
    tensor_parallel: Annotated[int, Field(ge=1)] | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The run's gpu, model and tensor_parallel only when given (a proposal's identity
        hashes as it did before them)."""
        return {k: v for k, v in handler(self).items()
                if not (k in ("gpu", "model", "tensor_parallel") and v is None)}

    @model_validator(mode="after")
    def _stated(self) -> Self:
        if self.evidence is None and self.tpot_ms is None and self.ttft_ms is None:
            raise ValueError("give `evidence`, or a measured `tpot_ms` and/or `ttft_ms`")
        if self.evidence is None and not self.source:
            raise ValueError("name the measured run in `source`")
        if (self.tpot_ms is not None or self.evidence) and self.context is None:
            raise ValueError("give `context`: the cached tokens of the measured run")
        return self


#: keys of the estimate's serving form, left out of its dump when not given
_SERVING_KEYS = frozenset({"concurrency", "prompt_tokens", "output_tokens", "chunk_tokens",
                           "serialised", "speculative_draft_model", "block_size",
                           "kv_read_factor", "kv_link_gbs"})


class Estimate(_Strict):
    """Design-stage goodput: the roofline ceiling of `model` on the candidate's GPUs times an
    efficiency range. Graded `estimated`. The GPUs are split into replicas of
    tensor_parallel x pipeline_parallel GPUs (default: one replica, tensor parallel over
    gpu_count); `batch` is each replica's operating concurrency. `allreduce_us` is the latency
    of one all-reduce (NVLink about 5-100 us, PCIe 2-8 ms; not counted when absent), and
    `lookup_embeddings` overrides the model table's field (the input embedding out of the
    per-token weight traffic). Declared effects, each needing `effects_source`: a prefix-cache
    `prefix_hit_rate` (the share of the prompt's prefill served from cache: the prefill
    computes the uncached tokens only; in the serving form it may be a range) and
    speculative decoding (`speculative_acceptance` a, a number or a range,
    `speculative_draft_tokens` k, `speculative_draft_ms` or `speculative_draft_model`: TPOT =
    (verification of k + 1 tokens per sequence + k x draft step) / (1 + a + ... + a^k)).

    Two forms. The warm-decode form: `batch`, `context` and `efficiency` (goodput = the
    roofline ceiling x efficiency). The serving form: `concurrency` clients per replica in a
    closed loop, each request `prompt_tokens` in and `output_tokens` out, chunked prefill at
    `chunk_tokens` per step (default: vLLM's, by GPU memory) or a `serialised` server: goodput,
    TTFT and TPOT come from the serving model `scorecard estimate --sweep` uses, and the range
    from the model's measured error unless an `efficiency` is given. `block_size`,
    `kv_read_factor` and `kv_link_gbs` are the command's --block-size, --kv-read-factor and
    --kv-link-gbs."""

    model: str
    precision: Literal["bf16", "fp8"] = "bf16"
    batch: Annotated[int, Field(ge=1)] | None = None
    context: Annotated[int, Field(ge=1)] | None = None
    efficiency: Positive | None = None
    calibration: Calibration | None = None
    tensor_parallel: Annotated[int, Field(ge=1)] | None = None
    pipeline_parallel: Annotated[int, Field(ge=1)] = 1
    allreduce_us: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    lookup_embeddings: bool | None = None
    #: a number, or a range the Monte Carlo draws (the serving form: goodput at its low and
    #: high ends, pipeline/engine/roofline/planning.py `serving`)
    prefix_hit_rate: Annotated[NonNegative, _upper_share(
        "a share of the prompt's prefill", one=True)] | None = None
    speculative_acceptance: Annotated[NonNegative, _upper_share(
        "a probability: acceptance 1 drafts forever")] | None = None
    speculative_draft_tokens: Annotated[int, Field(ge=1)] = 4
    speculative_draft_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    effects_source: str | None = None
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    prompt_tokens: Annotated[int, Field(ge=1)] | None = None
    output_tokens: Annotated[int, Field(ge=1)] | None = None
    chunk_tokens: Annotated[int, Field(ge=1)] | None = None
    serialised: bool | None = None
    #: a speculative draft model (an id of the model table): its roofline step on the same
    #: GPUs is the draft step, in place of `speculative_draft_ms`
    speculative_draft_model: str | None = None
    #: the seed mechanics `scorecard estimate` takes as --block-size (a paged KV cache in
    #: blocks of that many tokens: whole blocks, max_batch in blocks), --kv-read-factor (the
    #: engine's reads of the KV cache per decode step, default 1) and --kv-link-gbs
    #: (disaggregated prefill: a prefill pool of one replica's GPUs beside each decode replica,
    #: the prompt's KV sent over a link of that many GB/s; the serving form only)
    block_size: Annotated[int, Field(ge=1)] | None = None
    kv_read_factor: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None
    kv_link_gbs: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        serving = ("concurrency", "prompt_tokens", "output_tokens")
        warm = ("batch", "context")
        given = [k for k in (*serving, "chunk_tokens", "serialised")
                 if getattr(self, k) is not None]
        if given:
            missing = [k for k in serving if getattr(self, k) is None]
            if missing:
                raise ValueError(f"the serving form ({', '.join(given)}) needs "
                                 f"{', '.join(missing)}")
            both = [k for k in warm if getattr(self, k) is not None]
            if both:
                raise ValueError("give the serving form (concurrency, prompt_tokens, "
                                 "output_tokens) or the warm-decode form (batch, context), "
                                 f"not both ({', '.join(both)} given)")
            if self.serialised and self.chunk_tokens is not None:
                raise ValueError("a serialised server runs one request at a time: no "
                                 "chunk_tokens")
            if self.kv_link_gbs is not None and (self.serialised or
                                                 self.chunk_tokens is not None):
                raise ValueError("disaggregated prefill (kv_link_gbs) runs the prefills on "
                                 "their own pool: no chunk_tokens, not serialised")
            return self
        if self.kv_link_gbs is not None or isinstance(self.prefix_hit_rate, Range):
            raise ValueError("kv_link_gbs and a prefix_hit_rate range need the serving form "
                             "(concurrency, prompt_tokens, output_tokens)")
        missing = [k for k in (*warm, "efficiency") if getattr(self, k) is None]
        if missing:
            raise ValueError(f"give {', '.join(missing)} (or the serving form: concurrency, "
                             "prompt_tokens, output_tokens)")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The serving-form keys only when given, so a warm-decode estimate dumps (and a
        proposal's identity hashes) as it did before them."""
        return {k: v for k, v in handler(self).items()
                if not (k in _SERVING_KEYS and v is None)}

    @model_validator(mode="after")
    def _effects_cited(self) -> Self:
        if (self.prefix_hit_rate is not None or self.speculative_acceptance is not None) \
                and not (self.effects_source or "").strip():
            raise ValueError("a declared prefix_hit_rate or speculative_acceptance needs "
                             "effects_source (where the figure comes from)")
        return self


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
    #: why logs of another accelerator or GPU count stand in for the candidate's (graded
    #: `proxy`; without it such logs are refused, pipeline/inputs/evidence/identity.py)
    proxy: Annotated[str, Field(min_length=10)] | None = None


class ParquetPower(_Strict):
    """A fleet's power samples as Parquet partitioned by day (docs/energy.md), their energy
    computed by DuckDB over the files for the throughput evidence's window."""

    parquet: str
    idle_watts: NonNegative | None = None


class DeclaredCost(_Strict):
    """An hourly cost typed in: an all-in on-prem or reserved cost (`pricing = "reserved"`, the
    default) or a cloud's on-demand price. Which hours are billed is the candidate's
    `capacity` (every hour of every sized instance unless it is elastic)."""

    eur_per_hour: PositiveMoney
    source: str
    pricing: Literal["on_demand", "reserved"] = "reserved"
    #: a commitment to this price for a term (None: billed at it by the hour)
    term: "Term | None" = None


class TcoCost(_Strict):
    tco: str


class ApiCost(_Strict):
    """Tokens bought from an API (`deployment = "api"`), priced per million input and output
    tokens: typed in with their `source`. `min_billing_tokens` (the provider's minimum billing
    unit) and `rate_limit_tokens_per_min` are noted against the demand."""

    input_eur_per_mtok: NonNegativeMoney
    output_eur_per_mtok: PositiveMoney
    source: Annotated[str, Field(min_length=3)]
    min_billing_tokens: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None
    rate_limit_tokens_per_min: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None


class ApiPriceCost(_Strict):
    """Tokens bought from an API at a bundled public price
    (sources/reference/api_prices.csv): `api = "provider:model"`."""

    api: str
    rate_limit_tokens_per_min: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _qualified(self) -> Self:
        if ":" not in self.api:
            raise ValueError("api must be written 'provider:model', e.g. "
                             "'scaleway:llama-3.3-70b-instruct'")
        return self


class Capex(_Strict):
    """Purchase cost of one instance in EUR, by line; the lines add up (ranges bound to bound,
    as fully correlated)."""

    gpus: NonNegativeMoney = 0.0
    servers: NonNegativeMoney = 0.0
    network: NonNegativeMoney = 0.0
    installation: NonNegativeMoney = 0.0


class OwnSiteHosting(_Strict):
    """The organisation's own room (`kind = "own_site"`): a yearly cost whatever the load."""

    kind: Literal["own_site"]
    eur_per_year: NonNegativeMoney


class ColocationHosting(_Strict):
    """A colocation site (`kind = "colocation"`): billed per kW of the instance's busy power
    each month."""

    kind: Literal["colocation"]
    eur_per_kw_month: NonNegativeMoney


#: where the instance is hosted, decided by `kind`; each kind is priced by its own key
Hosting = Annotated[
    Annotated[OwnSiteHosting, Tag(_tag("own_site"))]
    | Annotated[ColocationHosting, Tag(_tag("colocation"))],
    _by_value("hosting", "kind", {"own_site": OwnSiteHosting, "colocation": ColocationHosting})]


class WholesaleTariff(_Strict):
    """The zone's day-ahead price of the vintage x retail_multiplier + grid_fee_eur_per_kwh."""

    basis: Literal["wholesale"]
    retail_multiplier: Positive = 1.0
    grid_fee_eur_per_kwh: NonNegativeMoney = 0.0


class ContractTariff(_Strict):
    """A negotiated price per kWh, used instead of the zone's day-ahead price."""

    basis: Literal["contract"]
    eur_per_kwh: PositiveMoney


class AllInTariff(_Strict):
    """The price the bill shows, built from parts a finance team recognises: an energy price
    (the zone's day-ahead price of the vintage, or `energy_eur_per_kwh`, a PPA's or supply
    contract's energy-only price) + the network costs + the taxes and levies (VAT excluded:
    a business recovers it) of the site country's non-household consumption `band` (Eurostat
    nrg_pc_205_c, bundled: IA < 20 MWh a year ... ID 2,000-19,999 MWh ... IG >= 150,000)."""

    basis: Literal["all_in"]
    band: Literal["IA", "IB", "IC", "ID", "IE", "IF", "IG"]
    energy_eur_per_kwh: PositiveMoney | None = None


#: how electricity is priced, decided by `basis`
Tariff = Annotated[
    Annotated[WholesaleTariff, Tag(_tag("wholesale"))]
    | Annotated[ContractTariff, Tag(_tag("contract"))]
    | Annotated[AllInTariff, Tag(_tag("all_in"))],
    _by_value("electricity", "basis", {"wholesale": WholesaleTariff, "contract": ContractTariff,
                                       "all_in": AllInTariff})]


class Lease(_Strict):
    """A node leased instead of bought: a monthly payment over a term, no capex."""

    eur_per_month: PositiveMoney
    term_months: Annotated[int, Field(ge=1, le=240)]


class TcoProfile(_Strict):
    """On-prem total cost of ownership of one instance (node), DESIGN section 7: bought
    (`capex` amortised over `amortisation_months`) or leased (`lease`)."""

    capex: Capex | None = None
    amortisation_months: Annotated[int, Field(ge=1, le=240)] | None = None
    #: a lease instead of capex: its payment is the capital line, over its term
    lease: Lease | None = None
    cost_of_capital: NonNegative = 0.0
    residual_eur: NonNegativeMoney = 0.0
    maintenance_share_per_year: NonNegative = 0.0
    staff_eur_per_year: NonNegativeMoney = 0.0
    hosting: Hosting | None = None
    electricity: Tariff = Field(
        default_factory=lambda: WholesaleTariff(basis="wholesale"))
    utilisation: Number = 1.0
    source: str
    #: months from a node's order to its service (delivery, power, installation), read by a
    #: plan over the horizon ([horizon] growth_per_year or demand_by_month) only
    lead_time_months: Annotated[NonNegative, _upper_bound(60.0)] | None = None

    @model_validator(mode="after")
    def _bought_or_leased(self) -> Self:
        if (self.capex is None) == (self.lease is None):
            raise ValueError("a node is bought (`capex` with `amortisation_months`) or leased "
                             "(`lease = { eur_per_month, term_months }`): give one of the two")
        if self.capex is not None and self.amortisation_months is None:
            raise ValueError("capex needs amortisation_months (the months it is repaid over)")
        if self.lease is not None:
            given = [k for k in ("amortisation_months", "residual_eur",
                                 "maintenance_share_per_year") if k in self.model_fields_set]
            if given:
                raise ValueError(f"a leased node has no capex: {', '.join(given)} describe(s) "
                                 "a bought one (its maintenance is in the lease, or give it "
                                 "as staff_eur_per_year)")
        return self

    @property
    def months(self) -> int:
        """The months the capital line runs over: the amortisation's or the lease's term."""
        months = self.lease.term_months if self.lease is not None else self.amortisation_months
        assert months is not None
        return months


class Demand(_Strict):
    """The organisation's demand: a daily token volume (`tokens_per_day`, on the token basis)
    or a sustained request rate (`requests_per_s` with the mean `prompt_tokens` and
    `output_tokens` of a request, turned into tokens per day on the token basis); one of the
    two, never both. With tokens_per_day, the request shape is optional and lets the
    Little's-law instance count be reported beside the goodput one. The fleet is sized for
    the peak (`peak_factor` x the mean) with `headroom` kept free, plus `redundancy_instances`
    spares (N+1: 1) that a provisioned fleet pays for."""

    tokens_per_day: Positive | None = None
    requests_per_s: Positive | None = None
    prompt_tokens: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    output_tokens: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None
    #: the 95th percentiles of the request lengths (optional, each beside its mean, not below
    #: it): the p95 request duration is reported beside the mean's, and an estimate bounds its
    #: batch by the sequences of p95 length its KV cache holds
    prompt_tokens_p95: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    output_tokens_p95: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None
    peak_factor: Annotated[Number, _lower_bound(1.0, strict=False)] = 1.0
    headroom: Annotated[NonNegative, _upper_share("a share of goodput kept free")] = 0.2
    #: spare instances added to the peak sizing and billed (N+1: 1), for a provisioned fleet;
    #: an elastic candidate ignores them (its provider replaces a failed instance)
    redundancy_instances: Annotated[int, Field(ge=0, le=10_000, strict=True)] = 0

    @model_validator(mode="after")
    def _not_beyond_any_deployment(self) -> Self:
        """At most 10^15 tokens a day (11.6 billion tokens/s, thousands of times any
        deployment's; a request carries at least one output token, so at most 10^15 / 86,400
        requests/s): past it the sizing means nothing, and near 1e308 it overflows."""
        for key, most in (("tokens_per_day", 1e15), ("requests_per_s", 1e15 / 86_400)):
            value = getattr(self, key)
            high = value.high if isinstance(value, Range) else value
            if high is not None and high > most:
                raise ValueError(f"{key} = {high:g}: at most {most:.4g} (10^15 tokens a day, "
                                 "thousands of times any deployment's demand)")
        return self

    @model_validator(mode="after")
    def _one_volume(self) -> Self:
        if (self.tokens_per_day is None) == (self.requests_per_s is None):
            raise ValueError("give tokens_per_day or requests_per_s (with prompt_tokens and "
                             "output_tokens), exactly one")
        if self.requests_per_s is not None and (self.prompt_tokens is None
                                                or self.output_tokens is None):
            raise ValueError("requests_per_s needs prompt_tokens and output_tokens (the mean "
                             "tokens of one request)")
        for name in ("prompt_tokens", "output_tokens"):
            mean, p95 = getattr(self, name), getattr(self, f"{name}_p95")
            if p95 is not None and (mean is None or p95 < mean):
                raise ValueError(f"{name}_p95 needs {name} (the mean) and must not be below it")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The keys given (a tokens_per_day demand dumps as it did before requests_per_s, and
        without redundancy_instances while it is 0, as before the key)."""
        return {k: v for k, v in handler(self).items()
                if v is not None and not (k == "redundancy_instances" and v == 0)}


class Uncertainty(_Strict):
    draws: Annotated[int, Field(ge=100, le=1_000_000)] = 10_000
    seed: int = 20_261_129


class Embodied(_Strict):
    lifetime_years: Positive = Field(
        default_factory=lambda: Range(low=3.0, mode=4.0, high=6.0))


class StoreTable(_Strict):
    """`[store] path = "..."`: the DuckDB file this proposal's runs read and keep (relative to
    the proposal file's folder); `--db` overrides it, and it overrides $SCORECARD_DB."""

    path: Annotated[str, Field(min_length=1)]


class Workload(_Strict):
    hourly_profile: Annotated[list[float], Field(min_length=24, max_length=24)]
    timezone: str = "Europe/Paris"


class Term(_Strict):
    """`cost.term`: a commitment to rented capacity for `months`, provisioned and billed every
    hour of the term whatever the demand, at the price less `discount`, escalating by
    `escalation_per_year` (compounding by year), with an `upfront_eur` per instance at the
    start of each term; compared over the proposal's horizon at its cost of capital
    (docs/decision.md, "Contract terms"). Plain numbers: the levelled price is not monotone
    in them, so a range would not map to one."""

    months: Annotated[int, Field(ge=1, le=240)]
    commitment: Literal["reserved"] = "reserved"
    discount: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.0
    upfront_eur: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    #: the least the contract bills a month (EUR, at the term's first-year prices), whatever
    #: the fleet: a floor of `min_commit_eur_per_month / (730 h x the levelled price)`
    #: instances billed
    min_commit_eur_per_month: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    escalation_per_year: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    source: Annotated[str, Field(min_length=3)]


class Horizon(_Strict):
    """`[horizon]`: the months every candidate is compared over (default: the longest term or
    amortisation in the proposal) and the yearly cost of capital a commitment's payments are
    levelled at (default: the TCO profiles' own rate when they all give one, else 0)."""

    months: Annotated[int, Field(ge=1, le=240)] | None = None
    cost_of_capital: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    #: the demand's path over the horizon (plan mode, pipeline/engine/fleet/plan.py): the yearly
    #: growth of `[demand]`'s level (compounded month by month), or the daily tokens of each
    #: month; one of the two, never both
    growth_per_year: Annotated[Number, _lower_bound(-0.9, strict=False),
                               _upper_bound(10.0)] | None = None
    demand_by_month: Annotated[list[Annotated[float, Field(gt=0, le=1e15,
                                                           allow_inf_nan=False)]],
                               Field(min_length=1, max_length=240)] | None = None

    @model_validator(mode="after")
    def _one_path(self) -> Self:
        if self.growth_per_year is not None and self.demand_by_month is not None:
            raise ValueError("give the demand's path once: growth_per_year or demand_by_month")
        if self.demand_by_month is not None and self.months is not None \
                and len(self.demand_by_month) != self.months:
            raise ValueError(f"demand_by_month has {len(self.demand_by_month)} month(s), "
                             f"months = {self.months}: one figure per month of the horizon")
        if self.has_path and self.months is None and self.demand_by_month is None:
            raise ValueError("growth_per_year needs months (the horizon the demand grows over)")
        return self

    @property
    def has_path(self) -> bool:
        """Plan mode: the demand follows a path over the horizon."""
        return self.growth_per_year is not None or self.demand_by_month is not None

    @property
    def plan_months(self) -> int:
        if self.demand_by_month is not None:
            return len(self.demand_by_month)
        assert self.months is not None
        return self.months


class OfferCost(_Strict):
    offer: str
    pricing: Literal["on_demand", "reserved", "spot"] = "on_demand"
    #: a commitment to the offer for a term (None: billed at the offer's price by the hour)
    term: Term | None = None

    @property
    def provider_id(self) -> str:
        return self.offer.split(":", 1)[0]

    @property
    def offer_id(self) -> str:
        return self.offer.split(":", 1)[1]

    @model_validator(mode="after")
    def _qualified(self) -> Self:
        if ":" not in self.offer:
            raise ValueError("offer must be written 'provider:offer_id', e.g. "
                             "'scaleway:H100-SXM-8-80G'")
        return self


#: a candidate's throughput: typed in, measured (benchmark files) or estimated (roofline)
Throughput = Annotated[
    Annotated[DeclaredThroughput, Tag(_tag("tokens_per_s"))]
    | Annotated[EvidenceThroughput, Tag(_tag("evidence"))]
    | Annotated[EstimatedThroughput, Tag(_tag("estimate"))],
    _by_key("throughput", {"tokens_per_s": DeclaredThroughput, "evidence": EvidenceThroughput,
                           "estimate": EstimatedThroughput},
            "a throughput is declared (`tokens_per_s` with its `source`), measured (`evidence`, "
            "benchmark files) or estimated (`estimate`, a roofline)")]

#: a candidate's power: typed in, measured (power logs) or estimated (a share of TDP)
Power = Annotated[
    Annotated[DeclaredPower, Tag(_tag("watts"))]
    | Annotated[EvidencePower, Tag(_tag("evidence"))]
    | Annotated[EstimatedPower, Tag(_tag("estimate"))]
    | Annotated[ParquetPower, Tag(_tag("parquet"))],
    _by_key("power", {"watts": DeclaredPower, "evidence": EvidencePower,
                      "estimate": EstimatedPower, "parquet": ParquetPower},
            "a power is declared (`watts` with `boundary` and `source`), measured (`evidence`, "
            "power logs, or `parquet`, a fleet's Parquet samples) or estimated (`estimate`, a "
            "share of TDP)")]

#: a candidate's quality: measured (lm-evaluation-harness results)
Quality = Annotated[
    Annotated[EvidenceQuality, Tag(_tag("evidence"))],
    _by_key("quality", {"evidence": EvidenceQuality},
            "a quality is measured (`evidence`, lm-evaluation-harness results files)")]

#: a candidate's cost: typed in, a cloud offer of the vintage, a [tco.NAME] profile, or
#: tokens bought from an API (typed in per million tokens, or a bundled API price)
Cost = Annotated[
    Annotated[DeclaredCost, Tag(_tag("eur_per_hour"))]
    | Annotated[OfferCost, Tag(_tag("offer"))]
    | Annotated[TcoCost, Tag(_tag("tco"))]
    | Annotated[ApiCost, Tag(_tag("output_eur_per_mtok"))]
    | Annotated[ApiPriceCost, Tag(_tag("api"))],
    _by_key("cost", {"eur_per_hour": DeclaredCost, "offer": OfferCost, "tco": TcoCost,
                     "output_eur_per_mtok": ApiCost, "api": ApiPriceCost},
            "a cost is typed in (`eur_per_hour` with its `source`), a cloud offer (`offer` = "
            "'provider:offer_id'), a TCO profile (`tco` = the name of a [tco.NAME] table), or "
            "an API's token prices (`output_eur_per_mtok` with `input_eur_per_mtok` and "
            "`source`, or `api` = 'provider:model' from the bundled API prices)")]


class EvidenceLatency(_Strict):
    """An API's latency measured against its endpoint: benchmark files (GuideLLM, AIPerf,
    vLLM bench, ...) read under the proposal's SLO like any other evidence."""

    evidence: str
    format: str | None = None
    tz: str | None = None


class PublishedLatency(_Strict):
    """An API's latency as its provider publishes it: TTFT and TPOT at a percentile of its
    requests (`percentile`; a typical figure is read as the median, 50), the share of
    requests they prove to meet the SLO's limits checked against `slo.attainment`."""

    ttft_ms: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    tpot_ms: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    source: Annotated[str, Field(min_length=3)]
    percentile: Annotated[float, Field(gt=0, lt=100, allow_inf_nan=False)] = 50.0


#: an API candidate's latency: measured against the endpoint, or published
Latency = Annotated[
    Annotated[EvidenceLatency, Tag(_tag("evidence"))]
    | Annotated[PublishedLatency, Tag(_tag("ttft_ms"))],
    _by_key("latency", {"evidence": EvidenceLatency, "ttft_ms": PublishedLatency},
            "an API's latency is measured against its endpoint (`evidence`, benchmark files) or "
            "published (`ttft_ms` with `source`)")]


class Hardware(_Strict):
    """`[hardware.NAME]`: an accelerator the reference table (sources/reference/hardware.csv)
    lacks, declared with its datasheet figures and their `source`; a candidate names it as
    its `gpu` and resolve reads it like a reference row (the roofline's memory, bandwidth and
    compute by precision; the power estimate's TDP), cited as declared."""

    memory_gb: Annotated[float, Field(gt=0)]
    memory_bandwidth_gb_per_s: Annotated[float, Field(gt=0)]
    bf16_dense_tflops: Annotated[float, Field(gt=0)] | None = None
    fp8_dense_tflops: Annotated[float, Field(gt=0)] | None = None
    tdp_w: Annotated[float, Field(gt=0)]
    vendor: str | None = None
    source: Annotated[str, Field(min_length=3)]


class CarbonContract(_Strict):
    """`[carbon_contracts.NAME]`: what an electricity supply contract lets the organisation
    claim in market-based carbon (GHG Protocol Scope 2): a `covered_share` of the electricity
    backed by guarantees of origin or a PPA, at `covered_gco2e_per_kwh` (0 for renewable
    sources), and the rest at the supplier's own factor `supplier_gco2e_per_kwh` when the
    supplier discloses one, else at the country's residual mix. For a cloud candidate: the
    provider's published market-based factor, as `supplier_gco2e_per_kwh`."""

    source: Annotated[str, Field(min_length=3)]
    covered_share: Annotated[NonNegative, _upper_share("a share of the electricity",
                                                       one=True)] = 0.0
    covered_gco2e_per_kwh: NonNegative = 0.0
    supplier_gco2e_per_kwh: NonNegative | None = None


class SovereigntyOverride(_Strict):
    level: Annotated[int, Field(ge=0, le=4)]
    justification: Annotated[str, Field(min_length=20)]


class Site(_Strict):
    """`site`: the data centre an on-prem candidate's hardware runs in (the organisation's own
    room or a colocation site), with the facts the regulatory gates read
    (docs/sovereignty.md, Regulatory gates). A fact left out makes a gate that needs it say
    so instead of passing."""

    source: Annotated[str, Field(min_length=3)]
    #: the day the data centre started (or starts) operation
    commissioned_on: date | None = None
    #: the data centre's non-redundant nominal connected power (EnEfG scope: 300 kW)
    connected_power_kw: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    #: the data centre's installed IT power demand (EED art. 12 scope: 500 kW)
    it_power_kw: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    #: share of the electricity covered on balance by unsubsidised renewable electricity
    renewable_share: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    #: energy reuse factor (DIN EN 50600-4-6), a share
    energy_reuse_factor: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    #: whether the operator reports to the European database on data centres
    eu_reporting: bool | None = None


class Candidate(_Strict):
    id: Annotated[str, Field(pattern=ID_PATTERN)]
    label: str
    deployment: Literal["on_prem", "cloud", "api"]
    provider: Annotated[str, Field(pattern=PROVIDER_PATTERN)]
    zone: str | None = None
    region: str | None = None
    gpu: str
    gpu_count: Annotated[int, Field(ge=1)]
    model: str | None = None
    precision: str | None = None
    engine: str | None = None
    pue: Number | None = None
    utilisation: Number | None = None
    throughput: Throughput
    power: Power | None = None
    cost: Cost
    electricity_eur_per_kwh: PositiveMoney | None = None
    grid_gco2e_per_kwh: NonNegative | None = None
    sovereignty_override: SovereigntyOverride | None = None
    #: the data centre of an on-prem candidate, for the regulatory gates
    site: Site | None = None
    #: quality evidence (lm-eval results), checked against policy.quality when it is set
    quality: Quality | None = None
    #: an API's latency against the SLO: measured at its endpoint or published (api only)
    latency: Latency | None = None
    #: how a cloud candidate's instances are held: every sized instance billed every hour
    #: (provisioned), or only busy instance-hours, at least `min_instances` (elastic)
    capacity: Literal["provisioned", "elastic"] = "provisioned"
    min_instances: Annotated[int, Field(ge=0)] | None = None
    #: "override" accepts figures outside their declared plausible range, with a reason
    plausibility: Literal["override"] | None = None
    plausibility_reason: Annotated[str, Field(min_length=10)] | None = None
    example_data: bool = False
    #: the [carbon_contracts.NAME] its electricity is bought under (market-based carbon)
    carbon_contract: str | None = None
    #: under a plan, the cloud or API candidate (its id) that serves the demand its own
    #: nodes cannot yet (before they serve); without one that demand is unserved
    fallback: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.deployment == "on_prem" and self.provider != "self":
            raise ValueError("an on_prem candidate has provider = \"self\"")
        if self.deployment == "cloud" and self.site is not None:
            raise ValueError("site describes the data centre of own or colocated hardware: a "
                             "cloud provider's data centre is the provider's to report")
        if self.deployment in ("cloud", "api") and self.provider == "self":
            raise ValueError(f"a {self.deployment} candidate names its provider (scaleway, "
                             "ovhcloud, ...)")
        api_cost = isinstance(self.cost, ApiCost | ApiPriceCost)
        if api_cost != (self.deployment == "api"):
            raise ValueError("tokens bought by API go together: deployment = \"api\" with a "
                             "cost per million tokens (`output_eur_per_mtok` ... or `api`), and "
                             "a cost per million tokens only on an api candidate")
        if isinstance(self.cost, ApiPriceCost) and \
                self.cost.api.split(":", 1)[0] != self.provider:
            raise ValueError(f"cost.api is from {self.cost.api.split(':', 1)[0]!r} but provider "
                             f"is {self.provider!r}")
        if self.latency is not None and self.deployment != "api":
            raise ValueError("latency is an API's, measured at its endpoint or published: a "
                             "node's latency is its throughput evidence under the SLO")
        if self.deployment == "api" and ("capacity" in self.model_fields_set
                                         or self.min_instances is not None):
            raise ValueError("an api candidate is billed per token used (elastic by nature): "
                             "leave out capacity and min_instances")
        term = getattr(self.cost, "term", None)
        if term is not None and self.deployment != "cloud":
            raise ValueError("cost.term is a commitment to rented capacity: give it on a cloud "
                             "candidate (own hardware is costed by a [tco.NAME] profile)")
        if term is not None and self.capacity == "elastic":
            raise ValueError("cost.term commits to provisioned capacity, billed every hour of "
                             "the term: it cannot go with capacity = \"elastic\"")
        if term is not None and isinstance(self.cost, OfferCost) \
                and self.cost.pricing == "spot":
            raise ValueError("cost.term cannot commit to a spot price: use pricing = "
                             "\"on_demand\" (the discount applies to it) or \"reserved\"")
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


class MinShareAtLevel(_Strict):
    """`mix.min_share_at_level`: at least `share` of the month's tokens served at sovereignty
    level `level` or above (the mix is not eligible at a base size that serves less)."""

    level: Annotated[int, Field(ge=0, le=4, strict=True)]
    share: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


_CandidateId = Annotated[str, Field(pattern=ID_PATTERN)]


class Mix(_Strict):
    """`mix = { base, burst, min_share_at_level }`: own capacity (`base`, an on_prem
    candidate) in whole instances serves each hour of the [workload] profile up to its
    capacity, the rest goes to `burst` (a cloud or api candidate); pipeline/engine/fleet/mix.py
    chooses the base size (docs/decision.md "Mixes")."""

    base: _CandidateId
    burst: _CandidateId
    min_share_at_level: MinShareAtLevel | None = None


class MixCandidate(_Strict):
    """A `[[candidates]]` entry with a `mix`: a combination of two hand-listed candidates,
    compared like any candidate."""

    id: _CandidateId
    label: str
    mix: Mix


class KeyedError(ValueError):
    """A problem found across tables, located at the key it is about (`parse` names it)."""

    def __init__(self, loc: tuple[Any, ...], problem: str):
        self.loc = loc
        super().__init__(problem)


def _mix_positions(data: Any) -> list[int]:
    """The positions in `candidates` of the entries that are mixes (they have a `mix`)."""
    entries = data.get("candidates") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    return [i for i, e in enumerate(entries) if isinstance(e, dict) and "mix" in e]


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


#: the estimate keys a scan sets itself: each generated candidate's model and precision, and
#: one replica over all the offer's GPUs
_SCAN_SETS = ("model", "precision", "tensor_parallel", "pipeline_parallel")


_ScanPricing = Literal["on_demand", "reserved", "spot"]


def _scan_estimate_schema(schema: dict[str, Any], model: type) -> None:
    """JSON Schema hook: the keys a scan sets itself are not a scan estimate's."""
    _currency_schema(schema, model)
    for key in _SCAN_SETS:
        schema.get("properties", {}).pop(key, None)
        if key in schema.get("required", []):
            schema["required"].remove(key)


class ScanEstimate(Estimate):
    """`scan.throughput.estimate`: a roofline estimate (either form) whose model is the scan's,
    precision each generated candidate's and topology one replica over each offer's GPUs:
    those keys are refused here."""

    model_config = ConfigDict(json_schema_extra=_scan_estimate_schema)

    #: the scan's model, filled in for each generated candidate
    model: str = ""

    @model_validator(mode="after")
    def _set_by_the_scan(self) -> Self:
        given = [k for k in _SCAN_SETS if k in self.model_fields_set]
        if given:
            raise ValueError(f"{given[0]} is set by the scan (model: the scan's `model`; "
                             "precision: each of `precisions`; one replica over each offer's "
                             "GPUs): leave it out")
        return self


class ScanThroughput(_Strict):
    """`scan.throughput`: a roofline `estimate` applied to every offer (its model and precision
    are the scan's, one replica over the offer's GPUs), or `by_gpu` benchmark evidence per
    accelerator type (an offer whose accelerator has none is left out, said so)."""

    estimate: ScanEstimate | None = None
    by_gpu: Annotated[dict[str, EvidenceThroughput], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.estimate is None) == (self.by_gpu is None):
            raise ValueError("give `estimate` (a roofline estimate for every offer) or "
                             "`by_gpu` (evidence per accelerator type), exactly one")
        return self


class Scan(_Strict):
    """`[[scan]]`: every offer of the vintage that fits `model` in memory (weights + KV cache
    at `context` tokens) at one of `precisions`, among the allowed accelerators, providers,
    regions, pricings and sovereignty minimum, as generated candidates (pipeline/inputs/
    scan.py, docs/proposal.md "The market as candidates")."""

    model: str
    precisions: Annotated[list[Literal["bf16", "fp8"]], Field(min_length=1)]
    #: accelerators allowed (names of sources/reference/hardware.csv), or "any" that fits
    gpus: Literal["any"] | Annotated[list[str], Field(min_length=1)] = "any"
    providers: Annotated[list[str], Field(min_length=1)] | None = None
    regions: Annotated[list[str], Field(min_length=1)] | None = None
    pricing: Annotated[list[_ScanPricing], Field(min_length=1)] = Field(
        default_factory=lambda: list[_ScanPricing](["on_demand"]))
    min_sovereignty: Annotated[int, Field(ge=0, le=4)] = 0
    #: tokens of one sequence the KV cache must hold (default: the estimate's context, or its
    #: prompt + output tokens, else [demand] prompt_tokens + output_tokens)
    context: Annotated[int, Field(ge=1)] | None = None
    throughput: ScanThroughput
    power: Power | None = None
    engine: str | None = None

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        for key in ("precisions", "providers", "regions", "pricing", "gpus"):
            values = getattr(self, key)
            if isinstance(values, list) and len(set(values)) < len(values):
                raise ValueError(f"{key} lists a value twice")
        return self


def _proposal_schema(schema: dict[str, Any], model: type) -> None:
    """JSON Schema hook: at least one hand-listed candidate or one scan of the market."""
    _currency_schema(schema, model)
    schema["anyOf"] = [{"required": [key], "properties": {key: {"minItems": 1}}}
                       for key in ("candidates", "scan")]
    # a mix is written as a [[candidates]] entry: `mixes` is where the parser keeps them
    mixes = schema.get("properties", {}).pop("mixes", None)
    candidates = schema.get("properties", {}).get("candidates")
    if mixes is not None and candidates is not None:
        # decided by the `mix` key, as the parser does (an error names the table meant)
        candidates["items"] = {"if": {"required": ["mix"]}, "then": mixes["items"],
                               "else": candidates["items"]}


class Proposal(_Strict):
    model_config = ConfigDict(json_schema_extra=_proposal_schema)

    proposal: ProposalMeta
    slo: Slo
    policy: Policy = Field(default_factory=Policy)
    defaults: Defaults = Field(default_factory=Defaults)
    tco: dict[str, TcoProfile] = Field(default_factory=dict)
    #: accelerators the reference table lacks, by the name a candidate's `gpu` gives
    hardware: dict[str, Hardware] = Field(default_factory=dict)
    demand: Demand | None = None
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)
    embodied: Embodied = Field(default_factory=Embodied)
    workload: Workload | None = None
    store: StoreTable | None = None
    #: electricity contracts' carbon claims, by the name a candidate's `carbon_contract` gives
    carbon_contracts: dict[str, CarbonContract] = Field(default_factory=dict)
    #: the months every candidate is compared over, and the cost of capital of commitments
    horizon: Horizon | None = None
    #: the longest cost.term.months of the candidates (0: none), found on first use
    _longest_term: int | None = PrivateAttr(default=None)
    #: the places of the mixes among the file's [[candidates]] entries (`_mixes_apart`)
    _mixes_at: list[int] = PrivateAttr(default_factory=list)
    #: evidence paths may leave the proposal's folder (kept out of the proposal's identity)
    allow_outside: bool = Field(default=False, exclude=True)
    candidates: list[Candidate] = Field(default_factory=list)
    #: every offer of the vintage that fits, as generated candidates
    #: (pipeline/inputs/market/scan.py)
    scan: list[Scan] = Field(default_factory=list)
    #: the [[candidates]] entries that are mixes (written there; kept apart by the parser)
    mixes: list[MixCandidate] = Field(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _mixes_apart(cls, data: Any, handler: Any) -> Any:
        """The [[candidates]] entries with a `mix` go to `mixes`, their places kept
        (`written_at`, and `parse` names errors by their place among the candidates)."""
        if not isinstance(data, dict):
            return handler(data)
        if "mixes" in data:
            raise PydanticCustomError(
                "unknown_key", "unknown key; a mix is a [[candidates]] entry with a `mix` "
                "table", {"key": "mixes"})
        at = _mix_positions(data)
        if not at:
            return handler(data)
        entries = data["candidates"]
        proposal = handler({**data, "candidates": [e for i, e in enumerate(entries)
                                                   if i not in at],
                            "mixes": [entries[i] for i in at]})
        proposal._mixes_at = at
        return proposal

    def written_ids(self) -> list[str]:
        """The ids of the file's [[candidates]] entries in the file's order, mixes among
        them."""
        ids = [c.id for c in self.candidates]
        for at, m in zip(self._mixes_at, self.mixes, strict=True):  # ascending places
            ids.insert(at, m.id)
        return ids

    def written_at(self, index: int) -> int:
        """The place among the file's [[candidates]] entries of the `index`-th of
        `candidates` (the mixes written before it counted): how errors and inputs name its
        keys, `candidates[n] (id '...')`."""
        return _written_place(index, self._mixes_at)

    def sha256(self) -> str:
        """The proposal's identity beside its name: the sha256 of the parsed proposal as
        canonical JSON (defaults filled in), so comments and layout do not change it and
        every figure does; where the store is kept is not part of it."""
        # no [hardware] tables: left out, so a proposal's identity is what it was before them
        unused = ({"store"} | (set() if self.hardware else {"hardware"})
                  | (set() if self.horizon else {"horizon"})
                  | (set() if self.scan else {"scan"})
                  | (set() if self.mixes else {"mixes"}))
        document = self.model_dump(mode="json", exclude=unused)
        # no quality keys: left out when unset, so a proposal's identity is what it was
        # before them
        for table in (document["policy"], *document["candidates"]):
            if table.get("quality") is None:
                table.pop("quality", None)
        # no waiver of unvalidated quality (both keys or neither): left out, so the identity
        # is what it was before the waiver
        quality = document["policy"].get("quality")
        if quality is not None and quality["unvalidated"] is None:
            del quality["unvalidated"], quality["unvalidated_reason"]
        # keys added since, unset: left out, so the identity is what it was before them
        # (regulation: site, SEAL minimum, assessment day; latency; carbon contract; the plan:
        # a demand path, a lead time, a lease, a fallback)
        horizon = document.get("horizon") or {}
        for table, key in ((document["policy"], "min_seal"),
                           (document["policy"], "regulation_as_of"),
                           (horizon, "growth_per_year"), (horizon, "demand_by_month"),
                           *((t, k) for t in document["tco"].values()
                             for k in ("lead_time_months", "lease")),
                           *((c, k) for c in document["candidates"]
                             for k in ("site", "latency", "carbon_contract", "fallback"))):
            if table.get(key, 0) is None:
                del table[key]
        # no term on a cost: left out, as the identity was before it
        for c in document["candidates"]:
            cost = c.get("cost")
            if isinstance(cost, dict) and "term" in cost and cost["term"] is None:
                del cost["term"]
        # no proxy declared for throughput, power or quality evidence: left out, as the
        # identity was before it
        for c in document["candidates"]:
            for table in (c.get("throughput"), c.get("power"), c.get("quality")):
                if isinstance(table, dict) and "proxy" in table and table["proxy"] is None:
                    del table["proxy"]
        # no carbon contracts, location-based carbon: left out, as the identity was before
        if not document["carbon_contracts"]:
            del document["carbon_contracts"]
        if document["policy"]["carbon_basis"] == "location":
            del document["policy"]["carbon_basis"]
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        if not self.candidates and not self.scan:
            raise ValueError("give at least one [[candidates]] table (or a [[scan]] of the "
                             "market)")
        seen: set[str] = set()
        for c in self.candidates:
            if c.id in seen:
                raise ValueError(f"candidate id {c.id!r} is used twice")
            seen.add(c.id)
        _check_pue(self.defaults.pue, "defaults.pue")
        if self.horizon is not None and self.horizon.has_path and self.demand is None:
            raise ValueError("[horizon] growth_per_year or demand_by_month is the path of a "
                             "demand: give its level in [demand]")
        by_month = None if self.horizon is None else self.horizon.demand_by_month
        level = None if self.demand is None else point(self.demand.tokens_per_day)
        if by_month is not None and not math.isclose(level or math.nan, by_month[0],
                                                     rel_tol=1e-9):
            # the sizing, the first month's CPM and the month's cost are at [demand]: month 1
            raise ValueError(
                f"horizon.demand_by_month[0] = {by_month[0]:g} tokens/day differs from [demand] "
                f"tokens_per_day = {'not given' if level is None else f'{level:g}'}: the "
                "first month is the [demand] month (its sizing and first month's CPM); give "
                "them equal")
        for name, profile in self.tco.items():
            _check_share(profile.utilisation, f"tco.{name}.utilisation")
        for i, c in enumerate(self.candidates):
            if isinstance(c.cost, TcoCost) and c.cost.tco not in self.tco:
                known = ", ".join(sorted(self.tco)) or "none defined"
                raise KeyedError(("candidates", i, "cost", "tco"), f"{c.cost.tco!r} names no "
                                 f"[tco.{c.cost.tco}] table (defined: {known})")
            if c.carbon_contract is not None and c.carbon_contract not in self.carbon_contracts:
                known = ", ".join(sorted(self.carbon_contracts)) or "none defined"
                raise KeyedError(("candidates", i, "carbon_contract"), f"{c.carbon_contract!r} "
                                 f"names no [carbon_contracts.{c.carbon_contract}] table "
                                 f"(defined: {known})")
            self._check_fallback(c)
            term = getattr(c.cost, "term", None)
            if term is not None and self.horizon is not None and self.horizon.months is not None \
                    and self.horizon.months < term.months:
                raise ValueError(f"horizon.months = {self.horizon.months} is shorter than "
                                 f"candidate {c.id!r}'s cost.term.months = {term.months}: a "
                                 "commitment is owed for its whole term, so compare over at "
                                 "least its months")
        self._check_mixes(seen)
        return self

    def _check_fallback(self, c: Candidate) -> None:
        """A fallback names another cloud or API candidate that has none of its own."""
        if c.fallback is None:
            return
        by_id = {o.id: o for o in self.candidates}
        other = by_id.get(c.fallback)
        if other is None:
            raise ValueError(f"candidate {c.id!r}: fallback = {c.fallback!r} names no candidate")
        if other.id == c.id or other.deployment == "on_prem" or other.fallback is not None:
            raise ValueError(f"candidate {c.id!r}: fallback = {c.fallback!r} must be another "
                             "cloud or api candidate without a fallback of its own")

    @property
    def plan(self) -> bool:
        """Plan mode: a [demand] and a [horizon] with the demand's path."""
        return self.demand is not None and self.horizon is not None and self.horizon.has_path

    def _check_mixes(self, plain: set[str]) -> None:
        """A mix's parts are hand-listed candidates: own hardware for the base, rented
        capacity or an API for the burst; its hours come from the [workload] profile."""
        by_id = {c.id: c for c in self.candidates}
        mix_ids = {m.id for m in self.mixes}
        for i, m in enumerate(self.mixes):
            where = ("mixes", i)
            if m.id in plain or [x.id for x in self.mixes].count(m.id) > 1:
                raise KeyedError((*where, "id"), f"candidate id {m.id!r} is used twice")
            if self.workload is None:
                raise KeyedError((*where, "mix"), "a mix splits each hour of the day between "
                                 "its parts: give [workload] hourly_profile")
            for part, want in (("base", "on_prem"), ("burst", "cloud or api")):
                ref = getattr(m.mix, part)
                if ref in mix_ids:
                    raise KeyedError((*where, "mix", part), f"{ref!r} is a mix: the parts of "
                                     "a mix are plain candidates (no mix of a mix)")
                if ref not in by_id:
                    known = ", ".join(sorted(by_id)) or "none"
                    raise KeyedError((*where, "mix", part), f"{ref!r} names no [[candidates]] "
                                     f"entry (candidates: {known})")
                deployment = by_id[ref].deployment
                if (deployment == "on_prem") != (part == "base"):
                    raise KeyedError((*where, "mix", part), f"{ref!r} is {deployment}: the "
                                     f"{part} of a mix is {want} (own capacity in whole "
                                     "instances for the base, rented or API capacity for the "
                                     "burst)")

    def horizon_months(self) -> int | None:
        """The months every candidate is compared over: `[horizon] months`, else the longest
        term or amortisation in the proposal; None when the proposal has no term."""
        if self.horizon is not None and self.horizon.months is not None:
            return self.horizon.months
        if self.horizon is not None and self.horizon.demand_by_month is not None:
            return self.horizon.plan_months
        if self._longest_term is None:  # once: every committed candidate asks (10,000 of them)
            self._longest_term = max((t.months for c in self.candidates
                                      if (t := getattr(c.cost, "term", None)) is not None),
                                     default=0)
        if not self._longest_term:
            return None
        return max([self._longest_term, *(p.months for p in self.tco.values())])

    def horizon_cost_of_capital(self) -> tuple[float, str]:
        """The yearly rate a commitment's payments are levelled at, and where it comes from:
        `[horizon] cost_of_capital`, else the rate every TCO profile gives (the same point
        figure), else 0."""
        if self.horizon is not None and self.horizon.cost_of_capital is not None:
            return self.horizon.cost_of_capital, "horizon.cost_of_capital"
        rates = {point(p.cost_of_capital) for p in self.tco.values()}
        if len(rates) == 1:
            rate = rates.pop()
            assert rate is not None
            return rate, f"the TCO profiles' cost_of_capital ({', '.join(sorted(self.tco))})"
        return 0.0, ("0: no [horizon] cost_of_capital" + (
            ", and the TCO profiles give different rates" if rates else ""))


def _key(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """Render a pydantic location as a TOML key path, naming candidates by their id (a union's
    <tag> left out)."""
    parts: list[str] = []
    node: Any = data
    for item in loc:
        if item == "[key]" or (isinstance(item, str) and item.startswith("<")
                               and item.endswith(">")):
            continue  # a union's tag, or pydantic's mark of a bad table key (named before)
        if isinstance(item, int):
            ident = node[item].get("id") if isinstance(node, list) and item < len(node) \
                and isinstance(node[item], dict) else None
            parts[-1] += f"[{item}]" + (f" (id {ident!r})" if ident else "")
        else:
            parts.append(str(item))
        if isinstance(node, dict):
            node = node.get(item, {})
        elif isinstance(node, list) and isinstance(item, int) and item < len(node):
            node = node[item]
    return ".".join(parts) or "(top level)"


def _among_candidates(loc: tuple[Any, ...], at: list[int]) -> tuple[Any, ...]:
    """An error located at its entry among the [[candidates]] as written (`at`: the mixes'
    places there): a mix's by its place, a candidate's with the mixes before it counted."""
    if len(loc) < 2 or not isinstance(loc[1], int):
        return loc
    if loc[0] == "mixes" and loc[1] < len(at):
        return ("candidates", at[loc[1]], *loc[2:])
    if loc[0] == "candidates":
        return ("candidates", _written_place(loc[1], at), *loc[2:])
    return loc


def _written_place(index: int, mixes_at: list[int]) -> int:
    """The place among the file's [[candidates]] entries of the `index`-th entry that is not
    a mix, the mixes being at the places `mixes_at` (ascending)."""
    for at in mixes_at:
        if at <= index:
            index += 1
    return index


def _located(error: Any) -> tuple[tuple[Any, ...], str]:
    """An error's location (down to the key it is about) and its problem in words."""
    loc, kind, ctx = tuple(error["loc"]), error["type"], error.get("ctx") or {}
    problem = str(error["msg"]).removeprefix("Value error, ")
    if isinstance(ctx.get("error"), KeyedError):
        return (*loc, *ctx["error"].loc), problem
    if kind == "unknown_key":
        return (*loc, ctx["key"]), problem
    if kind == "extra_forbidden":
        return loc, "unknown key"
    if kind == "missing":
        return loc, "missing: this key is required"
    if kind == "literal_error":
        return loc, f"{error['input']!r} is not allowed; allowed: {ctx['expected']}"
    if kind == "string_pattern_mismatch" and ctx["pattern"] in _PATTERN_WORDS:
        return loc, f"{error['input']!r}: {_PATTERN_WORDS[ctx['pattern']]}"
    if kind == "string_too_short":
        said = _TEXT_WORDS.get(str(loc[-1]), "too short") if loc else "too short"
        return loc, (f"{error['input']!r}: {said} ({ctx['min_length']} characters at least, "
                     f"{len(error['input'])} given)")
    if kind in _DECIDING_VALUE:
        key = _DECIDING_VALUE[kind]
        got = error["input"].get(key) if isinstance(error["input"], dict) else None
        return (*loc, key), problem + ("" if got is None else f", got {got!r}")
    if kind.endswith("_shape"):
        written = ", ".join(map(str, error["input"])) if isinstance(error["input"], dict) \
            else None
        return loc, problem + (f" (keys written: {written})" if written else
                               f" (got {error['input']!r}, not a table)")
    return loc, problem


def parse(text: str, path: Path | str) -> Proposal:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ProposalError(path, "(syntax)", str(err)) from None
    try:
        return Proposal.model_validate(data)
    except ValidationError as err:
        # Every union is decided by a key the user wrote, so each error is about the table
        # meant: all are listed, in the order of the file's keys.
        at = _mix_positions(data)
        found = [(_among_candidates(loc, at), problem)
                 for loc, problem in map(_located, err.errors())]
        problems = [(_key(loc, data), problem) for loc, problem in found]
        rest = "".join(f"\n{path}: {key}: {problem}" for key, problem in problems[1:])
        raise ProposalError(path, problems[0][0], problems[0][1] + rest) from None

