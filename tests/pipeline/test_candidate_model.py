"""A candidate's `model` the reference models table does not know: said, with the closest known
names, as the candidate's note and on stderr, not refused (no figure reads it); a roofline
estimate's model, which a figure needs, is refused when unknown."""

from __future__ import annotations

import json
from pathlib import Path

from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()


def _run(tmp_path: Path, db: Path, *blocks: str) -> tuple[int, str, str]:
    path = tmp_path / "p.toml"
    path.write_text(proposal("models", *blocks))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    return result.exit_code, result.stdout, result.stderr


def test_a_mistyped_model_is_said_with_the_closest_known(tmp_path: Path, db: Path) -> None:
    code, out, err = _run(tmp_path, db, candidate("a", model='"Llama-3.1-70b-typo"'),
                          candidate("b", model='"Llama-3.1-70b-typo"'),
                          candidate("c", model='"meta-llama/Meta-Llama-3.1-70B-Instruct"'),
                          candidate("d", model='"Llama-3.1-70B"'))
    assert code == 0, err
    said = ("model 'Llama-3.1-70b-typo' is not in the reference models table (closest: "
            "Llama-3.1-70B, Llama-3.3-70B-Instruct, Llama-3.1-405B): a typo? It is shown as "
            "written and evidence files are checked against it")
    # once per model on stderr, naming its candidates; in each one's notes
    assert f"warning: a, b: {said}\n" in err and err.count("warning:") == 1
    notes = {c["id"]: c["notes"] for c in json.loads(out)["candidates"]}
    assert said in notes["a"] and said in notes["b"]
    # the alias table's names (an organisation prefix, `Meta-`, `-Instruct`) are known ones
    assert not any("models table" in n for n in notes["c"] + notes["d"])
    # the figures are those of the known model's twin: no figure reads a candidate's model
    doc = {c["id"]: c for c in json.loads(out)["candidates"]}
    assert doc["a"]["cpm_eur_per_mtok"] == doc["d"]["cpm_eur_per_mtok"]


def test_an_estimates_unknown_model_is_refused(tmp_path: Path, db: Path) -> None:
    code, _, err = _run(tmp_path, db, candidate(
        "a", throughput='{ estimate = { model = "Llama-3.1-70b-typo", batch = 16, '
                        'context = 2048, efficiency = 0.5 } }'))
    assert code == 1
    assert "throughput.estimate.model: unknown model 'Llama-3.1-70b-typo'; known: " in err
