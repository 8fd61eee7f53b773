"""Evidence identity (issue 26): a benchmark file's own metadata (the model it served and its
precision, where the format records them) is compared with the candidate's `model` and
`precision`, names normalised through one alias table. A mismatch is an error naming the file,
what it says and what the candidate says; a deliberate proxy is declared
(`throughput = { evidence = "...", proxy = "why" }`), graded `proxy` and noted. A side that
does not state a figure is not compared. The GPU count is not an identity: a sweep's
configurations run on different counts and the best per GPU is chosen (the run notes a count
that differs from the candidate's)."""

from __future__ import annotations

import re
from typing import Any

from pipeline.inputs.draft import Draft

#: precision names the tools write -> one canonical name
PRECISIONS: dict[str, str] = {
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp8": "fp8", "float8": "fp8", "fp8_e4m3": "fp8", "fp8-dynamic": "fp8", "w8a8-fp8": "fp8",
    "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4",
    "int8": "int8", "w8a8": "int8",
    "int4": "int4", "awq": "int4", "gptq": "int4", "w4a16": "int4",
}
#: checkpoint suffixes that name the same model (chat tuning, a quantised checkpoint)
_SUFFIXES = re.compile(r"(-(instruct|chat|hf|it|" + "|".join(
    re.escape(p) for p in sorted(PRECISIONS, key=len, reverse=True)) + r"))+$")


def model_name(name: str) -> str:
    """A model as the alias table knows it: no organisation prefix (`meta-llama/`), no
    `Meta-` brand, lower case, `_` as `-`, no `-Instruct`/`-FP8`... checkpoint suffix."""
    base = name.strip().split("/")[-1].lower().replace("_", "-")
    base = base.removeprefix("meta-")
    return _SUFFIXES.sub("", base)


def precision_name(name: str) -> str | None:
    """The canonical precision, or None for a value that names none (`auto`)."""
    return PRECISIONS.get(name.strip().lower())


def check_identity(d: Draft, settings: dict[str, str], path: str, proxy: str | None) -> bool:
    """Raise on evidence whose model or precision (`settings`, the chosen configuration's) is
    not the candidate's, unless it is a declared proxy (then each difference is noted). The
    check's outcome goes to the row's `identity_check` (the report's evidence table); returns
    whether it held (something compared, nothing different)."""
    c = d.c
    differences: list[str] = []
    compared: list[str] = []

    def compare(what: str, says: Any, declared: Any, same: bool) -> None:
        compared.append(f"{what} {says} (the candidate's {declared})")
        if not same:
            differences.append(f"{what}: the file says {says}, the candidate {declared}")

    if c.model is not None and settings.get("model"):
        compare("model", repr(settings["model"]), repr(c.model),
                model_name(settings["model"]) == model_name(c.model))
    said = precision_name(settings.get("precision", ""))
    declared = precision_name(c.precision) if c.precision is not None else None
    if said is not None and declared is not None:
        compare("precision", settings["precision"], c.precision, said == declared)
    if not differences:
        d.row["identity_check"] = ("held: " + ", ".join(compared) if compared else
                                   "not checked: the file and the candidate do not both state "
                                   "a model or a precision")
        return bool(compared)
    if proxy is None:
        raise d.error("throughput.evidence", f"{path} is not this candidate's evidence: "
                      + "; ".join(differences) + " (if it stands in on purpose, declare "
                      "throughput = { evidence = ..., proxy = \"why\" })")
    d.notes.append(f"proxy evidence ({proxy}): " + "; ".join(differences))
    d.row["identity_check"] = f"differs, a declared proxy ({proxy}): " + "; ".join(differences)
    return False
