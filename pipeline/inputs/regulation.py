"""The bundled rules of the regulatory gates and the framework's objectives, read once per
process (sources/regulation.py parses and checks them), as the engine takes them; and each
candidate's gates and sovereignty rubric, computed when the candidate is resolved."""

from __future__ import annotations

from datetime import date
from functools import cache
from typing import Any

from pipeline.engine import gates
from pipeline.engine.sovereignty import FRAMEWORK_VERSION, rubric_for, zone_country
from pipeline.inputs.draft import Draft
from schemas.proposal import point
from sources.bundled import read
from sources.regulation import OBJECTIVES_FILE, RULES_FILE, parse_objectives, parse_rules


@cache
def rules() -> tuple[gates.Rule, ...]:
    frame = parse_rules(read(RULES_FILE)).drop("licence")
    return tuple(gates.Rule(**row) for row in frame.iter_rows(named=True))


@cache
def objectives() -> tuple[dict[str, Any], ...]:
    return tuple(parse_objectives(read(OBJECTIVES_FILE)).iter_rows(named=True))


def as_of(d: Draft) -> date:
    """The day the gates are assessed on: policy.regulation_as_of, else the vintage's first
    day."""
    day = d.proposal.policy.regulation_as_of
    return day if day is not None else date.fromisoformat(f"{d.mkt.vintage}-01")


def _declared_pue(d: Draft) -> float | None:
    """The PUE the proposal declares for the candidate (its own or [defaults]); an assumed
    default is no evidence of the site's figure."""
    value = d.c.pue if d.c.pue is not None else d.proposal.defaults.pue
    return None if value is None else point(value)


def resolve_regulation(d: Draft, zone: str) -> None:
    """The candidate's rubric by framework objective, its gates (the rules covering its data
    centre, and the policy's SEAL minimum) and the exclusion their failures make."""
    c, country = d.c, zone_country(zone)
    found = rubric_for(c.deployment, country, d.mkt.providers.get(c.provider))
    rubric = [{"objective": o["objective"], "title": o["title"],
               "weight_pct": o["weight_pct"], "seal": found[o["objective"]][0],
               "evidence": found[o["objective"]][1]} for o in objectives()]
    site = c.site
    facts = gates.SiteFacts(
        pue=_declared_pue(d),
        **({} if site is None else site.model_dump(exclude={"source"})))
    outcomes = gates.evaluate(c.deployment, country, facts, rules(), as_of(d))
    if site is not None:
        for o in outcomes:
            o["reason"] += f" [site: {site.source}]"
    outcomes += gates.seal_gates(rubric, d.proposal.policy.min_seal,
                                 objectives()[0]["source_url"], FRAMEWORK_VERSION)
    d.row["sovereignty_rubric"] = rubric
    d.row["gates"] = outcomes
    d.row["gate_exclusion"] = gates.exclusion(outcomes)
