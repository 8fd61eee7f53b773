"""`scorecard explain CANDIDATE [METRIC]`: the derivation chain of one figure.

Each input the metric depends on, with its value, range, unit, grade and source (URL and
date, evidence file hash, or the proposal key), then each formula step with its result, in
the order `metrics.STEPS` applies them. The dependencies are read from the step expressions
themselves, so the chain cannot drift from the code that computes the figure; steps that do
not enter the candidate's cost model (`Step.models`: the TCO lines of a candidate with a price
per hour) are left out with everything only they depend on.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.engine.metrics import INPUTS, STEP_BY_NAME, STEPS, evaluate
from pipeline.engine.resolve import Resolved
from pipeline.engine.uncertainty import point_frame


def dependencies(metric: str, cost_model: str | None = None) -> list[str]:
    """Every step and input `metric` depends on under `cost_model` (None: under any), steps
    in application order."""
    needed: set[str] = set()
    pending = [metric]
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        step = STEP_BY_NAME.get(name)
        if step is not None and cost_model is not None and cost_model not in step.models:
            continue
        needed.add(name)
        if step is not None:
            pending.extend(step.expr().meta.root_names())
    return [s.name for s in STEPS if s.name in needed] + sorted(needed & set(INPUTS))


def explain(resolved: Resolved, candidate: str, metric: str) -> dict[str, Any]:
    if metric not in STEP_BY_NAME:
        raise KeyError(f"unknown metric {metric!r}; one of: {', '.join(STEP_BY_NAME)}")
    static = resolved.static.filter(pl.col("id") == candidate)
    if static.height == 0:
        known = ", ".join(resolved.static["id"].to_list())
        raise KeyError(f"unknown candidate {candidate!r}; candidates: {known}")
    inputs = resolved.inputs.filter(pl.col("id") == candidate)
    row = evaluate(point_frame(static, inputs)).row(0, named=True)
    facts = static.row(0, named=True)
    deps = dependencies(metric, facts["cost_model"])
    stated = {r["input"]: r for r in inputs.iter_rows(named=True)}
    chain_inputs = []
    for name in deps:
        r = stated.get(name)
        if r is None:  # not an input, or not stated for this candidate's cost model
            continue
        unit, meaning = INPUTS[name]
        chain_inputs.append({
            "input": name, "unit": unit, "meaning": meaning, "value": r["mode"],
            "low": r["low"], "high": r["high"], "grade": r["grade"], "source": r["source"],
            "key": r["key"],
        })
    steps = [{"step": s, "unit": STEP_BY_NAME[s].unit, "formula": STEP_BY_NAME[s].formula,
              "value": row[s]} for s in deps if s in STEP_BY_NAME]
    return {"candidate": candidate, "metric": metric, "value": row[metric],
            "unit": STEP_BY_NAME[metric].unit, "cost_model": facts["cost_model"],
            "inputs": chain_inputs, "steps": steps, "notes": facts["notes"]}


def render(chain: dict[str, Any]) -> str:
    lines = [f"{chain['candidate']}: {chain['metric']} = {_fmt(chain['value'])} "
             f"{chain['unit']} (cost model {chain['cost_model']})", "", "Inputs"]
    for i in chain["inputs"]:
        spread = ("" if i["low"] is None or i["low"] == i["high"]
                  else f" [{_fmt(i['low'])} .. {_fmt(i['high'])}]")
        lines.append(f"  {i['input']} = {_fmt(i['value'])}{spread} {i['unit']}"
                     f"  ({i['grade']}; {i['key']})")
        if i["source"]:
            lines.append(f"      source: {i['source']}")
    lines += ["", "Steps"]
    for s in chain["steps"]:
        lines.append(f"  {s['step']} = {_fmt(s['value'])} {s['unit']}")
        lines.append(f"      = {s['formula']}")
    if chain["notes"]:
        lines += ["", "Notes"] + [f"  - {n}" for n in chain["notes"]]
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:.6g}"
