"""Calibration of the roofline from a measured run at concurrency 1 on the candidate hardware:
the effective bandwidth a TPOT implies, the effective compute rate a TTFT implies (through the
same formulas as the forecast), their shares of the peaks they replace (MBU and MFU: of the
datasheet peak when the rates came from the hardware table, else of the planning input), the
headroom rule, and the inputs with those rates in place of the peaks, the run recorded as the
calibration source.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from pipeline.engine.roofline.model import TERA, RooflineInputError, RooflineInputs, estimate


@dataclass(frozen=True)
class Calibration:
    """Effective rates implied by a measured run at concurrency 1 on the candidate hardware.
    A rate is None when its measurement was not given."""

    bandwidth_gb_per_s: float | None
    tflops: float | None
    source: str
    tpot_ms: float | None = None
    context: int | None = None
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    #: achieved over peak: bytes/s (memory bandwidth utilisation) and FLOP/s (model FLOPs
    #: utilisation); the peak is `peaks`' (a datasheet, cited, or the planning inputs)
    mbu: float | None = None
    mfu: float | None = None
    peak_bandwidth_gb_per_s: float | None = None
    peak_tflops: float | None = None
    peaks: str | None = None
    headroom: str | None = None


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise RooflineInputError(name, f"must be a positive number, got {value!r}")


def implied_bandwidth_gb_per_s(inputs: RooflineInputs, *, tpot_ms: float,
                               context: int) -> float:
    """Per-GPU bandwidth that would make one decode step at concurrency 1 and `context` cached
    tokens (the same traffic formula as the forecast) take the measured TPOT."""
    _positive("tpot_ms", tpot_ms)
    at_one = dataclasses.replace(inputs, batch=1, context=context, prompt_tokens=None)
    traffic = estimate(at_one).traffic_gb
    return traffic / (inputs.tensor_parallel * tpot_ms / 1e3)


def implied_tflops(inputs: RooflineInputs, *, ttft_ms: float, prompt_tokens: int) -> float:
    """Per-GPU compute rate that would make the prefill of `prompt_tokens` take the measured
    TTFT (the whole TTFT is charged to prefill compute: an effective, pessimistic rate)."""
    _positive("ttft_ms", ttft_ms)
    at_one = dataclasses.replace(inputs, batch=1, prompt_tokens=prompt_tokens)
    flops = estimate(at_one).prefill_flops
    return flops / (inputs.tensor_parallel * TERA * ttft_ms / 1e3)


def _check_fits(inputs: RooflineInputs, context: int) -> None:
    """A measured run of a model that does not fit its GPUs (weights, reserve and one
    sequence's KV cache over the memory budget) cannot have happened: refused."""
    at_one = estimate(dataclasses.replace(inputs, batch=1, context=context, prompt_tokens=None,
                                          microbatches=None, replicas=1))
    if at_one.headroom_gb < 0:
        raise RooflineInputError("model", f"the measured run's model does not fit its GPUs at "
                                        f"batch 1: {at_one.ceiling_reason}")


def calibrate(inputs: RooflineInputs, *, source: str, tpot_ms: float | None = None,
              context: int | None = None, ttft_ms: float | None = None,
              prompt_tokens: int | None = None) -> Calibration:
    """Implied effective bandwidth (from TPOT) and compute rate (from TTFT) of a measured run at
    concurrency 1; `source` names the run (file, date) and is kept with the figures. Refused
    (RooflineInputError) when the run's model does not fit its GPUs (field `model`) or a rate
    comes out above the peak it replaces, MBU or MFU over 100 % (field `tpot_ms`, `ttft_ms`)."""
    if not source.strip():
        raise RooflineInputError("source", "name the measured run the calibration comes from")
    _check_fits(inputs, context or prompt_tokens or 1)
    bandwidth = tflops = None
    if tpot_ms is not None:
        if context is None:
            raise RooflineInputError("context", "give the cached tokens of the measured run")
        bandwidth = implied_bandwidth_gb_per_s(inputs, tpot_ms=tpot_ms, context=context)
    if ttft_ms is not None:
        if prompt_tokens is None:
            raise RooflineInputError("prompt_tokens", "give the prompt length of the run")
        tflops = implied_tflops(inputs, ttft_ms=ttft_ms, prompt_tokens=prompt_tokens)
    mbu = bandwidth / inputs.bandwidth_gb_per_s if bandwidth is not None else None
    mfu = tflops / inputs.tflops if tflops is not None else None
    peaks = inputs.rates_source or "planning inputs (not a datasheet peak)"
    for field, share, rate, peak, unit in (
            ("tpot_ms", mbu, bandwidth, inputs.bandwidth_gb_per_s, "GB/s"),
            ("ttft_ms", mfu, tflops, inputs.tflops, "TFLOP/s")):
        if share is not None and rate is not None and share > 1:
            raise RooflineInputError(field, f"implies {rate:,.1f} {unit} per GPU, "
                                     f"{'MBU' if unit == 'GB/s' else 'MFU'} {share:.1%} of the "
                                     f"{peak:,.1f} {unit} peak ({peaks}): above 100 %, no run "
                                     "is that fast; check the measurement and the run's model, "
                                     "GPU and tensor parallel")
    return Calibration(bandwidth, tflops, source, tpot_ms, context, ttft_ms, prompt_tokens,
                       mbu=mbu, mfu=mfu, peak_bandwidth_gb_per_s=inputs.bandwidth_gb_per_s,
                       peak_tflops=inputs.tflops,
                       peaks=peaks,
                       headroom=headroom_rule(mbu))


def headroom_rule(mbu: float | None) -> str | None:
    """What a faster kernel can still give a memory-bound decode at this MBU: at most 1 / MBU
    (seed 003: MBU 70 % -> at most 1.4x); near 1 none."""
    if mbu is None:
        return None
    if mbu >= 0.95:
        return (f"decode runs at MBU {mbu:.0%}: no headroom from a faster kernel; only fewer "
                "bytes per token (quantisation, batching, a smaller cache) raise the ceiling")
    return (f"decode runs at MBU {mbu:.0%}: a faster kernel can give at most "
            f"{1 / mbu:.2f}x before the bandwidth wall")


def apply_calibration(inputs: RooflineInputs, calibration: Calibration) -> RooflineInputs:
    """Inputs with the calibrated rates in place of the datasheet ones (a rate not calibrated
    is kept), recording the calibration source."""
    parts = []
    if calibration.bandwidth_gb_per_s is not None:
        parts.append(f"TPOT {calibration.tpot_ms:g} ms at {calibration.context} cached tokens")
    if calibration.tflops is not None:
        parts.append(f"TTFT {calibration.ttft_ms:g} ms for {calibration.prompt_tokens} "
                     "prompt tokens")
    what = "; ".join(parts) if parts else "no measurement"
    return dataclasses.replace(
        inputs,
        bandwidth_gb_per_s=calibration.bandwidth_gb_per_s or inputs.bandwidth_gb_per_s,
        tflops=calibration.tflops or inputs.tflops,
        calibration_source=f"{calibration.source} ({what}, concurrency 1)",
    )


def transfer(inputs: RooflineInputs, calibration: Calibration, *, run: str) -> RooflineInputs:
    """Inputs whose rates are the calibration's MBU and MFU (achieved over the measured run's
    own peaks) times the inputs' peaks: a run of the same engine on another GPU (or model)
    carries its efficiency, not its rates, to the candidate's GPU. A share not measured keeps
    the peak. `run` names the run's model and GPU for the assumptions."""
    parts = []
    bandwidth, tflops = inputs.bandwidth_gb_per_s, inputs.tflops
    if calibration.mbu is not None:
        bandwidth = calibration.mbu * inputs.bandwidth_gb_per_s
        parts.append(f"MBU {calibration.mbu:.1%} from TPOT {calibration.tpot_ms:g} ms at "
                     f"{calibration.context} cached tokens")
    if calibration.mfu is not None:
        tflops = calibration.mfu * inputs.tflops
        parts.append(f"MFU {calibration.mfu:.1%} from TTFT {calibration.ttft_ms:g} ms for "
                     f"{calibration.prompt_tokens} prompt tokens")
    what = "; ".join(parts) if parts else "no measurement"
    return dataclasses.replace(
        inputs, bandwidth_gb_per_s=bandwidth, tflops=tflops,
        calibration_source=(f"{calibration.source} ({run}: {what}, concurrency 1; the shares "
                            "applied to this GPU's peaks)"))
