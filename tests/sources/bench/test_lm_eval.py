"""The lm-evaluation-harness results reader on the real public files of ../shared/samples/lm_eval
(where each came from: ../shared/samples/PROVENANCE.md and tests/fixtures/quality/README.md)
and on the shapes those files do not show (model_args as text, "N/A" stderr, NaN, pre-0.4 keys
without a filter)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from samples import sample

from sources.bench.lm_eval import detect, parse
from sources.errors import ParseError

BF16 = "lm_eval/lm_eval_0.4.11_nemotron3-nano-omni-30b-a3b_bf16_gsm8k_results_EXCERPT.json"
QWEN = "lm_eval/lm_eval_0.4.9.2_qwen3-4b-instruct-2507_hf_results_2025-12-15T08-32-44.json"


def test_lm_eval_0_4_11_gsm8k_through_vllm() -> None:
    path = sample(BF16)
    data = path.read_bytes()
    assert detect(data[:65_536])
    r = parse(data, str(path))
    assert (r.lm_eval_version, r.model, r.model_name) == (
        "0.4.11", "local-chat-completions", "nemotron-omni-bf16")
    assert r.model_args["base_url"] == "http://localhost:8000/v1/chat/completions"
    # `date` 1777605157.0338092 epoch s = 2026-05-01 03:12:37 UTC
    assert r.date_utc == datetime(2026, 5, 1, 3, 12, 37, 33809, tzinfo=UTC)
    s = r.score("gsm8k")  # the first metric listed: strict-match
    assert s is not None
    assert (s.metric, s.value, s.stderr) == (
        "exact_match,strict-match", 0.7899924184988628, 0.011219441626913252)
    assert (s.n_shot, s.samples, s.higher_is_better) == (5, 1319, True)
    flexible = r.score("gsm8k", "exact_match,flexible-extract")
    assert flexible is not None and flexible.value == 0.909021986353298


def test_lm_eval_0_4_9_groups_and_subtasks() -> None:
    path = sample(QWEN)
    r = parse(path.read_bytes(), str(path))
    assert (r.lm_eval_version, r.model, r.model_args) == (
        "0.4.9.2", "hf", {"pretrained": "D:\\models\\Qwen3-4B-Instruct-2507-st"})
    # mmlu's 57 subtasks and 4 categories are a group's parts: the summary lists 3 tasks
    assert r.top_tasks() == ["arc_challenge", "hellaswag", "mmlu"]
    mmlu = r.score("mmlu")
    assert mmlu is not None and (mmlu.metric, mmlu.value) == ("acc,none", 0.705597493234582)
    norm = r.score("hellaswag", "acc_norm")
    assert norm is not None and (norm.value, norm.n_shot, norm.samples) == (
        0.6907986456881099, 0, 10042)


def test_text_model_args_na_stderr_nan_and_unfiltered_keys() -> None:
    doc = ('{"results": {"mmlu": {"acc,none": 0.6, "acc_stderr,none": "N/A", "alias": "mmlu"},'
           ' "old": {"acc": 0.5, "acc_stderr": NaN}}, "n-shot": {"mmlu": 5},'
           ' "config": {"model": "vllm", "model_args": "pretrained=org/M,dtype=bfloat16"}}')
    r = parse(doc.encode(), "r.json")
    assert r.model_args == {"pretrained": "org/M", "dtype": "bfloat16"}
    mmlu, old = r.score("mmlu"), r.score("old")
    assert mmlu is not None and (mmlu.value, mmlu.stderr, mmlu.n_shot) == (0.6, None, 5)
    assert old is not None and (old.metric, old.stderr) == ("acc,none", None)
    assert r.notes == ("1 NaN/Infinity value(s) read as null",
                       "no standard error reported for mmlu acc,none, old acc")
    assert r.date_utc is None and r.lm_eval_version is None


@pytest.mark.parametrize(("doc", "where"), [
    ('{"results": [1]}', "key 'results'"),
    ('{"results": {"t": 3}, "n-shot": {}}', "results.t"),
    ('{"results": {"t": {"acc,none": "N/A"}}}', "key 'results'"),
    ('{"results": {"t": {"acc,none": true}}}', "results.t.'acc,none'"),
    ('{"results": ', "line 1 column 13"),
])
def test_bad_files_name_the_place(doc: str, where: str) -> None:
    with pytest.raises(ParseError) as err:
        parse(doc.encode(), "bad.json")
    assert err.value.where == where and err.value.path == "bad.json"


def test_detect_wants_lm_eval_keys() -> None:
    assert detect(json.dumps({"results": {}, "n-shot": {}}).encode())
    # a benchmark's "results" alone is not lm-eval's
    assert not detect(json.dumps({"results": [], "date": 1}).encode())
