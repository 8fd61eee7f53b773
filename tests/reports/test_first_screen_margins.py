"""The recommendation block says what the sizing's margins cost (issue 15): the headroom's
instances and their monthly cost, the redundancy's (N+1), and for a TCO fleet its total over
the amortisation period; elastic capacity says neither is billed, and a result without the
figures (no demand, or stored before them) prints no such line."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from typing import Any

import pytest

from pipeline.run import execute
from reports.html.first_screen import demand_text, margins_text, summary
from schemas.result import CandidateResult, Demand
from tests.pipeline.test_margins import MARGINS
from tests.reports.conftest import FIXTURES, fragment, typed

EXAMPLE = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))


def _by_id(result: dict[str, Any]) -> dict[str, CandidateResult]:
    return {c.id: c for c in typed(result).candidates}


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("margins")
    (folder / "p.toml").write_text(MARGINS, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert execute(folder / "p.toml", vintage=None, out=None, db=folder / "s.duckdb",
                       json_out=True) == 0
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def test_the_margins_in_words(margins: dict[str, Any]) -> None:
    found = _by_id(margins)
    # declared: 1 headroom instance and 1 spare, each 11 EUR/h x 730 h = 8,030 EUR/month
    assert margins_text(found["declared"]) == (
        "headroom costs 8,030 EUR a month (1 instance), redundancy 8,030 EUR a month "
        "(N+1: 1 instance)")
    # the TCO node: 14.4266 EUR/h x 730 = 10,531 EUR/month each (tests/pipeline/test_margins)
    assert margins_text(found["own-tco"]) == (
        "headroom costs 10,531 EUR a month (1 instance), redundancy 10,531 EUR a month "
        "(N+1: 1 instance)")
    assert margins_text(found["elastic"]) == (
        "none billed: elastic capacity pays busy hours only (headroom 1 instance, "
        "redundancy N+1)")
    assert demand_text(Demand.model_validate(margins["demand"]), "output") == (
        "500,000,000 output tokens a day, peak 2 x the daily mean, 25% headroom, "
        "N+1 redundancy")


def test_a_tco_recommendation_says_its_total_over_the_amortisation(
        margins: dict[str, Any]) -> None:
    result = copy.deepcopy(margins)
    tco = next(c for c in result["candidates"] if c["id"] == "own-tco")
    # the block reads the chosen candidate: make it the TCO node, as a rule could
    monthly = tco["detail"]["monthly_cost_eur"]
    result["recommendation"] = {**result["recommendation"], "candidate": "own-tco",
                                "monthly_cost_eur": monthly,
                                "annual_cost_eur": monthly * 12}
    page = summary(typed(result), ())
    # 52,657.2 EUR/month x 12 = 631,886 EUR a year; x 48 months = 2,527,546 EUR
    assert ("<dd>52,657 EUR a month · 631,886 EUR a year · 2,527,546 EUR over the 48-month "
            "amortisation</dd>") in page
    assert ("<dt>Of which margins</dt><dd>headroom costs 10,531 EUR a month (1 instance), "
            "redundancy 10,531 EUR a month (N+1: 1 instance)</dd>") in page


def test_the_example_s_chosen_elastic_fleet_and_a_rental() -> None:
    found = _by_id(EXAMPLE)
    page = summary(typed(EXAMPLE), ())
    assert EXAMPLE["recommendation"]["candidate"] == "ovhcloud-h100x4-fp8"
    # its elastic fleet: 3 headroom instances, none billed; a rental has no amortisation
    assert ("<dt>Of which margins</dt><dd>none billed: elastic capacity pays busy hours only "
            "(headroom 3 instances)</dd>") in page
    assert "amortisation" not in page.split('<section id="excluded">')[0]
    # FR H100 at a declared 11 EUR/h: 1 headroom instance x 11 x 730 = 8,030 EUR a month
    assert margins_text(found["onprem-fr-h100-fp16"]) == (
        "headroom costs 8,030 EUR a month (1 instance), redundancy 0 EUR a month "
        "(none declared)")


def test_no_margins_line_without_the_figures() -> None:
    bare = copy.deepcopy(EXAMPLE)
    for c in bare["candidates"]:
        for key in ("monthly_headroom_cost_eur", "monthly_redundancy_cost_eur",
                    "headroom_instances", "period_cost_eur"):
            c["detail"].pop(key)
    page = summary(typed(bare), ())
    assert "Of which margins" not in page and "amortisation" not in page
    [bare_candidate] = fragment({"candidates": [{"id": "x", "detail": {
        "monthly_headroom_cost_eur": None, "monthly_redundancy_cost_eur": None,
        "headroom_instances": None}}]}).candidates
    assert margins_text(bare_candidate) is None
