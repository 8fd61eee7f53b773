"""p95 request lengths in `[demand]` (issue 16): the p95 request duration reported beside the
mean's (Little's law keeps the means) and the KV bound on an estimate's batch at p95 lengths."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.metrics import evaluate
from pipeline.inputs.evidence.throughput import kv_fit
from schemas.proposal import Demand

runner = CliRunner()


def test_p95_duration_beside_the_mean() -> None:
    frame = pl.DataFrame({"tokens_per_s": [1000.0], "operating_concurrency": [20.0],
                          "operating_ttft_s": [0.5], "operating_tpot_s": [0.02],
                          "request_output_tokens": [101.0],
                          "request_output_tokens_p95": [301.0],
                          "demand_requests_per_s": [30.0], "peak_factor": [2.0],
                          "headroom": [0.25]})
    row = evaluate(frame).row(0, named=True)
    # mean: 0.5 + 100 x 0.02 = 2.5 s; p95: 0.5 + 300 x 0.02 = 6.5 s
    assert row["request_duration_s"] == pytest.approx(2.5)
    assert row["request_duration_p95_s"] == pytest.approx(6.5)
    # Little's law keeps the mean: 20 / 2.5 = 8 requests/s; ceil(30 x 2 / (8 x 0.75)) = 10
    assert row["littles_law_instances"] == 10
    assert evaluate(frame.drop("request_output_tokens_p95")).row(0, named=True)[
        "request_duration_p95_s"] is None


def test_p95_needs_its_mean_and_is_not_below_it() -> None:
    with pytest.raises(ValueError, match="output_tokens_p95 needs output_tokens"):
        Demand(requests_per_s=1, prompt_tokens=10, output_tokens=20, output_tokens_p95=19)
    with pytest.raises(ValueError, match="prompt_tokens_p95 needs prompt_tokens"):
        Demand(tokens_per_day=1e9, prompt_tokens_p95=100)
    d = Demand(requests_per_s=1, prompt_tokens=10, output_tokens=20, prompt_tokens_p95=40,
               output_tokens_p95=60)
    assert d.model_dump()["output_tokens_p95"] == 60


def test_kv_fit() -> None:
    # seed 001: about 464,000 KV tokens / (800 + 250) tokens = 441.9 -> 441 sequences
    assert kv_fit(463_867, 800, 250) == 441


def _run(tmp_path: Path, db: Path, demand: str) -> dict:
    est = candidate(
        "est", gpu='"H100-SXM-80GB"', gpu_count="8",
        throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = 2048, '
                   'efficiency = 0.5, tensor_parallel = 1 } }')
    path = tmp_path / "p.toml"
    path.write_text(proposal("requests", demand, est))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


DEMAND = """
[demand]
requests_per_s = 20
prompt_tokens = 800
output_tokens = 250
prompt_tokens_p95 = {prompt}
output_tokens_p95 = 1250
"""


def test_estimate_with_p95_lengths(tmp_path: Path, db: Path) -> None:
    (c,) = _run(tmp_path, db, DEMAND.format(prompt=4000))["candidates"]
    s, detail = c["sizing"], c["detail"]
    # p95 duration = TTFT + (1,250 - 1) x TPOT; the mean's = TTFT + 249 x TPOT: their
    # difference is 1,000 TPOTs
    assert s["request_duration_p95_s"] - s["request_duration_s"] == pytest.approx(
        1000 * s["request_tpot_s"])
    assert detail["request_output_tokens_p95"] == 1250
    # Llama-3.1-8B BF16 on one H100 (TP1): KV = 2 x 32 layers x 8 KV heads x 128 x 2 B =
    # 131,072 B/token; free = 80 - 16.0605 weights - 8 reserve = 55.9395 GB
    # -> 55.9395e9 / 131,072 = 426,784 tokens; / (4,000 + 1,250) = 81.3 -> 81 sequences >= 16
    note = next(n for n in c["notes"] if n.startswith("KV bound at the p95 lengths"))
    assert "426,784 KV tokens" in note and "= 81 sequences" in note and "batch 16 fits" in note


def test_estimate_batch_beyond_the_p95_kv_bound(tmp_path: Path, db: Path) -> None:
    (c,) = _run(tmp_path, db, DEMAND.format(prompt=40000))["candidates"]
    # 426,784 / (40,000 + 1,250) = 10.35 -> 10 sequences, below batch 16
    note = next(n for n in c["notes"] if n.startswith("KV bound at the p95 lengths"))
    assert "= 10 sequences, below the estimate's batch 16" in note
