"""Design-stage capacity model: does a model fit on a GPU at a batch and context, and what is
the most tokens/s the hardware could give (a roofline ceiling, graded `estimated`)?

Why it exists: a buyer must place hardware it cannot benchmark yet. The arithmetic that
practitioners do by hand (KV-cache fit, memory budget, the warm-decode roofline, the prefill
bound) lives here once, with every assumption returned beside the figures, and calibrates
against a measured run when there is one. GB = 1e9 bytes throughout; times in ms; compute
rates in dense TFLOP/s (1e12 FLOP/s).

API (the scorecard and `scorecard estimate` both use it; no module here does I/O: the rows
and options it takes are read by pipeline/inputs/):

- `roofline`: the vectorised model. Its frame (polars DataFrame or LazyFrame, one row per
  candidate x Monte Carlo draw) holds the columns of `REQUIRED_INPUTS` and optionally those of
  `OPTIONAL_INPUTS` (missing ones take their defaults); the same frame comes back with the
  columns of `OUTPUTS` added. `tokens_per_s_ceiling` is null, with `ceiling_reason` set, where
  the memory budget is exceeded. The frame is not range-checked: build its rows from
  `RooflineInputs` (checked on construction) or check them first.
- `RooflineInputs` (frozen dataclass, validated on construction: `RooflineInputError` names the
  field) and `estimate`, the scalar wrapper that gives a `RooflineResult` (`.to_dict()` for
  JSON; `.assumptions` is a tuple of sentences). `assumptions` gives the sentences alone.
- `with_reference_inputs`: adds the roofline's inputs to a frame of joined reference rows
  (core__model_architectures x core__hardware columns, plus `batch` and `context`): weights at
  `WEIGHT_BYTES[precision]` per parameter, compute from `COMPUTE_COLUMN[precision]`, budget =
  `memory_gb`, reserve = `DEFAULT_RESERVE_SHARE` of the budget, a 2-byte cache. Input columns
  already present (per-candidate overrides) keep their non-null values; precision may be a
  per-row `precision` column. `inputs_from_reference` is the scalar form, for one model row
  and one GPU row.
- Calibration: `implied_bandwidth_gb_per_s` (from a measured TPOT) and `implied_tflops` (from
  a measured TTFT), `calibrate`, which gives a `Calibration` of both, and `apply_calibration`,
  which gives inputs whose bandwidth and compute are the effective figures, with the
  calibration source recorded in the assumptions.

Scorecard use (pipeline/inputs/evidence/throughput.py): `estimate` runs once per estimated
candidate, and its goodput is `tokens_per_s_ceiling` x efficiency, the proposal's `{low, mode,
high}` range (so the Monte Carlo draws the efficiency, never the roofline's inputs); in the
serving form `planning.serving` (the same as `scorecard estimate`) gives goodput, TTFT and TPOT
at the stated load, the range from the model's measured error (validation.py).

Modules: model.py (the formulas, inputs, result, assumptions), reference.py (the reference
defaults, the model and GPU columns that feed the inputs), calibration.py (effective rates
from a measured run, or its MBU/MFU carried to another GPU), planning.py and serving.py
(request sizing, topologies and their crossover at equal total concurrency, the serving model
and sweep, prefix caching, disaggregated prefill's KV transfer, speculative decoding's costs),
kv.py (the paged KV cache against a naive one, the preemption onset, the p95 request rule),
validation.py (the serving model against measured runs: errors, MAPE, the goodput range) and
report.py (`scorecard estimate`'s JSON object and text table; its flags, TOML and
reference files are resolved into inputs by pipeline/inputs/evidence/estimate.py).
"""

from pipeline.engine.roofline.calibration import (
    Calibration,
    apply_calibration,
    calibrate,
    implied_bandwidth_gb_per_s,
    implied_tflops,
)
from pipeline.engine.roofline.model import (
    GB,
    OPTIONAL_INPUTS,
    OUTPUTS,
    REQUIRED_INPUTS,
    TERA,
    RooflineInputError,
    RooflineInputs,
    RooflineResult,
    assumptions,
    estimate,
    roofline,
)
from pipeline.engine.roofline.reference import (
    COMPUTE_COLUMN,
    DEFAULT_CACHE_BYTES,
    DEFAULT_RESERVE_SHARE,
    MODEL_FIELDS,
    WEIGHT_BYTES,
    inputs_from_reference,
    with_reference_inputs,
)

__all__ = [
    "COMPUTE_COLUMN", "DEFAULT_CACHE_BYTES", "DEFAULT_RESERVE_SHARE", "GB", "MODEL_FIELDS",
    "OPTIONAL_INPUTS", "OUTPUTS", "REQUIRED_INPUTS", "TERA", "WEIGHT_BYTES", "Calibration",
    "RooflineInputError", "RooflineInputs", "RooflineResult", "apply_calibration",
    "assumptions", "calibrate", "estimate", "implied_bandwidth_gb_per_s", "implied_tflops",
    "inputs_from_reference", "roofline", "with_reference_inputs",
]
