"""`scorecard explain CANDIDATE [METRIC]`: the derivation chain of one figure.

Each input the metric depends on, with its value, range, unit, grade and source (URL and
date, evidence file hash, or the proposal key), then each formula step with its result, in
the order `metrics.STEPS` applies them. The dependencies are read from the step expressions
themselves, so the chain cannot drift from the code that computes the figure; steps that do
not enter the candidate's cost model (`Step.models`: the TCO lines of a candidate with a price
per hour) are left out with everything only they depend on.

METRIC may also be a policy objective's name (`cpm`, `energy`, `carbon`, `electricity`: the
column the Pareto frontier reads), or `sovereignty`: the candidate's level with the rubric's
reason (and an override's justification), since no formula computes it.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.engine.fleet import plan
from pipeline.engine.metrics import INPUTS, STEP_BY_NAME, STEPS, evaluate
from pipeline.engine.ranking.pareto import OBJECTIVES
from pipeline.engine.ranking.sovereignty import FRAMEWORK_VERSION, RUBRIC
from pipeline.engine.resolved import Resolved
from pipeline.engine.uncertainty import point_frame

SOVEREIGNTY = "sovereignty"
#: the names `explain` accepts beside the step columns: the policy's objectives
ALIASES = {name: column for name, (column, _) in OBJECTIVES.items() if name != SOVEREIGNTY}


def metric_names() -> list[str]:
    """What METRIC may be: the objectives' names, `sovereignty`, every step column."""
    return [*ALIASES, SOVEREIGNTY, *STEP_BY_NAME]


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


def explain(resolved: Resolved, candidate: str, metric: str,
            path: plan.Path | None = None, fallbacks: dict[str, str | None] | None = None
            ) -> dict[str, Any]:
    """The chain of `metric` for `candidate`. Under a plan (`path`, each candidate's
    `fallbacks`) the chain is the first month's, and a figure the plan makes the horizon's
    (plan.REPLACED) comes with that horizon value (`horizon`), the scorecard's."""
    metric = ALIASES.get(metric, metric)
    if metric not in STEP_BY_NAME and metric not in (SOVEREIGNTY, OBJECTIVES[SOVEREIGNTY][0]):
        raise KeyError(f"unknown metric {metric!r}; one of: {', '.join(metric_names())}")
    static = resolved.static.filter(pl.col("id") == candidate)
    if static.height == 0:
        known = ", ".join(resolved.static["id"].to_list())
        raise KeyError(f"unknown candidate {candidate!r}; candidates: {known}")
    if metric in (SOVEREIGNTY, OBJECTIVES[SOVEREIGNTY][0]):
        return _sovereignty(static.row(0, named=True), resolved.sources)
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
    chain = {"candidate": candidate, "metric": metric, "value": row[metric],
             "unit": STEP_BY_NAME[metric].unit, "cost_model": facts["cost_model"],
             "inputs": chain_inputs, "steps": steps, "notes": facts["notes"]}
    if path is not None and metric in plan.REPLACED:
        fallback = (fallbacks or {}).get(candidate)
        ids = [candidate, *([fallback] if fallback else [])]
        point = point_frame(resolved.static.filter(pl.col("id").is_in(ids)),
                            resolved.inputs.filter(pl.col("id").is_in(ids)))
        horizon = plan.at_modes(point, {candidate: fallback}, path)
        chain["horizon"] = {
            "value": horizon.row(by_predicate=pl.col("id") == candidate,
                                 named=True)[metric],
            "months": path.months, "fallback": fallback,
            "note": (f"the chain above is the first month's; the scorecard's {metric} is the "
                     f"plan's over {path.months} months (each month these steps at its "
                     f"demand, the months before the own nodes serve at "
                     f"{fallback or 'nobody: unserved'}), discounted at "
                     f"{path.rate_per_year:.2%} a year ({path.rate_source}) for the CPM")}
    return chain


def _gate_sources(gates: list[dict[str, Any]], sources: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """Each gate with the stored row it read, as the run's sources cite it (URL, date,
    licence, snapshot): a rule's own row, the framework's objectives for a SEAL gate."""
    cited = {(s["kind"], s["subject"]): s for s in sources}
    framework = _framework_source(sources)
    return [{**g, "source": framework if str(g["gate"]).startswith("seal ")
             else _cited(cited.get(("regulatory_rule", g["gate"])))} for g in gates]


def _cited(source: dict[str, Any] | None) -> str | None:
    return None if source is None else (
        f"{source['url']} ({source['date']}, {source['licence']}, sha256 "
        f"{str(source['snapshot_sha256'])[:12]})")


def _framework_source(sources: list[dict[str, Any]]) -> str | None:
    """The framework's objectives as the run's sources cite them."""
    return _cited(next((s for s in sources if s["kind"] == "sovereignty_objectives"), None))


def _sovereignty(facts: dict[str, Any], sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The level is a rubric's verdict, not a formula: its reason, and the rubric."""
    return {"candidate": facts["id"], "metric": OBJECTIVES[SOVEREIGNTY][0],
            "value": facts["sovereignty_level"], "unit": "level (0-4, higher is better)",
            "cost_model": facts["cost_model"], "inputs": [], "steps": [],
            "reasons": [facts["sovereignty_reason"]],
            "rubric": [{"level": level, "rule": rule} for level, rule in RUBRIC.items()],
            # the EU Cloud Sovereignty Framework objectives and the regulatory gates
            # (pipeline/engine/ranking/gates.py), as the run reports them
            "framework": facts["sovereignty_rubric"],
            "framework_source": _framework_source(sources),
            "gates": _gate_sources(facts["gates"] or [], sources),
            "notes": facts["notes"]}


def render(chain: dict[str, Any]) -> str:
    if "rubric" in chain:
        return "\n".join([
            f"{chain['candidate']}: {chain['metric']} = {chain['value']} {chain['unit']}", "",
            "Reasons", *(f"  {r}" for r in chain["reasons"]), "", "Rubric",
            *(f"  {'>' if r['level'] == chain['value'] else ' '} {r['level']}  {r['rule']}"
              for r in chain["rubric"]),
            "", f"EU Cloud Sovereignty Framework {FRAMEWORK_VERSION}: SEAL the facts support",
            *([f"  source: {chain['framework_source']}"] if chain.get("framework_source")
              else []),
            *(f"  {r['objective']}  {'-' if r['seal'] is None else r['seal']}  "
              f"{r['evidence']}" for r in chain.get("framework") or []),
            "", "Regulatory gates",
            *(line for g in chain.get("gates") or []
              for line in (f"  {g['status']}: {g['legal_basis']}: {g['reason']}",
                           *([f"      source: {g['source']}"] if g.get("source") else []))),
            *([] if chain.get("gates") else ["  none applies"])])
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
    if (horizon := chain.get("horizon")) is not None:
        lines += ["", f"Over the horizon: {chain['metric']} = {_fmt(horizon['value'])} "
                      f"{chain['unit']}", f"      {horizon['note']}"]
    if chain["notes"]:
        lines += ["", "Notes"] + [f"  - {n}" for n in chain["notes"]]
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:.6g}"
