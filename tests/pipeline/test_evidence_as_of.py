"""Evidence sources are dated: a benchmark file's "as of" in the sources list is the end of its
latest run in UTC (its runs' window), so the freshness table shows when the evidence was
measured instead of "unknown"."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from proposals import candidate
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.bench import run_ends
from reports.freshness import as_of
from schemas.result import Source
from sources.bench.registry import parse_bench


def vllm_file(path: Path, when: str, **extra: object) -> Path:
    """A vLLM result whose `date` (naive local time taken after the run) is `when`."""
    n = 4
    doc = {"date": when, "backend": "openai", "model_id": "m", "num_prompts": n,
           "request_rate": "inf", "max_concurrency": 4, "duration": 10.0, "completed": n,
           "failed": 0, "total_output_tokens": 40 * n, "request_throughput": 0.4,
           "output_throughput": 16.0, "ttfts": [0.05] * n, "itls": [[0.01] * 39] * n,
           "output_lens": [40] * n, "input_lens": [100] * n, "errors": [""] * n,
           "start_times": [0.0] * n, "latencies": [0.05 + 0.39] * n, **extra}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_run_ends_is_the_latest_run_end_in_utc(tmp_path: Path) -> None:
    a = vllm_file(tmp_path / "a.json", "20261130-233000")
    runs = parse_bench(a.read_bytes(), path=str(a), tz="Europe/Paris")
    # 23:30:00 in Paris (UTC+1 in November) is 22:30:00 UTC; `date` is the run's end
    assert run_ends(runs) == {str(a): "2026-11-30T22:30:00Z"}
    # a naive vLLM date without --tz places no run in UTC: no as-of
    assert run_ends(parse_bench(a.read_bytes(), path=str(a))) == {}


def test_evidence_sources_carry_their_as_of(tmp_path: Path, db: Path) -> None:
    # two runs of one configuration at two concurrencies (a sweep); the file ending later is
    # dated by its own run: 2026-12-01 09:00:10 Paris = 08:00:10 UTC
    vllm_file(tmp_path / "bench" / "c4.json", "20261130-233000")
    vllm_file(tmp_path / "bench" / "c8.json", "20261201-090010", max_concurrency=8)
    proposal = tmp_path / "p.toml"
    proposal.write_text(
        '[proposal]\nname = "dated"\n[slo]\nttft_ms = 500\n'
        + candidate("lab", gpu_count="1",
                    throughput='{ evidence = "bench", tz = "Europe/Paris" }',
                    power='{ watts = 700, boundary = "gpu_board", source = "rated" }',
                    cost='{ eur_per_hour = 3.0, source = "quote" }'))
    result = CliRunner().invoke(app, ["run", str(proposal), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    sources = {s["subject"]: s for s in json.loads(result.stdout)["sources"]
               if s["kind"] == "evidence"}
    assert {k: v["date"] for k, v in sources.items()} == {
        "bench/c4.json": "2026-11-30T22:30:00Z", "bench/c8.json": "2026-12-01T08:00:10Z"}
    # the freshness table reads the day from it
    assert as_of(Source.model_validate(sources["bench/c8.json"])) == date(2026, 12, 1)
