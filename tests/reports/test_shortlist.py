"""Tables a reader scans list a shortlist of a large proposal (reports/frames.py `shortlist`):
the recommendation, the runner-up and the frontier first, then the cheapest eligible, then the
excluded, kept in the proposal's order; the CSV, the workbook and the JSON keep every one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from reports.frames import shortlist
from reports.summary import ROWS_MAX, print_summary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def _c(i: int, cpm: float, *, rank: int = 2, eligible: bool = True) -> dict[str, Any]:
    return {"id": f"c{i:02d}", "eligible": eligible, "pareto_rank": rank,
            "cpm_eur_per_mtok": cpm}


def test_a_large_proposal_keeps_the_answer_the_frontier_and_the_cheapest() -> None:
    # 50 candidates, CPM 50 - i (c49 cheapest); c00 and c01 are the recommendation and the
    # runner-up although dear, c10 and c11 on the frontier, c48 and c49 excluded
    candidates = [_c(i, 50.0 - i, rank=1 if i in (10, 11) else 2,
                     eligible=i not in (48, 49)) for i in range(50)]
    result = {"candidates": candidates,
              "recommendation": {"candidate": "c00", "runner_up": "c01"}}
    kept, left_out = shortlist(result, 8)
    # 2 (answer) + 2 (frontier) + the 4 cheapest eligible: c47, c46, c45, c44
    assert [c["id"] for c in kept] == ["c00", "c01", "c10", "c11", "c44", "c45", "c46", "c47"]
    assert left_out == 42


def test_a_proposal_within_the_limit_is_whole() -> None:
    candidates = [_c(i, 1.0) for i in range(3)]
    assert shortlist({"candidates": candidates}, 8) == (candidates, 0)


def test_the_terminal_summary_lists_the_shortlist_and_counts_the_rest() -> None:
    fixture = FIXTURES / "example_scorecard.json"
    result = json.loads(fixture.read_text(encoding="utf-8"))
    # the example's 7 candidates copied 6 times under new ids: 42 rows, 12 beyond ROWS_MAX
    result["candidates"] = [{**c, "id": f"{c['id']}-{k}"} for k in range(6)
                            for c in result["candidates"]]
    result["recommendation"]["candidate"] += "-0"
    console = Console(record=True, width=200)
    print_summary(result, console)
    text = console.export_text()
    assert f"{42 - ROWS_MAX} more candidates" in text
    assert "ovhcloud-h100x4-fp8-0" in text  # the recommendation is listed
