"""Sovereignty level (DESIGN section 7) from provider facts, with the reasons spelled out.

4  on-prem or colocation under the buyer's control in the EU/EEA
3  EU-headquartered provider, EU region, offer covered by a recognised qualification
2  EU-headquartered provider in an EU region, not subject to non-EU extraterritorial law
1  provider subject to non-EU extraterritorial law (e.g. the US CLOUD Act), EU region
0  outside the EU/EEA
An override replaces the computed level only with a written justification, and both show.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the rubric, level -> its rule (the module docstring's table, printed by `explain`)
RUBRIC: dict[int, str] = {
    4: "on-prem or colocation under the buyer's control in the EU/EEA",
    3: "EU-headquartered provider, EU region, offer covered by a qualification requiring "
       "immunity from non-EU law (SecNumCloud)",
    2: "EU-headquartered provider in an EU region, not subject to non-EU extraterritorial law",
    1: "provider subject to non-EU extraterritorial law (e.g. the US CLOUD Act), EU region",
    0: "outside the EU/EEA, or no provider facts",
}

#: EU member states and the EEA (Iceland, Liechtenstein, Norway), ISO 3166-1 alpha-2.
EU_EEA = frozenset((
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT",
    "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO",
))


#: Qualifications that require immunity from non-EU law (not merely security controls: a BSI C5
#: attestation or EUCS without its immunity requirements is held by US providers too).
IMMUNITY_SCHEMES = ("SecNumCloud",)


def zone_country(zone: str) -> str:
    """Bidding zones start with their country code (DE-LU -> DE, SE3 -> SE, IT-North -> IT)."""
    return zone[:2]


@dataclass(frozen=True)
class Qualification:
    """A qualification or attestation a provider holds (qualifications.csv), with its scope."""

    scheme: str
    version: str | None
    scope: str | None
    covers_gpu_offers: bool
    qualified_on: str | None
    source_url: str

    @property
    def name(self) -> str:
        """The scheme and its version: "SecNumCloud 3.2"."""
        return f"{self.scheme} {self.version or ''}".strip()

    def describe(self) -> str:
        when = f", qualified {self.qualified_on}" if self.qualified_on else ", date not stated"
        return f"{self.name} ({self.scope or 'scope not stated'}{when}; {self.source_url})"


@dataclass(frozen=True)
class ProviderFacts:
    provider_id: str
    provider_name: str
    hq_country: str
    parent_company: str | None
    parent_hq_country: str | None
    non_eu_law_exposure: bool
    exposure_basis: str | None
    qualifications: tuple[Qualification, ...] = ()  # every row, with scope and date

    @property
    def gpu_qualifications(self) -> tuple[str, ...]:
        """The names of the schemes whose scope covers the provider's GPU offers."""
        return tuple(sorted({q.name for q in self.qualifications if q.covers_gpu_offers}))

    @property
    def other_qualifications(self) -> tuple[str, ...]:
        """The names of the schemes held for its other product lines."""
        return tuple(sorted({q.name for q in self.qualifications if not q.covers_gpu_offers}))


@dataclass(frozen=True)
class Level:
    level: int
    reason: str


def level_for(deployment: str, country: str, facts: ProviderFacts | None) -> Level:
    if country not in EU_EEA:
        return Level(0, f"level 0: runs in {country}, outside the EU/EEA")
    if deployment == "on_prem":
        return Level(4, f"level 4: own or colocated hardware under the buyer's control in "
                        f"{country}")
    if facts is None:
        return Level(0, "level 0: no provider facts in the reference data, so no sovereignty "
                        "can be claimed")
    if facts.non_eu_law_exposure:
        parent = facts.parent_company or facts.provider_name
        where = facts.parent_hq_country or facts.hq_country
        basis = f" ({facts.exposure_basis.rstrip('.')})" if facts.exposure_basis else ""
        return Level(1, f"level 1: {parent} is headquartered in {where} and subject to non-EU "
                        f"extraterritorial law{basis}; EU region in {country}")
    hq = {facts.hq_country, facts.parent_hq_country or facts.hq_country}
    if not hq <= EU_EEA:
        return Level(1, f"level 1: provider or parent headquartered outside the EU/EEA "
                        f"({', '.join(sorted(hq - EU_EEA))}); EU region in {country}")
    immune = [q for q in facts.gpu_qualifications if q.startswith(IMMUNITY_SCHEMES)]
    if immune:
        return Level(3, f"level 3: EU-headquartered ({facts.hq_country}), EU region in "
                        f"{country}, offer qualified under {', '.join(immune)}")
    others = [q for q in facts.gpu_qualifications if q not in immune]
    held = (f"; its {', '.join(facts.other_qualifications)} qualification does not cover these "
            "GPU offers" if facts.other_qualifications else "")
    held += (f"; {', '.join(others)} does not require immunity from non-EU law"
             if others else "")
    return Level(2, f"level 2: EU-headquartered ({facts.hq_country}), EU region in {country}, "
                    f"no qualification covering the offer{held}")


#: The framework's version our rubric reads (docs/sovereignty.md cites the document).
FRAMEWORK_VERSION = "v1.2.1"


def _seal(objective: str, seal: int | None, evidence: str) -> tuple[str, int | None, str]:
    return objective, seal, evidence


def rubric_for(deployment: str, country: str, facts: ProviderFacts | None
               ) -> dict[str, tuple[int | None, str]]:
    """Per objective of the EU Cloud Sovereignty Framework: the SEAL level the facts we hold
    support, and the evidence. The supported level is the highest whose definition those facts
    satisfy on their own; a factor of the objective our facts do not cover stops it there,
    and an objective we hold no facts for is None (not established: it needs the framework's
    own assessment). docs/sovereignty.md gives each rule and where it differs from ours."""
    eu_region = country in EU_EEA
    rows: list[tuple[str, int | None, str]] = []
    if deployment == "on_prem":
        where = f"own or colocated hardware in {country}"
        rows += [
            _seal("SOV-1", 4 if eu_region else 0,
                  f"{where}: the buyer owns the hardware and decides (the buyer's own "
                  "anchoring, financing and change of control are not checked)"),
            _seal("SOV-2", 4 if eu_region else 0,
                  f"{where}: only the law of {country} applies to the operator"
                  if eu_region else f"{where}: outside the EU/EEA"),
            _seal("SOV-3", 4 if eu_region else 0,
                  f"{where}: storage, processing, keys and models under the buyer's control"
                  if eu_region else f"{where}: data held outside the EU/EEA"),
            _seal("SOV-4", None, "the buyer operates; vendor support and spare-part "
                                 "dependencies are not in the reference data"),
            _seal("SOV-5", None, "accelerators, their firmware and drivers come from non-EU "
                                 "vendors: a critical non-EU dependency, so SEAL-4 is out of "
                                 "reach; a lower level needs the framework's assessment"),
            _seal("SOV-6", None, "proprietary accelerator software stacks (CUDA, ROCm) from "
                                 "non-EU vendors; not assessed further"),
            _seal("SOV-7", None, "the buyer's own certifications are not declared"),
        ]
    elif facts is None:
        rows += [_seal(o, None, "no provider facts in the reference data")
                 for o in ("SOV-1", "SOV-2", "SOV-3", "SOV-4", "SOV-5", "SOV-6", "SOV-7")]
    else:
        rows += _cloud_rows(country, eu_region, facts)
    rows.append(_seal("SOV-8", None, "not rated: the energy, carbon and regulatory-gate "
                                     "figures are reported beside the rubric, not as a SEAL"))
    return {o: (seal, evidence) for o, seal, evidence in rows}


def _cloud_rows(country: str, eu_region: bool, facts: ProviderFacts
                ) -> list[tuple[str, int | None, str]]:
    owner = facts.parent_company or facts.provider_name
    hq = {facts.hq_country, facts.parent_hq_country or facts.hq_country}
    eu_owned = hq <= EU_EEA
    exposed = facts.non_eu_law_exposure
    where_hq = ", ".join(sorted(hq))
    covering = [q for q in facts.qualifications if q.covers_gpu_offers]
    immune = [q for q in covering if q.scheme.startswith(IMMUNITY_SCHEMES)]
    elsewhere = [q for q in facts.qualifications if not q.covers_gpu_offers]
    if not eu_owned:
        sov1 = _seal("SOV-1", 0, f"{owner} is headquartered in {where_hq}: the decisive "
                                 "bodies sit outside the EU")
    else:
        sov1 = _seal("SOV-1", 2, f"{facts.provider_name} and its parent are headquartered in "
                                 f"{where_hq} (EU/EEA); financing, change of control and "
                                 "roadmap control are not in the reference data")
    if not eu_region:
        sov2 = _seal("SOV-2", 0, f"the region is in {country}, outside the EU/EEA")
        sov3 = _seal("SOV-3", 0, f"data stored and processed in {country}, outside the EU/EEA")
    elif exposed or not eu_owned:
        basis = facts.exposure_basis or f"headquartered in {where_hq}"
        sov2 = _seal("SOV-2", 1, f"EU region in {country}, but {owner} is subject to non-EU "
                                 f"extraterritorial law ({basis.rstrip('.')})")
        sov3 = _seal("SOV-3", 1, f"data in {country}, but the provider can be compelled to "
                                 "disclose it; key control and access logs not in the "
                                 "reference data")
    elif immune:
        sov2 = _seal("SOV-2", 3, f"EU provider, EU region in {country}, offer qualified under "
                                 f"{'; '.join(q.describe() for q in immune)}, which audits "
                                 "immunity from non-EU law")
        sov3 = _seal("SOV-3", 2, f"EU storage and processing in {country} under enforceable "
                                 "EU law; customer key control and access logs not in the "
                                 "reference data")
    else:
        sov2 = _seal("SOV-2", 2, f"EU provider and parent, EU region in {country}, no non-EU "
                                 "law exposure recorded; enforceability and the remaining "
                                 "non-EU dependencies need evidence for SEAL-3")
        sov3 = _seal("SOV-3", 2, f"EU storage and processing in {country} under enforceable "
                                 "EU law; customer key control and access logs not in the "
                                 "reference data")
    if immune:
        sov7 = _seal("SOV-7", 3, "qualification covering the offer: "
                                 + "; ".join(q.describe() for q in immune))
    elif covering:
        sov7 = _seal("SOV-7", 2, "certification covering the offer, without immunity from "
                                 "non-EU law: " + "; ".join(q.describe() for q in covering))
    elif elsewhere:
        sov7 = _seal("SOV-7", None, "held for other product lines, not covering the GPU "
                                    "offer: " + "; ".join(q.describe() for q in elsewhere))
    else:
        sov7 = _seal("SOV-7", None, "no qualification or attestation recorded in the "
                                    "reference data")
    return [sov1, sov2, sov3,
            _seal("SOV-4", None, "operations, support and exit terms are not in the "
                                 "reference data"),
            _seal("SOV-5", None, "the offer's accelerators come from non-EU vendors; the rest "
                                 "of the supply chain is not in the reference data"),
            _seal("SOV-6", None, "not in the reference data"),
            sov7]
