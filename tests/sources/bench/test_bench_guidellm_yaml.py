"""GuideLLM reports written as YAML (`--output kind=yaml`): the same report as the JSON one,
read by the same reader when PyYAML is installed (it is optional: without it the file is
refused with what to do). The real sample is ../shared/samples/guidellm's GENERATED 0.8.1 run
against guidellm's mock server, written both as YAML and as CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples import sample

from sources.bench.clients import guidellm
from sources.bench.registry import detect_format, parse_bench
from sources.errors import ParseError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
RUN = "guidellm/guidellm_0.8.1_GENERATED_mock-server_concurrent-1-4_benchmarks"


def test_the_yaml_report_agrees_with_the_csv_of_the_same_run() -> None:
    yaml_file, csv_file = sample(f"{RUN}.yaml"), sample(f"{RUN}.csv")
    data = yaml_file.read_bytes()
    assert detect_format(data[:65_536]) == "guidellm"
    from_yaml = parse_bench(data, path=str(yaml_file))
    from_csv = parse_bench(csv_file.read_bytes(), path=str(csv_file))
    # two benchmarks, concurrent streams 1 and 4, 40 requests each, sampled (sample_size 3):
    # aggregates only in both files
    assert [r.concurrency for r in from_yaml] == [1, 4]
    for y, c in zip(from_yaml, from_csv, strict=True):
        assert y.aggregate_only and y.reported["completed"] == c.reported["completed"] == 40
        assert y.window_s == pytest.approx(c.window_s)
        for key in ("ttft_p90_s", "ttft_p95_s", "ttft_p99_s", "tpot_p90_s", "tpot_p99_s"):
            assert y.reported[key] == pytest.approx(c.reported[key]), key
    # the YAML keeps the epoch window the CSV lacks
    assert from_yaml[0].started_at_utc is not None and from_csv[0].started_at_utc is None


def test_a_json_report_dumped_as_yaml_reads_the_same(tmp_path: Path) -> None:
    import yaml

    source = FIXTURES / "guidellm_v07_small.json"
    doc = json.loads(source.read_bytes())
    # in the fixture's key order: `metadata` and `config` before `benchmarks`
    as_yaml = yaml.safe_dump(doc, sort_keys=False).encode()
    assert as_yaml.startswith(b"metadata:\n")
    from_json = guidellm.parse(source.read_bytes(), path="r")
    from_yaml = guidellm.parse(as_yaml, path="r")
    assert len(from_yaml) == len(from_json)
    for y, j in zip(from_yaml, from_json, strict=True):
        assert (y.concurrency, y.request_rate_per_s, y.window_s, y.reported, y.notes) == (
            j.concurrency, j.request_rate_per_s, j.window_s, j.reported, j.notes)
        assert (y.requests is None) == (j.requests is None)
        if y.requests is not None and j.requests is not None:
            assert y.requests.equals(j.requests)


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("benchmarks:\n- &a {x: 1}\n- *a\n", "line 3", "YAML alias"),
    ("benchmarks:\n  - [1\n", "line 3 column 1", "invalid YAML"),
    ("benchmarks: 3\n", "key 'benchmarks'", "missing or not a list"),
])
def test_bad_yaml_names_the_place(text: str, where: str, problem: str) -> None:
    with pytest.raises(ParseError) as err:
        guidellm.parse(text.encode(), path="b.yaml")
    assert err.value.where == where and problem in err.value.reason


def test_yaml_is_told_by_its_top_level_key_and_guidellm_words() -> None:
    assert guidellm.detect(b"benchmarks:\n- config:\n    module: guidellm.scheduler\n")
    assert guidellm.detect(b"# written by hand\n---\nbenchmarks:\n- request_totals: {}\n")
    assert not guidellm.detect(b"benchmarks:\n- name: something else\n")
    assert not guidellm.detect(b"results:\n  benchmarks:\n    guidellm: 1\n")
    # a JSON report is still JSON
    assert guidellm.detect(b'{"benchmarks": [], "request_totals": {}}')
