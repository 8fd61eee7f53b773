"""`scorecard diff` answers the monthly rerun's question, "do we still buy X?": the candidate
recommended at A and at B (the same, or A -> B) and the CPM change of B's, in the terminal,
`--json` and `--html`. A real store as tests/pipeline/test_diff.py builds it: the bundled
reference data as 2026-09 and 2026-11, FR's December 2025 day-ahead mean set per vintage;
the proposal is tests/fixtures/reports/diff_proposal.toml (policy.choose: cpm).

Figures by hand (test_diff.py): FR's node draws 5.6 kW x PUE 1.3 at utilisation 1 and makes
4000 x 3600 / 1e6 = 14.4 Mtok/h, so each EUR/MWh of FR's price moves its CPM by
5.6 x 1.3 / 1000 / 14.4 = 0.000505556 EUR/Mtok; German and Scaleway CPMs do not move.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.compare import diff
from pipeline.engine.questions.diff import CAUSES, ELECTRICITY
from pipeline.ingest.bundled import load_bundled
from tests.pipeline.test_diff import PROPOSAL, STAMP, files_with_fr_price, parse

runner = CliRunner()
PER_EUR_PER_MWH = 5.6 * 1.3 / 1000 / 14.4


def _store(db: Path, price_b: float) -> duckdb.DuckDBPyConnection:
    con = store.connect(db)
    load_bundled(con, files_with_fr_price(58), "2026-09")
    load_bundled(con, files_with_fr_price(price_b), "2026-11")
    return con


def test_the_same_recommendation_with_its_cpm_change(db: Path) -> None:
    """FR 58 -> 87 EUR/MWh: onprem-fr stays the cheapest (its CPM +29 x 0.000505556 =
    +0.0146611 EUR/Mtok, all electricity price, below the gap to onprem-de)."""
    document = diff(_store(db, 87), "2026-09", "2026-11", parse(), str(PROPOSAL),
                    generated_at=STAMP, code_version="test", use_stored=False)
    r = document.recommendation
    assert r is not None and (r.a, r.b, r.changed) == ("onprem-fr", "onprem-fr", False)
    assert r.cpm_eur_per_mtok is not None
    assert r.cpm_eur_per_mtok.change == pytest.approx(29 * PER_EUR_PER_MWH, rel=1e-9)
    assert r.cpm_eur_per_mtok.by_cause[ELECTRICITY] == pytest.approx(29 * PER_EUR_PER_MWH,
                                                                     rel=1e-9)
    fr = next(c for c in document.candidates if c.id == "onprem-fr")
    assert fr.change is not None and r.cpm_eur_per_mtok == fr.change["cpm_eur_per_mtok"]


def test_a_changed_recommendation_is_said_a_to_b(db: Path) -> None:
    """FR 58 -> 120 EUR/MWh: FR's CPM rises by 62 x 0.000505556 = 0.0313444 EUR/Mtok, more
    than its lead over the German node (DE - FR at A, below), so B recommends onprem-de,
    whose CPM did not move."""
    document = diff(_store(db, 120), "2026-09", "2026-11", parse(), str(PROPOSAL),
                    generated_at=STAMP, code_version="test", use_stored=False)
    by_id = {c.id: c for c in document.candidates}
    fr, de = by_id["onprem-fr"].change, by_id["onprem-de"].change
    assert fr is not None and de is not None
    fr_cpm, de_cpm = fr["cpm_eur_per_mtok"], de["cpm_eur_per_mtok"]
    assert fr_cpm.change == pytest.approx(62 * PER_EUR_PER_MWH, rel=1e-9)
    assert fr_cpm.a is not None and de_cpm.a is not None
    assert fr_cpm.a < de_cpm.a < fr_cpm.a + 62 * PER_EUR_PER_MWH  # the lead is overtaken
    r = document.recommendation
    assert r is not None and (r.a, r.b, r.changed) == ("onprem-fr", "onprem-de", True)
    assert r.cpm_eur_per_mtok == de_cpm and de_cpm.change == 0.0


def test_a_new_candidate_recommended_in_every_output(db: Path, tmp_path: Path) -> None:
    """A's published scorecard (FR at 58) recommends onprem-fr; today's proposal adds
    onprem-fast, FR's node at 30,000 tokens/s (108 Mtok/h), recommended at B (FR at 87):
    its CPM is FR's at B over 108 instead of 14.4 Mtok/h, FR's / 7.5. It is new in B, so it
    has no CPM at A and no change."""
    _store(db, 87).close()
    stored = runner.invoke(app, ["run", str(PROPOSAL), "--vintage", "2026-09", "--db",
                                 str(db), "--json", "--publish"])
    assert stored.exit_code == 0, stored.output
    original = PROPOSAL.read_text(encoding="utf-8")
    fr = original[original.index("[[candidates]]\nid = \"onprem-fr\""):
                  original.index("[[candidates]]\nid = \"onprem-de\"")]
    fast = (fr.replace('id = "onprem-fr"', 'id = "onprem-fast"')
            .replace("tokens_per_s = 4000,", "tokens_per_s = 30000,"))
    assert fast != fr
    today = tmp_path / "today.toml"
    today.write_text(original + "\n" + fast, encoding="utf-8")
    args = ["diff", "2026-09", "2026-11", str(today), "--db", str(db)]

    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    by_id = {c["id"]: c for c in document["candidates"]}
    fr_b = by_id["onprem-fr"]["b"]["cpm_eur_per_mtok"]
    assert fr_b == pytest.approx(0.6385419, rel=1e-6)  # test_diff.py's FR at 87 EUR/MWh
    r = document["recommendation"]
    assert {k: r[k] for k in ("a", "b", "changed")} == {
        "a": "onprem-fr", "b": "onprem-fast", "changed": True}
    assert r["cpm_eur_per_mtok"]["b"] == pytest.approx(fr_b / 7.5, rel=1e-9)
    assert r["cpm_eur_per_mtok"]["a"] is None and r["cpm_eur_per_mtok"]["change"] is None
    assert r["cpm_eur_per_mtok"]["by_cause"] == dict.fromkeys(CAUSES)

    # 0.6385419 / 7.5 = 0.08514 to 4 significant digits
    said = ("Recommendation changed: onprem-fr in 2026-09 -> onprem-fast in 2026-11; "
            "onprem-fast's CPM 0.08514 EUR/Mtok (new in 2026-11)")
    page = tmp_path / "diff.html"
    result = runner.invoke(app, [*args, "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == said  # first: the question the rerun asks
    assert (f'<p id="diff-recommendation"><strong>{html.escape(said)}.</strong></p>'
            in page.read_text(encoding="utf-8"))
