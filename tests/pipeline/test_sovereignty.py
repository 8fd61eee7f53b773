"""Sovereignty levels from provider facts, one rule at a time."""

from __future__ import annotations

from pipeline.engine.sovereignty import ProviderFacts, level_for


def facts(**kw: object) -> ProviderFacts:
    base: dict[str, object] = dict(
        provider_id="p", provider_name="P SAS", hq_country="FR", parent_company=None,
        parent_hq_country=None, non_eu_law_exposure=False, exposure_basis=None,
        gpu_qualifications=(), other_qualifications=())
    base.update(kw)
    return ProviderFacts(**base)  # type: ignore[arg-type]


def test_levels() -> None:
    assert level_for("on_prem", "FR", None).level == 4
    assert level_for("on_prem", "US", None).level == 0  # outside the EU/EEA
    assert level_for("cloud", "FR", facts()).level == 2
    assert level_for("cloud", "FR", facts(gpu_qualifications=("SecNumCloud 3.2",))).level == 3
    us = facts(hq_country="US", non_eu_law_exposure=True, exposure_basis="US CLOUD Act.")
    one = level_for("cloud", "SE", us)
    assert one.level == 1 and "(US CLOUD Act)" in one.reason  # no stray full stop
    assert level_for("cloud", "US", us).level == 0
    assert level_for("cloud", "FR", None).level == 0  # no facts, no claim


def test_only_immunity_schemes_lift_to_level_3() -> None:
    # A C5 attestation covering the GPU offer is a security control, not immunity from
    # non-EU law (US providers hold C5 too): the offer stays at level 2, and the reason says so.
    c5 = level_for("cloud", "DE", facts(hq_country="DE", gpu_qualifications=("C5 2020",)))
    assert c5.level == 2 and "C5 2020 does not require immunity" in c5.reason


def test_a_qualification_of_another_product_line_is_named_but_does_not_count() -> None:
    ovh = level_for("cloud", "FR", facts(other_qualifications=("SecNumCloud",)))
    assert ovh.level == 2
    assert "SecNumCloud qualification does not cover these GPU offers" in ovh.reason
