"""Issue 26, item 2 (evidence identity): a benchmark file of another model is refused naming
the file, what it says and what the candidate says, unless it is declared a proxy (graded
`proxy`); names are compared through one alias table (pipeline/inputs/evidence/identity.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.inputs.evidence.identity import model_name, precision_name
from reports.frames import measured_text
from schemas.result import Result


def _vllm_result(path: Path, model_id: str) -> None:
    """A vLLM detailed result of `model_id`: 20 requests of 451 tokens one after the other
    (concurrency 1) over 10 s, TTFT 50 ms and 450 inter-token gaps of 1 ms each, so each takes
    0.5 s: every request meets the SLO, goodput 20 x 451 / 10 = 902 tokens/s, and Little's
    law holds (2 requests/s x 0.5 s = 1 in flight, the concurrency set)."""
    n, length = 20, 451
    itls = [0.001] * (length - 1)
    doc = {
        "date": "20261201-100000", "backend": "openai", "model_id": model_id,
        "num_prompts": n, "request_rate": "inf", "max_concurrency": 1, "duration": 10.0,
        "completed": n, "failed": 0, "total_output_tokens": n * length,
        "request_throughput": n / 10.0, "output_throughput": n * length / 10.0,
        "ttfts": [0.05] * n, "itls": [itls] * n, "output_lens": [length] * n,
        "input_lens": [100] * n, "errors": [""] * n, "start_times": [0.0] * n,
        "latencies": [0.05 + sum(itls)] * n,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")


def _run(tmp_path: Path, db: Path, model_id: str, throughput: str) -> Any:
    _vllm_result(tmp_path / "run.json", model_id)
    path = tmp_path / "p.toml"
    path.write_text(proposal("identity", candidate(
        "llama70b", model='"Llama-3.1-70B"', throughput=throughput)), encoding="utf-8")
    return CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])


def test_another_models_benchmark_is_refused_naming_both(tmp_path: Path, db: Path) -> None:
    result = _run(tmp_path, db, "meta-llama/Llama-3.2-3B-Instruct",
                  '{ evidence = "run.json" }')
    assert result.exit_code == 1, result.output
    assert ("candidates[0] (id 'llama70b').throughput.evidence: run.json is not this "
            "candidate's evidence: model: the file says 'meta-llama/Llama-3.2-3B-Instruct', "
            "the candidate 'Llama-3.1-70B'") in " ".join(result.stderr.split())


def test_the_same_model_under_its_hugging_face_name_is_measured(tmp_path: Path, db: Path
                                                                ) -> None:
    result = _run(tmp_path, db, "meta-llama/Meta-Llama-3.1-70B-Instruct",
                  '{ evidence = "run.json" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["tokens_per_s"] == pytest.approx(902.0) and c["tokens_per_s_grade"] == "measured"


def test_a_declared_proxy_is_graded_proxy_and_noted(tmp_path: Path, db: Path) -> None:
    result = _run(tmp_path, db, "meta-llama/Llama-3.2-3B-Instruct",
                  '{ evidence = "run.json", proxy = "no 70B run yet: the 3B shows the '
                  'engine settings" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["tokens_per_s"] == pytest.approx(902.0) and c["tokens_per_s_grade"] == "proxy"
    assert "proxy evidence (no 70B run yet: the 3B shows the engine settings): model: the " \
           "file says 'meta-llama/Llama-3.2-3B-Instruct', the candidate 'Llama-3.1-70B'" \
        in c["notes"]


def test_the_identity_check_is_recorded_for_the_evidence_table(tmp_path: Path, db: Path
                                                                ) -> None:
    result = _run(tmp_path, db, "meta-llama/Meta-Llama-3.1-70B-Instruct",
                  '{ evidence = "run.json" }')
    [c] = json.loads(result.stdout)["candidates"]
    assert c["detail"]["identity_check"] == (
        "held: model 'meta-llama/Meta-Llama-3.1-70B-Instruct' (the candidate's "
        "'Llama-3.1-70B')")
    result = _run(tmp_path, db, "meta-llama/Llama-3.2-3B-Instruct",
                  '{ evidence = "run.json", proxy = "no 70B run yet: the 3B shows the '
                  'engine settings" }')
    [c] = json.loads(result.stdout)["candidates"]
    assert c["detail"]["identity_check"] == (
        "differs, a declared proxy (no 70B run yet: the 3B shows the engine settings): model: "
        "the file says 'meta-llama/Llama-3.2-3B-Instruct', the candidate 'Llama-3.1-70B'")
    # the first screen's sentence names the proxy figures: the goodput and its operating
    # point (concurrency, TTFT, TPOT) of the 3B file; the other 9 of 13 inputs are the
    # declared price, utilisation, power, PUE and lifetime and the reference electricity,
    # grid, residual mix (market-based carbon) and embodied figures
    assert measured_text(Result.model_validate_json(result.stdout).candidates[0]) == (
        "0 of 13 inputs of llama70b are measured; proxy: tokens_per_s, operating_concurrency, "
        "operating_ttft_s, operating_tpot_s; the other 9 declared or market reference data")


def test_the_alias_table() -> None:
    same = ("Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct",
            "meta-llama/Meta-Llama-3.1-70B-Instruct", "neuralmagic/Llama-3.1-70B-Instruct-FP8",
            "llama_3.1_70b")
    assert {model_name(n) for n in same} == {"llama-3.1-70b"}
    assert model_name("meta-llama/Llama-3.2-3B-Instruct") == "llama-3.2-3b"
    assert [precision_name(p) for p in ("BF16", "bfloat16", "float16", "FP8", "auto")] == \
        ["bf16", "bf16", "fp16", "fp8", None]


def test_a_proposal_without_a_proxy_keeps_its_identity() -> None:
    # the sha256 computed by the code before `proxy` existed (main at 6061ead, run on this
    # very text): stored runs of a proposal with throughput evidence keep their identity
    from proposals import candidate, proposal

    from schemas.proposal import parse
    text = proposal("identity", candidate("llama70b", model='"Llama-3.1-70B"',
                                          throughput='{ evidence = "run.json" }'))
    assert parse(text, "p.toml").sha256() == (
        "ee2c34a446d427c82ce4541409284a2c155703668a07c35d08521a5b52d9638d")
    proxied = text.replace('{ evidence = "run.json" }',
                           '{ evidence = "run.json", proxy = "a smaller sibling" }')
    assert parse(proxied, "p.toml").sha256() != parse(text, "p.toml").sha256()


def test_a_declared_proxy_does_not_hide_a_grade_the_checks_lowered(tmp_path: Path, db: Path
                                                                   ) -> None:
    """Found in review: `proxy` replaced any grade, so a run graded estimated by Little's law
    came back `proxy` and was ranked under allow_estimates = false. The same file at a
    concurrency of 4: 2 requests/s x 0.5 s = 1 in flight against 4, -75 %: estimated, proxy
    or not."""
    _vllm_result(tmp_path / "run.json", "meta-llama/Llama-3.2-3B-Instruct")
    doc = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**doc, "max_concurrency": 4}))
    path = tmp_path / "p.toml"
    path.write_text(proposal("identity", candidate(
        "llama70b", model='"Llama-3.1-70B"',
        throughput='{ evidence = "run.json", proxy = "the 3B stands in" }')), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["tokens_per_s_grade"] == "estimated"
