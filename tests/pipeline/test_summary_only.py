"""Summary-only results (no per-request latencies) give a figure: the conservative percentile
bound, and an MLPerf Server result used directly when its constraints are at least as strict
as the SLO."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposals import candidate

from pipeline.evidence.bench import inspect, throughput_from_evidence
from pipeline.evidence.goodput import Slo, percentile_bound

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
SLO = Slo(ttft_ms=500, tpot_ms=60, attainment=0.95)


def summary(path: Path, *, completed: int = 1000, p99_ttft_ms: float = 171.7,
            p99_tpot_ms: float = 35.6, failed: int = 0, **more: object) -> Path:
    """A vLLM `bench serve` result without --save-detailed (the default): aggregates only."""
    doc = {"date": "20261201-100000", "backend": "openai", "model_id": "m",
           "num_prompts": completed + failed, "request_rate": "inf", "max_concurrency": 16,
           "duration": 100.0, "completed": completed, "failed": failed,
           "total_output_tokens": 200_000, "request_throughput": completed / 100.0,
           "output_throughput": 2000.0, "median_ttft_ms": 80.0, "p99_ttft_ms": p99_ttft_ms,
           "median_tpot_ms": 20.0, "p99_tpot_ms": p99_tpot_ms, **more}
    path.write_text(json.dumps(doc))
    return path


def test_the_issue_worked_example(tmp_path: Path) -> None:
    # p99 TTFT 171.7 <= 500 proves >= 0.99, p99 TPOT 35.6 <= 60 proves >= 0.99: union bound
    # 1 - 0.01 - 0.01 = 0.98 >= 0.95 passes; goodput 0.98 x 2,000 = 1,960 tokens/s. With
    # 1,000 completed requests the numpy p99 bounds floor(999 x 0.99) + 1 = 990 values: 0.99.
    ev = throughput_from_evidence(summary(tmp_path / "r.json"), SLO)
    assert ev.tokens_per_s == pytest.approx(0.98 * 2000.0)
    assert ev.grade == "measured"
    assert any('basis = "percentile bound"' in n and "at least 0.98" in n for n in ev.notes)
    (run,) = inspect([tmp_path / "r.json"], SLO)["runs"]
    assert run["aggregate_only"] and run["goodput_basis"] == "percentile bound"
    assert run["attainment"] == pytest.approx(0.98)
    assert run["request_goodput_per_s"] == pytest.approx(0.98 * 10.0)


def test_bound_without_counts_is_the_percentiles_share() -> None:
    share, reasons = percentile_bound({"ttft_p99_s": 0.1717, "tpot_p99_s": 0.0356}, SLO)
    assert share == pytest.approx(0.98)
    assert reasons == ["TTFT p99 171.7 ms <= 500 ms proves >= 0.99",
                       "TPOT p99 35.6 ms <= 60 ms proves >= 0.99"]


def test_few_requests_prove_less(tmp_path: Path) -> None:
    # 10 completed: the numpy p99 bounds only floor(9 x 0.99) + 1 = 9 of 10 values: 0.9 per
    # limit, 0.8 together < 0.95: no goodput, and the note says so
    ev = throughput_from_evidence(summary(tmp_path / "r.json", completed=10), SLO)
    assert ev.tokens_per_s is None
    assert any("proves only 0.8 of the offered requests pass" in n for n in ev.notes)


def test_failed_requests_lower_the_attainment(tmp_path: Path) -> None:
    # 0.98 of 1,000 completed pass; 50 failed of 1,050 offered: 0.98 x 1000 / 1050 = 0.9333
    ev = throughput_from_evidence(summary(tmp_path / "r.json", failed=50), SLO)
    assert ev.tokens_per_s is None
    assert any("proves only 0.9333" in n for n in ev.notes)


def test_a_percentile_too_high_or_missing_is_named(tmp_path: Path) -> None:
    # p99 TTFT 762 ms > 500, the p50 80 ms <= 500 proves only 0.5: not passing
    ev = throughput_from_evidence(summary(tmp_path / "a.json", p99_ttft_ms=762.0), SLO)
    assert ev.tokens_per_s is None
    assert any("TTFT p50 80 ms <= 500 ms proves >= 0.5" in n for n in ev.notes)
    share, reasons = percentile_bound({"ttft_p50_s": 0.9}, SLO)
    assert share == 0.0
    assert reasons == ["TTFT: the lowest percentile reported, p50 = 900 ms, is over 500 ms",
                       "TPOT: no percentile reported, nothing proven under 60 ms"]
    share, reasons = percentile_bound({"ttft_p50_s": 0.1}, Slo(ttft_ms=500, max_itl_ms=50))
    assert share is None and "largest gap" in reasons[0]


def test_summary_only_sweep_has_a_knee(tmp_path: Path) -> None:
    # concurrency 8 proves 0.98, 16 has p99 TTFT over the limit (p50 only: 0.5): knee at 8
    summary(tmp_path / "c8.json", max_concurrency=8)
    summary(tmp_path / "c16.json", p99_ttft_ms=900.0, max_concurrency=16)
    report = inspect([tmp_path], SLO)
    assert report["sweep"]["knee_concurrency"] == 8
    assert report["sweep"]["knee_tokens_per_s"] == pytest.approx(1960.0)
    assert report["sweep"]["saturated"] is True


MLPERF = SAMPLES / "mlperf" / "v4.1_AMD_8xMI300X_llama2-70b-99_Server_run_1_mlperf_log_summary.txt"


@pytest.mark.skipif(not MLPERF.exists(), reason="../shared/samples absent")
def test_mlperf_server_used_directly_under_a_looser_slo() -> None:
    # AMD 8x MI300X llama2-70b Server v4.1: VALID, constraints p99 TTFT 2,000 ms and p99 TPOT
    # 200 ms, 21,028.23 completed tokens/s. Against an SLO of TTFT 2,000 / TPOT 200 ms at
    # attainment 0.95 (the constraints prove 1 - 2 x 0.01 = 0.98): used as it is
    ev = throughput_from_evidence(MLPERF, Slo(ttft_ms=2000, tpot_ms=200, attainment=0.95))
    assert ev.tokens_per_s == pytest.approx(21028.23)
    assert any('basis = "mlperf server"' in n for n in ev.notes)


@pytest.mark.skipif(not MLPERF.exists(), reason="../shared/samples absent")
def test_mlperf_server_under_a_stricter_slo_falls_back_to_the_bound() -> None:
    # TTFT 1,450 ms is stricter than the 2,000 ms constraint: not used directly; the bound:
    # TTFT p95 1,411.8 ms <= 1,450 proves 0.95 (p97 1,475.4 is over), TPOT p99 197.9 <= 200
    # proves 0.99: 1 - 0.05 - 0.01 = 0.94 < 0.95
    ev = throughput_from_evidence(MLPERF, Slo(ttft_ms=1450, tpot_ms=200, attainment=0.95))
    assert ev.tokens_per_s is None
    assert any("constraint 2000 ms is looser than the SLO's 1450 ms" in n for n in ev.notes)
    assert any("proves only 0.94" in n for n in ev.notes)
    # at attainment 0.9 the bound passes: 21,028.23 x 0.94 = 19,766.5 tokens/s
    ev = throughput_from_evidence(MLPERF, Slo(ttft_ms=1450, tpot_ms=200, attainment=0.9))
    assert ev.tokens_per_s == pytest.approx(21028.23 * 0.94)
    # TTFT 1,500 ms: p97 1,475.4 ms proves 0.97, so 0.96 passes 0.95: 21,028.23 x 0.96
    ev = throughput_from_evidence(MLPERF, Slo(ttft_ms=1500, tpot_ms=200, attainment=0.95))
    assert ev.tokens_per_s == pytest.approx(21028.23 * 0.96)


VLLM = SAMPLES / "vllm" / "er0080_bench_serve_v0.25.1.json"


@pytest.mark.skipif(not VLLM.exists(), reason="../shared/samples absent")
def test_real_vllm_default_output_gives_a_bounded_goodput() -> None:
    # er0080's vLLM 0.25.1 `bench serve` default output: 8 requests, p99 TTFT 734.4 ms and
    # p99 TPOT 11.98 ms. With n = 8 the numpy p99 bounds floor(7 x 0.99) + 1 = 7 of 8 values:
    # 0.875 per limit, 0.75 together: not enough for 0.95, enough for 0.75
    (run,) = inspect([VLLM], Slo(ttft_ms=10_000, tpot_ms=100, attainment=0.95))["runs"]
    assert run["aggregate_only"] and run["token_goodput_per_s"] is None
    assert "proves only 0.75" in run["goodput_null_reason"]
    (run,) = inspect([VLLM], Slo(ttft_ms=10_000, tpot_ms=100, attainment=0.75))["runs"]
    assert run["goodput_basis"] == "percentile bound"
    assert run["token_goodput_per_s"] == pytest.approx(run["output_tokens_per_s"] * 0.75)


def test_excluded_candidate_prints_its_notes_in_the_terminal(tmp_path: Path, db: Path) -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app

    # 10 completed requests prove only 0.8 < 0.95 (see test_few_requests_prove_less): no
    # goodput, so CPM is not computable and the candidate is excluded; its notes say why,
    # printed as text (the file name's "[bold]" is not rich markup)
    summary(tmp_path / "[bold]r.json", completed=10)
    proposal = tmp_path / "p.toml"
    proposal.write_text('[proposal]\nname = "summary-only"\n[slo]\nttft_ms = 500\ntpot_ms = 60\n'
                        + candidate("lab", gpu_count="1",
                                    throughput='{ evidence = "[bold]r.json" }',
                                    power='{ watts = 700, boundary = "gpu_board", '
                                          'source = "rated" }',
                                    cost='{ eur_per_hour = 3.0, source = "quote" }'))
    result = CliRunner().invoke(app, ["run", str(proposal), "--db", str(db),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # rich wraps long lines
    assert "lab excluded: cpm_eur_per_mtok is not computable (see notes)" in out
    assert "[bold]r.json: aggregate-only" in out
    assert "proves only 0.8 of the offered requests pass" in out
