"""The published JSON Schemas: `scorecard schema proposal|result|diff` prints what the models say,
the copies under docs/ are the same, the `init` example and a real run validate."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.scorecard import CONTRACT_KEYS
from pipeline.workspace import dumps
from schemas.result import CandidateResult, Result

jsonschema = pytest.importorskip("jsonschema")
runner = CliRunner()
DOCS = Path(__file__).parents[2] / "docs"


def _printed(kind: str) -> dict:
    result = runner.invoke(app, ["schema", kind])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("kind", ["proposal", "result", "diff"])
def test_the_committed_schema_is_the_models(kind: str) -> None:
    printed = _printed(kind)
    committed = json.loads((DOCS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    assert committed == printed, (f"docs/{kind}.schema.json is stale: "
                                  f"uv run scorecard schema {kind} > docs/{kind}.schema.json")
    jsonschema.Draft202012Validator.check_schema(printed)


def test_init_writes_a_schema_line_and_the_example_validates(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "proposal.toml").read_text(encoding="utf-8")
    assert text.startswith("#:schema ./proposal.schema.json\n")
    schema = json.loads((tmp_path / "proposal.schema.json").read_text(encoding="utf-8"))
    assert schema == _printed("proposal")
    validator = jsonschema.Draft202012Validator(schema)
    example = tomllib.loads(text)
    assert list(validator.iter_errors(example)) == []
    # and the schema refuses what the parser refuses: an unknown key, a wrong choice
    example["policy"]["max_cost"] = 3
    example["candidates"][0]["deployment"] = "rented"
    messages = sorted(e.message for e in validator.iter_errors(example))
    assert any("'max_cost' was unexpected" in m for m in messages), messages
    assert any("'rented' is not one of" in m for m in messages), messages


def test_init_refuses_to_overwrite_with_an_error_line(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    again = runner.invoke(app, ["init", str(tmp_path)])
    assert again.exit_code == 1
    assert again.stderr.startswith("error: ") and "exists" in again.stderr


def test_a_run_validates_against_the_result_schema(db: Path) -> None:
    run = runner.invoke(app, ["run", "--db", str(db), "--json"])
    assert run.exit_code == 0, run.output
    document = json.loads(run.stdout)
    validator = jsonschema.Draft202012Validator(_printed("result"))
    assert [e.message for e in validator.iter_errors(document)] == []
    # the schema names every contract key, and every top-level key the run writes
    assert set(CONTRACT_KEYS) <= set(CandidateResult.model_fields)
    assert set(document) == set(Result.model_fields)
    document["candidates"][0].pop("cpm_eur_per_mtok")
    assert any("'cpm_eur_per_mtok' is a required property" in e.message
               for e in validator.iter_errors(document))
    # the configuration surface (issue 13): each entry has the shape the charts draw from
    assert "evidence_configurations" in document["candidates"][1]
    document["candidates"][1]["evidence_configurations"] = [{"label": "tp=2", "runs": 1}]
    messages = [e.message for e in validator.iter_errors(document)]
    assert any("'goodput_per_gpu_tokens_per_s' is a required property" in m
               for m in messages), messages


@pytest.mark.parametrize("name", ["example_scorecard.json", "result_full.json"])
def test_a_result_read_back_writes_the_same_document(name: str) -> None:
    # integers stay integers, a key absent stays absent, nulls are kept: a stored run (and a
    # hand-made result without the later keys) reads into the model and writes out unchanged
    text = (Path(__file__).parents[1] / "fixtures" / "reports" / name).read_text("utf-8")
    document = Result.model_validate_json(text).document()
    assert dumps(document) == dumps(json.loads(text))
