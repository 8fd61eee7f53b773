"""The two files of an LLMPerf run pair by content when renamed, with a warning; a file left
without its partner says so (the real leaderboard sample, ../shared/samples/llmperf)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.evidence.bench import load_runs

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "llmperf"
DETAIL = SAMPLES / "leaderboard_groq_70b_individual_responses.json"
SUMMARY = SAMPLES / "leaderboard_groq_70b_summary.json"
pytestmark = pytest.mark.skipif(not DETAIL.exists(), reason="../shared/samples absent")


def test_renamed_files_pair_by_content(tmp_path: Path) -> None:
    shutil.copy(DETAIL, tmp_path / "responses.json")
    shutil.copy(SUMMARY, tmp_path / "groq.json")
    loaded = load_runs([tmp_path])
    (run,) = loaded.runs
    # 150 successful requests in the responses, results_num_completed_requests 150
    assert not run.aggregate_only and run.reported["completed"] == 150
    assert run.started_at_utc is not None  # the summary's window
    assert any(n.startswith("warning:") and "paired by content (150 successful requests"
               in n for n in loaded.notes)


def test_a_file_without_partner_is_warned(tmp_path: Path) -> None:
    shutil.copy(DETAIL, tmp_path / "x_individual_responses.json")
    loaded = load_runs([tmp_path])
    assert len(loaded.runs) == 1 and loaded.runs[0].started_at_utc is None
    assert any("has no summary file beside it (by name or by content): read alone" in n
               for n in loaded.notes)


def test_summaries_that_do_not_agree_do_not_pair(tmp_path: Path) -> None:
    shutil.copy(DETAIL, tmp_path / "responses.json")
    text = SUMMARY.read_text().replace('"results_num_completed_requests": 150',
                                       '"results_num_completed_requests": 149')
    assert text != SUMMARY.read_text()
    (tmp_path / "groq.json").write_text(text)
    loaded = load_runs([tmp_path])
    assert len(loaded.runs) == 2
    assert any("has no per-request file beside it" in n for n in loaded.notes)
