"""The bundled example's planned figures as docs/decision.md quotes them: the engine's (`scorecard
run --json` on the bundled data, which plans 48 months) and worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.fleet import plan

DECISION = Path(__file__).resolve().parents[2] / "docs" / "decision.md"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict:
    db = tmp_path_factory.mktemp("example") / "store.duckdb"
    result = CliRunner().invoke(app, ["run", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_fifth_fr_h200_node_is_needed_in_month_3(example: dict) -> None:
    # Month m's demand is 500 Mtok/day x 1.3^((m - 1) / 12); 4 nodes carry a peak (x 2) of
    # 4 x 4,000 x (1 - 0.25) = 12,000 tokens/s, i.e. 518.4 Mtok/day. Month 2: 500 x
    # 1.3^(1/12) = 511.07 (4 nodes); month 3: 500 x 1.3^(2/12) = 522.35 Mtok/day, a peak of
    # 12,091 tokens/s: a fifth node. Month 3 at 5 nodes: utilisation 522.35e6 / 86,400 /
    # 20,000 = 0.302285, 800 + 4,800 x 0.302285 = 2,250.97 W a node, x 1.3 PUE x 0.10849
    # EUR/kWh = 0.317468 EUR/h; with capital 10.143086 + maintenance 2.342466 + staff
    # 1.712329 + hosting 1.534247 EUR/h a node costs 16.049595 EUR/h, x 5 x 730 h = 58,581.0
    # EUR for 522.35 x 365 / 12 = 15,888.1 Mtok: 3.6871 EUR/Mtok (month 4, more tokens on the
    # same 5 nodes: 3.6084)
    h200 = next(c for c in example["candidates"] if c["id"] == "onprem-fr-h200-fp8")
    given: dict = {}
    for i in reversed(h200["inputs"]):  # each input's first entry, its mode
        given[i["input"]] = math.nan if i["mode"] is None else i["mode"]
    given |= {"cost_model": h200["detail"]["cost_model"], "capacity": h200["capacity"]}
    path = plan.Path(months=example["plan"]["months"], rate_per_year=0.05, rate_source="test")
    month = plan.months(given, path)
    nodes = month["billed_instances"].ravel()
    cpm = (month["monthly_cost_eur"] / month["mtok"]).ravel()
    assert list(nodes[:4]) == [4.0, 4.0, 5.0, 5.0]
    assert cpm[0] == pytest.approx(3.0892, abs=5e-5)
    assert cpm[2] == pytest.approx(3.6871, abs=5e-5)
    assert cpm[3] == pytest.approx(3.6084, abs=5e-5)
    assert "3.69 in month 3, once a fifth is needed" in _flat(DECISION.read_text("utf-8"))


def test_the_recommendation_paragraph_quotes_the_planned_run(example: dict) -> None:
    # the paragraph's figures are the example without its plan (test_one_answer_at_the_demand
    # drops its [horizon]); what `scorecard run --json` gives (the plan's) it quotes beside
    rec = example["recommendation"]
    hybrid = next(c for c in example["candidates"] if c["id"] == "hybrid-fr-h200-api")
    capex = next(w for w in rec["what_would_change_it"] if w["key"] == "tco.hgx-h200.capex")
    assert (rec["candidate"], rec["runner_up"]) == ("ovhcloud-h100x4-fp8", "hybrid-fr-h200-api")
    assert f"{hybrid['cpm_eur_per_mtok']:.4f}" == "2.9072"
    assert hybrid["mix"]["base_instances"] == 5
    assert f"{capex['threshold']:,.0f}" == "195,124"
    assert capex["text"].startswith("onprem-fr-h200-fp8 becomes the choice")
    text = _flat(DECISION.read_text("utf-8"))
    start = text.index("Bundled example without its plan")
    paragraph = text[start:text.index("What would change it", start)]
    assert "2.9072 EUR/Mtok at 5 nodes" in paragraph and "195,124 EUR" in paragraph
    assert "FR H200 alone is the choice" in paragraph
