"""docs/evidence.md describes the canonical trace format: its example lines are a trace the
reader takes, with the figures the page's field table says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sources.bench.clients.trace import parse

DOC = Path(__file__).parents[2] / "docs" / "evidence.md"


def test_the_documented_trace_example_parses_as_the_table_says() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### The canonical trace format"):]
    block = re.search(r"```json\n(.*?)```", section, re.S)
    assert block is not None
    (run,) = parse(block.group(1).encode(), path="evidence.md")
    assert run.requests is not None  # a trace is per request
    r = run.requests.sort("request_id")
    # r1: sent 0.00, tokens at 0.20, 0.25, 0.30, 0.35: TTFT 0.20 s, TPOT (0.35 - 0.20) / 3
    # = 0.05 s, e2e done_s 0.36 - 0.00 = 0.36 s; r5 failed: no latencies
    assert r["ok"].to_list() == [True, False]
    assert r["ttft_s"][0] == pytest.approx(0.20)
    assert r["tpot_s"][0] == pytest.approx(0.05)
    assert r["e2e_s"][0] == pytest.approx(0.36)
    assert r["ttft_s"][1] is None and r["error"][1] == "HTTP 503"
    # default window: first sent_s 0.00 to last done_s 1.60; token gaps are real
    assert (run.window_start_s, run.window_end_s) == (0.0, pytest.approx(1.60))
    assert run.itl_definition == "token"
