"""The rules of the regulatory gates and the framework's objectives, as the store holds them
(core__regulatory_rules, core__sovereignty_objectives: loaded from the bundled files through
parse -> validate -> load, sources/regulation.py), as the engine takes them; and each
candidate's gates and sovereignty rubric, computed when the candidate is resolved, every rule
and objective it reads cited (URL, date, licence, snapshot) among the run's sources."""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from pipeline.engine.ranking import gates
from pipeline.engine.ranking.sovereignty import FRAMEWORK_VERSION, rubric_for, zone_country
from pipeline.engine.resolved import Market
from pipeline.inputs.draft import Draft
from schemas.proposal import point
from sources.regulation import STORED_OBJECTIVE_NAMES, STORED_RULE_NAMES

_RULE_FIELDS = {f for f in gates.Rule.__dataclass_fields__}


def _stored(frame: pl.DataFrame | None, table: str) -> pl.DataFrame:
    if frame is None:
        raise RuntimeError(f"the market holds no {table}: it was not read from a store")
    return frame


def rule_rows(mkt: Market) -> list[dict[str, Any]]:
    """The stored rules, each row as the file names its columns, with its citation."""
    frame = _stored(mkt.regulatory_rules, "core__regulatory_rules")
    return frame.rename({v: k for k, v in STORED_RULE_NAMES.items()}).rows(named=True)


def _rule(row: dict[str, Any]) -> gates.Rule:
    fields: dict[str, Any] = {k: v for k, v in row.items() if k in _RULE_FIELDS}
    return gates.Rule(**fields | {"source_date": str(row["source_date"])})


def rules(mkt: Market) -> tuple[gates.Rule, ...]:
    return tuple(_rule(row) for row in rule_rows(mkt))


def objectives(mkt: Market) -> list[dict[str, Any]]:
    """SOV-1 .. SOV-8 in order, as the file names the columns, with their citation."""
    frame = _stored(mkt.sovereignty_objectives, "core__sovereignty_objectives")
    return frame.rename({v: k for k, v in STORED_OBJECTIVE_NAMES.items()}).rows(named=True)


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
    sov = objectives(d.mkt)
    rubric = [{"objective": o["objective"], "title": o["title"],
               "weight_pct": o["weight_pct"], "seal": found[o["objective"]][0],
               "evidence": found[o["objective"]][1]} for o in sov]
    d.prov.cite("sovereignty_objectives", objectives_subject(), sov[0])
    site = c.site
    facts = gates.SiteFacts(
        pue=_declared_pue(d),
        **({} if site is None else site.model_dump(exclude={"source"})))
    rows = rule_rows(d.mkt)
    outcomes = gates.evaluate(c.deployment, country, facts, [_rule(r) for r in rows], as_of(d))
    cited = rule_sources(rows)
    for o in outcomes:
        d.prov.cite("regulatory_rule", o["gate"], cited[o["gate"]])
        if site is not None:
            o["reason"] += f" [site: {site.source}]"
    outcomes += gates.seal_gates(rubric, d.proposal.policy.min_seal,
                                 sov[0]["source_url"], FRAMEWORK_VERSION)
    d.row["sovereignty_rubric"] = rubric
    d.row["gates"] = outcomes
    d.row["gate_exclusion"] = gates.exclusion(outcomes)


def objectives_subject() -> str:
    """How the run's sources name the framework's objectives (one file, one citation)."""
    return f"EU Cloud Sovereignty Framework {FRAMEWORK_VERSION}, SOV-1 .. SOV-8"


def rule_sources(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """gate -> the stored row it reads: a rule's own, and for an instrument's scope test
    ("EnEfG § 11 scope") the instrument's first rule, whose scope it applies."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out[row["rule_id"]] = row
        out.setdefault(f"{row['instrument']} scope", row)
    return out
