"""The roofline formulas: the vectorised model over a frame of inputs, the validated scalar
inputs and result, and the assumptions behind the figures. Nothing here does I/O.

GB = 1e9 bytes throughout; times in ms; compute rates in dense TFLOP/s (1e12 FLOP/s).
`roofline` adds the columns of `OUTPUTS` to a frame holding those of `REQUIRED_INPUTS` (and
optionally `OPTIONAL_INPUTS`); `estimate` is the scalar form over one `RooflineInputs`, with
`assumptions` giving its sentences. See the package docstring for the whole API.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

GB = 1e9  # bytes
TERA = 1e12  # FLOP/s per TFLOP/s

REQUIRED_INPUTS: tuple[str, ...] = (
    "params", "layers", "q_heads", "kv_heads", "head_dim", "cache_bytes", "batch", "context",
    "weights_gb", "reserve_gb", "budget_gb", "bandwidth_gb_per_s", "tflops",
)
# name -> default; a null `active_params`/`prompt_tokens` means "same as params/context", a
# null vocab_size/hidden_size means "LM head not separated from the per-token linear layers".
OPTIONAL_INPUTS: dict[str, Any] = {
    "active_params": None,
    "tensor_parallel": 1,
    "prompt_tokens": None,
    "vocab_size": None,
    "hidden_size": None,
    "tied_embeddings": False,
    # the input embedding table is looked up (only the new tokens' rows are read), so it is
    # left out of the per-token weight traffic and decode FLOPs (untied models; a tied table is
    # read whole as the LM head)
    "lookup_embeddings": False,
    # MoE: experts per layer and experts routed per token (null: dense, or every expert read)
    "experts": None,
    "experts_per_token": None,
    # per all-reduce latency in microseconds (null: collectives not counted)
    "allreduce_us": None,
    "pipeline_parallel": 1,
    # microbatches in flight through the pipeline stages (null: one per sequence, the batch)
    "microbatches": None,
    "replicas": 1,
    # reads of the KV cache per decode step (HF transformers' naive cache ~3: copy out, write
    # back, attend; paged engines 1, seed 004)
    "kv_read_factor": 1.0,
    # paged KV: the cache is allocated in blocks of this many tokens (null: token-granular)
    "block_size": None,
    # prompt tokens whose K/V the prefix cache already holds: their prefill is not computed
    "prefix_cached_tokens": 0,
}
OUTPUTS: tuple[str, ...] = (
    "kv_bytes_per_token", "cache_gb", "memory_budget_gb", "required_gb", "headroom_gb",
    "max_batch", "traffic_gb", "memory_ms", "decode_flops", "compute_ms", "step_ms", "bound",
    "tokens_per_s_ceiling", "ceiling_reason", "arithmetic_intensity_flop_per_byte",
    "ridge_flop_per_byte", "prefill_flops", "prefill_compute_ms", "prefill_memory_ms",
    "ttft_lower_bound_ms",
    # MoE traffic, parallelism costs, KV capacity and the topology's totals
    "experts_touched", "weights_read_gb", "collective_ms", "pp_bubble_share",
    "kv_capacity_tokens", "gpus", "tokens_per_s_total", "tokens_per_s_per_gpu",
)

# column -> (minimum, minimum is inclusive, what it must be). One table for the scalar and the
# frame checks, so a draw and a typed flag are judged alike.
_RULES: dict[str, tuple[float, bool, str]] = {
    "params": (0, False, "a positive parameter count"),
    "active_params": (0, False, "a positive parameter count"),
    "layers": (1, True, "at least 1"),
    "q_heads": (1, True, "at least 1"),
    "kv_heads": (1, True, "at least 1"),
    "head_dim": (1, True, "at least 1"),
    "cache_bytes": (0, False, "positive (bytes per cached element)"),
    "batch": (1, True, "at least 1"),
    "context": (0, True, "0 or more tokens"),
    "prompt_tokens": (1, True, "at least 1 token"),
    "weights_gb": (0, False, "positive"),
    "reserve_gb": (0, True, "0 or more"),
    "budget_gb": (0, False, "positive"),
    "bandwidth_gb_per_s": (0, False, "positive"),
    "tflops": (0, False, "positive"),
    "tensor_parallel": (1, True, "at least 1"),
    "vocab_size": (1, True, "at least 1"),
    "hidden_size": (1, True, "at least 1"),
    "experts": (2, True, "at least 2"),
    "experts_per_token": (1, True, "at least 1"),
    "allreduce_us": (0, True, "0 or more microseconds"),
    "pipeline_parallel": (1, True, "at least 1"),
    "microbatches": (1, True, "at least 1"),
    "replicas": (1, True, "at least 1"),
    "kv_read_factor": (1, True, "at least 1 (reads of the KV cache per decode step)"),
    "block_size": (1, True, "at least 1 token"),
    "prefix_cached_tokens": (0, True, "0 or more tokens"),
}


class RooflineInputError(ValueError):
    """An input is out of range; `field` is the input's name (the CLI maps it to its flag)."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


def _breaks_rule(name: str, value: float) -> str | None:
    minimum, inclusive, wanted = _RULES[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) \
            or math.isinf(value):
        return f"must be a finite number, got {value!r}"
    if value < minimum or (not inclusive and value == minimum):
        return f"must be {wanted}, got {value!r}"
    return None


# --- the formulas (each once) ------------------------------------------------------------

_C = pl.col


def _f(name: str) -> pl.Expr:
    return _C(name).cast(pl.Float64)


def _kv_heads_held() -> pl.Expr:
    # Under tensor parallelism with fewer KV heads than GPUs, engines replicate KV heads so
    # every GPU holds one: the cache counts max(kv_heads, tp) heads.
    return pl.max_horizontal(_f("kv_heads"), _f("tensor_parallel"))


def _kv_bytes_per_token() -> pl.Expr:
    return 2.0 * _f("layers") * _kv_heads_held() * _f("head_dim") * _f("cache_bytes")


def _looked_up_params() -> pl.Expr:
    """Parameters of an untied input embedding table that is looked up, not multiplied: read
    only for the new tokens' rows, so out of the per-token weight traffic and FLOPs."""
    vh = (_f("vocab_size") * _f("hidden_size")).fill_null(0.0)
    return pl.when(_C("lookup_embeddings") & ~_C("tied_embeddings")).then(vh).otherwise(0.0)


def _experts_touched() -> pl.Expr:
    """Expected distinct experts per layer a batch of B tokens routes to, top-k of E each:
    E x (1 - (1 - k/E)^B); null for a dense model."""
    e, k = _f("experts"), _f("experts_per_token")
    return e * (1.0 - (1.0 - k / e) ** _f("batch"))


def _weights_read_gb() -> pl.Expr:
    """Weights read per decode step: a MoE reads its shared weights and the experts the batch
    touches (each expert (params - active) / (E - k) parameters); a dense model all of them;
    less a looked-up embedding table. Scaled from weights_gb so quantisation carries over."""
    e, k = _f("experts"), _f("experts_per_token")
    per_expert = (_f("params") - _f("active_params")) / (e - k)
    moe = _f("params") - e * per_expert + _C("experts_touched") * per_expert
    read = pl.when(e.is_not_null() & k.is_not_null() & (e > k)).then(moe) \
        .otherwise(_f("params")) - _looked_up_params()
    return _f("weights_gb") * read / _f("params")


def _decode_flops() -> pl.Expr:
    per_token = (2.0 * (_f("active_params") - _looked_up_params())
                 + 4.0 * _f("layers") * _f("q_heads") * _f("head_dim") * _f("context"))
    return _f("batch") * per_token


def _traffic_gb() -> pl.Expr:
    return (_C("weights_read_gb") + _f("kv_read_factor") * _C("cache_gb")
            + _f("batch") * _C("kv_bytes_per_token") / GB)


def _prefill_flops() -> pl.Expr:
    """The prompt's prefill; the first c tokens served from the prefix cache are not computed:
    (n - c) tokens through the linear layers, attention of positions c + 1 .. n over their
    prefixes (sum of positions n(n+1)/2 - c(c+1)/2), the LM head once."""
    n, c = _f("prompt_tokens"), _f("prefix_cached_tokens")
    vh = _f("vocab_size") * _f("hidden_size")
    known = vh.is_not_null()
    embed_params = pl.when(_C("tied_embeddings")).then(vh).otherwise(2.0 * vh)
    linear_params = pl.when(known).then(_f("active_params") - embed_params) \
        .otherwise(_f("active_params"))
    lm_head_once = pl.when(known).then(2.0 * vh).otherwise(0.0)
    attention = (4.0 * _f("layers") * _f("q_heads") * _f("head_dim")
                 * (n * (n + 1.0) - c * (c + 1.0)) / 2.0)
    return (n - c) * 2.0 * linear_params + lm_head_once + attention


def _group() -> pl.Expr:
    """GPUs one replica spans: tensor parallel x pipeline stages."""
    return _f("tensor_parallel") * _f("pipeline_parallel")


def _fixed_gb() -> pl.Expr:
    """Memory taken before any KV cache: the weights and every GPU's reserve."""
    return _f("weights_gb") + _group() * _f("reserve_gb")


def _kv_free_tokens() -> pl.Expr:
    """Tokens of KV cache the memory beside the weights and the reserve holds (fractional)."""
    return (_C("memory_budget_gb") - _fixed_gb()) * GB / _C("kv_bytes_per_token")


def _kv_blocks() -> pl.Expr:
    """Paged KV: whole blocks of `block_size` tokens that fit (null: token-granular)."""
    return (_kv_free_tokens() / _f("block_size")).floor().clip(lower_bound=0)


def _kv_capacity_tokens() -> pl.Expr:
    """Tokens the KV cache holds: whole tokens, or whole blocks x block size when paged."""
    return pl.when(_C("block_size").is_null()).then(_kv_free_tokens().floor()) \
        .otherwise(_kv_blocks() * _f("block_size")).clip(lower_bound=0).cast(pl.Int64)


def _max_batch() -> pl.Expr:
    # Sequences of `context` tokens whose cache fits beside the weights and the reserve: the
    # KV-cache fit; paged, each sequence takes ceil(context / block size) whole blocks. 0 when
    # weights and reserve alone exceed the budget; null at context 0.
    free_gb = _C("memory_budget_gb") - _fixed_gb()
    per_sequence_gb = _f("context") * _C("kv_bytes_per_token") / GB
    whole = (free_gb / per_sequence_gb).floor()
    paged = (_kv_blocks() / (_f("context") / _f("block_size")).ceil()).floor()
    fits = pl.when(_C("block_size").is_null()).then(whole).otherwise(paged) \
        .clip(lower_bound=0).cast(pl.Int64)
    return pl.when(per_sequence_gb > 0).then(fits).otherwise(None)


def _with_defaults(frame: pl.LazyFrame) -> pl.LazyFrame:
    names = frame.collect_schema().names()
    missing = [c for c in REQUIRED_INPUTS if c not in names]
    if missing:
        raise RooflineInputError(missing[0], f"input column missing (all missing: {missing})")
    added = [pl.lit(default).alias(name) for name, default in OPTIONAL_INPUTS.items()
             if name not in names]
    frame = frame.with_columns(added)
    return frame.with_columns(
        _C("active_params").fill_null(_C("params")),
        _C("prompt_tokens").fill_null(_C("context")),
        _C("tensor_parallel").fill_null(1),
        _C("tied_embeddings").cast(pl.Boolean).fill_null(False),
        _C("lookup_embeddings").cast(pl.Boolean).fill_null(False),
        _C("pipeline_parallel").fill_null(1),
        _C("replicas").fill_null(1),
        _C("microbatches").fill_null(_C("batch")),
        _C("kv_read_factor").fill_null(1.0),
        _C("prefix_cached_tokens").fill_null(0),
    )


F = TypeVar("F", pl.DataFrame, pl.LazyFrame)
_BOOLEANS = ("tied_embeddings", "lookup_embeddings")


def roofline(frame: F) -> F:
    """Add the roofline's OUTPUTS to a frame of inputs (eager in, eager out; lazy in, lazy
    out). Vectorised over rows: one row per candidate and Monte Carlo draw."""
    lazy = _with_defaults(frame.lazy())
    tp = _f("tensor_parallel")
    group = _group()
    pp = _f("pipeline_parallel")
    out = (
        lazy.with_columns(
            _kv_bytes_per_token().alias("kv_bytes_per_token"),
            (group * _f("budget_gb")).alias("memory_budget_gb"),
            _experts_touched().alias("experts_touched"),
            pl.when(tp > 1).then(_f("layers") * 2.0 * _f("allreduce_us").fill_null(0.0) / 1e3)
            .otherwise(0.0).alias("collective_ms"),
            ((pp - 1.0) / (_f("microbatches") + pp - 1.0)).alias("pp_bubble_share"),
            _decode_flops().alias("decode_flops"),
            _prefill_flops().alias("prefill_flops"),
            (_f("tflops") * TERA / (_f("bandwidth_gb_per_s") * GB)).alias("ridge_flop_per_byte"),
        )
        .with_columns(
            (_f("batch") * _f("context") * _C("kv_bytes_per_token") / GB).alias("cache_gb"),
            _weights_read_gb().alias("weights_read_gb"),
        )
        .with_columns(
            (_fixed_gb() + _C("cache_gb")).alias("required_gb"),
            _traffic_gb().alias("traffic_gb"),
        )
        .with_columns(
            (_C("memory_budget_gb") - _C("required_gb")).alias("headroom_gb"),
            (_C("traffic_gb") / (group * _f("bandwidth_gb_per_s")) * 1e3).alias("memory_ms"),
            (_C("decode_flops") / (group * _f("tflops") * TERA) * 1e3).alias("compute_ms"),
            (_C("decode_flops") / (_C("traffic_gb") * GB))
            .alias("arithmetic_intensity_flop_per_byte"),
            (_C("prefill_flops") / (tp * _f("tflops") * TERA) * 1e3).alias("prefill_compute_ms"),
            ((_f("weights_gb") + (_f("prompt_tokens") - _f("prefix_cached_tokens"))
              * _C("kv_bytes_per_token") / GB)
             / (tp * _f("bandwidth_gb_per_s")) * 1e3).alias("prefill_memory_ms"),
        )
        .with_columns(
            _max_batch().alias("max_batch"),
            (pl.max_horizontal("memory_ms", "compute_ms") / (1.0 - _C("pp_bubble_share"))
             + _C("collective_ms")).alias("step_ms"),
            _kv_capacity_tokens().alias("kv_capacity_tokens"),
            (group * _f("replicas")).alias("gpus"),
            pl.when(_C("memory_ms") >= _C("compute_ms")).then(pl.lit("memory"))
            .otherwise(pl.lit("compute")).alias("bound"),
            pl.max_horizontal("prefill_compute_ms", "prefill_memory_ms")
            .alias("ttft_lower_bound_ms"),
        )
        .with_columns(
            pl.when(_C("headroom_gb") >= 0).then(_f("batch") / _C("step_ms") * 1e3)
            .otherwise(None).alias("tokens_per_s_ceiling"),
            pl.when(_C("headroom_gb") >= 0).then(_f("batch") / _C("step_ms") * 1e3
                                                 * _f("replicas"))
            .otherwise(None).alias("tokens_per_s_total"),
            pl.when(_C("headroom_gb") >= 0).then(_f("batch") / _C("step_ms") * 1e3 / group)
            .otherwise(None).alias("tokens_per_s_per_gpu"),
            pl.when(_C("headroom_gb") < 0).then(pl.format(
                "required {} GB (weights {} + reserve {} + KV cache {}) exceeds the {} GB "
                "memory budget by {} GB: no token ceiling",
                _C("required_gb").round(2), _f("weights_gb").round(2),
                (group * _f("reserve_gb")).round(2), _C("cache_gb").round(2),
                _C("memory_budget_gb").round(2), (-_C("headroom_gb")).round(2),
            )).otherwise(None).alias("ceiling_reason"),
        )
    )
    return out.collect() if isinstance(frame, pl.DataFrame) else out


# --- scalar wrapper ----------------------------------------------------------------------


@dataclass(frozen=True)
class RooflineInputs:
    """One candidate's inputs. Per-GPU figures: reserve_gb, budget_gb, bandwidth_gb_per_s,
    tflops. Whole-model figures: params, active_params, weights_gb. `calibration_source`
    says where effective bandwidth/compute came from (None: datasheet peaks)."""

    params: float
    layers: int
    q_heads: int
    kv_heads: int
    head_dim: int
    cache_bytes: float
    batch: int
    context: int
    weights_gb: float
    reserve_gb: float
    budget_gb: float
    bandwidth_gb_per_s: float
    tflops: float
    active_params: float | None = None
    tensor_parallel: int = 1
    prompt_tokens: int | None = None
    vocab_size: int | None = None
    hidden_size: int | None = None
    tied_embeddings: bool = False
    lookup_embeddings: bool = False
    experts: int | None = None
    experts_per_token: int | None = None
    allreduce_us: float | None = None
    pipeline_parallel: int = 1
    microbatches: int | None = None
    replicas: int = 1
    kv_read_factor: float = 1.0
    block_size: int | None = None
    prefix_cached_tokens: int = 0
    calibration_source: str | None = None
    #: where bandwidth and compute come from (a datasheet, cited); None: planning inputs typed
    #: in by the user, not datasheet peaks
    rates_source: str | None = None

    def __post_init__(self) -> None:
        for name in _RULES:
            value = getattr(self, name)
            if value is None and name in OPTIONAL_INPUTS:
                continue
            problem = _breaks_rule(name, value)
            if problem:
                raise RooflineInputError(name, problem)
        if self.active_params is not None and self.active_params > self.params:
            raise RooflineInputError("active_params", f"must not exceed params "
                                     f"({self.active_params:g} > {self.params:g})")
        prompt = self.prompt_tokens if self.prompt_tokens is not None else self.context
        if self.prefix_cached_tokens and self.prefix_cached_tokens >= prompt:
            raise RooflineInputError("prefix_cached_tokens", f"must be below the prompt's "
                                     f"{prompt} tokens (its last token is always computed), "
                                     f"got {self.prefix_cached_tokens}")
        if self.kv_heads > self.q_heads:
            raise RooflineInputError("kv_heads", f"must not exceed q_heads "
                                     f"({self.kv_heads} > {self.q_heads})")
        if (self.vocab_size is None) != (self.hidden_size is None):
            which = "vocab_size" if self.vocab_size is None else "hidden_size"
            raise RooflineInputError(which, "give both vocab_size and hidden_size, or neither")
        if (self.experts is None) != (self.experts_per_token is None):
            which = "experts" if self.experts is None else "experts_per_token"
            raise RooflineInputError(which, "give both experts and experts_per_token, or "
                                            "neither")
        if self.experts is not None and self.experts_per_token is not None \
                and self.experts_per_token > self.experts:
            raise RooflineInputError("experts_per_token", f"must not exceed experts "
                                     f"({self.experts_per_token} > {self.experts})")

    def row(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("calibration_source", "rates_source")}


@dataclass(frozen=True)
class RooflineResult:
    kv_bytes_per_token: float
    cache_gb: float
    memory_budget_gb: float
    required_gb: float
    headroom_gb: float
    max_batch: int | None
    traffic_gb: float
    memory_ms: float
    decode_flops: float
    compute_ms: float
    step_ms: float
    bound: str
    tokens_per_s_ceiling: float | None
    ceiling_reason: str | None
    arithmetic_intensity_flop_per_byte: float
    ridge_flop_per_byte: float
    prefill_flops: float
    prefill_compute_ms: float
    prefill_memory_ms: float
    ttft_lower_bound_ms: float
    experts_touched: float | None
    weights_read_gb: float
    collective_ms: float
    pp_bubble_share: float
    kv_capacity_tokens: int | None
    gpus: float
    tokens_per_s_total: float | None
    tokens_per_s_per_gpu: float | None
    assumptions: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["assumptions"] = list(self.assumptions)
        return out


def _one_row(inputs: RooflineInputs) -> pl.DataFrame:
    row = inputs.row()
    schema = {k: (pl.Boolean if k in _BOOLEANS else pl.Float64) for k in row}
    return pl.DataFrame([row], schema=schema)


def estimate(inputs: RooflineInputs) -> RooflineResult:
    """The roofline for one candidate, with its assumptions."""
    row = roofline(_one_row(inputs)).row(0, named=True)
    values = {name: row[name] for name in OUTPUTS}
    return RooflineResult(**values, assumptions=tuple(assumptions(inputs)))


def _num(x: float) -> str:
    return f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


def assumptions(inputs: RooflineInputs) -> list[str]:
    """Every assumption behind the figures, as sentences to print beside them. The figures the
    sentences quote come from the formulas above (defaults included), not from a copy."""
    i = inputs
    tp = i.tensor_parallel
    quoted = _with_defaults(_one_row(inputs).lazy()).select(
        _kv_heads_held().alias("heads_held"), _kv_bytes_per_token().alias("kv"),
        _f("active_params").alias("active"), _f("prompt_tokens").alias("prompt"),
    ).collect().row(0, named=True)
    heads_held, kv = int(quoted["heads_held"]), quoted["kv"]
    group = tp * i.pipeline_parallel
    free_gb = group * (i.budget_gb - i.reserve_gb) - i.weights_gb
    active, prompt = quoted["active"], int(quoted["prompt"])
    out = [
        "Units: GB = 1e9 bytes; times in ms; compute in dense TFLOP/s (1e12 FLOP/s); the "
        "figures are a design-stage estimate (grade `estimated`), never a measurement.",
        f"KV cache per token = 2 (K and V) x {i.layers} layers x {heads_held} KV heads x "
        f"{i.head_dim} head dim x {_num(i.cache_bytes)} B = {_num(kv)} B: KV heads, not the "
        f"{i.q_heads} query heads, so GQA/MQA is honoured.",
        f"All {i.batch} sequences hold {i.context} tokens of context at once (a full batch at "
        "the stated context: the memory worst case for that batch).",
        f"Reserve of {_num(i.reserve_gb)} GB per GPU covers activations, CUDA graphs, the "
        "runtime and fragmentation; the weights take "
        f"{_num(i.weights_gb)} GB and nothing else shares the GPU.",
        "Warm decode step: every weight and the whole KV cache are read from GPU memory once "
        "per step and each sequence's new K/V is written; caches on chip are ignored.",
        "Ideal overlap of memory traffic and compute: step = max(memory time, compute time) is "
        "a lower bound on the step, so tokens/s = batch / step is a ceiling; engines reach a "
        "fraction of it (the efficiency range).",
        "Decode FLOPs per token = 2 x parameters ("
        + ("less the looked-up input embedding" if i.lookup_embeddings and i.vocab_size
           and not i.tied_embeddings else "the embedding counted like a matmul")
        + ") + 4 x layers x query heads x head dim x context (attention scores and values); "
        "softmax, norms, sampling and scheduling are ignored.",
        f"Prefill of {prompt} prompt tokens: 2 x linear parameters per token, causal attention "
        "summed over positions (4 x layers x query heads x head dim x L(L+1)/2), the LM head "
        "once; TTFT lower bound = max(prefill FLOPs at the compute rate, one read of the "
        "weights and a write of the prompt's KV), ignoring queueing, tokenisation and network.",
    ]
    if i.calibration_source is None and i.rates_source is not None:
        out.append(f"Bandwidth {_num(i.bandwidth_gb_per_s)} GB/s and compute "
                   f"{_num(i.tflops)} TFLOP/s per GPU are peak datasheet figures (dense, never "
                   f"the sparse headline; {i.rates_source}): real engines reach less.")
    elif i.calibration_source is None:
        out.append(f"Bandwidth {_num(i.bandwidth_gb_per_s)} GB/s and compute "
                   f"{_num(i.tflops)} TFLOP/s per GPU are planning inputs as given (not a "
                   "datasheet peak, nor a measurement).")
    else:
        out.append(f"Calibrated from {i.calibration_source}: bandwidth "
                   f"{_num(i.bandwidth_gb_per_s)} GB/s and compute {_num(i.tflops)} TFLOP/s "
                   "per GPU (a rate not measured stays the datasheet peak); calibrated rates "
                   "carry that run's engine efficiency and hold for the same hardware, engine "
                   "and precision only.")
    if active < i.params and i.experts is not None and i.experts_per_token is not None:
        touched = i.experts * (1 - (1 - i.experts_per_token / i.experts) ** i.batch)
        out.append(f"Mixture of experts: {_num(active)} active of {_num(i.params)} resident "
                   f"parameters, top-{i.experts_per_token} of {i.experts} experts. Resident "
                   "memory holds every expert; compute uses the active parameters; a decode "
                   f"step reads the shared weights and the experts the batch touches, "
                   f"E x (1 - (1 - k/E)^B) = {touched:.3g} per layer at batch {i.batch} "
                   "(uniform, independent routing; real routers are skewed, which touches "
                   "fewer).")
    elif active < i.params:
        out.append(f"Mixture of experts: {_num(active)} active of {_num(i.params)} resident "
                   "parameters. Compute uses the active parameters; memory traffic assumes "
                   "every expert's weights are read each step (experts and top-k not given; "
                   "true at large batch, pessimistic at batch 1).")
    fit = (f"leaving {_num(free_gb / group)} GB per GPU beside the reserve: "
           f"{max(free_gb, 0.0) * GB / kv:,.0f} tokens of KV cache in all ({i.context:,}-token "
           f"sequences: {max(free_gb, 0.0) * GB / kv / i.context:,.1f})" if i.context else
           f"leaving {_num(free_gb / group)} GB per GPU beside the reserve")
    out.append(f"Weights take {_num(i.weights_gb / group)} GB of each GPU's "
               f"{_num(i.budget_gb)} GB, " + fit + (
                   ": they do not fit." if free_gb < 0 else "."))
    if i.kv_read_factor != 1:
        out.append(f"The engine reads the KV cache {_num(i.kv_read_factor)} times per decode "
                   "step (a naive cache that copies the old buffer out and a new one back, then "
                   "attends: Hugging Face transformers about 3, seed 004), so the step's cache "
                   f"traffic is {_num(i.kv_read_factor)} x the cache.")
    if i.prefix_cached_tokens:
        out.append(f"Prefix cache: the first {i.prefix_cached_tokens:,} of the {prompt:,} prompt "
                   "tokens are served from the cache (their K/V kept from an earlier request): "
                   "prefill computes and writes the other tokens only, attending over the "
                   "whole prefix.")
    if i.block_size is not None:
        out.append(f"Paged KV cache in blocks of {i.block_size} tokens: capacity is whole "
                   "blocks, and a sequence of L tokens takes ceil(L / block size) blocks (at "
                   "most one partial block each, seed 003).")
    if i.lookup_embeddings and i.vocab_size is not None and not i.tied_embeddings:
        out.append(f"Input embedding table ({i.vocab_size:,} x {i.hidden_size:,} parameters) "
                   "is looked up, not read whole: left out of the per-token weight traffic and "
                   "decode FLOPs (the LM head is read and counted).")
    if tp > 1:
        collectives = ("all-reduce time is not counted (collectives are not free: the ceiling "
                       "is optimistic; give an all-reduce latency, NVLink about 5-100 us, PCIe "
                       "2-8 ms per all-reduce, seed 001)" if i.allreduce_us is None else
                       f"each decode step adds {i.layers} layers x 2 all-reduces x "
                       f"{_num(i.allreduce_us)} us = {_num(i.layers * 2 * i.allreduce_us / 1e3)}"
                       " ms, not overlapped with compute")
        out.append(f"Tensor parallel x{tp}: weights and KV cache split evenly over {tp} GPUs; "
                   f"budget, reserve, bandwidth and compute are {tp} x the per-GPU figures; "
                   f"{collectives}.")
    if i.pipeline_parallel > 1:
        m = i.microbatches or i.batch
        p = i.pipeline_parallel
        out.append(f"Pipeline parallel x{p}: layers in {p} stages; the decode step is the "
                   f"ideal one over {p} x the GPUs divided by (1 - bubble), bubble = (p - 1) / "
                   f"(m + p - 1) = {(p - 1) / (m + p - 1):.3g} with {m} microbatches; prefill "
                   "passes the stages in turn (no faster than one stage group); weights "
                   "re-read per microbatch are not counted.")
    if i.replicas > 1:
        out.append(f"{i.replicas} independent replicas: totals are {i.replicas} x one "
                   "replica's ceiling (no shared KV cache, no cross-replica traffic).")
    if tp > i.kv_heads:
        out.append(f"{i.kv_heads} KV heads for {tp} GPUs: KV heads are replicated so each GPU "
                   f"holds one, and the cache counts {tp} heads.")
    if i.vocab_size is None:
        out.append("Vocabulary and hidden size not given: prefill counts the embedding and LM "
                   "head as linear layers for every prompt token (FLOPs slightly overstated).")
    return out
