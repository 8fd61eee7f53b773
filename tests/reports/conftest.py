"""Fixtures for the report tests: the hand-made full result and snapshot comparison.

`result_full.json` is the bundled example's result (generated at a fixed time) with every
optional decision-engine key added by hand under the engine's names (uncertainty,
P(frontier), pairwise, tornado, sizing, break-even; busy_power_w and average_power_w equal, as
at full utilisation), the engine's `formulas` list (pipeline.engine.scorecard.formulas()) and
each candidate's `sovereignty_rubric` and `gates` as the example's run gives them; its
figures are illustrative, only their rendering is under test.

Snapshots live in tests/fixtures/reports/. To accept a deliberate change of output, rerun
with SCORECARD_UPDATE_SNAPSHOTS=1 and review the diff of the snapshot files.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from schemas.result import Result

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


@pytest.fixture(scope="session")
def _full() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "result_full.json").read_text("utf-8"))
    return data


@pytest.fixture
def full(_full: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy per test, so a test may alter it."""
    return copy.deepcopy(_full)


def typed(document: dict[str, Any]) -> Result:
    """A result document (a fixture, perhaps altered by the test) as the reports take it."""
    return Result.model_validate(document)


#: neutral values of the keys a hand-made fragment of a result leaves out: no figure, no
#: text, nothing excluded
_TOP = {"proposal": "fragment", "vintage": "2026-10", "generated_at": "2026-10-01T00:00:00",
        "code_version": "test", "sources": [], "example_data": False,
        "slo": {"ttft_ms": 1000.0, "tpot_ms": None, "max_itl_ms": None, "attainment": 0.95,
                "ttft_p99_ms": None, "tpot_p99_ms": None},
        "policy": {"min_sovereignty": 0, "objectives": ["cpm"]}, "candidates": []}
_FIGURES = ("tokens_per_s", "cost_eur_per_hour", "cpm_eur_per_mtok", "energy_j_per_token",
            "facility_kwh_per_mtok", "electricity_eur_per_mtok", "carbon_gco2e_per_mtok")
_CANDIDATE = {"deployment": "cloud", "provider": "provider", "zone": "FR",
              "tokens_per_s_grade": None, "energy_boundary": None, "sovereignty_level": 0,
              "eligible": True, "exclusion_reason": None, "pareto_rank": None,
              "dominated_by": None, "notes": [], "detail": {},
              **dict.fromkeys(_FIGURES)}
_RECOMMENDATION = {"candidate": None, "rule": "", "runner_up": None, "excluded": [],
                   "monthly_cost_eur": None, "annual_cost_eur": None, "cost_split": None,
                   "what_would_change_it": [], "p_chosen_cheapest": None, "reason": ""}


def fragment(document: dict[str, Any]) -> Result:
    """A hand-made fragment of a result (the keys a test is about), completed with the
    neutral values above."""
    whole = {**_TOP, **document}
    whole["candidates"] = [{**_CANDIDATE, "label": c["id"], **c} for c in whole["candidates"]]
    for c in whole["candidates"]:
        c["inputs"] = [{"unit": None, "low": None, "mode": None, "high": None, "grade": None,
                        "key": i["input"], "source": None, **i} for i in c.get("inputs", [])]
    if "recommendation" in whole:
        whole["recommendation"] = {**_RECOMMENDATION, **whole["recommendation"]}
    whole["tornado"] = [{"swing": None, **r} for r in whole.get("tornado", [])]
    return Result.model_validate(whole)


OPTIONAL_TOP = ("pairwise", "tornado", "sizing", "break_even", "demand", "uncertainty",
                "formulas")
OPTIONAL_CANDIDATE = ("uncertainty", "p_frontier", "inputs", "sizing")


def without_optional(result: dict[str, Any]) -> dict[str, Any]:
    """The result as the foundation produced it: no decision-engine keys."""
    bare = {k: v for k, v in result.items() if k not in OPTIONAL_TOP}
    bare["candidates"] = [{k: v for k, v in c.items() if k not in OPTIONAL_CANDIDATE}
                          for c in result["candidates"]]
    return bare


def strip_volatile_html(page: str) -> str:
    """The page without its <style> blocks, each chart fragment of
    reports/figures/sections.py reduced
    to its marker comment and each remaining inline SVG to a marker: the SVG geometry depends on the
    fonts vl-convert measures with, so it is tested apart (two renders match, labels present) rather
    than byte for byte."""
    page = re.sub(r"<style>.*?</style>", "<style/>", page, flags=re.DOTALL)
    # the chart fragments of reports/figures/sections.py (captions, alt text, the pairwise
    # matrix) are that module's to test; the page snapshot keeps only where each one sits
    page = re.sub(r"<!-- figures:(\w+) -->.*?<!-- /figures:\1 -->", r"<!-- figures:\1 -->",
                  page, flags=re.DOTALL)
    return re.sub(r"<svg\b.*?</svg>", "<svg/>", page, flags=re.DOTALL)


def check_snapshot(name: str, text: str) -> None:
    path = FIXTURES / name
    if os.environ.get("SCORECARD_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"snapshot {path} missing: run with SCORECARD_UPDATE_SNAPSHOTS=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"output differs from snapshot {name}"
