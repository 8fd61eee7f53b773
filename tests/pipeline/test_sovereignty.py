"""Sovereignty levels from provider facts, one rule at a time."""

from __future__ import annotations

from pipeline.engine.ranking.sovereignty import ProviderFacts, Qualification, level_for


def facts(gpu_qualifications: tuple[str, ...] = (), other_qualifications: tuple[str, ...] = (),
          **kw: object) -> ProviderFacts:
    """A provider's facts; `gpu_qualifications` ("C5 2020": scheme and version) cover its GPU
    offers, `other_qualifications` its other product lines."""
    base: dict[str, object] = dict(
        provider_id="p", provider_name="P SAS", hq_country="FR", parent_company=None,
        parent_hq_country=None, non_eu_law_exposure=False, exposure_basis=None,
        qualifications=tuple(
            Qualification(scheme=name.split(" ")[0], version=" ".join(name.split(" ")[1:])
                          or None, scope="IaaS", covers_gpu_offers=covers, qualified_on=None,
                          source_url="https://example.org/q")
            for names, covers in ((gpu_qualifications, True), (other_qualifications, False))
            for name in names))
    base.update(kw)
    return ProviderFacts(**base)  # type: ignore[arg-type]


def test_the_qualification_names_come_from_the_qualifications() -> None:
    f = facts(gpu_qualifications=("SecNumCloud 3.2", "C5 2020", "C5 2020"),
              other_qualifications=("SecNumCloud",))
    # names sorted, each once; the scheme alone when no version is stated
    assert f.gpu_qualifications == ("C5 2020", "SecNumCloud 3.2")
    assert f.other_qualifications == ("SecNumCloud",)


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
