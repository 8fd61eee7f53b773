"""Issue 26, item 2 (evidence identity): a benchmark file of another model is refused naming
the file, what it says and what the candidate says, unless it is declared a proxy (graded
`proxy`); names are compared through one alias table (pipeline/inputs/evidence/identity.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from proposals import candidate, proposal
from samples import sample
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.inputs.evidence.identity import (
    accelerator_ids,
    model_name,
    precision_name,
    same_accelerator,
)
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
        "'Llama-3.1-70B'); not checked: accelerator and GPU count (the file records none)")
    result = _run(tmp_path, db, "meta-llama/Llama-3.2-3B-Instruct",
                  '{ evidence = "run.json", proxy = "no 70B run yet: the 3B shows the '
                  'engine settings" }')
    [c] = json.loads(result.stdout)["candidates"]
    assert c["detail"]["identity_check"] == (
        "differs, a declared proxy (no 70B run yet: the 3B shows the engine settings): model: "
        "the file says 'meta-llama/Llama-3.2-3B-Instruct', the candidate 'Llama-3.1-70B'")
    # the first screen's sentence names the proxy figures: the goodput and its operating
    # point (concurrency, TTFT, TPOT) of the 3B file; the other 8 of 12 inputs are the
    # declared price, utilisation, power, PUE and lifetime and the reference electricity,
    # grid and embodied figures
    assert measured_text(Result.model_validate_json(result.stdout).candidates[0]) == (
        "0 of 12 inputs of llama70b are measured; proxy: tokens_per_s, operating_concurrency, "
        "operating_ttft_s, operating_tpot_s; the other 8 declared or market reference data")


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


# --- accelerator type and count (issue 26, item 2) ------------------------------------------

def _run_on(tmp_path: Path, db: Path, metadata: dict[str, Any], throughput: str,
            model_id: str = "meta-llama/Meta-Llama-3.1-70B-Instruct") -> Any:
    """The 902 tokens/s file above with `vllm bench serve --metadata` keys (written at the
    top level of the result, beside vLLM's own), for the Llama-3.1-70B candidate on 8 x
    H100-SXM-80GB of tests/proposals.py."""
    _vllm_result(tmp_path / "run.json", model_id)
    doc = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps({**doc, **metadata}))
    path = tmp_path / "p.toml"
    path.write_text(proposal("identity", candidate(
        "llama70b", model='"Llama-3.1-70B"', throughput=throughput)), encoding="utf-8")
    return CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])


def test_a_benchmark_on_another_gpu_is_refused_naming_both(tmp_path: Path, db: Path) -> None:
    """The issue's case: the 70B candidate on 8 x H100 given a file measured on 4 x L40S."""
    result = _run_on(tmp_path, db, {"gpu_name": "NVIDIA L40S", "num_gpus": 4},
                     '{ evidence = "run.json" }')
    assert result.exit_code == 1, result.output
    assert ("throughput.evidence: run.json is not this candidate's evidence: accelerator: the "
            "file says 'NVIDIA L40S', the candidate H100-SXM-80GB (if it stands in on "
            "purpose, declare throughput = { evidence = ..., proxy = \"why\" })"
            ) in " ".join(result.stderr.split())


def test_a_benchmark_on_another_gpu_declared_a_proxy_is_graded_proxy(tmp_path: Path, db: Path
                                                                      ) -> None:
    result = _run_on(tmp_path, db, {"gpu_name": "NVIDIA L40S", "num_gpus": 4},
                     '{ evidence = "run.json", proxy = "no H100 run yet: the L40S run shows '
                     'the engine settings" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    # 20 requests x 451 tokens / 10 s, as measured (not scaled to the candidate's GPUs)
    assert c["tokens_per_s"] == pytest.approx(902.0) and c["tokens_per_s_grade"] == "proxy"
    assert c["detail"]["identity_check"] == (
        "differs, a declared proxy (no H100 run yet: the L40S run shows the engine settings): "
        "accelerator: the file says 'NVIDIA L40S', the candidate H100-SXM-80GB")


def test_the_candidates_gpu_under_its_marketing_name_is_measured(tmp_path: Path, db: Path
                                                                 ) -> None:
    # nvidia-smi's and DCGM's name of the SXM5 H100, on the candidate's 8 GPUs
    result = _run_on(tmp_path, db, {"gpu_name": "NVIDIA H100 80GB HBM3", "num_gpus": 8},
                     '{ evidence = "run.json" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["tokens_per_s"] == pytest.approx(902.0) and c["tokens_per_s_grade"] == "measured"
    assert c["detail"]["identity_check"] == (
        "held: model 'meta-llama/Meta-Llama-3.1-70B-Instruct' (the candidate's "
        "'Llama-3.1-70B'), accelerator 'NVIDIA H100 80GB HBM3' (the candidate's "
        "H100-SXM-80GB), GPU count 8 (the candidate's 8)")


def test_a_benchmark_on_more_gpus_than_the_candidate_has_is_refused(tmp_path: Path, db: Path
                                                                    ) -> None:
    """16 GPUs' goodput cannot be had on the candidate's 8; fewer is used as measured (below)."""
    result = _run_on(tmp_path, db, {"gpu_name": "H100 SXM5", "num_gpus": 16},
                     '{ evidence = "run.json" }')
    assert result.exit_code == 1, result.output
    assert "GPU count: the file says 16, the candidate 8" in " ".join(result.stderr.split())
    result = _run_on(tmp_path, db, {"gpu_name": "H100 SXM5", "num_gpus": 4},
                     '{ evidence = "run.json" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["tokens_per_s_grade"] == "measured"
    assert "the configuration chosen ran on 4 GPU(s), the candidate declares gpu_count 8: its " \
           "goodput is used as measured, not scaled" in c["notes"]


def test_the_gpu_alias_table() -> None:
    table = ["H100-SXM-80GB", "H100-PCIe-80GB", "H100-NVL-94GB", "H200-SXM-141GB",
             "B200-SXM-180GB", "L40S-48GB", "L4-24GB", "A100-SXM-80GB", "A100-PCIe-80GB",
             "A100-SXM-40GB", "MI355X-288GB"]
    exact = {"NVIDIA H100 80GB HBM3": "H100-SXM-80GB", "H100 SXM5": "H100-SXM-80GB",
             "h100_sxm5": "H100-SXM-80GB", "NVIDIA H100 PCIe": "H100-PCIe-80GB",
             "NVIDIA H100 NVL": "H100-NVL-94GB", "NVIDIA L40S": "L40S-48GB",
             "NVIDIA L4": "L4-24GB", "l40s-48gb": "L40S-48GB", "b200": "B200-SXM-180GB",
             "mi355x": "MI355X-288GB", "AMD Instinct MI355X": "MI355X-288GB",
             "NVIDIA A100-SXM4-80GB": "A100-SXM-80GB", "NVIDIA A100-SXM4-40GB": "A100-SXM-40GB",
             "NVIDIA A100 80GB PCIe": "A100-PCIe-80GB"}
    for name, gpu in exact.items():
        assert accelerator_ids(name, table) == (frozenset({gpu}), True), name
    # a family alone is any of its ids; a longer name the table does not know is none
    assert accelerator_ids("8xH100", table) == (
        frozenset({"H100-SXM-80GB", "H100-PCIe-80GB", "H100-NVL-94GB"}), False)
    assert accelerator_ids("NVIDIA H200 NVL", table) == (frozenset(), False)
    assert accelerator_ids("NVIDIA RTX 6000 Ada Generation", table) == (frozenset(), False)
    # L4 is not L40S; a GPU outside the table is told by its words
    assert not same_accelerator("NVIDIA L40S", "L4-24GB", table)[0]
    assert same_accelerator("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000",
                            table)[0]
    assert not same_accelerator("NVIDIA RTX 6000 Ada Generation", "RTX-PRO-6000", table)[0]


def _real_proposal(tmp_path: Path, evidence: Path, gpu: str, throughput: str = "",
                   model: str = '"DeepSeek-R1-0528"', precision: str = '"fp4"') -> Path:
    (tmp_path / "ev").mkdir()
    shutil.copy(evidence, tmp_path / "ev" / evidence.name)
    path = tmp_path / "p.toml"
    path.write_text(proposal("identity", candidate(
        "c", model=model, precision=precision, gpu=f'"{gpu}"',
        throughput=throughput or '{ evidence = "ev" }')), encoding="utf-8")
    return path


INFERENCEX_B200 = ("inferencex/agg_dsr1_tp8_users1_offloadoff_fp4_vllm_tp8-ep8-dpafalse_"
                   "disagg-false_spec-none_conc1_b200-nb_0.json")


def test_a_real_inferencex_row_on_b200_is_not_an_h100_candidates(tmp_path: Path, db: Path
                                                                  ) -> None:
    """SemiAnalysis InferenceX: DeepSeek-R1-0528 in fp4 on `hw` b200 at tp 8 (8 GPUs), the
    candidate the same model and precision on 8 x H100."""
    path = _real_proposal(tmp_path, sample(INFERENCEX_B200), "H100-SXM-80GB")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert ("accelerator: the file says 'b200', the candidate H100-SXM-80GB"
            in " ".join(result.stderr.split()))


def test_a_real_inferencex_row_on_b200_is_a_b200_candidates(tmp_path: Path, db: Path) -> None:
    path = _real_proposal(tmp_path, sample(INFERENCEX_B200), "B200-SXM-180GB")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["detail"]["identity_check"] == (
        "held: model 'nvidia/DeepSeek-R1-0528-FP4' (the candidate's 'DeepSeek-R1-0528'), "
        "precision fp4 (the candidate's fp4), accelerator 'b200' (the candidate's "
        "B200-SXM-180GB), GPU count 8 (the candidate's 8)")


def test_a_real_trtllm_bench_report_names_its_gpu(tmp_path: Path, db: Path) -> None:
    """trtllm-bench 1.2.0 `machine.name`: Qwen2.5-0.5B in bf16 on one RTX PRO 6000 Blackwell;
    a candidate of that model on 8 x H100 is told the GPU differs (the count, 1, is fewer and
    used as measured)."""
    report = sample("trtllm_bench/trtllm-bench_1.2.0_latency_qwen2.5-0.5b_rtx-pro-6000_bf16_"
                    "in1024_out40.json")
    path = _real_proposal(tmp_path, report, "H100-SXM-80GB", model='"Qwen2.5-0.5B"',
                          precision='"bf16"')
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert ("not this candidate's evidence: accelerator: the file says 'NVIDIA RTX PRO 6000 "
            "Blackwell Server Edition' (a name the alias table does not know), the candidate "
            "H100-SXM-80GB") in " ".join(result.stderr.split())
