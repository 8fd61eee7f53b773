"""Tables a reader scans list a shortlist of a large proposal (reports/frames.py `shortlist`):
the recommendation, the runner-up and the frontier first, then the cheapest eligible, then the
excluded, kept in the proposal's order; the CSV, the workbook and the JSON keep every one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from reports.frames import GLANCE_ROWS, shortlist
from reports.summary import print_summary
from tests.reports.conftest import fragment, typed

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
    kept, left_out = shortlist(fragment(result), 8)
    # 2 (answer) + 2 (frontier) + the 4 cheapest eligible: c47, c46, c45, c44
    assert [c.id for c in kept] == ["c00", "c01", "c10", "c11", "c44", "c45", "c46", "c47"]
    assert left_out == 42


def test_a_proposal_within_the_limit_is_whole() -> None:
    candidates = [_c(i, 1.0) for i in range(3)]
    result = fragment({"candidates": candidates})
    assert shortlist(result, 8) == (result.candidates, 0)


def test_the_terminal_summary_lists_the_shortlist_and_counts_the_rest() -> None:
    fixture = FIXTURES / "example_scorecard.json"
    result = json.loads(fixture.read_text(encoding="utf-8"))
    # the example's 10 candidates copied 6 times under new ids: 60 rows, 30 listed, 30 beyond
    result["candidates"] = [{**c, "id": f"{c['id']}-{k}"} for k in range(6)
                            for c in result["candidates"]]
    result["recommendation"]["candidate"] += "-0"
    out = io.StringIO()
    print_summary(typed(result), out)
    text = out.getvalue()
    assert GLANCE_ROWS == 30
    assert "30 of 60 candidates are listed, chosen in this priority: the recommendation" in text
    assert "ovhcloud-h100x4-fp8-0" in text  # the recommendation is listed


def test_the_appendix_tables_list_the_scorecard_s_shortlist(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from reports.html import report

    result = json.loads((FIXTURES / "example_scorecard.json").read_text(encoding="utf-8"))
    # the example's 10 candidates copied 6 times (60), listed 10 at most
    result["candidates"] = [{**c, "id": f"{c['id']}-{k}"} for k in range(6)
                            for c in result["candidates"]]
    result["sizing"] = [{**r, "candidate": f"{r['candidate']}-{k}"} for k in range(6)
                        for r in result["sizing"]]
    result["recommendation"]["candidate"] += "-0"
    monkeypatch.setattr(report, "SCORECARD_ROWS_MAX", 10)
    page = report.render_html(typed(result))
    kept = {c.id for c in shortlist(typed(result), 10)[0]}
    assert result["recommendation"]["candidate"] in kept and len(kept) == 10

    def ids_in(table_id: str) -> set[str]:
        body = page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
        return {c["id"] for c in result["candidates"] if f">{c['id']}<" in body}

    # each per-candidate table of the appendix holds the same 10 candidates, no other
    for table_id in ("cost-breakdown-table", "p-frontier", "sizing-table", "rubric-table",
                     "rubric-evidence-table", "evidence-table", "assumptions-table"):
        assert ids_in(table_id) == kept, table_id
    listed = page.split('<section id="candidates">', 1)[1].split("</section>", 1)[0]
    assert listed.count('<h3 id="candidate-') == 10
    # said in each of those six sections, the per-request one, the gates' and the full
    # scorecard's: 10 of 60 listed
    assert page.count("10 of 60 candidates are listed") == 9
    # and the summary, which lists 30 (GLANCE_ROWS), in the same sentence once
    assert page.count("30 of 60 candidates are listed, chosen in this priority: the "
                      "recommendation, the runner-up") == 1


def test_the_listed_frames_are_the_frames_of_the_listed_result() -> None:
    from polars.testing import assert_frame_equal

    from reports.frames import frames_of

    result = json.loads((FIXTURES / "example_scorecard.json").read_text(encoding="utf-8"))
    result["candidates"] = [{**c, "id": f"{c['id']}-{k}"} for k in range(6)
                            for c in result["candidates"]]
    # a spares' cost only for candidates left out of the 10 listed: their column goes
    result["sizing"] = [{**r, "candidate": f"{r['candidate']}-{k}",
                         "monthly_redundancy_cost_eur":
                         5.0 if k == 5 and r["candidate"].startswith("onprem") else 0.0}
                        for k in range(6) for r in result["sizing"]]
    full = typed(result)
    kept, _ = shortlist(full, 10)
    ids = {c.id for c in kept}
    listed = full.model_copy(update={
        "candidates": kept, "sizing": [r for r in full.sizing if r.candidate in ids]})
    assert "monthly_redundancy_cost_eur" in frames_of(full).sizing.columns
    only, direct = frames_of(full).only(ids), frames_of(listed)
    assert "monthly_redundancy_cost_eur" not in direct.sizing.columns
    for name in ("scorecard", "breakdown", "assumptions", "sources", "sizing", "pairwise",
                 "break_even"):
        assert_frame_equal(getattr(only, name), getattr(direct, name))


def test_the_tables_list_only_the_engine_s_shortlist() -> None:
    # 6 candidates, c02 and c04 left out by the engine's shortlist (shortlisted false); c05
    # from a result stored before the flag (absent): kept
    candidates = [{**_c(i, 10.0 - i), "shortlisted": i not in (2, 4)} for i in range(5)]
    candidates.append(_c(5, 1.0))
    result = fragment({"candidates": candidates,
                       "recommendation": {"candidate": "c00", "runner_up": "c01"}})
    kept, left_out = shortlist(result, 8)
    assert [c.id for c in kept] == ["c00", "c01", "c03", "c05"] and left_out == 2
    # within a limit of 3: the answer (c00, c01), then the cheapest left (c05, CPM 1)
    kept, left_out = shortlist(result, 3)
    assert [c.id for c in kept] == ["c00", "c01", "c05"] and left_out == 3
