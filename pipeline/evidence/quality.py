"""Quality evidence: lm-evaluation-harness results read from a file or a folder, and a
candidate's scores compared with a reference candidate's under a tolerance.

- `load_quality`: the `QualityEvidence` of every lm-eval results file under a path (a folder
  is walked by `pipeline.evidence.files.walk`; other files are skipped with a note). A task
  scored in several files is taken from the latest (lm-eval's `date`, else the later name),
  said in the notes.
- `compare`: a candidate's evidence against a reference's, one row per declared task
  (`mmlu`, `hellaswag:acc_norm`, `gsm8k:exact_match,flexible-extract`; without a metric, the
  reference's first metric for the task as its file lists it), with the rule:

      drop   = reference - value      (value - reference where lower is better)
      stderr = sqrt(stderr_c^2 + stderr_r^2)   (a stderr not reported counts 0)
      within tolerance  <=>  drop - stderr <= max_drop

  i.e. a drop is held against the candidate only beyond one combined standard error of the
  two independent measurements. A task missing from the candidate's evidence fails (it cannot
  be shown to hold); `failures` says why for each failing task.
- `summary`: the rows of evidence compared with nothing (value and stderr only) of
  its top-level tasks.

Errors: a missing path raises FileNotFoundError; a file that is not lm-eval's shape, or a
path holding no lm-eval results, raises `sources.errors.ParseError` naming it; a declared
task the reference's evidence lacks raises `QualityError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.evidence.files import head, walk
from pipeline.store import sha256
from sources.bench.lm_eval import TOOL, EvalResults, EvalScore, detect, parse
from sources.errors import ParseError


class QualityError(ValueError):
    """The reference's quality evidence does not score a task the policy declares."""


@dataclass(frozen=True)
class QualityEvidence:
    results: tuple[EvalResults, ...]
    files: tuple[tuple[str, str], ...]  # (path, sha256)
    #: each file's "as of": lm-eval's `date`, UTC (ISO 8601, `Z`)
    dates: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def score(self, task: str, metric: str | None = None) -> EvalScore | None:
        """The task's score from the latest file scoring it (`EvalResults.score`)."""
        for result in self._latest_first():
            found = result.score(task, metric)
            if found is not None:
                return found
        return None

    def _latest_first(self) -> list[EvalResults]:
        return sorted(self.results, key=lambda r: (r.date_utc is not None,
                                                   r.date_utc.timestamp() if r.date_utc
                                                   else 0.0, r.path), reverse=True)

    def top_tasks(self) -> list[str]:
        return list(dict.fromkeys(t for r in self.results for t in r.top_tasks()))


@dataclass(frozen=True)
class Comparison:
    #: one per declared task: task, metric, value, reference_value, drop, stderr,
    #: within_tolerance (the JSON contract's `quality.tasks`)
    tasks: list[dict[str, Any]]
    #: why each failing task fails, in words
    failures: list[str]
    notes: list[str]


def load_quality(path: Path) -> QualityEvidence:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(path)
    results: list[EvalResults] = []
    files: list[tuple[str, str]] = []
    notes: list[str] = []
    for file in walk(path):
        name = str(file)
        if not detect(head(file)):
            if path.is_dir():
                notes.append(f"{name}: skipped (not lm-evaluation-harness results)")
                continue
            raise ParseError(TOOL, name, "(file)", "not lm-evaluation-harness results: no "
                             "'results' table beside lm-eval's own keys (n-shot, "
                             "lm_eval_version, ...)")
        data = file.read_bytes()
        result = parse(data, name)
        results.append(result)
        files.append((name, sha256(data)))
        notes.extend(f"{name}: {n}" for n in result.notes)
    if not results:
        raise ParseError(TOOL, str(path), "(folder)", "no lm-evaluation-harness results file "
                         "found (results_*.json, as lm_eval --output_path writes)")
    evidence = QualityEvidence(
        tuple(results), tuple(files),
        {r.path: r.date_utc.strftime("%Y-%m-%dT%H:%M:%SZ") for r in results if r.date_utc},
        tuple(notes))
    return _with_overlaps(evidence)


def _with_overlaps(evidence: QualityEvidence) -> QualityEvidence:
    """A note for each task scored in several files: the latest is used."""
    notes = list(evidence.notes)
    by_task: dict[str, list[str]] = {}
    for result in evidence.results:
        for task in result.tasks():
            by_task.setdefault(task, []).append(result.path)
    latest = evidence._latest_first()
    for task, paths in by_task.items():
        if len(paths) > 1:
            used = next(r.path for r in latest if task in r.tasks())
            notes.append(f"task {task} is scored in {len(paths)} files: the latest ({used}) "
                         "is used")
    return QualityEvidence(evidence.results, evidence.files, evidence.dates, tuple(notes))


def split_task(spec: str) -> tuple[str, str | None]:
    """`"hellaswag:acc_norm"` -> ("hellaswag", "acc_norm"); `"mmlu"` -> ("mmlu", None)."""
    task, _, metric = spec.partition(":")
    return task, metric or None


def compare(candidate: QualityEvidence, reference: QualityEvidence, tasks: list[str],
            max_drop: float) -> Comparison:
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    notes: list[str] = []
    for spec in tasks:
        task, metric = split_task(spec)
        ref = reference.score(task, metric)
        if ref is None:
            raise QualityError(f"task {spec!r} is not scored in the reference's quality "
                               f"evidence ({', '.join(p for p, _ in reference.files)}); it "
                               f"scores: {', '.join(reference.top_tasks())}")
        own = candidate.score(task, ref.metric)
        if own is None:
            rows.append({"task": task, "metric": ref.metric, "value": None,
                         "reference_value": ref.value, "drop": None, "stderr": ref.stderr,
                         "within_tolerance": False})
            failures.append(f"{task} {ref.metric} is not scored in its quality evidence")
            continue
        lower_better = ref.higher_is_better is False
        drop = own.value - ref.value if lower_better else ref.value - own.value
        stderr = None if own.stderr is None and ref.stderr is None else math.sqrt(
            (own.stderr or 0.0) ** 2 + (ref.stderr or 0.0) ** 2)
        within = drop - (stderr or 0.0) <= max_drop
        rows.append({"task": task, "metric": ref.metric, "value": own.value,
                     "reference_value": ref.value, "drop": drop, "stderr": stderr,
                     "within_tolerance": within})
        if not within:
            failures.append(
                f"{task} {ref.metric} {own.value:.4g} against {ref.value:.4g}: drop "
                f"{drop:.4g} - stderr {stderr or 0.0:.2g} exceeds max_drop {max_drop:g}")
        if own.n_shot != ref.n_shot:
            notes.append(f"quality: {task} is {_shots(own.n_shot)} here and "
                         f"{_shots(ref.n_shot)} in the reference: the scores are not "
                         "measured alike")
        if own.stderr is None or ref.stderr is None:
            notes.append(f"quality: {task} {ref.metric} has no reported stderr on "
                         f"{'either side' if stderr is None else 'one side'}: counted as 0")
    return Comparison(rows, failures, notes)


def summary(evidence: QualityEvidence) -> list[dict[str, Any]]:
    """The top-level tasks' first scores, compared with nothing."""
    rows = []
    for task in evidence.top_tasks():
        score = evidence.score(task)
        if score is not None:
            rows.append({"task": task, "metric": score.metric, "value": score.value,
                         "reference_value": None, "drop": None, "stderr": score.stderr,
                         "within_tolerance": None})
    return rows


def _shots(n: int | None) -> str:
    return "n-shot unknown" if n is None else f"{n}-shot"
