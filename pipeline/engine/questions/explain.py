"""`scorecard explain CANDIDATE [METRIC]`: the scorecard's figure, then how it is made.

The figure is read from the table the scorecard itself shows (`scorecard.figures`, which
`compute` reports), so explain and the run give one answer. What makes it:

- a candidate: each input the metric depends on, with its value, range, unit, grade and
  source (URL and date, evidence file hash, or the proposal key as the file writes it:
  `candidates[1] (id 'x').power.watts`, as the proposal's error messages name it), then
  each formula step with its result, in the order `metrics.STEPS` applies them, at the
  [demand] month. The dependencies are read from the step expressions themselves, so the
  chain cannot drift from the code that computes the figure; steps that do not enter the
  candidate's cost model (`Step.models`: the TCO lines of a candidate with a price per hour)
  are left out with everything only they depend on. Under a plan a figure the plan makes
  the horizon's (plan.REPLACED) is the horizon's, and the chain is its first month, the part
  each month repeats at its own demand (`horizon`).
- a mix: its split between its base and its burst (the result's `mix`), each part's figure
  in the mix, how the mix weights them, and the commands that explain each part.
- `sovereignty` (a policy gate, not a formula): the scorecard's level with its reason, who
  serves the candidate's tokens at which level (a plan's fallback, a mix's parts), the
  rubric, the framework objectives and the regulatory gates.

METRIC may also be a policy objective's name (`cpm`, `energy`, `carbon`, `electricity`: the
column the Pareto frontier reads).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from pipeline.engine.fleet import mix, mixes, plan
from pipeline.engine.metrics import INPUTS, STEP_BY_NAME, STEPS
from pipeline.engine.ranking.pareto import OBJECTIVES
from pipeline.engine.ranking.sovereignty import FRAMEWORK_VERSION, RUBRIC
from pipeline.engine.resolved import Resolved
from pipeline.engine.scorecard import Figures

SOVEREIGNTY = "sovereignty"
LEVEL = OBJECTIVES[SOVEREIGNTY][0]
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


def _unknown(what: str, name: str, known: Sequence[str]) -> str:
    """`unknown WHAT 'name'`, the closest known name, if any is close."""
    close = difflib.get_close_matches(name, known, n=1)
    return f"unknown {what} {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def explain(shown: Figures, resolved: Resolved, candidate: str, metric: str,
            path: plan.Path | None = None, written: Sequence[str] | None = None
            ) -> dict[str, Any]:
    """The scorecard's `metric` of `candidate` (`shown`: scorecard.figures of the proposal
    `resolved` is of; `path`: its plan) and how it is made. `written`: the ids of the
    proposal file's [[candidates]] entries in the file's order (`Proposal.written_ids`),
    naming each key's candidate; None: the keys as stored (`candidates[n]`)."""
    metric = ALIASES.get(metric, metric)
    if metric not in STEP_BY_NAME and metric not in (SOVEREIGNTY, LEVEL):
        raise KeyError(f"{_unknown('metric', metric, metric_names())}; one of: "
                       f"{', '.join(metric_names())}")
    table = shown.table
    found = table.filter(pl.col("id") == candidate)
    if found.height == 0:
        ids = table.filter(pl.col("deployment") != "mix")["id"].to_list()
        mixed = table.filter(pl.col("deployment") == "mix")["id"].to_list()
        raise KeyError(f"{_unknown('candidate', candidate, [*ids, *mixed])}; candidates: "
                       f"{', '.join(ids)}" + (f"; mixes: {', '.join(mixed)}" if mixed else ""))
    row = found.row(0, named=True)
    own = shown.first_month.filter(pl.col("id") == candidate)
    facts = own.row(0, named=True) if own.height else None  # None: a mix
    if metric in (SOVEREIGNTY, LEVEL):
        return _sovereignty(row, facts, resolved.sources)
    if facts is None:
        return _mix(row, metric, path)
    deps = dependencies(metric, facts["cost_model"])
    chain_inputs = []
    stated = {r["input"]: r for r in resolved.inputs.filter(pl.col("id") == candidate)
              .iter_rows(named=True)}
    for name in deps:
        r = stated.get(name)
        if r is None:  # not an input, or not stated for this candidate's cost model
            continue
        unit, meaning = INPUTS[name]
        chain_inputs.append({
            "input": name, "unit": unit, "meaning": meaning, "value": r["mode"],
            "low": r["low"], "high": r["high"], "grade": r["grade"], "source": r["source"],
            "key": _written_key(r["key"], written),
        })
    steps = [{"step": s, "unit": STEP_BY_NAME[s].unit, "formula": STEP_BY_NAME[s].formula,
              "value": facts[s]} for s in deps if s in STEP_BY_NAME]
    chain = {"candidate": candidate, "metric": metric, "value": row[metric],
             "unit": STEP_BY_NAME[metric].unit, "cost_model": facts["cost_model"],
             "inputs": chain_inputs, "steps": steps, "notes": row["notes"]}
    if path is not None and metric in plan.REPLACED:
        chain["horizon"] = _horizon(row, metric, facts[metric], path)
    return chain


def _written_key(key: str, written: Sequence[str] | None) -> str:
    """An input's key as the proposal file writes it and its errors name it: a hand-listed
    candidate's `candidates[n]` (n its place among the file's [[candidates]], whose ids
    are `written`) as `candidates[n] (id 'x')`."""
    found = re.match(r"candidates\[(\d+)\]", key)
    if found is None or written is None or int(found[1]) >= len(written):
        return key
    return f"candidates[{found[1]}] (id {written[int(found[1])]!r}){key[found.end():]}"


def _horizon(row: dict[str, Any], metric: str, first_month: float | None, path: plan.Path
             ) -> dict[str, Any]:
    """How the plan makes the horizon's figure of the month's steps."""
    fallback, share = row["fallback"], row["horizon_fallback_share"]
    unserved = row["horizon_unserved_mtok"]
    if fallback is not None and share:
        gap = (f", {fallback} (its fallback) serving {_share(share)} of the horizon's tokens "
               "in the months before its own nodes serve")
    elif unserved:
        gap = f", {unserved:.1f} Mtok unserved before its own nodes serve (no fallback)"
    else:
        gap = ""
    weighting = (f"the horizon's cost over its tokens, both discounted at "
                 f"{path.rate_per_year:.2%} a year ({path.rate_source})"
                 if metric == "cpm_eur_per_mtok" else
                 "each month's figure weighted by its tokens (undiscounted)")
    return {"months": path.months, "rate_per_year": path.rate_per_year,
            "rate_source": path.rate_source, "fallback": fallback,
            "fallback_tokens_share": share, "unserved_mtok": unserved,
            "value": row[metric],  # the scorecard's figure, the chain's `value` (as before)
            "first_month_value": first_month,
            "note": (f"the plan's over {path.months} months: each month the steps below at "
                     f"that month's demand{gap}; {weighting}")}


def _mix(row: dict[str, Any], metric: str, path: plan.Path | None) -> dict[str, Any]:
    """A mix's figure: its split, each part's figure in the mix and the weighting."""
    split = row["mix"]
    over_horizon = split["split_over"] == mixes.HORIZON
    carried = metric in mixes.PER_TOKEN  # each part's figure is in the split
    parts = [{"part": p["part"], "id": p["id"], "sovereignty_level": p["sovereignty_level"],
              "instances": p["instances"], "tokens_share": p["tokens_share"],
              "cost_share": p["cost_share"], "monthly_cost_eur": p["monthly_cost_eur"],
              "value": p[metric] if carried else None} for p in split["parts"]]
    served = [p for p in parts if p["tokens_share"] and p["value"] is not None]
    if metric == "cpm_eur_per_mtok" and over_horizon:
        how = ("the horizon's discounted cost over its discounted tokens: each part's share of "
               "that cost over its CPM is its share of those tokens")
        terms = " + ".join(f"{_fmt(p['cost_share'])} / {_fmt(p['value'])}" for p in served)
        formula = f"1 / ({terms})" if served else None
    elif carried:
        how = ("the parts' figures weighted by the tokens each serves" + (
            " over the horizon (each month's, undiscounted)" if over_horizon else
            " in the month") + (": the month's cost over its tokens"
                                if metric == "cpm_eur_per_mtok" else ""))
        formula = " + ".join(f"{_fmt(p['tokens_share'])} x {_fmt(p['value'])}"
                             for p in served) or None
    elif metric in mixes.BLENDED:
        month = over_horizon and metric not in plan.REPLACED
        how = ("the parts' figures at the tokens each serves, weighted by those tokens" + (
            " in the [demand] month at the base size above (the plan replaces CPM, J/token "
            "and carbon only; the split above is the horizon's)" if month else
            " over the horizon (each month's, undiscounted)" if over_horizon else "")
               + "; the split does not carry each part's figure in the mix")
        formula = None
    elif metric == mix.COST:
        how = ("the [demand] month's cost of the base's instances and of the burst for what "
               "they do not serve" + ("" if not over_horizon else
                                      " (at the base size above; the split's monthly costs "
                                      "are the horizon's mean month)"))
        formula = (None if over_horizon or not parts else
                   " + ".join(_fmt(p["monthly_cost_eur"]) for p in parts))
    else:
        how = (f"a mix has no {metric} of its own: its parts have theirs, each at its own "
               f"fleet; a mix blends the per-token figures ({', '.join(mixes.BLENDED)}) and "
               f"adds its parts' monthly cost")
        formula = None
    if metric == "cpm_eur_per_mtok" and over_horizon:
        how += (f"; its first month at this base size: "
                f"{_fmt(row['first_month_cpm_eur_per_mtok'])} EUR/Mtok")
    return {"candidate": row["id"], "metric": metric, "value": row[metric],
            "unit": STEP_BY_NAME[metric].unit, "cost_model": "mix", "inputs": [],
            "steps": [], "notes": row["notes"],
            "mix": {"base": split["base"], "burst": split["burst"],
                    "base_instances": split["base_instances"],
                    "max_base_instances": split["max_base_instances"],
                    "split_over": split["split_over"], "parts": parts, "how": how,
                    "formula": formula,
                    "explain_parts": [f"scorecard explain {p} {metric}"
                                      for p in (split["base"], split["burst"])]}}


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


def _serving(row: dict[str, Any], facts: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Who serves the candidate's tokens at which level, when more than one does: a mix's
    parts, or a plan's own nodes and the fallback serving before them."""
    if facts is None:
        return [{"id": p["id"], "role": p["part"], "level": p["sovereignty_level"],
                 "tokens_share": p["tokens_share"]} for p in row["mix"]["parts"]]
    share = row.get("horizon_fallback_share")
    if not share:
        return []
    return [{"id": row["id"], "role": "its own nodes", "level": facts["sovereignty_level"],
             "tokens_share": 1.0 - share},
            {"id": row["fallback"], "role": "its fallback",
             "level": row["fallback_sovereignty_level"], "tokens_share": share}]


def _sovereignty(row: dict[str, Any], facts: dict[str, Any] | None,
                 sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The level is a rubric's verdict, not a formula: the scorecard's level (the lowest of
    those that serve the tokens), its reason, and the rubric."""
    return {"candidate": row["id"], "metric": LEVEL, "value": row["sovereignty_level"],
            "unit": "level (0-4, higher is better)", "cost_model": row["cost_model"],
            "inputs": [], "steps": [], "reasons": [row["sovereignty_reason"]],
            "serving": _serving(row, facts),
            "rubric": [{"level": level, "rule": rule} for level, rule in RUBRIC.items()],
            # the rubric's verdict on the candidate itself (a mix: its parts'), before a
            # fallback that serves tokens lowers the scorecard's level
            "rubric_level": None if facts is None else facts["sovereignty_level"],
            # the EU Cloud Sovereignty Framework objectives and the regulatory gates
            # (pipeline/engine/ranking/gates.py), as the run reports them
            "framework": row["sovereignty_rubric"],
            "framework_source": _framework_source(sources),
            "gates": _gate_sources(row["gates"] or [], sources),
            "notes": row["notes"]}


def render(chain: dict[str, Any]) -> str:
    if "rubric" in chain:
        return _render_sovereignty(chain)
    if "mix" in chain:
        return _render_mix(chain)
    lines = [f"{chain['candidate']}: {chain['metric']} = {_fmt(chain['value'])} "
             f"{chain['unit']} (cost model {chain['cost_model']})"]
    if (horizon := chain.get("horizon")) is not None:
        lines += ["", "Over the horizon", f"  {horizon['note']}",
                  f"  its first month: {chain['metric']} = "
                  f"{_fmt(horizon['first_month_value'])} {chain['unit']}, as the chain below "
                  "computes it", "", "The first month's chain ([demand] month)"]
    lines += ["", "Inputs"]
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
    return "\n".join(lines + _notes(chain))


def _render_mix(chain: dict[str, Any]) -> str:
    m = chain["mix"]
    over = ("the plan's horizon" if m["split_over"] == mixes.HORIZON
            else "the [demand] month")
    lines = [f"{chain['candidate']}: {chain['metric']} = {_fmt(chain['value'])} "
             f"{chain['unit']} (a mix of {m['base']} and {m['burst']})", "",
             f"The split (over {over})"]
    if not m["parts"]:
        lines.append("  no base size chosen (see the notes)")
    for p in m["parts"]:
        size = ("" if p["instances"] is None else
                f"{p['instances']} of up to {m['max_base_instances']} instances, ")
        figure = ("" if p["value"] is None and chain["metric"] not in mixes.PER_TOKEN
                  else f"; {chain['metric']} = {_fmt(p['value'])} {chain['unit']}")
        lines.append(f"  {p['part']:<5} {p['id']} (level {p['sovereignty_level']}): {size}"
                     f"{_share(p['tokens_share'])} of the tokens, "
                     f"{_share(p['cost_share'])} of the cost{figure}")
    lines += ["", "How the mix makes it", f"  {m['how']}"]
    if m["formula"] is not None:
        lines.append(f"  = {m['formula']}")
    lines += ["", "Its parts (each alone, at its own fleet: the steps the mix applies to the "
              "tokens each part serves)", *(f"  {c}" for c in m["explain_parts"])]
    return "\n".join(lines + _notes(chain))


def _render_sovereignty(chain: dict[str, Any]) -> str:
    lines = [f"{chain['candidate']}: {chain['metric']} = {chain['value']} {chain['unit']}", "",
             "Reasons", *(f"  {r}" for r in chain["reasons"])]
    mixed = chain["cost_model"] == "mix"  # the rubric and the gates are its parts'
    parts = [f"  its parts': scorecard explain {s['id']} sovereignty"
             for s in chain["serving"]]
    if chain["serving"]:
        lines += ["", "Who serves its tokens (the lowest level that serves them is its level)",
                  *(f"  {s['id']} ({s['role']}): level {s['level']}, "
                    f"{_share(s['tokens_share'])} of the tokens" for s in chain["serving"])]
    return "\n".join([
        *lines, "", "Rubric",
        *(f"  {'>' if r['level'] == chain['rubric_level'] else ' '} {r['level']}  {r['rule']}"
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
        *(parts if mixed else [] if chain.get("gates") else ["  none applies"])])


def _notes(chain: dict[str, Any]) -> list[str]:
    return ["", "Notes", *(f"  - {n}" for n in chain["notes"])] if chain["notes"] else []


def _share(value: float | None) -> str:
    """A share as the scorecard's notes write it: `4.9 %`."""
    return "null" if value is None else f"{value * 100:.1f} %"


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:.6g}"
