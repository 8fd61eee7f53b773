"""Evidence identity (issue 26): what a benchmark, power or quality file says it was measured
on (the model it served and its precision, the accelerator and how many, where the format
records them) is compared with the candidate's `model`, `precision`, `gpu` and `gpu_count`,
names normalised through one alias table (`PRECISIONS`, `ACCELERATORS` to the hardware
table's ids, `model_name`). A mismatch is an error naming the file, what it says and what the
candidate says; a deliberate proxy is declared (`throughput`, `power` or `quality` =
`{ evidence = "...", proxy = "why" }`), graded `proxy` and noted. A side that does not state
a figure is not compared, and the outcome says what was not checked. The GPU count: a power
log must cover the candidate's GPUs (a declared proxy on another count is scaled to them,
pipeline/inputs/evidence/power.py); a benchmark configuration may run on fewer (the best per
GPU of a sweep is chosen, its goodput used as measured, with a note), not on more; quality
results have no count. docs/evidence.md, "Evidence identity: accelerator, GPU count and
precision", has the rules and their worked examples."""

from __future__ import annotations

import re
from typing import Any

from pipeline.inputs.draft import Draft
from pipeline.inputs.records import Identity

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


#: GPU names as tools write them (nvidia-smi's and DCGM's `name`/`modelName`, trtllm-bench's
#: `machine.name`, InferenceX's `hw`, teams' shorthand), in the form `_words` gives (upper
#: case, vendor words and separators dropped), to the hardware table's ids
#: (sources/reference/hardware.csv). The SXM H100 calls itself "NVIDIA H100 80GB HBM3" (the
#: PCIe card "NVIDIA H100 PCIe", the NVL "NVIDIA H100 NVL"): docs/evidence.md, "Evidence
#: identity: accelerator, GPU count and precision", says where each spelling was seen.
ACCELERATORS: dict[str, str] = {
    "H100 80GB HBM3": "H100-SXM-80GB", "H100 SXM": "H100-SXM-80GB",
    "H100 SXM5": "H100-SXM-80GB", "H100 SXM5 80GB": "H100-SXM-80GB",
    "H100 SXM 80GB": "H100-SXM-80GB", "H100 80GB SXM": "H100-SXM-80GB",
    "H100 PCIE": "H100-PCIe-80GB", "H100 80GB PCIE": "H100-PCIe-80GB",
    "H100 PCIE 80GB": "H100-PCIe-80GB",
    "H100 NVL": "H100-NVL-94GB", "H100 NVL 94GB": "H100-NVL-94GB",
    "H200": "H200-SXM-141GB", "H200 SXM": "H200-SXM-141GB",
    "B200": "B200-SXM-180GB", "B300": "B300-SXM-288GB",
    "L40S": "L40S-48GB", "L4": "L4-24GB", "A40": "A40-48GB",
    "A100 SXM4 80GB": "A100-SXM-80GB", "A100 SXM 80GB": "A100-SXM-80GB",
    "A100 80GB PCIE": "A100-PCIe-80GB", "A100 PCIE 80GB": "A100-PCIe-80GB",
    "A100 SXM4 40GB": "A100-SXM-40GB", "A100 SXM 40GB": "A100-SXM-40GB",
    "MI300X": "MI300X-192GB", "MI300X OAM": "MI300X-192GB",
    "MI325X": "MI325X-256GB", "MI355X": "MI355X-288GB",
    "GAUDI3": "Gaudi3-OAM-128GB", "GAUDI 3": "Gaudi3-OAM-128GB",
    "GH200": "GH200-96GB", "GH200 480GB": "GH200-96GB",
}
#: words that name a vendor or a product line, not the accelerator
_VENDOR_WORDS = {"NVIDIA", "AMD", "INSTINCT", "TESLA", "INTEL", "HABANA"}


def _words(name: str) -> tuple[str, ...]:
    """A GPU name's words: upper case, split at anything not a letter or digit, vendor words
    dropped, a count prefix (`8x`) dropped: "NVIDIA H100 80GB HBM3" -> (H100, 80GB, HBM3)."""
    words = re.split(r"[^A-Z0-9]+", name.upper())
    words = [re.sub(r"^\d+X(?=[A-Z])", "", w) for w in words]
    return tuple(w for w in words if w and w not in _VENDOR_WORDS)


def accelerator_ids(name: str, table_ids: list[str]) -> tuple[frozenset[str], bool]:
    """The hardware table ids a GPU name can be, and whether the name is exact (one id: a
    table id itself, in any case, or a name of `ACCELERATORS`) or a family only (the name is
    just the first part of table ids: "H100", "8xH100" is any of the three H100 ids). Any
    other name gives no id: "NVIDIA H200 NVL" is not taken for the table's H200 SXM."""
    words = _words(name)
    by_words = {_words(i): i for i in table_ids}
    if words in by_words:
        return frozenset({by_words[words]}), True
    known = ACCELERATORS.get(" ".join(words))
    if known is not None and known in table_ids:
        return frozenset({known}), True
    if len(words) != 1:
        return frozenset(), False
    return frozenset(i for i in table_ids if _words(i)[0] == words[0]), False


def same_accelerator(said: str, gpu: str, table_ids: list[str]) -> tuple[bool, str]:
    """Whether a file's GPU name `said` is the candidate's `gpu` (a hardware table id, or a
    `[hardware.NAME]` of the proposal), and how it was told: through the alias table, by the
    family only, or (a GPU the table lacks) by every word of the candidate's name being in
    the file's ("RTX-PRO-6000" is "NVIDIA RTX PRO 6000 Blackwell Server Edition")."""
    if gpu not in table_ids:
        return set(_words(gpu)) <= set(_words(said)), "by its words (not in the hardware table)"
    ids, exact = accelerator_ids(said, table_ids)
    if not ids:
        return False, "a name the alias table does not know"
    return gpu in ids, ("" if exact else "the family only")


def model_name(name: str) -> str:
    """A model as the alias table knows it: no organisation prefix (`meta-llama/`), no
    `Meta-` brand, lower case, `_` as `-`, no `-Instruct`/`-FP8`... checkpoint suffix."""
    base = name.strip().split("/")[-1].lower().replace("_", "-")
    base = base.removeprefix("meta-")
    return _SUFFIXES.sub("", base)


def precision_name(name: str) -> str | None:
    """The canonical precision, or None for a value that names none (`auto`)."""
    return PRECISIONS.get(name.strip().lower())


def check_identity(d: Draft, settings: dict[str, str], path: str, proxy: str | None, *,
                   declaration: str = "throughput", gpu_count: int | None = None,
                   fewer_gpus_ok: bool = False, accelerators: tuple[str, ...] | None = None,
                   counts: bool = True) -> Identity:
    """Raise on evidence whose model, precision, accelerator or GPU count is not the
    candidate's, unless it is a declared proxy (then each difference is noted).

    `settings` holds what the file says (`model`, `precision`, `accelerator`: the chosen
    configuration's, for a benchmark), or `accelerators` the GPU names it records (a power
    log's, each compared). `gpu_count` is the GPUs it ran on, a difference when it is not the
    candidate's `gpu_count` (with `fewer_gpus_ok`, only when it is more: a benchmark on fewer
    GPUs is used as measured, not scaled); with `counts` False the count is no identity of
    this evidence (quality results) and is not reported unchecked. The outcome goes to the
    row's `identity_check` (`power_identity_check`, `quality_identity_check` for those
    declarations: the report's evidence table); returns it as data (`Identity`: held when
    something was compared and nothing differs)."""
    c = d.c
    differences: list[str] = []
    compared: list[str] = []

    def compare(what: str, says: Any, declared: Any, same: bool, how: str = "") -> None:
        compared.append(f"{what} {says} (the candidate's {declared}{'; ' + how if how else ''})")
        if not same:
            differences.append(f"{what}: the file says {says}"
                               f"{' (' + how + ')' if how else ''}, the candidate {declared}")

    if c.model is not None and settings.get("model"):
        compare("model", repr(settings["model"]), repr(c.model),
                model_name(settings["model"]) == model_name(c.model))
    said = precision_name(settings.get("precision", ""))
    declared = precision_name(c.precision) if c.precision is not None else None
    if said is not None and declared is not None:
        compare("precision", settings["precision"], c.precision, said == declared)
    unrecorded = []
    names = accelerators if accelerators is not None else tuple(
        n for n in [settings.get("accelerator")] if n)
    table_ids = d.mkt.hardware["gpu"].to_list()
    for name in names:
        same, how = same_accelerator(name, c.gpu, table_ids)
        compare("accelerator", repr(name), c.gpu, same, how)
    if not names:
        unrecorded.append("accelerator")
    if gpu_count is not None:
        compare("GPU count", gpu_count, c.gpu_count, gpu_count == c.gpu_count
                or (fewer_gpus_ok and gpu_count < c.gpu_count))
    elif counts:
        unrecorded.append("GPU count")
    key = f"{declaration}_identity_check" if declaration != "throughput" else "identity_check"
    not_checked = (f"; not checked: {' and '.join(unrecorded)} (the file records none)"
                   if unrecorded else "")
    if not differences:
        identity = (Identity("passed", ", ".join(compared) + not_checked) if compared else
                    Identity("not checked", "the file records no accelerator or GPU count, "
                             "and no model or precision the candidate states"))
        d.row[key] = ("held" if identity.held else identity.outcome) + ": " + identity.detail
        return identity
    if proxy is None:
        raise d.error(f"{declaration}.evidence", f"{path} is not this candidate's evidence: "
                      + "; ".join(differences) + " (if it stands in on purpose, declare "
                      f"{declaration} = {{ evidence = ..., proxy = \"why\" }})")
    d.notes.append(f"proxy {declaration} evidence ({proxy}): " + "; ".join(differences)
                   if declaration != "throughput" else
                   f"proxy evidence ({proxy}): " + "; ".join(differences))
    d.row[key] = f"differs, a declared proxy ({proxy}): " + "; ".join(differences)
    return Identity("failed", d.row[key])
