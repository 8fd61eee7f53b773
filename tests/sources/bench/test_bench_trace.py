"""The canonical request trace (DESIGN section 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sources.bench.clients import trace
from sources.errors import ParseError

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "bench"


def test_worked_example_rows() -> None:
    (run,) = trace.parse((FIXTURES / "trace_worked_example.jsonl").read_bytes(), path="t")
    df = run.requests
    assert df is not None and df.height == 6
    assert df["request_id"].to_list() == ["r1", "r2", "r3", "r4", "r5", "r6"]
    # r2: first token 0.90 - sent 0.50 = TTFT 0.40 s
    assert df["ttft_s"][1] == pytest.approx(0.40)
    # r3: (1.35 - 1.10) / (3 - 1) = TPOT 0.125 s; largest gap 1.30 - 1.10 = 0.20 s
    assert df["tpot_s"][2] == pytest.approx(0.125)
    assert df["max_itl_s"][2] == pytest.approx(0.20)
    # r4: one token -> no TPOT, no gap; output_tokens counted from token_times_s
    assert df["tpot_s"][3] is None and df["output_tokens"][3] == 1
    # r5 failed: no TTFT, keeps its error
    assert df["ttft_s"][4] is None and df["error"][4] == "HTTP 503"
    assert run.itl_definition == "token"
    # default window: first sent 0.00 .. last done 2.10
    assert (run.window_start_s, run.window_end_s) == (0.0, 2.10)


def test_first_last_form_and_epoch_clock() -> None:
    data = (b'{"sent_s": 1786000000.0, "first_token_s": 1786000000.5, '
            b'"last_token_s": 1786000001.5, "output_tokens": 11, "done_s": 1786000001.6, '
            b'"ok": true}\n')
    (run,) = trace.parse(data, path="t")
    df = run.requests
    assert df is not None
    # TPOT = (1.5 - 0.5) / (11 - 1) = 0.1 s; no gap data
    assert df["tpot_s"][0] == pytest.approx(0.1)
    assert df["max_itl_s"][0] is None and run.itl_definition == "none"
    assert df["request_id"][0] == "1"  # the line number when no id is given
    assert run.started_at_utc is not None and run.started_at_utc.year == 2026


@pytest.mark.parametrize(("data", "where"), [
    (b"", "line 1"),
    (b'{"sent_s": 0, "ok": true}\n{"sent_s": 1, "ok": tru', "line 2"),
    (b'{"sent_s": 0, "ok": true}\n[1]\n', "line 2"),
    (b'{"sent_s": 0}\n', "line 1"),
    (b'{"sent_s": "zero", "ok": true}\n', "line 1: field 'sent_s'"),
    (b'{"sent_s": 1.0, "ok": true, "token_times_s": [0.5]}\n', "line 1"),
    (b'{"sent_s": 0, "ok": true}\n\n{"sent_s": 1.0, "ok": true, "token_times_s": [1.5, 1.2]}',
     "line 3"),
])
def test_bad_traces(data: bytes, where: str) -> None:
    with pytest.raises(ParseError) as err:
        trace.parse(data, path="bad.jsonl")
    assert err.value.path == "bad.jsonl"
    assert where in err.value.where


def test_nan_is_not_a_figure() -> None:
    # Python's json reads NaN/Infinity unless told not to; the shared jsondoc hook refuses them
    with pytest.raises(ParseError, match="non-standard JSON constant NaN") as err:
        trace.parse(b'{"sent_s": 0, "ok": true}\n{"sent_s": NaN, "ok": true}\n', path="n.jsonl")
    assert err.value.where == "line 2"
