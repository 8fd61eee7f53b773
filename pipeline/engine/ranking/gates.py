"""Regulatory gates: the rules a candidate's data centre must meet (sources/reference/
regulatory_rules.csv: Germany's Energy Efficiency Act § 11, the EU data-centre reporting duty)
and the policy's SEAL minimum per objective of the EU Cloud Sovereignty Framework.

Each gate has an outcome: `pass`, `fail` (the candidate is excluded, like below the
sovereignty minimum, with the rule's legal basis and citation), `needs_data` (the proposal
does not give the fact the rule needs: said, never passed) or `not_applicable` (out of scope,
or not yet in force on the assessment day, with what the declared figure would give).
A cloud offer's data-centre duties are the provider's: only own or colocated sites are gated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from pipeline.engine.ranking.sovereignty import EU_EEA

#: the EU member states (the EEA's Iceland, Liechtenstein and Norway apply EU directives only
#: once the EEA Joint Committee takes them over, which is not assessed here)
EU27 = EU_EEA - {"IS", "LI", "NO"}

#: a site fact -> the proposal key that gives it
SITE_KEYS = {
    "pue": "pue (the candidate's or [defaults]; an assumed default is no evidence of the "
           "site's figure)",
    "commissioned_on": "site.commissioned_on", "connected_power_kw": "site.connected_power_kw",
    "it_power_kw": "site.it_power_kw", "renewable_share": "site.renewable_share",
    "energy_reuse_factor": "site.energy_reuse_factor", "eu_reporting": "site.eu_reporting",
}
STATUSES = ("pass", "fail", "needs_data", "not_applicable")


@dataclass(frozen=True)
class Rule:
    """A row of regulatory_rules.csv: `metric` compared with `limit` (`direction` max: at most,
    min: at least) for data centres of `country` (`EU`: the member states) whose `scope` fact
    reaches `scope_min_kw`, started between `commissioned_from` (inclusive) and
    `commissioned_before` (exclusive) where given, in force from `in_force_from` (None: it
    binds the site as built, whatever the assessment day)."""

    rule_id: str
    instrument: str
    country: str
    legal_basis: str
    requirement: str
    metric: str
    direction: str
    limit: float
    commissioned_from: date | None
    commissioned_before: date | None
    in_force_from: date | None
    scope: str
    scope_min_kw: float
    source_url: str
    source_date: str


@dataclass(frozen=True)
class SiteFacts:
    """What the proposal says of a candidate's data centre (its `site` table and a declared
    PUE); None: not given."""

    pue: float | None = None
    commissioned_on: date | None = None
    connected_power_kw: float | None = None
    it_power_kw: float | None = None
    renewable_share: float | None = None
    energy_reuse_factor: float | None = None
    eu_reporting: bool | None = None


def _covers(rule: Rule, country: str) -> bool:
    return rule.country == country or (rule.country == "EU" and country in EU27)


def _outcome(rule: Rule, status: str, reason: str, scope: str | None = None
             ) -> dict[str, Any]:
    """A rule's outcome; with `scope` (the instrument), the outcome of the instrument's scope
    test, which stands for all its rules."""
    if scope is None:
        return {"gate": rule.rule_id, "legal_basis": rule.legal_basis,
                "requirement": rule.requirement, "status": status, "reason": reason,
                "source_url": rule.source_url, "source_date": rule.source_date}
    return {"gate": f"{scope} scope", "legal_basis": scope,
            "requirement": f"{scope} covers data centres with {rule.scope} >= "
                           f"{rule.scope_min_kw:g} kW",
            "status": status, "reason": reason, "source_url": rule.source_url,
            "source_date": rule.source_date}


def _shown(metric: str, value: float) -> str:
    if metric == "eu_reporting":
        return "operator reporting " + ("declared" if value else "declared absent")
    if metric in ("renewable_share", "energy_reuse_factor"):
        return f"{metric} {value:.0%}"
    return f"{metric} {value:g}"


def _limit(rule: Rule) -> str:
    if rule.metric == "eu_reporting":
        return "(reporting required)"
    sign = "<=" if rule.direction == "max" else ">="
    shown = f"{rule.limit:.0%}" if rule.metric in ("renewable_share", "energy_reuse_factor") \
        else f"{rule.limit:g}"
    return f"{sign} {shown}"


def _meets(rule: Rule, value: float) -> bool:
    return value <= rule.limit if rule.direction == "max" else value >= rule.limit


def _window(rule: Rule) -> str:
    parts = []
    if rule.commissioned_from:
        parts.append(f"from {rule.commissioned_from.isoformat()}")
    if rule.commissioned_before:
        parts.append(f"before {rule.commissioned_before.isoformat()}")
    return " and ".join(parts)


def _rule_outcome(rule: Rule, site: SiteFacts, as_of: date) -> dict[str, Any] | None:
    """One rule on a site in its scope; None when the site's start of operation falls outside
    the rule's window (a sibling rule covers it)."""
    windowed = rule.commissioned_from is not None or rule.commissioned_before is not None
    started = site.commissioned_on
    if windowed and started is None:
        return _outcome(rule, "needs_data", f"needs {SITE_KEYS['commissioned_on']}: the rule "
                        f"covers data centres starting operation {_window(rule)}")
    if started is not None and (
            (rule.commissioned_from is not None and started < rule.commissioned_from)
            or (rule.commissioned_before is not None and started >= rule.commissioned_before)):
        return None
    value = getattr(site, rule.metric)
    figure = None if value is None else float(value)
    # a rule without an in-force date binds the site from its construction (it is to be
    # built and operated to meet it), so a site not yet started is checked too
    in_force = rule.in_force_from
    if in_force is not None and in_force > as_of:
        would = ("" if figure is None else
                 f"; the declared {_shown(rule.metric, figure)} would "
                 f"{'meet' if _meets(rule, figure) else 'fail'} it")
        return _outcome(rule, "not_applicable", f"in force from {in_force.isoformat()}, after "
                        f"the assessment day {as_of.isoformat()}{would}")
    if figure is None:
        return _outcome(rule, "needs_data", f"needs {SITE_KEYS[rule.metric]} to check "
                        f"{rule.metric} {_limit(rule)}")
    met = _meets(rule, figure)
    return _outcome(rule, "pass" if met else "fail",
                    f"{_shown(rule.metric, figure)} {'meets' if met else 'breaks'} "
                    f"{_limit(rule)}" + (f" (start of operation {started.isoformat()})"
                                         if windowed and started else ""))


def evaluate(deployment: str, country: str, site: SiteFacts, rules: Sequence[Rule],
             as_of: date) -> list[dict[str, Any]]:
    """The outcomes of the rules covering a candidate's data centre on `as_of`, in the rules'
    order: one row per instrument when the site's scope fact is missing or below the
    threshold, else one per rule that covers the site's start of operation."""
    if deployment in ("cloud", "api"):  # the provider's data centre, the provider's duties
        return []
    out: list[dict[str, Any]] = []
    instruments: dict[str, list[Rule]] = {}
    for rule in rules:
        if _covers(rule, country):
            instruments.setdefault(rule.instrument, []).append(rule)
    for instrument, group in instruments.items():
        first = group[0]
        size = getattr(site, first.scope)
        if size is None:
            out.append(_outcome(first, "needs_data", f"needs {SITE_KEYS[first.scope]} to know "
                                f"whether the data centre is in scope", instrument))
        elif size < first.scope_min_kw:
            out.append(_outcome(first, "not_applicable", f"{first.scope} {size:g} kW is below "
                                f"the scope threshold", instrument))
        else:
            out.extend(o for r in group if (o := _rule_outcome(r, site, as_of)) is not None)
    return out


def seal_gates(rubric: Sequence[Mapping[str, Any]], minimum: Mapping[Any, int] | None,
               source_url: str, version: str) -> list[dict[str, Any]]:
    """The policy's SEAL minimum per objective against the SEAL the candidate's rubric
    supports (None: not established by the facts held, so the gate needs data)."""
    if not minimum:
        return []
    by_objective = {r["objective"]: r for r in rubric}
    out = []
    for objective, floor in sorted(minimum.items()):
        row = by_objective[objective]
        seal = row["seal"]
        basis = f"EU Cloud Sovereignty Framework {version}, {objective} at least SEAL-{floor}"
        base = {"gate": f"seal {objective}", "legal_basis": basis,
                "requirement": f"policy.min_seal: {objective} ({row['title']}) at least "
                               f"SEAL-{floor}",
                "source_url": source_url, "source_date": None}
        if seal is None:
            out.append({**base, "status": "needs_data",
                        "reason": f"the facts held establish no SEAL for {objective}: "
                                  f"{row['evidence']}"})
        else:
            met = seal >= floor
            out.append({**base, "status": "pass" if met else "fail",
                        "reason": f"the evidence supports SEAL-{seal} "
                                  f"({'meets' if met else 'below'} SEAL-{floor}): "
                                  f"{row['evidence']}"})
    return out


def exclusion(outcomes: Sequence[Mapping[str, Any]]) -> str | None:
    """The exclusion reason of the failed gates, each with its legal basis and citation; a
    policy's SEAL minimum the facts do not establish excludes too (the policy asked for it:
    unknown is not met), where a law's gate that needs data only says so."""
    failed = [f"fails {o['legal_basis']}: {o['reason']} ({o['source_url']})"
              for o in outcomes if o["status"] == "fail"]
    failed += [f"does not establish {o['legal_basis']}: {o['reason']} ({o['source_url']})"
               for o in outcomes if o["status"] == "needs_data"
               and str(o["gate"]).startswith("seal ")]
    return "; ".join(failed) or None
