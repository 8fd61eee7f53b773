"""EleutherAI lm-evaluation-harness results (`results_*.json`, lm-eval 0.4.x): quality
evidence, one score per (task, metric, filter) with its reported standard error, the task's
few-shot count, sample count and direction, and the run's model, model arguments and date.

The file (written by `lm_eval --output_path`): `results` holds, per task (and per group in
0.4.0-0.4.2), keys `"<metric>,<filter>"` (`"acc,none"`, `"exact_match,strict-match"`) and
`"<metric>_stderr,<filter>"`, besides `alias` and `sample_len`; 0.4.3+ repeat groups under
`groups`. `n-shot` (task -> int), `higher_is_better` (task -> metric -> bool), `n-samples`
(task -> {original, effective}), `versions`, `group_subtasks` (group -> subtasks), `config`
(`model`, `model_args` as a table or as lm-eval's `"k=v,k=v"` text), `model_name`,
`lm_eval_version` and `date` (epoch seconds, 0.4.1+) are read when present, and the GPUs
`pretty_env_info` names ("GPU models and configuration", PyTorch's collect_env) when the
model ran on that machine (an in-process backend, or an API backend at localhost).

- `detect`: whether a file's head is a JSON object with a `"results"` key and one of lm-eval's
  own keys (`"n-shot"`, `"lm_eval_version"`, `"group_subtasks"`, `"higher_is_better"`,
  `"configs"`).
- `parse`: a file's bytes to `EvalResults`.

A stderr lm-eval could not compute (`"N/A"`, null, NaN: groups, one-sample tasks) is None,
named in the notes. Errors: bytes that are not JSON, or not lm-eval's shape, raise
`sources.errors.ParseError` naming the file and key.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from sources.bench.jsondoc import decode_text, head, number
from sources.errors import ParseError, reading

TOOL = "lm-eval"

_OWN_KEYS = (b'"n-shot"', b'"lm_eval_version"', b'"group_subtasks"', b'"higher_is_better"',
             b'"configs"')
#: keys of a task's results that are not scores
_NOT_SCORES = {"alias", "sample_len", "samples", "sample_count", "name"}


@dataclass(frozen=True)
class EvalScore:
    task: str
    #: `"<metric>,<filter>"` as the file writes it (`"acc,none"`); a key without a filter
    #: (lm-eval before 0.4) is read with filter `none`
    metric: str
    value: float
    stderr: float | None
    n_shot: int | None
    samples: int | None
    #: from `higher_is_better`; None when the file does not say
    higher_is_better: bool | None

    @property
    def name(self) -> str:
        """The metric without its filter (`acc`)."""
        return self.metric.split(",", 1)[0]


@dataclass(frozen=True)
class EvalResults:
    path: str
    lm_eval_version: str | None
    model: str | None  # the harness backend (`hf`, `vllm`, `local-chat-completions`)
    model_args: dict[str, str]
    model_name: str | None
    date_utc: datetime | None
    scores: tuple[EvalScore, ...]
    #: the subtasks of each group (`group_subtasks`): a group's own score is its summary
    subtasks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the GPUs the model ran on, from `pretty_env_info` (PyTorch's collect_env of the machine
    #: lm-eval ran on), when the model ran there (`_ran_here`); () when unknown
    accelerators: tuple[str, ...] = ()

    def tasks(self) -> list[str]:
        """The tasks scored, in the file's order."""
        return list(dict.fromkeys(s.task for s in self.scores))

    def top_tasks(self) -> list[str]:
        """The tasks that are no group's subtask (what a summary lists)."""
        inner = {t for subs in self.subtasks.values() for t in subs}
        return [t for t in self.tasks() if t not in inner]

    def score(self, task: str, metric: str | None = None) -> EvalScore | None:
        """`task`'s score for `metric` (`"acc"` or `"acc,none"`; the first filter listed when
        none is named), or the task's first score listed when `metric` is None."""
        for s in self.scores:
            if s.task != task:
                continue
            if metric is None or s.metric == metric or (
                    "," not in metric and s.name == metric):
                return s
        return None


def detect(data: bytes) -> bool:
    top = head(data)
    return (top.lstrip().startswith(b"{") and b'"results"' in top
            and any(key in top for key in _OWN_KEYS))


def parse(data: bytes, path: str) -> EvalResults:
    with reading(TOOL, path):
        return _parse(data, path)


def _parse(data: bytes, path: str) -> EvalResults:
    text = decode_text(data, TOOL, path)
    constants: list[str] = []
    try:
        doc = json.loads(text, parse_constant=lambda name: constants.append(name))
    except json.JSONDecodeError as err:
        raise ParseError(TOOL, path, f"line {err.lineno} column {err.colno}",
                         f"invalid JSON: {err.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise ParseError(TOOL, path, "key 'results'",
                         "expected lm-eval's results object: a table of tasks")
    notes: list[str] = []
    if constants:
        notes.append(f"{len(constants)} NaN/Infinity value(s) read as null")
    n_shot = _table(doc, "n-shot", path)
    higher = _table(doc, "higher_is_better", path)
    samples = _table(doc, "n-samples", path)
    tasks: dict[str, Any] = dict(doc["results"])
    for group, entry in _table(doc, "groups", path).items():
        tasks.setdefault(group, entry)  # 0.4.3+: groups repeated outside `results`
    scores: list[EvalScore] = []
    no_stderr: list[str] = []
    for task, entry in tasks.items():
        if not isinstance(entry, dict):
            raise ParseError(TOOL, path, f"results.{task}", "expected a table of metrics")
        for key, value in entry.items():
            if key in _NOT_SCORES or _STDERR.match(key):
                continue
            metric, _, flt = key.partition(",")
            if isinstance(value, str) or value is None:
                continue  # a score lm-eval could not compute ("N/A")
            figure = number(value, TOOL, path, f"results.{task}.{key!r}")
            if figure is None or math.isinf(figure):
                continue
            err_key = f"{metric}_stderr,{flt}" if flt else f"{metric}_stderr"
            stderr = _stderr(entry.get(err_key), path, f"results.{task}.{err_key!r}")
            if stderr is None:
                no_stderr.append(f"{task} {key}")
            direction = higher.get(task, {})
            scores.append(EvalScore(
                task=str(task), metric=f"{metric},{flt or 'none'}", value=figure,
                stderr=stderr, n_shot=_int(n_shot.get(task)),
                samples=_samples(samples.get(task), entry),
                higher_is_better=direction.get(metric) if isinstance(direction, dict)
                and isinstance(direction.get(metric), bool) else None))
    if not scores:
        raise ParseError(TOOL, path, "key 'results'", "no numeric score in any task")
    if no_stderr:
        shown = ", ".join(no_stderr[:5]) + (f" and {len(no_stderr) - 5} more"
                                            if len(no_stderr) > 5 else "")
        notes.append(f"no standard error reported for {shown}")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    assert isinstance(config, dict)
    subtasks = {str(g): tuple(str(t) for t in subs) for g, subs in
                _table(doc, "group_subtasks", path).items() if isinstance(subs, list)}
    return EvalResults(
        path=path, lm_eval_version=_text(doc.get("lm_eval_version")),
        model=_text(config.get("model")), model_args=_model_args(config.get("model_args")),
        model_name=_text(doc.get("model_name")), date_utc=_date(doc.get("date")),
        scores=tuple(scores), subtasks=subtasks, notes=tuple(notes),
        accelerators=_gpus(doc.get("pretty_env_info"))
        if _ran_here(_text(config.get("model")), _model_args(config.get("model_args"))) else ())


#: lm-eval backends that run the model in lm-eval's own process (on the machine whose
#: environment `pretty_env_info` describes); the others call a server by `base_url`
_IN_PROCESS = {"hf", "huggingface", "hf-auto", "hf-multimodal", "vllm", "vllm-vlm", "sglang",
               "hf-mistral3", "steered"}
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def _ran_here(backend: str | None, args: dict[str, str]) -> bool:
    """Whether the model ran on the machine `pretty_env_info` describes: an in-process
    backend, or an API backend whose `base_url` is this machine (localhost)."""
    if backend in _IN_PROCESS:
        return True
    host = urlsplit(args.get("base_url", "")).hostname
    return host is not None and host in _LOCAL_HOSTS


_GPU_LINE = re.compile(r"^\s*GPU \d+: (.+?)\s*$")


def _gpus(env: Any) -> tuple[str, ...]:
    """The GPU names of PyTorch collect_env's "GPU models and configuration" entry: one
    `GPU 0: NVIDIA GB10` on its line, several on the lines after it (`nvidia-smi -L`, the
    UUIDs removed; MIG partitions beneath a GPU skipped), or a ROCm name on its line
    (`AMD Instinct MI300X (gfx942:...)`, the architecture dropped); distinct, in order."""
    if not isinstance(env, str) or "GPU models and configuration" not in env:
        return ()
    rest = env.split("GPU models and configuration", 1)[1].split(":", 1)[-1].splitlines()
    first, names = (rest[0].strip() if rest else ""), []
    for line in ([first] if first else []) + rest[1:]:
        match = _GPU_LINE.match(line)
        if match:
            names.append(match.group(1))
        elif line.strip().startswith("MIG "):  # a MIG partition of the GPU above
            continue
        elif line is first and first not in ("Could not collect", "N/A"):
            names.append(re.sub(r"\s*\(gfx[^)]*\)$", "", first))
            break
        else:
            break
    return tuple(dict.fromkeys(n for n in names if n))


_STDERR = re.compile(r"^[^,]*_stderr(,|$)")


def _table(doc: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(TOOL, path, f"key {key!r}", "expected a table")
    return value


def _stderr(value: Any, path: str, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not _NUMERIC.match(value)):
        return None  # "N/A"
    out = number(value, TOOL, path, where)
    return None if out is None or math.isinf(out) else out


_NUMERIC = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _samples(value: Any, entry: dict[str, Any]) -> int | None:
    if isinstance(value, dict):
        return _int(value.get("effective")) or _int(value.get("original"))
    return _int(entry.get("sample_len"))


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _model_args(value: Any) -> dict[str, str]:
    """`model_args` as a table (0.4.8+ may write one) or lm-eval's `"k=v,k=v"` text."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, str):
        pairs = (part.split("=", 1) for part in value.split(",") if "=" in part)
        return {k.strip(): v.strip() for k, v in pairs}
    return {}


def _date(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None
