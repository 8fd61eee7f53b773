"""Configurations kept apart: runs pooled only within one engine configuration, each with its
own sweep and knee, and the best under the SLO taken by goodput per GPU (or total goodput).

The files are vLLM `bench serve --save-detailed` results written here, so every figure is known
by construction: each run has 20 requests sent at t = 0, each with TTFT `ttft` s and L output
tokens 1 ms apart, over a 10 s window, so its token goodput is 20 x L / 10 = 2L tokens/s when
TTFT passes and 0 otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.bench import inspect, throughput_from_evidence
from pipeline.evidence.configuration import configuration, gpus, label
from pipeline.evidence.goodput import Slo
from sources.bench.registry import parse_bench

SLO = Slo(ttft_ms=500, tpot_ms=60, attainment=0.95)
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"


def vllm_result(path: Path, *, concurrency: int, tokens_per_s: float, ttft_s: float = 0.05,
                **metadata: object) -> None:
    """One vLLM detailed result whose goodput is `tokens_per_s` when TTFT passes."""
    n, duration = 20, 10.0
    length = round(tokens_per_s * duration / n)
    itls = [0.001] * (length - 1)
    latency = ttft_s + sum(itls)
    doc = {
        "date": "20261201-100000", "backend": "openai", "model_id": "m", "num_prompts": n,
        "request_rate": "inf", "max_concurrency": concurrency, "duration": duration,
        "completed": n, "failed": 0, "total_output_tokens": n * length,
        "request_throughput": n / duration, "output_throughput": n * length / duration,
        "ttfts": [ttft_s] * n, "itls": [itls] * n, "output_lens": [length] * n,
        "input_lens": [100] * n, "errors": [""] * n, "start_times": [0.0] * n,
        "latencies": [latency] * n, **metadata,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


# The 3 x 3 grid: goodput at concurrency c is 100 x c x w tokens/s, with w per cell below;
# every cell fails TTFT (0.6 s > 500 ms) at concurrency 4 except (16, 2048), which passes there.
#              mbt=2048  8192  32768
W = {16:      (1,        2,    3),
     64:      (2,        6,    4),
     256:     (3,        4,    5)}
TOKENS = (2048, 8192, 32768)


def grid(root: Path) -> Path:
    for seqs, row in W.items():
        for tokens, w in zip(TOKENS, row, strict=True):
            for c in (1, 2, 4):
                passes = c < 4 or (seqs, tokens) == (16, 2048)
                folder = root / (f"SERVE--max_num_seqs={seqs}-max_num_batched_tokens={tokens}"
                                 f"-BENCH--max_concurrency={c}-num_prompts=20")
                vllm_result(folder / "run=0.json", concurrency=c, tokens_per_s=100 * c * w,
                            ttft_s=0.05 if passes else 0.6, run_number=0, max_num_seqs=seqs)
    return root


def test_grid_best_cell_known_by_construction(tmp_path: Path) -> None:
    report = inspect([grid(tmp_path)], SLO, gpu_count=8)
    configs = report["configurations"]
    assert len(configs) == 9  # never pooled across settings
    by_label = {c["label"]: c for c in configs}
    # each configuration has its own sweep and knee: (16, 2048) passes at 4 (100 x 4 x 1 =
    # 400 tokens/s), the others knee at 2 (100 x 2 x w)
    low = by_label["max_num_seqs=16, max_num_batched_tokens=2048"]
    assert low["knee"] == 4 and low["tokens_per_s"] == pytest.approx(400.0)
    best = [c for c in configs if c["best"]]
    assert [c["label"] for c in best] == ["max_num_seqs=64, max_num_batched_tokens=8192"]
    # the best cell: w = 6 at the knee c = 2 -> 100 x 2 x 6 = 1,200 tokens/s, on 8 GPUs (the
    # candidate's count, none recorded) -> 150 tokens/s per GPU
    assert best[0]["knee"] == 2
    assert best[0]["tokens_per_s"] == pytest.approx(1200.0)
    assert best[0]["tokens_per_s_per_gpu"] == pytest.approx(150.0)
    assert best[0]["gpus"] is None and best[0]["gpus_assumed"] == 8
    assert report["sweep"]["knee_concurrency"] == 2  # the best configuration's sweep

    ev = throughput_from_evidence(tmp_path, SLO, gpu_count=8)
    assert ev.tokens_per_s == pytest.approx(1200.0)
    # pooled, the old way, the mean at the shared knee would have been far lower: the
    # configuration is named in the notes and on the evidence
    assert ev.configuration["max_num_seqs"] == "64"
    assert ev.configuration_label == "max_num_seqs=64, max_num_batched_tokens=8192"
    assert any("9 configurations in the evidence, kept apart" in n and
               "best under the SLO by goodput per gpu is max_num_seqs=64" in n
               for n in ev.notes)


def tp_pair(root: Path) -> Path:
    # TP4 x 1 (tensor_parallel_size in vLLM's --metadata keys): 1,000 tokens/s on 4 GPUs
    vllm_result(root / "tp4" / "r.json", concurrency=8, tokens_per_s=1000.0,
                tensor_parallel_size=4)
    # TP2 x 2 replicas (a sidecar the user wrote): 1,200 tokens/s on 2 x 2 = 4 GPUs
    vllm_result(root / "tp2x2" / "r.json", concurrency=8, tokens_per_s=1200.0)
    (root / "tp2x2" / "configuration.toml").write_text('tp = 2\ndp = 2\nengine = "vllm"\n')
    return root


def test_tp4_against_tp2x2_at_equal_gpus_per_gpu(tmp_path: Path) -> None:
    report = inspect([tp_pair(tmp_path)], SLO)
    configs = {c["label"]: c for c in report["configurations"]}
    tp4, tp2x2 = configs["tp=4"], configs["engine=vllm, tp=2, dp=2"]
    assert (tp4["gpus"], tp2x2["gpus"]) == (4, 4)
    # per GPU: 1,000 / 4 = 250 against 1,200 / 4 = 300 -> TP2 x 2
    assert tp4["tokens_per_s_per_gpu"] == pytest.approx(250.0)
    assert tp2x2["tokens_per_s_per_gpu"] == pytest.approx(300.0)
    assert tp2x2["best"] and not tp4["best"]


def test_per_gpu_and_total_goodput_choose_differently(tmp_path: Path) -> None:
    tp_pair(tmp_path)
    # TP2 x 1 on 2 GPUs: 700 tokens/s, 350 per GPU: best per GPU, not in total
    vllm_result(tmp_path / "tp2" / "r.json", concurrency=8, tokens_per_s=700.0,
                tensor_parallel_size=2)
    per_gpu = throughput_from_evidence(tmp_path, SLO, choose="goodput_per_gpu", gpu_count=4)
    assert per_gpu.configuration_label == "tp=2"
    assert per_gpu.tokens_per_s == pytest.approx(700.0)
    assert per_gpu.configuration_gpus == 2
    total = throughput_from_evidence(tmp_path, SLO, choose="goodput", gpu_count=4)
    assert total.configuration_label == "engine=vllm, tp=2, dp=2"
    assert total.tokens_per_s == pytest.approx(1200.0)
    assert total.choose == "goodput"
    with pytest.raises(ValueError, match="choose must be one of"):
        inspect([tmp_path], SLO, choose="fastest")


def test_runs_of_one_configuration_still_pool(tmp_path: Path) -> None:
    # two runs at one level of one configuration: their mean (1,000 + 1,400) / 2 = 1,200
    vllm_result(tmp_path / "a.json", concurrency=8, tokens_per_s=1000.0, max_num_seqs=64)
    vllm_result(tmp_path / "b.json", concurrency=8, tokens_per_s=1400.0, max_num_seqs=64)
    ev = throughput_from_evidence(tmp_path, SLO)
    assert len(ev.configurations) == 1
    assert ev.tokens_per_s == pytest.approx(1200.0)
    assert any("2 runs at one load level: their mean is used" in n for n in ev.notes)


def test_settings_from_folder_names_metadata_and_sidecar(tmp_path: Path) -> None:
    folder = tmp_path / "SERVE--max_num_seqs=4-enable_prefix_caching=True-BENCH--max_concurrency=2"
    vllm_result(folder / "run=0.json", concurrency=2, tokens_per_s=100.0, run_number=0,
                quantization="fp8")
    (tmp_path / "configuration.toml").write_text(
        'gpu_count = 8\n[files."run=*.json"]\nspeculative_config = "eagle"\n')
    (run,) = parse_bench((folder / "run=0.json").read_bytes(), path=str(folder / "run=0.json"))
    settings = configuration(run, tmp_path)
    # the BENCH-- part (the load) and run_number are not settings
    assert settings == {"model": "m", "precision": "fp8", "max_num_seqs": "4",
                        "prefix_caching": "true", "gpu_count": "8", "spec_decoding": "eagle"}
    assert gpus(settings) == 8
    assert label(settings) == ("precision=fp8, gpu_count=8, max_num_seqs=4, "
                               "spec_decoding=eagle, prefix_caching=true")
    # the sidecar is not read as a benchmark file
    assert len(inspect([tmp_path], SLO)["runs"]) == 1


def test_bad_sidecar_names_the_file(tmp_path: Path) -> None:
    vllm_result(tmp_path / "r.json", concurrency=2, tokens_per_s=100.0)
    (tmp_path / "configuration.toml").write_text("tp = [1, 2]\n")
    with pytest.raises(Exception, match=r"configuration\.toml.*'tp'"):
        inspect([tmp_path], SLO)


def test_inspect_prints_the_configurations_and_marks_the_best(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["evidence", "inspect", str(tp_pair(tmp_path)),
                                      "--ttft-ms", "500", "--tpot-ms", "60"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "configurations (2, runs pooled only within one; best under the SLO by " \
           "goodput_per_gpu)" in out
    best = [line for line in out.splitlines() if line.strip().startswith("*")]
    assert len(best) == 1 and "engine=vllm, tp=2, dp=2" in best[0] and "300.0" in best[0]


@pytest.mark.skipif(not (SAMPLES / "vllm_sweep").exists(), reason="../shared/samples absent")
def test_real_vllm_bench_sweep_folder_keeps_its_two_settings_apart() -> None:
    # er0080/vllm-benchmarking's `vllm bench sweep serve` output: max_num_seqs 4 and 8, two
    # runs each at max_concurrency 2 (summary.json beside them is the same runs, left out)
    root = SAMPLES / "vllm_sweep" / "er0080_vllm_0.25.1_sweep_serve"
    report = inspect([root], Slo(ttft_ms=1000))
    configs = {c["label"]: c for c in report["configurations"]}
    assert set(configs) == {"max_num_seqs=4", "max_num_seqs=8"}
    assert [len(c["runs"]) for c in configs.values()] == [2, 2]
    assert all(r["configuration"]["model"] == "facebook/opt-125m" for r in report["runs"])


def test_candidate_takes_the_best_configuration_and_says_which(tmp_path: Path, db: Path
                                                               ) -> None:
    tp_pair(tmp_path / "bench")
    vllm_result(tmp_path / "bench" / "tp2" / "r.json", concurrency=8, tokens_per_s=700.0,
                tensor_parallel_size=2)
    proposal = tmp_path / "p.toml"
    proposal.write_text('[proposal]\nname = "grid"\n[slo]\nttft_ms = 500\ntpot_ms = 60\n'
                        + GRID_CANDIDATE.format(id="per-gpu", gpus=4,
                                                throughput='{ evidence = "bench" }')
                        + GRID_CANDIDATE.format(
                            id="total", gpus=4,
                            throughput='{ evidence = "bench", choose = "goodput" }'))
    result = CliRunner().invoke(app, ["run", str(proposal), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    per_gpu, total = json.loads(result.stdout)["candidates"]
    # per GPU (default): TP2 x 1 at 700 / 2 = 350 beats TP2 x 2 (300) and TP4 (250)
    assert per_gpu["tokens_per_s"] == pytest.approx(700.0)
    assert "configuration tp=2 (best of 3 by goodput_per_gpu)" in \
        per_gpu["detail"]["tokens_per_s_source"]
    assert any("ran on 2 GPU(s), the candidate declares gpu_count 4" in n
               for n in per_gpu["notes"])
    # total goodput: TP2 x 2 at 1,200 tokens/s
    assert total["tokens_per_s"] == pytest.approx(1200.0)
    assert any("best under the SLO by goodput is engine=vllm, tp=2, dp=2" in n
               for n in total["notes"])


GRID_CANDIDATE = """
[[candidates]]
id = "{id}"
label = "lab"
deployment = "on_prem"
provider = "self"
zone = "FR"
gpu = "H100-SXM-80GB"
gpu_count = {gpus}
throughput = {throughput}
power = {{ watts = 2800, boundary = "gpu_board", source = "rated" }}
cost = {{ eur_per_hour = 10.0, source = "quote" }}
"""


def _run_json(tmp_path: Path, db: Path, *candidates: str) -> list[dict]:
    proposal = tmp_path / "p.toml"
    proposal.write_text('[proposal]\nname = "surface"\n[slo]\nttft_ms = 500\ntpot_ms = 60\n'
                        + "".join(candidates))
    result = CliRunner().invoke(app, ["run", str(proposal), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["candidates"]


def test_result_json_holds_the_grid_surface(tmp_path: Path, db: Path) -> None:
    grid(tmp_path / "grid")
    grid_c, declared = _run_json(
        tmp_path, db,
        GRID_CANDIDATE.format(id="grid", gpus=8, throughput='{ evidence = "grid" }'),
        GRID_CANDIDATE.format(id="declared", gpus=8,
                              throughput='{ tokens_per_s = 900, source = "vendor" }'))
    surface = grid_c["evidence_configurations"]
    assert len(surface) == 9
    cells = {(c["configuration"]["max_num_seqs"], c["configuration"]["max_num_batched_tokens"]):
             c for c in surface}
    # by construction (W above): goodput at the knee = 100 x knee x w; every cell knees at
    # concurrency 2 except (16, 2048), which passes at 4: 100 x 4 x 1 = 400 tokens/s.
    # (64, 8192): 100 x 2 x 6 = 1,200 tokens/s, on 8 GPUs (the candidate's gpu_count, none
    # recorded) 150 per GPU; (256, 32768): 100 x 2 x 5 = 1,000, 125 per GPU
    best = cells[("64", "8192")]
    assert best == {
        "configuration": {"model": "m", "max_num_seqs": "64", "max_num_batched_tokens": "8192"},
        "label": "max_num_seqs=64, max_num_batched_tokens=8192", "gpus": None,
        "goodput_tokens_per_s": pytest.approx(1200.0),
        "goodput_per_gpu_tokens_per_s": pytest.approx(150.0),
        "knee_concurrency": 2.0, "passes": True, "chosen": True, "runs": 3}
    assert cells[("16", "2048")]["knee_concurrency"] == 4.0
    assert cells[("16", "2048")]["goodput_tokens_per_s"] == pytest.approx(400.0)
    assert cells[("256", "32768")]["goodput_tokens_per_s"] == pytest.approx(1000.0)
    assert [c["chosen"] for c in surface].count(True) == 1
    assert all(c["passes"] for c in surface)
    assert grid_c["evidence_configuration"] == best["configuration"]
    assert grid_c["tokens_per_s"] == pytest.approx(1200.0)
    # a candidate without evidence: an empty surface, no configuration
    assert declared["evidence_configurations"] == []
    assert declared["evidence_configuration"] is None
    # the surface is a contract key, not repeated under detail
    assert "evidence_configurations" not in grid_c["detail"]


def test_result_json_compares_tp4_and_tp2x2_per_gpu(tmp_path: Path, db: Path) -> None:
    tp_pair(tmp_path / "bench")
    (c,) = _run_json(tmp_path, db, GRID_CANDIDATE.format(
        id="tp", gpus=4, throughput='{ evidence = "bench" }'))
    surface = {s["label"]: s for s in c["evidence_configurations"]}
    tp4, tp2x2 = surface["tp=4"], surface["engine=vllm, tp=2, dp=2"]
    # equal GPU count (4 x 1 = 2 x 2 = 4): 1,000 / 4 = 250 against 1,200 / 4 = 300 per GPU;
    # one run each (no sweep, no knee)
    assert (tp4["gpus"], tp2x2["gpus"]) == (4, 4)
    assert tp4["goodput_per_gpu_tokens_per_s"] == pytest.approx(250.0)
    assert tp2x2["goodput_per_gpu_tokens_per_s"] == pytest.approx(300.0)
    assert (tp4["chosen"], tp2x2["chosen"]) == (False, True)
    assert (tp4["runs"], tp4["knee_concurrency"]) == (1, None)
    assert c["evidence_configuration"] == {"model": "m", "engine": "vllm", "tp": "2",
                                           "dp": "2"}
