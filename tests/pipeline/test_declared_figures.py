"""Every figure the engine computes is declared in schemas/outputs.toml (issue 25): the metric
steps, every other column the engine adds to a candidate's row, the sizing figures. And a new
metric is its step and one declaration: a toy added that way, in a copy of the project, shows in
the JSON, the CSV, the workbook and the report's full scorecard with no other edit."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import get_args

import openpyxl
import pytest

from pipeline.engine.metrics import INPUTS, STEPS
from pipeline.engine.resolved import Market
from pipeline.engine.scorecard import Scorecard, compute
from pipeline.inputs import resolve
from schemas.outputs import OBJECTIVES, OUTPUTS
from schemas.proposal import Objective, parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "pipeline" / "example_proposal.toml"
#: the keys of a candidate's row the engine adds that are no figure: the policy's gate and
#: the Pareto ranking
#: the gate's status columns (compared_without: the objectives a candidate is ranked without)
#: and the shortlist's flag
STATUS = {"eligible", "exclusion_reason", "compared_without", "pareto_rank", "dominated_by",
          "shortlisted", "fallback"}
#: a mix's split (schemas/result.py MixSplit: its own declared fields), null for any other
SPLIT = {"mix"}


@pytest.fixture(scope="module")
def card(market: Market) -> Scorecard:
    proposal = parse(EXAMPLE.read_text(encoding="utf-8"), EXAMPLE)
    return compute(proposal, resolve(proposal, EXAMPLE, market), market, draws=200)


def test_every_metric_step_and_input_is_declared() -> None:
    assert [s.name for s in STEPS if s.name not in OUTPUTS] == []
    assert [name for name in INPUTS if name not in OUTPUTS] == []


def test_every_column_the_engine_computes_is_declared(card: Scorecard) -> None:
    computed = [c for c in card.table.columns if c not in card.resolved.static.columns]
    assert computed  # the steps, the time-matched figures, the status
    assert [c for c in computed if c not in OUTPUTS and c not in STATUS | SPLIT] == []
    assert card.sizing is not None
    assert [c for c in card.sizing.columns
            if c not in OUTPUTS
            and c not in ("candidate", "capacity", "binding", "payback_reason", "payback_versus")
            ] == []
    assert set(card.monte_carlo.percentiles["metric"]) <= set(OUTPUTS)


def test_the_objectives_are_the_ones_a_proposal_can_name() -> None:
    assert set(OBJECTIVES) == set(get_args(Objective))


#: a toy metric: energy per token while busy, as a step and its declaration
TOY = "busy_energy_j_per_token"
TOY_STEP = f"""
STEPS = (*STEPS, Step("{TOY}", "busy_power_w / tokens_per_s",
                      excel="{{busy_power_w}}/{{tokens_per_s}}"))
"""
TOY_FORMULA = f'FORMULAS["{TOY}"] = lambda c: c("busy_power_w") / c("tokens_per_s")\n\n\n'
TOY_DECLARATION = f"""
[{TOY}]
unit = "J/token"
title = "Busy energy"
meaning = "energy per output token while serving"
decimals = 2
shown_in = ["json", "csv", "scorecard", "summary"]
"""


def test_a_new_metric_is_its_step_and_one_declaration(tmp_path: Path) -> None:
    copy = tmp_path / "project"
    for folder in ("pipeline", "schemas", "reports", "sources"):
        shutil.copytree(ROOT / folder, copy / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy)
    with (copy / "schemas" / "steps.py").open("a", encoding="utf-8") as steps:
        steps.write(TOY_STEP)
    metrics = copy / "pipeline" / "engine" / "metrics.py"
    text = metrics.read_text(encoding="utf-8")
    assert text.count("\ndef paired(") == 1
    metrics.write_text(text.replace("\ndef paired(", "\n" + TOY_FORMULA + "def paired("),
                       encoding="utf-8")
    with (copy / "schemas" / "outputs.toml").open("a", encoding="utf-8") as declarations:
        declarations.write(TOY_DECLARATION)

    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", "--out", str(out),
         "--db", str(tmp_path / "store.duckdb")],
        cwd=copy, env={**os.environ, "PYTHONPATH": str(copy), "COLUMNS": "200"},
        capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "busy energy" in run.stdout  # the terminal summary

    document = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    candidate = document["candidates"][0]
    # a key of each candidate (a contract key), no longer under `detail`; its value the step's
    assert TOY in candidate and TOY not in candidate["detail"]
    power, goodput = candidate["detail"]["busy_power_w"], candidate["tokens_per_s"]
    assert candidate[TOY] == pytest.approx(power / goodput)
    assert TOY in [f["name"] for f in document["formulas"]]

    with (out / "scorecard.csv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table))
    assert float(rows[0][TOY]) == pytest.approx(candidate[TOY])

    book = openpyxl.load_workbook(out / "scorecard.xlsx")
    sheet = book["Scorecard"]
    headers = [cell.value for cell in sheet[1]]
    column = headers.index("Busy energy (J/token)") + 1
    formula = sheet.cell(2, column).value
    assert formula.startswith("=") and "/Inputs!" in formula  # computed from the Inputs sheet

    html = (out / "scorecard.html").read_text(encoding="utf-8")
    assert "Busy energy (J/token)" in html
    assert f"{candidate[TOY]:.2f}" in html
