"""The plausibility check of a candidate's declared figures: each input whose declaration
(schemas/outputs.toml) gives a `plausible` range, per instance or per GPU, must lie in it,
below as well as above, or the candidate says `plausibility = "override"` with a
`plausibility_reason`. A PUE of 135, a tariff of 180 EUR/kWh or 0.02 EUR/h for 8 x H100 is a
typo far more often than a fact. A goodput per GPU is held, above, to the candidate's own
accelerator's compute ceiling for the smallest model served (`SMALLEST_MODEL_PARAMS` at 2
FLOPs per parameter per token) when that is below the range's. An `estimated` goodput (the
roofline or serving model) is held to the same ceiling, above only: past it the model or its
inputs (a calibration, an efficiency, a declared speculative effect) are wrong, and the run
refuses it as it refuses the figure declared, rather than clamp it to a number no input
gives; below, a small estimate is arithmetic, not a typo."""

from __future__ import annotations

import math

from pipeline.inputs.draft import Draft
from schemas.outputs import OUTPUTS
from schemas.proposal import ProposalError

#: the smallest model a goodput ceiling is computed for (parameters)
SMALLEST_MODEL_PARAMS = 1e9


def _ceiling(d: Draft) -> float:
    """Tokens/s one of the candidate's GPUs can compute at most: its dense FP8 (else BF16)
    peak over 2 FLOPs per parameter of the smallest model; no ceiling (infinity) for a GPU
    declared without either peak."""
    gpu = d.gpu_row()
    tflops = gpu["fp8_dense_tflops"] or gpu["bf16_dense_tflops"]
    if tflops is None:
        return math.inf
    return float(tflops) * 1e12 / (2 * SMALLEST_MODEL_PARAMS)


def check_plausible(d: Draft) -> None:
    """Raise (naming the key) on a declared figure outside its plausible range, or note it
    when the candidate overrides plausibility."""
    for row in d.inputs.rows:
        declared = OUTPUTS[row["input"]]
        estimated = row["grade"] == "estimated" and row["input"] == "tokens_per_s"
        if (row["grade"] != "declared" and not estimated) or declared.plausible is None:
            continue
        per_gpu = declared.plausible_per == "gpu"
        scale = d.c.gpu_count if per_gpu else 1
        low, high = declared.plausible
        if estimated:
            low = 0.0
        why = ""
        if row["input"] == "tokens_per_s" and (ceiling := _ceiling(d)) < high:
            high = ceiling
            why = (f" ({d.c.gpu}'s compute ceiling for a "
                   f"{SMALLEST_MODEL_PARAMS / 1e9:g}B-parameter model)")
        figure = row["low"] / scale if row["low"] / scale < low else row["high"] / scale
        if low <= figure <= high:
            continue
        what = (f"{figure:g} {declared.unit} per GPU ({d.c.gpu_count} GPUs)" if per_gpu
                else f"{figure:g} {declared.unit}")
        if estimated:
            what = f"the estimated {what}"
        problem = (f"{what} is outside the plausible range of a {declared.title.lower()}, "
                   f"{low:g} to {high:g} {declared.unit}" + (" per GPU" if per_gpu else "") + why)
        if d.c.plausibility == "override":
            d.notes.append(f"{row['key']}: {problem}; accepted by plausibility override: "
                           f"{d.c.plausibility_reason}")
        else:
            # a key of the candidate's own is named as parse errors name it, with its id
            key = row["key"].replace(d.key, d.where, 1) if row["key"].startswith(
                f"{d.key}.") else row["key"]
            raise ProposalError(d.path, key, problem + " (if it is right, set "
                                "plausibility = \"override\" and a plausibility_reason on "
                                f"candidate {d.c.id!r})")
