"""The serving form of a proposal's estimate (issue 28, item 1): goodput, TTFT and TPOT at a
load from the same serving model as `scorecard estimate --sweep` (mixed prefill/decode steps
under the chunk budget, the prefill queue of a batched server, the KV cap), the SLO checked
on the estimated TTFT and TPOT, and the same figures from the CLI and a proposal.

Seed 004 (../shared/seeds/004_*.txt): Qwen2.5-7B BF16 on an A40 under vLLM, 8,192-token
prompts, 128 output tokens, a 2,048-token chunk budget, the rates calibrated on the seed's
chart 1a run at concurrency 1 (TPOT 28 ms at 512 cached tokens, TTFT 88 ms for a 512-token
prompt)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()

CALIBRATION = ('calibration = { tpot_ms = 28, context = 512, ttft_ms = 88, prompt_tokens = 512, '
               'source = "seed 004 chart 1a, concurrency 1" }')


def _a40(cid: str, concurrency: int, extra: str = "") -> str:
    return candidate(
        cid, gpu='"A40-48GB"', gpu_count="1",
        throughput=('{ estimate = { model = "Qwen2.5-7B", precision = "bf16", concurrency = '
                    f'{concurrency}, prompt_tokens = 8192, output_tokens = 128, '
                    f'chunk_tokens = 2048, {CALIBRATION}{extra} }} }}'),
        power='{ watts = 300, boundary = "gpu_board", source = "TDP" }',
        cost='{ eur_per_hour = 1.0, source = "quote" }')


def _run(tmp_path: Path, db: Path, *blocks: str, slo: str = "") -> dict:
    path = tmp_path / "p.toml"
    text = proposal("serving", *blocks)
    if slo:
        text = text.replace("ttft_ms = 1500\n", slo)
    path.write_text(text)
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


LEVELS = (1, 2, 4, 8, 16, 32)


def test_seed_004_in_a_proposal_follows_the_mixed_step_table(tmp_path: Path, db: Path) -> None:
    got = _run(tmp_path, db, *(_a40(f"c{c}", c) for c in LEVELS),
               slo="ttft_ms = 10000\n")
    # Calibrated rates: bandwidth = (14.14 GB of weights read + 512 x 57,344 B of KV + one
    # token's K/V) / 28 ms = 506.1 GB/s; compute = 6.74e12 FLOP / 88 ms = 76.6 TFLOP/s.
    # Mixed step t_mix = 1.204e14 / 4 chunks / 76.6e12 = 0.393 s; decode step at C = 32 =
    # (14.14 + 32 x 0.4698) GB / 506.1 = 57.6 ms; shared = min(4 x 31, 127) = 124 steps:
    # TPOT = (124 x 0.393 + 3 x 0.0576) / 127 = 0.385 s -> 32 / 0.385 = 83.1 tokens/s.
    # Seed 004's mixed-step table: 34.6 / 48.4 / 60.7 / 70.0 / 76.8 / 83.1.
    table = {1: 34.6, 2: 48.4, 4: 60.7, 8: 70.0, 16: 76.8, 32: 83.1}
    for c in LEVELS:
        assert got[f"c{c}"]["tokens_per_s"] == pytest.approx(table[c], abs=0.1), c
        assert got[f"c{c}"]["tokens_per_s_grade"] == "estimated"
    # not the warm-decode roofline's 555 tokens/s at C = 32 (issue 28)
    assert got["c32"]["tokens_per_s"] < 100
    # TTFT rises with concurrency (seed 004 measured 1.25 -> 3.14 s): the prefill queue.
    # C = 1: the bare prefill, max(1.204e14 / 76.6e12, weights read) = 1.573 s
    ttft = [got[f"c{c}"]["detail"]["operating_ttft_s"] for c in LEVELS]
    assert ttft[0] == pytest.approx(1.573, abs=0.002)
    assert all(a < b for a, b in itertools.pairwise(ttft))
    # the source says where the figure comes from and the calibration
    source = got["c32"]["detail"]["tokens_per_s_source"]
    assert "chunked prefill 2,048 tokens per step" in source and "seed 004" in source


def test_the_range_comes_from_the_measured_error(tmp_path: Path, db: Path) -> None:
    (c,) = _run(tmp_path, db, _a40("c32", 32), slo="ttft_ms = 10000\n").values()
    # the goodput is triangular(low, 1, high) x 83.06 with low, high fitted to the 12
    # validation ratios (docs/roofline.md): the smallest, 72.32 / 83.06 = 0.871 (this very
    # point), sits at the 1/13 quantile, so the p5 of goodput is below the measured 72.32
    # -> CPM's p95 (cost / goodput's p5, the only range here) is above 1 EUR/h / 72.32
    # (no [demand], a declared 1 EUR/h: CPM = 1e6 / (goodput x 3,600 s), only goodput varies)
    band = c["uncertainty"]["cpm_eur_per_mtok"]
    assert c["cpm_eur_per_mtok"] == pytest.approx(1e6 / (83.06 * 3600), rel=1e-3)
    cpm_at_measured = 1e6 / (72.32 * 3600)
    assert band["p5"] < cpm_at_measured < band["p95"]
    assert "measured error" in c["detail"]["tokens_per_s_source"]


def test_the_slo_is_checked_on_the_estimated_ttft(tmp_path: Path, db: Path) -> None:
    # TTFT at C = 1 is 1.573 s: under a 1,500 ms SLO no request meets it, so no goodput
    got = _run(tmp_path, db, _a40("c1", 1), _a40("c2", 2))
    for c in got.values():
        assert c["tokens_per_s"] is None
        assert "misses the SLO" in c["detail"]["no_goodput_reason"]
        assert "TTFT 1,573 ms > 1500 ms" in c["detail"]["no_goodput_reason"] \
            or c["id"] == "c2"


def test_the_kv_cap_leaves_no_goodput(tmp_path: Path, db: Path) -> None:
    # 48 GB x 0.9 - 15.23 GB weights = 27.97 GB of KV at 57,344 B/token = 487,700 tokens:
    # 59 sequences of 8,192 tokens; 64 do not fit
    (c,) = _run(tmp_path, db, _a40("c64", 64), slo="ttft_ms = 100000\n").values()
    assert c["tokens_per_s"] is None
    assert "exceed the KV capacity" in c["detail"]["no_goodput_reason"]


def test_the_chunk_budget_defaults_to_vllms(tmp_path: Path, db: Path) -> None:
    text = _a40("c8", 8).replace("chunk_tokens = 2048, ", "")
    (c,) = _run(tmp_path, db, text, slo="ttft_ms = 10000\n").values()
    # the A40 has 48 GB (< 70 GiB): vLLM's default budget is 2,048, so the same figure
    assert c["tokens_per_s"] == pytest.approx(70.0, abs=0.1)
    assert any("vLLM's default max_num_batched_tokens" in n for n in c["notes"])
    # and among the assumptions (the goodput input's source)
    assert "2,048 tokens per step (vLLM's default" in c["detail"]["tokens_per_s_source"]


REQUESTS = """
[demand]
requests_per_s = 2
prompt_tokens = 8192
output_tokens = 128
headroom = 0
"""


def _estimate_a40(*flags: str) -> dict:
    """`scorecard estimate --json` of the A40 case the proposals below declare (Qwen2.5-7B,
    batch 16, context 8,192, 128 output tokens, seed 004's calibration, 2 requests/s), with
    `flags` added."""
    result = runner.invoke(app, [
        "estimate", "--model", "Qwen2.5-7B", "--gpu", "A40-48GB", "--batch", "16",
        "--context", "8192", "--output-tokens", "128", *flags,
        "--calibrate-tpot-ms", "28", "--calibrate-context", "512", "--calibrate-ttft-ms", "88",
        "--calibrate-prompt-tokens", "512", "--calibration-source", "seed 004",
        "--requests-per-s", "2", "--headroom", "0", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_figures(cli: dict, c: dict) -> None:
    """The CLI's goodput, TTFT and sizing are the proposal candidate `c`'s."""
    assert cli["serving"]["goodput_tokens_per_s"] == pytest.approx(c["tokens_per_s"], rel=1e-9)
    assert cli["serving"]["ttft_s"] == pytest.approx(c["detail"]["operating_ttft_s"], rel=1e-9)
    s = c["sizing"]
    assert cli["sizing"]["ttft_ms"] / 1e3 == pytest.approx(c["detail"]["operating_ttft_s"])
    assert cli["sizing"]["request_duration_s"] == pytest.approx(s["request_duration_s"])
    for key in ("goodput_instances", "littles_law_instances", "instances"):
        assert cli["sizing"][key] == s[key], key


@pytest.mark.parametrize("chunk", [True, False], ids=["chunk-budget-given", "no-chunk-budget"])
def test_cli_and_proposal_give_the_same_goodput_ttft_and_sizing(tmp_path: Path, db: Path,
                                                                chunk: bool) -> None:
    # Without a chunk budget both take vLLM's default on the A40 (48 GB < 70 GiB: 2,048 tokens,
    # planning.default_chunk_tokens), so the figures below hold either way; the CLI used to fall
    # back to the plain roofline there (42.8 ms steps at C = 16: 1 instance where the proposal
    # sized 4).
    block = _a40("c16", 16) if chunk else _a40("c16", 16).replace("chunk_tokens = 2048, ", "")
    # (disaggregated: one prefill at a time in the pool while decode runs fast, so 16 clients
    # queue for it: TTFT about 19 s, under this SLO)
    (c,) = _run(tmp_path, db, REQUESTS, block, slo="ttft_ms = 100000\n").values()
    cli = _estimate_a40(*(["--chunk-budget", "2048"] if chunk else []))
    _same_figures(cli, c)
    s = c["sizing"]
    # 2 requests/s x 128 tokens = 256 tokens/s over 76.8 per replica: ceil(3.33) = 4 by
    # goodput; a request lasts TTFT + 127 x 0.208 s, so Little's law needs more
    assert s["goodput_instances"] == 4
    assert s["littles_law_instances"] >= s["goodput_instances"]


def test_the_two_forms_do_not_mix(tmp_path: Path, db: Path) -> None:
    text = _a40("c8", 8).replace("concurrency = 8", "concurrency = 8, batch = 8")
    path = tmp_path / "p.toml"
    path.write_text(proposal("serving", text))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert "not both" in result.stderr


def test_vllms_default_chunk_budget_by_gpu() -> None:
    from pipeline.engine.roofline.planning import default_chunk_tokens
    # 70 GiB = 75.16 GB: an 80 GB H100 is above it (8,192), a 48 GB A40 below (2,048); an
    # 80 GB A100 is excluded by name (vLLM PR #17885: a large budget slowed it down)
    assert default_chunk_tokens("H100-SXM-80GB", 80) == 8192
    assert default_chunk_tokens("A40-48GB", 48) == 2048
    assert default_chunk_tokens("A100-SXM-80GB", 80) == 2048
    assert default_chunk_tokens("MI300X-192GB", 192) == 8192


def test_an_uncalibrated_estimate_takes_the_datasheet_error(tmp_path: Path, db: Path) -> None:
    text = _a40("c8", 8).replace(f", {CALIBRATION}", "")
    (c,) = _run(tmp_path, db, text, slo="ttft_ms = 10000\n").values()
    from pipeline.engine.roofline import validation as v
    from pipeline.inputs.evidence.estimate import validation_rows
    _, mode, _ = v.basis_range(validation_rows(), v.PEAK)
    # the model on the A40's peaks at C = 8 (in the source), x the median measured / predicted
    # ratio of the datasheet predictions (0.64): the point goodput
    source = c["detail"]["tokens_per_s_source"]
    model = float(source.split("serving model ")[1].split(" tokens/s")[0])
    assert c["tokens_per_s"] == pytest.approx(model * mode, rel=2e-3)
    assert "datasheet-peak predictions" in source
    assert mode == pytest.approx(0.64, abs=0.01)


def test_cli_and_proposal_agree_on_datasheet_rates(tmp_path: Path, db: Path) -> None:
    # no calibration: both take the datasheet-peak error's mode (0.64) on the same model figure
    text = _a40("c8", 8).replace(f", {CALIBRATION}", "")
    (c,) = _run(tmp_path, db, text, slo="ttft_ms = 10000\n").values()
    result = runner.invoke(app, [
        "estimate", "--model", "Qwen2.5-7B", "--gpu", "A40-48GB", "--batch", "8",
        "--context", "8192", "--output-tokens", "128", "--chunk-budget", "2048", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)["serving"]
    assert cli["goodput_tokens_per_s"] == pytest.approx(c["tokens_per_s"], rel=1e-9)
    assert cli["ttft_s"] == pytest.approx(c["detail"]["operating_ttft_s"], rel=1e-9)
    assert cli["goodput_tokens_per_s"] < cli["model_goodput_tokens_per_s"]


def test_a_serialised_server_in_a_proposal(tmp_path: Path, db: Path) -> None:
    # seed 004's HF loop, one request at a time: goodput 1 / TPOT = 1 / 28.87 ms = 34.6
    # tokens/s at any C; TTFT at C = 32 = 31 x (1.573 + 127 x 0.02887) + 1.573 = 163.9 s
    text = _a40("hf", 32).replace("chunk_tokens = 2048", "serialised = true")
    (c,) = _run(tmp_path, db, text, slo="ttft_ms = 1000000\n").values()
    assert c["tokens_per_s"] == pytest.approx(34.64, abs=0.01)
    assert c["detail"]["operating_ttft_s"] == pytest.approx(163.9, abs=0.3)
    assert "serialised (one request at a time)" in c["detail"]["tokens_per_s_source"]


def _h100_short_prompts(extra: str = "") -> str:
    # the review's repro (issue 28), speculative decoding left out: Llama-3.1-8B on one H100,
    # 512 clients, 16-token prompts, 512 output tokens, an 8,192-token budget, calibrated on a
    # 5 ms TPOT at 512 cached tokens
    return candidate(
        "h100", gpu_count="1",
        throughput=('{ estimate = { model = "Llama-3.1-8B", concurrency = 512, prompt_tokens = '
                    '16, output_tokens = 512, chunk_tokens = 8192, calibration = { tpot_ms = 5, '
                    f'context = 512, source = "a run at C=1" }}{extra} }} }}'),
        power='{ watts = 700, boundary = "gpu_board", source = "TDP" }',
        cost='{ eur_per_hour = 1.0, source = "quote" }')


def test_short_prompts_stay_under_the_roofline_ceiling(tmp_path: Path, db: Path) -> None:
    # Calibrated bandwidth: (15.0098 GB of weights read (16.0605 less the 128,256 x 4,096 x 2 B
    # looked-up embedding) + 512 x 131,072 B + 131,072 B) / 5 ms = 15.0771 / 0.005 = 3,015.4
    # GB/s. Decode step at C = 512, context 16: memory (15.0098 + 1.0737 + 0.0671) / 3,015.4 =
    # 5.356 ms; compute 512 x (2 x 7.5050e9 + 4 x 32 x 32 x 128 x 16) / 989.5e12 = 7.771 ms:
    # 7.771 ms, ceiling 512 / 7.771 ms = 65,887 tokens/s. The 16-token chunk computes in
    # 0.23 ms, so the mixed step is the decode step: goodput = the ceiling (the chunk's
    # compute alone gave 2.26e6; the review's 1.25e6 was that x its speculative factor 0.555),
    # and the calibrated range's high (x 1.272) is capped at it.
    (c,) = _run(tmp_path, db, _h100_short_prompts(), slo="ttft_ms = 100000\n").values()
    assert c["tokens_per_s"] == pytest.approx(65_887, rel=1e-3)
    [capped] = [n for n in c["notes"] if "capped at the roofline ceiling" in n]
    assert float(capped.split("ceiling ")[1].split(" tokens/s")[0].replace(",", "")) \
        == pytest.approx(65_887, rel=1e-3)


def test_a_prefix_cache_in_a_proposal_removes_prefill_work(tmp_path: Path, db: Path) -> None:
    # issue 28 item 5: half of each 8,192-token prompt from the prefix cache at C = 32. The
    # prefill computes 4,096 tokens: 6.35616e13 FLOP / 76.6e12 = 0.8298 s in 2 mixed steps of
    # 0.41489 s; the decode step (14.14 + 32 x 0.4698) GB / 506.1 = 57.65 ms; 2 x 31 = 62
    # shared: TPOT (62 x 0.41489 + 65 x 0.05765) / 127 = 0.23205 s -> 32 / 0.23205 = 137.9
    # tokens/s (83.06 cold), and the TTFT falls with the shorter prefill queue
    warm = _a40("warm", 32, ', prefix_hit_rate = 0.5, effects_source = "our cache stats"')
    got = _run(tmp_path, db, _a40("cold", 32), warm, slo="ttft_ms = 10000\n")
    assert got["cold"]["tokens_per_s"] == pytest.approx(83.06, abs=0.01)
    assert got["warm"]["tokens_per_s"] == pytest.approx(137.9, abs=0.1)
    assert got["warm"]["detail"]["operating_ttft_s"] < got["cold"]["detail"]["operating_ttft_s"]
    assert any("Prefix cache: 4,096 of each prompt's 8,192 tokens" in n
               for n in got["warm"]["notes"])


#: the seed mechanics as proposal keys and as `scorecard estimate` flags (issue 28 item 1)
MECHANICS = {
    "paged-kv-read-prefix-range": (
        ', block_size = 16, kv_read_factor = 3, prefix_hit_rate = { low = 0.25, mode = 0.5, '
        'high = 0.75 }, effects_source = "our cache stats"',
        ["--block-size", "16", "--kv-read-factor", "3", "--prefix-hit-rate", "0.5",
         "--prefix-hit-range", "0.25,0.75"], "1"),
    "disaggregated": (", kv_link_gbs = 25", ["--kv-link-gbs", "25"], "2"),
}


@pytest.mark.parametrize("case", sorted(MECHANICS))
def test_cli_and_proposal_agree_with_the_seed_mechanics(tmp_path: Path, db: Path,
                                                        case: str) -> None:
    # the same inputs through the flags and through the proposal's keys give the same
    # goodput (the mode of its range), TTFT and sizing; a disaggregated candidate declares its
    # prefill pool's GPUs too (2: one decode replica and its pool, as the CLI's instance is)
    keys, flags, gpus = MECHANICS[case]
    block = _a40("c16", 16, keys).replace('gpu_count = 1', f'gpu_count = {gpus}')
    if case == "disaggregated":  # its prefills run on their own pool: no chunk budget
        block = block.replace("chunk_tokens = 2048, ", "")
    # (disaggregated: one prefill at a time in the pool while decode runs fast, so 16 clients
    # queue for it: TTFT about 19 s, under this SLO)
    (c,) = _run(tmp_path, db, REQUESTS, block, slo="ttft_ms = 100000\n").values()
    cli = _estimate_a40(*(["--chunk-budget", "2048"] if case != "disaggregated" else []),
                        *flags)
    _same_figures(cli, c)
    assert cli["sizing"]["gpus_per_instance"] == int(gpus)
    # the defaults not taken are not claimed; each taken one is said among the notes
    kv = [n for n in c["notes"] if n.startswith("KV cache: ")]
    assert kv == [n for n in cli["serving"]["assumptions"] if n.startswith("KV cache: ")]
    if case == "disaggregated":
        assert "contiguous, no block rounding (the default" in kv[0]
        assert "read 1 x per decode step (the default" in kv[0]
        assert any("Disaggregated prefill" in n for n in c["notes"])
    else:
        assert "paged in blocks of 16 tokens" in kv[0] and "read 3 x" in kv[0]
        assert "at hit rates 0.25 / 0.5 / 0.75" in " ".join(c["notes"])


@pytest.mark.parametrize(("change", "message"), [
    # a disaggregated server prefills on its own pool: a chunk budget is a contradiction
    (lambda b: b.replace("chunk_tokens = 2048", "chunk_tokens = 2048, kv_link_gbs = 25"),
     "no chunk_tokens, not serialised"),
    # a hit-rate range is drawn through the serving model's goodput range only
    (lambda b: b.replace("concurrency = 8, prompt_tokens = 8192, output_tokens = 128, "
                         "chunk_tokens = 2048, ", "batch = 8, context = 8192, efficiency = 0.5, "
                         "prefix_hit_rate = { low = 0.1, mode = 0.2, high = 0.3 }, "
                         'effects_source = "stats", '),
     "need the serving form"),
    # the engine reads the cache at least once per step
    (lambda b: b.replace("chunk_tokens = 2048", "chunk_tokens = 2048, kv_read_factor = 0.5"),
     "kv_read_factor: Input should be greater than or equal to 1"),
    # two GPUs cannot hold a TP2 decode replica and its prefill pool of two more
    (lambda b: b.replace("chunk_tokens = 2048", "tensor_parallel = 2, kv_link_gbs = 25")
     .replace("gpu_count = 1", "gpu_count = 2"), "prefill pool beside each decode replica"),
])
def test_the_seed_mechanics_keys_are_checked(tmp_path: Path, db: Path,
                                             change: Callable[[str], str], message: str
                                             ) -> None:
    text = change(_a40("c8", 8))
    assert text != _a40("c8", 8)
    path = tmp_path / "p.toml"
    path.write_text(proposal("serving", text))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert message in result.stderr and "candidates[0] (id 'c8').throughput" in result.stderr
