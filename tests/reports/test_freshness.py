"""Data freshness: the age of each source's figure at the vintage, and its stale flag."""

from __future__ import annotations

import io
from datetime import date

from reports.freshness import as_of, freshness
from schemas.result import Result, Source
from tests.reports.conftest import fragment, typed


def _source(fields: dict[str, str]) -> Source:
    return Source.model_validate({"url": None, "licence": None, "snapshot_sha256": None,
                                  **fields})


def _result(*sources: dict[str, str]) -> Result:
    return fragment({"vintage": "2026-10", "sources": [_source(s) for s in sources]})


def test_ages_and_stale_flags_worked_by_hand() -> None:
    result = _result(
        {"kind": "electricity_price", "subject": "FR 2025-12", "date": "2026-11-29"},
        {"kind": "gpu_offer", "subject": "scaleway:H100-SXM-8-80G@fr-par-2",
         "date": "2026-08-22"},
        {"kind": "grid_intensity", "subject": "FR 2025", "date": "2026-11-29"},
        {"kind": "electricity_price", "subject": "FR 2026-09", "date": "2026-10-02"},
    )
    fr_price, offer, grid, recent = freshness(result)
    # Vintage 2026-10 ends 2026-10-31. FR 2025-12 is as of 2025-12-31: 31+28+31+30+31+30+31
    # +31+30+31 = 304 days, over the 45-day limit of a monthly price -> stale.
    assert fr_price.as_of == date(2025, 12, 31)
    assert (fr_price.age_days, fr_price.stale) == (304, True)
    # The offer was observed 2026-08-22: 9 (rest of August) + 30 + 31 = 70 days > 62 -> stale.
    assert (offer.age_days, offer.stale) == (70, True)
    # The 2025 annual intensity: as of 2025-12-31, 304 days <= 548 -> fresh.
    assert (grid.age_days, grid.stale) == (304, False)
    # September's price at the October vintage: 2026-09-30 -> 31 days <= 45 -> fresh.
    assert (recent.age_days, recent.stale) == (31, False)


def test_a_figure_newer_than_the_vintage_has_age_zero_and_bad_dates_are_unknown() -> None:
    newer, unknown = freshness(_result(
        {"kind": "fx", "subject": "USD", "date": "2026-11-15"},
        {"kind": "fx", "subject": "USD", "date": "not a date"}))
    assert (newer.age_days, newer.stale) == (0, False)
    assert unknown.as_of is None and unknown.stale is None
    assert as_of(_source({"kind": "gpu_offer", "subject": "x@y", "date": "2026-01-02"})) == date(
        2026, 1, 2)


def test_the_terminal_summary_names_stale_sources(full: dict) -> None:
    from reports.summary import print_summary

    out = io.StringIO()
    print_summary(typed(full), out)
    text = " ".join(out.getvalue().split())  # the line wraps at 80 columns
    # the fixture's 6 stale figures: 4 December 2025 prices (304 days) and 2 GPU offers
    assert "6 source figure(s) stale at vintage 2026-10" in text
    assert "FR 2025-12" in text and "EXAMPLE DATA" in text


def test_own_measurements_hold_for_a_year() -> None:
    # evidence is dated by its runs' end (UTC); vintage 2026-10 ends 2026-10-31
    half_year, old = freshness(_result(
        {"kind": "evidence", "subject": "evals/fp8/results.json", "date": "2026-05-01"},
        {"kind": "evidence", "subject": "bench/run.json", "date": "2025-09-30"}))
    # 2026-05-01 -> 2026-10-31: 30 (rest of May) + 30 + 31 + 31 + 30 + 31 = 183 days <= 365
    assert (half_year.age_days, half_year.stale) == (183, False)
    # 2025-09-30 -> 2026-10-31: 365 + 31 = 396 days > 365 -> stale
    assert (old.age_days, old.stale) == (396, True)


def test_a_legal_text_is_not_aged_by_the_vintage() -> None:
    # The EED's delegated regulation of 2024-03-14 is 365 (to 2025-03-14) + 365 (to
    # 2026-03-14) + 17 + 30 + 31 + 30 + 31 + 31 + 30 + 31 (to 2026-10-31, the vintage's end)
    # = 961 days old, past any price's limit, but a law binds as adopted until amended: not stale. A
    # price of the same age would be (the default limit is 92 days).
    rule, price = freshness(_result(
        {"kind": "regulatory_rule", "subject": "EED art. 12 scope", "date": "2024-03-14"},
        {"kind": "tariff_component", "subject": "DE 2023", "date": "2024-03-14"}))
    assert (rule.age_days, rule.stale) == (961, False)
    assert "not aged" in rule.rule
    assert price.stale is True
