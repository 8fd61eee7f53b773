"""The serving model's error, measured: every measured run whose model, GPU and load are known,
predicted by `serving.serving_point` and compared per point (error = predicted / measured - 1),
with the mean absolute percentage error (MAPE) per metric; and the goodput range an estimate
carries, derived from those errors instead of a fixed +-x %.

The range: each validation point gives a ratio measured / predicted goodput. The estimate's
goodput is triangular(low, mode, high) x the prediction, with mode 1 (the model's own figure)
on calibrated rates and the median ratio on datasheet peaks (`basis_range`), and low, high set
so that the smallest and largest observed ratio sit at the triangle's
1 / (n + 1) and n / (n + 1) quantiles (the plotting position of the extremes of n draws): the
observed spread is what the Monte Carlo draws, and its p5-p95 holds the validation points.
`leave_one_out_coverage` checks that out of sample (each point against the range fitted on
the others).

Nothing here reads a file: the model and GPU reference rows are passed in
(pipeline/inputs/evidence/estimate.py reads them). Each measured run names its source.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.engine.roofline.calibration import apply_calibration, calibrate
from pipeline.engine.roofline.reference import inputs_from_reference
from pipeline.engine.roofline.serving import serving_point
from pipeline.engine.uncertainty import triangular_ppf

#: the metric a goodput range is derived from
GOODPUT = "decode_tokens_per_s"
METRICS = (GOODPUT, "tpot_ms", "ttft_s")


@dataclass(frozen=True)
class MeasuredSweep:
    """A closed-loop sweep measured on known hardware: per concurrency level, the decode
    tokens/s (C / TPOT), TPOT (ms) and TTFT (s), any of them None when not reported. The
    roofline's rates are calibrated on the run named in `calibration` (concurrency 1, a
    different prompt length), so no level of the sweep is fitted."""

    label: str
    engine: str
    model: str
    gpu: str
    precision: str
    prompt_tokens: int
    output_tokens: int
    chunk_tokens: int | None
    serialised: bool
    #: the calibration run: TPOT (ms) at `context` cached tokens, TTFT (ms) of `prompt` tokens;
    #: None without a concurrency-1 run (the points then count for the datasheet-peak
    #: predictions only)
    calibration: tuple[float, int, float, int] | None
    levels: Mapping[int, tuple[float | None, float | None, float | None]]
    source: str
    tensor_parallel: int = 1


_SEED_004 = ("seed 004 (Qwen2.5-7B-Instruct on an NVIDIA A40, vLLM vs a Hugging Face loop, "
             "8,192-token prompts, 128 output tokens; /work/shared/seeds/004_*.txt, "
             "'Results' table 1b)")
#: seed 004's chart 1a run at concurrency 1, 512-token prompts: TPOT 28 ms (both engines
#: "very close"), TTFT 88 ms (vLLM) and 98 ms (HF)
_CAL_VLLM = (28.0, 512, 88.0, 512)
_CAL_HF = (28.0, 512, 98.0, 512)

_SGLANG = ("DataCrunch's SGLang run (Llama-3.3-70B-Instruct BF16 on 4 x H200, --tp-size 4, "
           "--disable-radix-cache; sglang.bench_serving, random prompts of 1 to 1,024 tokens "
           "and outputs of 1 to 1,024, Poisson arrivals), github.com/datacrunch-research/"
           "h200-benchmarks @ c091ef530a525d2e788bc41c39a4450b09c9f2ad, sglang/outputs/"
           "llama_3_3_70b_online_output.jsonl and sglang/experiments/llama_3_3_70b_sglang.sh "
           "(Dec 2024); ../shared/samples/sglang/")


def open_loop_point(rate: float, in_system: float, prompt: float, output: float,
                    tpot_ms: float, ttft_s: float) -> MeasuredSweep:
    """One open-loop run (Poisson arrivals at `rate` requests/s) that kept up with its load,
    as a closed-loop level: C = Little's law's mean requests in the system (completed /
    duration x mean end-to-end latency), rounded, at the mean prompt and output lengths; the
    measured goodput C / the median inter-token latency, TPOT that latency, TTFT the median.
    No run at concurrency 1 exists to calibrate on: datasheet-peak predictions only."""
    c = round(in_system)
    return MeasuredSweep(
        f"SGLang TP4 H200, {rate:g} req/s open loop (C = {in_system:.1f} by Little's law)",
        "SGLang", "Llama-3.3-70B-Instruct", "H200-SXM-141GB", "bf16", round(prompt),
        round(output), 8192, False, None, {c: (c / (tpot_ms / 1e3), tpot_ms, ttft_s)},
        _SGLANG, tensor_parallel=4)


MEASURED: tuple[MeasuredSweep, ...] = (
    MeasuredSweep(
        "seed 004 vLLM (chunked prefill, 2,048-token budget)", "vLLM", "Qwen2.5-7B",
        "A40-48GB", "bf16", 8192, 128, 2048, False, _CAL_VLLM,
        {1: (32.61, 28.8, 1.25), 2: (52.78, 35.3, 1.75), 4: (71.13, 51.5, 2.20),
         8: (81.38, 92.8, 2.30), 16: (83.08, 187.0, 2.54), 32: (72.32, 436.0, 3.14)},
        _SEED_004),
    MeasuredSweep(
        "seed 004 HF loop (one request at a time, FIFO)", "HF transformers", "Qwen2.5-7B",
        "A40-48GB", "bf16", 8192, 128, None, True, _CAL_HF,
        {1: (30.38, None, 1.29), 2: (30.40, None, 6.74), 4: (30.27, None, 17.7),
         8: (30.55, None, 39.4), 16: (30.45, None, 83.1), 32: (30.55, None, 170.0)},
        _SEED_004),
    # the SGLang sweep's random-prompt runs that kept up with their load (output throughput
    # within 5 % of rate x mean output): 1, 2 and 4 req/s. At 8 and 16 req/s (3,515 and 4,288
    # tokens/s against 4,064 and 8,208 offered) and offline the queue grew, so how many
    # requests ran at once is not known: left out. Figures from the file (a test re-reads it):
    # Little's L, mean prompt and output tokens, median ITL (ms), median TTFT (s)
    open_loop_point(1.0, 7.8835, 508.71, 534.49, 13.639, 0.08575),
    open_loop_point(2.0, 16.388, 514.58, 514.52, 14.830, 0.08756),
    open_loop_point(4.0, 52.132, 513.22, 506.61, 19.420, 0.10606),
)


def validation_rows(models: Mapping[str, Mapping[str, Any]],
                    gpus: Mapping[str, Mapping[str, Any]],
                    sweeps: Sequence[MeasuredSweep] = MEASURED) -> list[dict[str, Any]]:
    """One row per measured figure: the run, the level, the metric, measured, predicted and
    the error (predicted / measured - 1). `models` and `gpus` are reference rows by id."""
    rows = []
    for sweep in sweeps:
        base = inputs_from_reference(models[sweep.model], gpus[sweep.gpu],
                                     precision=sweep.precision, batch=1,
                                     context=sweep.prompt_tokens,
                                     prompt_tokens=sweep.prompt_tokens,
                                     tensor_parallel=sweep.tensor_parallel)
        inputs = None
        if sweep.calibration is not None:
            tpot_ms, context, ttft_ms, prompt = sweep.calibration
            cal = calibrate(base, source=f"{sweep.source}, chart 1a at concurrency 1",
                            tpot_ms=tpot_ms, context=context, ttft_ms=ttft_ms,
                            prompt_tokens=prompt)
            inputs = apply_calibration(base, cal)
        for c, measured in sorted(sweep.levels.items()):
            points = [None if i is None else
                      serving_point(i, c, prompt_tokens=sweep.prompt_tokens,
                                    output_tokens=sweep.output_tokens,
                                    budget_tokens=sweep.chunk_tokens,
                                    serialised=sweep.serialised) for i in (inputs, base)]
            for metric, m in zip(METRICS, measured, strict=True):
                p, peak = (None if point is None else point[metric] for point in points)
                if m is None or peak is None or (p is None and inputs is not None):
                    continue
                rows.append({"run": sweep.label, "engine": sweep.engine, "model": sweep.model,
                             "gpu": sweep.gpu, "concurrency": c, "metric": metric,
                             "measured": m, "predicted": p,
                             "error": None if p is None else p / m - 1.0,
                             "predicted_peak": peak, "error_peak": peak / m - 1.0,
                             "source": sweep.source})
    return rows


#: which prediction: the rates calibrated on a measured run, or the datasheet peaks
CALIBRATED, PEAK = "predicted", "predicted_peak"


def mape(rows: Sequence[Mapping[str, Any]], metric: str, basis: str = CALIBRATED
         ) -> float | None:
    """Mean absolute percentage error of one metric over the rows (None without rows), of
    the calibrated prediction or (`basis` PEAK) the datasheet-peak one."""
    key = "error" if basis == CALIBRATED else "error_peak"
    errors = [abs(r[key]) for r in rows if r["metric"] == metric and r[key] is not None]
    return sum(errors) / len(errors) if errors else None


def ratio_range(ratios: Sequence[float], mode: float = 1.0) -> tuple[float, float, float]:
    """(low, mode, high) of the triangular factor on a prediction: the mode given (1: the
    prediction itself), and low, high such that min(ratios) and max(ratios) fall at the
    1 / (n + 1) and n / (n + 1) quantiles."""
    if not ratios:
        raise ValueError("no validation ratios")
    n = len(ratios)
    p = 1.0 / (n + 1)
    lo, hi = min(min(ratios), mode), max(max(ratios), mode)
    low, high = lo, hi
    for _ in range(200):  # a contraction: the square roots are small beside the spread
        new_low = lo - math.sqrt(p * (high - low) * (mode - low))
        new_high = hi + math.sqrt(p * (high - low) * (high - mode))
        if abs(new_low - low) < 1e-12 and abs(new_high - high) < 1e-12:
            break
        low, high = new_low, new_high
    return low, mode, high


def basis_range(rows: Sequence[Mapping[str, Any]], basis: str = CALIBRATED
                ) -> tuple[float, float, float]:
    """The goodput range of a prediction basis: on calibrated rates the mode is the prediction
    (its errors straddle it: vLLM's from -15 % to +15 %); on datasheet peaks every measurement
    lies below the prediction, so the mode is the median measured / predicted ratio."""
    ratios = goodput_ratios(rows, basis)
    return ratio_range(ratios, 1.0 if basis == CALIBRATED else statistics.median(ratios))


def goodput_ratios(rows: Sequence[Mapping[str, Any]], basis: str = CALIBRATED) -> list[float]:
    """measured / predicted goodput, one per validation point (`basis`: which prediction)."""
    return [r["measured"] / r[basis] for r in rows
            if r["metric"] == GOODPUT and r[basis] is not None]


def triangular_quantile(q: float, low: float, mode: float, high: float) -> float:
    """The q-quantile of triangular(low, mode, high): the Monte Carlo's own inverse CDF."""
    if high == low:
        return low
    return float(triangular_ppf(*(np.array([x]) for x in (q, low, mode, high)))[0])


def leave_one_out_coverage(rows: Sequence[Mapping[str, Any]], lower: float = 0.05,
                           upper: float = 0.95, basis: str = CALIBRATED) -> tuple[int, int]:
    """(covered, points): how many goodput points fall inside the p5-p95 of the range fitted
    on the other points."""
    ratios = goodput_ratios(rows, basis)
    covered = 0
    for i, r in enumerate(ratios):
        others = ratios[:i] + ratios[i + 1:]
        low, mode, high = ratio_range(others, 1.0 if basis == CALIBRATED
                                      else statistics.median(others))
        if triangular_quantile(lower, low, mode, high) <= r \
                <= triangular_quantile(upper, low, mode, high):
            covered += 1
    return covered, len(ratios)


_UNITS = {GOODPUT: "tokens/s", "tpot_ms": "ms", "ttft_s": "s"}
_NAMES = {GOODPUT: "goodput (C / TPOT)", "tpot_ms": "TPOT", "ttft_s": "TTFT"}


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The validation table of docs/roofline.md: one line per measured figure (the prediction
    on the calibrated rates and on the datasheet peaks, each with its error), then the MAPE per
    metric and the goodput ranges with their leave-one-out coverage (a test keeps the page
    equal to this)."""
    lines = ["| run | C | metric | measured | predicted (calibrated) | error | predicted "
             "(datasheet peaks) | error |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        unit = _UNITS[r["metric"]]
        calibrated = ("no run at C = 1 | n/a" if r["predicted"] is None else
                      f"{r['predicted']:,.4g} {unit} | {r['error']:+.1%}")
        lines.append(f"| {r['run']} | {r['concurrency']} | {_NAMES[r['metric']]} | "
                     f"{r['measured']:,.4g} {unit} | {calibrated} | "
                     f"{r['predicted_peak']:,.4g} {unit} | {r['error_peak']:+.1%} |")
    lines.append("")
    for basis, words in ((CALIBRATED, "calibrated"), (PEAK, "datasheet peaks")):
        for metric in METRICS:
            n = sum(1 for r in rows if r["metric"] == metric
                    and r["error" if basis == CALIBRATED else "error_peak"] is not None)
            value = mape(rows, metric, basis)
            if value is not None:
                lines.append(f"- MAPE {_NAMES[metric]} ({words}): **{value:.1%}** over {n} "
                             "points")
        ratios = goodput_ratios(rows, basis)
        low, mode, high = basis_range(rows, basis)
        covered, points = leave_one_out_coverage(rows, basis=basis)
        p5, p95 = (triangular_quantile(q, low, mode, high) for q in (0.05, 0.95))
        lines.append(f"- goodput range ({words}): triangular x ({low:.3f}, {mode:.3g}, "
                     f"{high:.3f}) of the prediction (measured / predicted from "
                     f"{min(ratios):.3f} to {max(ratios):.3f}); its p5-p95 x ({p5:.3f}, "
                     f"{p95:.3f}); leave-one-out coverage of the p5-p95: **{covered} of "
                     f"{points}** points")
    return "\n".join(lines)
