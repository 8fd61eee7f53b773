"""The plausibility check of a candidate's declared figures: each input whose declaration
(schemas/outputs.toml) gives a `plausible` range, per instance or per GPU, must lie in it, or
the candidate says `plausibility = "override"` with a `plausibility_reason`. A PUE of 135 or a
tariff of 180 EUR/kWh is a typo far more often than a fact."""

from __future__ import annotations

from pipeline.inputs.draft import Draft
from schemas.outputs import OUTPUTS
from schemas.proposal import ProposalError


def check_plausible(d: Draft) -> None:
    """Raise (naming the key) on a declared figure outside its plausible range, or note it
    when the candidate overrides plausibility."""
    for row in d.inputs.rows:
        declared = OUTPUTS[row["input"]]
        if row["grade"] != "declared" or declared.plausible is None:
            continue
        per_gpu = declared.plausible_per == "gpu"
        scale = d.c.gpu_count if per_gpu else 1
        low, high = declared.plausible
        figure = row["low"] / scale if row["low"] / scale < low else row["high"] / scale
        if low <= figure <= high:
            continue
        what = (f"{figure:g} {declared.unit} per GPU ({d.c.gpu_count} GPUs)" if per_gpu
                else f"{figure:g} {declared.unit}")
        problem = (f"{what} is outside the plausible range of a {declared.title.lower()}, "
                   f"{low:g} to {high:g} {declared.unit}" + (" per GPU" if per_gpu else ""))
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
