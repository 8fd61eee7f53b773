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
class ProviderFacts:
    provider_id: str
    provider_name: str
    hq_country: str
    parent_company: str | None
    parent_hq_country: str | None
    non_eu_law_exposure: bool
    exposure_basis: str | None
    gpu_qualifications: tuple[str, ...]  # schemes whose scope covers GPU offers
    other_qualifications: tuple[str, ...]  # schemes held for other product lines


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
