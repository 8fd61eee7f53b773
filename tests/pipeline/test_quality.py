"""Quality evidence (issue 13, item 5): lm-evaluation-harness results per candidate, checked
against a reference candidate under policy.quality; a drop beyond max_drop (one combined
stderr allowed) makes a candidate not eligible, with the reason; without quality evidence a
note where precisions differ, and under policy.quality a precision or engine other than the
reference's is not validated: not eligible unless the policy waives it (issue 26 item 7)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from samples import sample
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.quality import QualityError, compare, load_quality
from reports.html.first_screen import summary
from schemas.proposal import parse
from schemas.result import Result

runner = CliRunner()


def lm_eval(path: Path, scores: dict[str, dict[str, tuple[float, float | str]]], *,
            n_shot: int = 5, date: float = 1_780_000_000.0,
            lower_better: tuple[str, ...] = ()) -> Path:
    """An lm-eval 0.4 results file: per task, "metric,filter" -> (value, stderr)."""
    results: dict[str, Any] = {}
    for task, metrics in scores.items():
        entry: dict[str, Any] = {"alias": task}
        for key, (value, stderr) in metrics.items():
            metric, flt = key.split(",")
            entry[key] = value
            entry[f"{metric}_stderr,{flt}"] = stderr
        results[task] = entry
    doc = {"results": results, "n-shot": {t: n_shot for t in scores},
           "higher_is_better": {t: {k.split(",")[0]: k.split(",")[0] not in lower_better
                                    for k in m} for t, m in scores.items()},
           "config": {"model": "vllm", "model_args": "pretrained=org/M"},
           "lm_eval_version": "0.4.9", "date": date}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


SE = 0.011  # gsm8k's stderr on both sides: combined sqrt(2) x 0.011 = 0.015556


def evals(root: Path) -> Path:
    lm_eval(root / "bf16" / "results.json",
            {"mmlu": {"acc,none": (0.700, 0.004)}, "gsm8k": {"exact_match,strict-match":
                                                           (0.800, SE)}})
    # fp8: mmlu drop 0.005 - sqrt(2) x 0.004 < 0.01; gsm8k drop 0.025 - 0.015556 = 0.009444
    # <= 0.01: held on both
    lm_eval(root / "fp8" / "results.json",
            {"mmlu": {"acc,none": (0.695, 0.004)}, "gsm8k": {"exact_match,strict-match":
                                                           (0.775, SE)}})
    # int4: gsm8k drop 0.040 - 0.015556 = 0.024444 > 0.01: not held; mmlu's stderr "N/A"
    # counts 0: drop 0.012 - 0.004 = 0.008 <= 0.01, held
    lm_eval(root / "int4" / "results.json",
            {"mmlu": {"acc,none": (0.688, "N/A")}, "gsm8k": {"exact_match,strict-match":
                                                           (0.760, SE)}})
    return root


def test_compare_by_hand(tmp_path: Path) -> None:
    root = evals(tmp_path)
    ref = load_quality(root / "bf16")
    fp8 = compare(load_quality(root / "fp8"), ref, ["mmlu", "gsm8k"], 0.01)
    assert fp8.failures == []
    gsm = fp8.tasks[1]
    assert gsm["metric"] == "exact_match,strict-match"
    assert gsm["drop"] == pytest.approx(0.025)
    assert gsm["stderr"] == pytest.approx(math.sqrt(2) * SE)  # 0.015556
    assert gsm["within_tolerance"] is True
    int4 = compare(load_quality(root / "int4"), ref, ["mmlu", "gsm8k"], 0.01)
    mmlu, gsm = int4.tasks
    assert (mmlu["drop"], mmlu["stderr"], mmlu["within_tolerance"]) == (
        pytest.approx(0.012), 0.004, True)
    assert gsm["within_tolerance"] is False
    assert int4.failures == ["gsm8k exact_match,strict-match 0.76 against 0.8: drop 0.04 - "
                             "stderr 0.016 exceeds max_drop 0.01"]
    assert any("mmlu acc,none has no reported stderr on one side: counted as 0" in n
               for n in int4.notes)
    # a task the reference lacks is a bad policy, not a failing candidate
    with pytest.raises(QualityError, match="'arc_easy' is not scored in the reference"):
        compare(load_quality(root / "fp8"), ref, ["arc_easy"], 0.01)


def test_lower_is_better_and_a_missing_task(tmp_path: Path) -> None:
    ref = load_quality(lm_eval(tmp_path / "r.json", {
        "wikitext": {"word_perplexity,none": (10.0, 0.0)}, "mmlu": {"acc,none": (0.7, 0.0)}},
        lower_better=("word_perplexity",)))
    own = load_quality(lm_eval(tmp_path / "c.json", {
        "wikitext": {"word_perplexity,none": (10.5, 0.0)}}, lower_better=("word_perplexity",)))
    # perplexity up by 0.5 is a drop of 0.5 (value - reference where lower is better)
    result = compare(own, ref, ["wikitext", "mmlu"], 1.0)
    assert result.tasks[0]["drop"] == pytest.approx(0.5)
    assert result.tasks[0]["within_tolerance"] is True
    assert result.tasks[1] == {"task": "mmlu", "metric": "acc,none", "value": None,
                               "reference_value": 0.7, "drop": None, "stderr": 0.0,
                               "within_tolerance": False}
    assert result.failures == ["mmlu acc,none is not scored in its quality evidence"]


def test_latest_file_wins_when_a_task_is_scored_twice(tmp_path: Path) -> None:
    lm_eval(tmp_path / "a.json", {"mmlu": {"acc,none": (0.60, 0.01)}}, date=1_780_000_000)
    lm_eval(tmp_path / "b.json", {"mmlu": {"acc,none": (0.65, 0.01)}}, date=1_770_000_000)
    (tmp_path / "notes.txt").write_text("not an eval")
    ev = load_quality(tmp_path)
    score = ev.score("mmlu")
    assert score is not None and score.value == 0.60  # a.json is the later run
    assert any("task mmlu is scored in 2 files: the latest" in n and "a.json" in n
               for n in ev.notes)
    assert any("notes.txt: skipped" in n for n in ev.notes)
    # lm-eval's date 1,780,000,000 epoch s is 2026-05-28 20:26:40 UTC
    assert ev.dates[str(tmp_path / "a.json")] == "2026-05-28T20:26:40Z"


CANDIDATE = """
[[candidates]]
id = "{id}"
label = "{id}"
deployment = "on_prem"
provider = "self"
zone = "FR"
gpu = "H100-SXM-80GB"
gpu_count = 1
pue = 1.3
precision = "{precision}"
throughput = {{ tokens_per_s = {tokens}, source = "bench" }}
power = {{ watts = 700, boundary = "gpu_board", source = "rated" }}
cost = {{ eur_per_hour = 3.0, source = "quote" }}
"""


def write_proposal(tmp_path: Path, policy: str, *candidates: tuple[str, str, int, str]) -> Path:
    text = '[proposal]\nname = "quality"\n[slo]\nttft_ms = 500\n' + policy
    for cid, precision, tokens, quality in candidates:
        text += CANDIDATE.format(id=cid, precision=precision, tokens=tokens) + quality
    path = tmp_path / "p.toml"
    path.write_text(text)
    return path


def run_json(path: Path, db: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


POLICY = ('[policy]\nquality = { reference = "bf16", tasks = ["mmlu", "gsm8k"], '
          'max_drop = 0.01 }\n')


def test_a_candidate_dropping_beyond_the_tolerance_is_not_eligible(tmp_path: Path, db: Path
                                                                   ) -> None:
    evals(tmp_path / "evals")
    path = write_proposal(
        tmp_path, POLICY,
        ("bf16", "bf16", 1000, 'quality = { evidence = "evals/bf16" }\n'),
        ("fp8", "fp8", 1600, 'quality = { evidence = "evals/fp8" }\n'),
        ("int4", "int4", 2200, 'quality = { evidence = "evals/int4/results.json" }\n'),
        ("awq", "int4", 2400, ""))
    c = run_json(path, db)
    assert c["bf16"]["eligible"] and c["fp8"]["eligible"]
    assert not c["int4"]["eligible"]
    assert c["int4"]["exclusion_reason"] == (
        "quality below the reference 'bf16' beyond max_drop 0.01 (one combined stderr "
        "allowed): gsm8k exact_match,strict-match 0.76 against 0.8: drop 0.04 - stderr 0.016 "
        "exceeds max_drop 0.01")
    fp8 = c["fp8"]["quality"]
    assert (fp8["reference"], fp8["grade"]) == ("bf16", "measured")
    assert [t["task"] for t in fp8["tasks"]] == ["mmlu", "gsm8k"]
    assert fp8["tasks"][1]["drop"] == pytest.approx(0.025)
    assert fp8["tasks"][1]["reference_value"] == 0.8
    # the reference against itself: no drop, its own stderr
    assert [(t["drop"], t["stderr"], t["within_tolerance"]) for t in
            c["bf16"]["quality"]["tasks"]] == [(0.0, 0.004, True), (0.0, SE, True)]
    # without quality evidence under policy.quality, a precision other than the reference's
    # is not validated: not eligible (issue 26 item 7), and the note says why
    assert c["awq"]["quality"] is None and not c["awq"]["eligible"]
    assert c["awq"]["exclusion_reason"].startswith(
        "quality not validated against the reference 'bf16': precision int4, the reference's "
        "bf16, and no quality evidence is given")
    assert [c[k]["detail"]["quality_validation"] for k in ("bf16", "fp8", "int4", "awq")] == [
        "reference", "held", "not held", "not validated"]
    assert any("precision int4 differs from other candidates' (bf16, fp8) and no quality "
               "evidence is given: the precision change is unvalidated" in n
               for n in c["awq"]["notes"])
    # the eval files are cited as evidence, dated by lm-eval's date
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    sources = [s for s in json.loads(result.stdout)["sources"] if s["kind"] == "evidence"]
    assert {s["subject"] for s in sources} == {
        "evals/bf16/results.json", "evals/fp8/results.json", "evals/int4/results.json"}
    assert {s["date"] for s in sources} == {"2026-05-28T20:26:40Z"}


def test_without_quality_evidence_nothing_changes_but_the_note(tmp_path: Path, db: Path
                                                               ) -> None:
    same = write_proposal(tmp_path, "", ("a", "bf16", 1000, ""), ("b", "bf16", 1200, ""))
    c = run_json(same, db)
    assert all(x["quality"] is None and x["eligible"] for x in c.values())
    assert not any("precision" in n for x in c.values() for n in x["notes"])  # no difference
    differ = write_proposal(tmp_path, "", ("a", "bf16", 1000, ""), ("b", "fp8", 1200, ""))
    c = run_json(differ, db)
    assert all(x["eligible"] for x in c.values())
    assert any("precision fp8 differs from other candidates' (bf16)" in n
               for n in c["b"]["notes"])


def test_quality_evidence_without_a_policy_is_shown_not_checked(tmp_path: Path, db: Path
                                                                ) -> None:
    evals(tmp_path / "evals")
    path = write_proposal(tmp_path, "", ("fp8", "fp8", 1000,
                                         'quality = { evidence = "evals/fp8" }\n'))
    (c,) = run_json(path, db).values()
    assert c["eligible"]
    assert c["quality"] == {"reference": None, "grade": "measured", "tasks": [
        {"task": "mmlu", "metric": "acc,none", "value": 0.695, "reference_value": None,
         "drop": None, "stderr": 0.004, "within_tolerance": None},
        {"task": "gsm8k", "metric": "exact_match,strict-match", "value": 0.775,
         "reference_value": None, "drop": None, "stderr": SE, "within_tolerance": None}]}
    assert any("quality evidence read, not checked" in n for n in c["notes"])


@pytest.mark.parametrize(("policy", "quality", "message"), [
    ('[policy]\nquality = { reference = "nobody", tasks = ["mmlu"], max_drop = 0.01 }\n',
     'quality = { evidence = "evals/fp8" }\n',
     "policy.quality.reference: 'nobody' names no candidate"),
    (POLICY, "", "policy.quality.reference: candidate 'bf16' has no quality evidence"),
    ('[policy]\nquality = { reference = "bf16", tasks = ["mmlu x"], max_drop = 0.01 }\n',
     'quality = { evidence = "evals/bf16" }\n', "policy.quality.tasks[0]: expected a task as "
     "lm-eval names it"),
    ('[policy]\nquality = { reference = "bf16", tasks = ["arc_easy"], max_drop = 0.01 }\n',
     'quality = { evidence = "evals/bf16" }\n', "policy.quality.tasks: task 'arc_easy' is "
     "not scored in the reference"),
    ('[policy]\nquality = { reference = "bf16", tasks = [], max_drop = 0.01 }\n',
     'quality = { evidence = "evals/bf16" }\n', "policy.quality.tasks"),
    (POLICY, 'quality = { evidance = "evals/bf16" }\n', "quality"),
])
def test_bad_quality_declarations_are_errors(tmp_path: Path, db: Path, policy: str,
                                             quality: str, message: str) -> None:
    evals(tmp_path / "evals")
    path = write_proposal(tmp_path, policy, ("bf16", "bf16", 1000, quality))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert message in result.stderr, result.stderr


def test_real_nvfp4_against_bf16_gsm8k(tmp_path: Path) -> None:
    # the public pair of ../shared/samples/lm_eval (one model, bf16 and NVFP4 checkpoints,
    # 5-shot gsm8k, 1,319 questions): strict-match 0.7589083 against 0.7899924, drop
    # 0.0310842; stderr sqrt(0.0112194^2 + 0.0117822^2) = sqrt(0.000125876 + 0.000138821)
    # = sqrt(0.000264697) = 0.0162695; drop - stderr = 0.0148147: beyond max_drop 0.01,
    # within 0.02
    bf16 = sample("lm_eval/lm_eval_0.4.11_nemotron3-nano-omni-30b-a3b_bf16_gsm8k_results_"
                  "EXCERPT.json")
    nvfp4 = bf16.with_name(bf16.name.replace("_bf16_", "_nvfp4_"))
    ref, own = load_quality(bf16), load_quality(nvfp4)
    (task,) = compare(own, ref, ["gsm8k"], 0.01).tasks
    assert task["drop"] == pytest.approx(0.0310842, abs=1e-7)
    assert task["stderr"] == pytest.approx(0.0162695, abs=1e-7)
    assert task["within_tolerance"] is False
    assert compare(own, ref, ["gsm8k"], 0.02).tasks[0]["within_tolerance"] is True
    # the flexible-extract filter, named: 0.9090220 - 0.8991660 = 0.0098560, held at 0.01
    (flex,) = compare(own, ref, ["gsm8k:exact_match,flexible-extract"], 0.01).tasks
    assert flex["drop"] == pytest.approx(0.0098560, abs=1e-7)
    assert flex["within_tolerance"] is True


def test_evidence_commands_point_lm_eval_results_to_quality(tmp_path: Path) -> None:
    path = lm_eval(tmp_path / "evals" / "results.json", {"mmlu": {"acc,none": (0.6, 0.01)}})
    alone = runner.invoke(app, ["evidence", "inspect", str(path)])
    assert alone.exit_code == 1
    assert "lm-evaluation-harness results, quality evidence" in alone.output
    assert 'quality = { evidence = "..." }' in alone.output
    assert "neither a benchmark result" not in alone.output


def test_an_unvalidated_precision_is_not_recommended_unless_waived(tmp_path: Path, db: Path
                                                                   ) -> None:
    # issue 26's case: under policy.quality with a BF16 reference, an NVFP4 candidate with no
    # quality evidence. Costs 3 EUR/h each, every hour busy: bf16 at 1,000 tokens/s is
    # 3 / 3.6 = 0.8333 EUR/Mtok, nvfp4 at 2,000 tokens/s 3 / 7.2 = 0.4167 EUR/Mtok. Before, the
    # cheaper nvfp4 was recommended with a note only; now it is not validated, not eligible,
    # and bf16 is recommended.
    evals(tmp_path / "evals")
    candidates = [("bf16", "bf16", 1000, 'quality = { evidence = "evals/bf16" }\n'),
                  ("nvfp4", "NVFP4", 2000, ""),
                  ("same", "bfloat16", 1200, 'engine = "vllm"\n')]
    path = write_proposal(tmp_path, POLICY, *candidates)
    doc = json.loads(runner.invoke(app, ["run", str(path), "--db", str(db), "--json"]).stdout)
    c = {x["id"]: x for x in doc["candidates"]}
    assert c["nvfp4"]["exclusion_reason"] == (
        "quality not validated against the reference 'bf16': precision fp4, the reference's "
        "bf16, and no quality evidence is given (give quality = { evidence = \"evals/...\" }, "
        "or waive it: policy.quality unvalidated = \"allow\" with an unvalidated_reason)")
    # bfloat16 is bf16 (the alias table), but an engine the reference does not state differs
    assert c["same"]["exclusion_reason"].startswith(
        "quality not validated against the reference 'bf16': engine vllm, the reference's not "
        "stated, and")
    assert doc["recommendation"]["candidate"] == "bf16"
    assert c["bf16"]["cpm_eur_per_mtok"] == pytest.approx(3 / 3.6)
    # the reference's precision and engine need no evidence
    path = write_proposal(tmp_path, POLICY, *candidates[:2], ("same", "bfloat16", 1200, ""))
    c = run_json(path, db)
    assert c["same"]["eligible"]
    assert c["same"]["detail"]["quality_validation"] == "same as the reference"
    # waived: eligible, recommended on cost (0.4167 < 0.8333 EUR/Mtok), noted with the reason
    waiver = POLICY.replace("max_drop = 0.01 }", 'max_drop = 0.01, unvalidated = "allow", '
                            'unvalidated_reason = "pilot only: evals run before go-live" }')
    path = write_proposal(tmp_path, waiver, *candidates[:2])
    doc = json.loads(runner.invoke(app, ["run", str(path), "--db", str(db), "--json"]).stdout)
    c = {x["id"]: x for x in doc["candidates"]}
    assert c["nvfp4"]["eligible"] and c["nvfp4"]["detail"]["quality_validation"] == "waived"
    assert doc["recommendation"]["candidate"] == "nvfp4"
    assert c["nvfp4"]["cpm_eur_per_mtok"] == pytest.approx(3 / 7.2)
    assert ("quality not validated against the reference 'bf16': precision fp4, the "
            "reference's bf16, and no quality evidence is given; allowed by policy.quality "
            "unvalidated = \"allow\": pilot only: evals run before go-live") in c["nvfp4"]["notes"]
    assert doc["policy"]["quality"]["unvalidated_reason"] == "pilot only: evals run before go-live"


def test_the_first_screen_prints_the_waiver_and_its_reason(tmp_path: Path, db: Path) -> None:
    evals(tmp_path / "evals")
    waiver = POLICY.replace("max_drop = 0.01 }", 'max_drop = 0.01, unvalidated = "allow", '
                            'unvalidated_reason = "pilot <b>only</b> & evals pending" }')
    path = write_proposal(tmp_path, waiver, ("bf16", "bf16", 1000,
                                             'quality = { evidence = "evals/bf16" }\n'),
                          ("nvfp4", "NVFP4", 2000, ""))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    page = summary(Result.model_validate_json(result.stdout), ())
    section = page.split('<section id="quality-waived">', 1)[1].split("</section>", 1)[0]
    assert "Quality not validated, waived by the policy (1):</h3> nvfp4: precision or engine " \
        "other than the reference bf16's and no quality evidence" in section
    # the reason is foreign text: escaped
    assert 'unvalidated = "allow": pilot &lt;b&gt;only&lt;/b&gt; &amp; evals pending' in section
    # without a waiver there is no such section
    path = write_proposal(tmp_path, POLICY, ("bf16", "bf16", 1000,
                                             'quality = { evidence = "evals/bf16" }\n'))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert "quality-waived" not in summary(Result.model_validate_json(result.stdout), ())


@pytest.mark.parametrize("waiver", ['unvalidated = "allow"',
                                    'unvalidated_reason = "pilot only, for now"',
                                    'unvalidated = "yes", unvalidated_reason = "pilot only"'])
def test_a_waiver_needs_allow_and_its_reason(tmp_path: Path, db: Path, waiver: str) -> None:
    evals(tmp_path / "evals")
    policy = POLICY.replace("max_drop = 0.01 }", f"max_drop = 0.01, {waiver} }}")
    path = write_proposal(tmp_path, policy, ("bf16", "bf16", 1000,
                                             'quality = { evidence = "evals/bf16" }\n'))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert "policy.quality" in result.stderr, result.stderr



#: the reference candidate alone under POLICY, as a proposal's text
ALONE = ('[proposal]\nname = "quality"\n[slo]\nttft_ms = 500\n' + POLICY
         + CANDIDATE.format(id="bf16", precision="bf16", tokens=1000)
         + 'quality = { evidence = "evals/bf16" }\n')


def test_a_proposal_without_a_waiver_keeps_its_identity() -> None:
    # the sha256 of ALONE as computed before the waiver keys existed (schemas/proposal.py of
    # main at 7c8354d): stored runs of such a proposal keep their identity
    assert parse(ALONE, "p.toml").sha256() == (
        "84154c9f6edf72eb66d11df711e7c68da9dbdc151f28ebdd59785eb72ae88fe4")
    waived = ALONE.replace("max_drop = 0.01 }", 'max_drop = 0.01, unvalidated = "allow", '
                           'unvalidated_reason = "pilot only, evals pending" }')
    assert parse(waived, "p.toml").sha256() != parse(ALONE, "p.toml").sha256()


def test_a_quality_note_names_its_file_relative_to_the_proposal(tmp_path: Path, db: Path
                                                                ) -> None:
    """A file in a quality folder that is not lm-eval's results is skipped with a note naming
    it; run by its absolute path (a cron job's), the proposal's notes name it relative to the
    proposal's folder, as the throughput's and power's do, never the analyst's folders."""
    evals(tmp_path / "evals")
    for folder in ("bf16", "fp8"):  # the reference's files are read once, apart
        (tmp_path / "evals" / folder / "README.txt").write_text("how these were run")
    path = write_proposal(
        tmp_path, POLICY,
        ("bf16", "bf16", 1000, 'quality = { evidence = "evals/bf16" }\n'),
        ("fp8", "fp8", 1600, 'quality = { evidence = "evals/fp8" }\n'))
    result = runner.invoke(app, ["run", str(path.resolve()), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    assert str(tmp_path) not in result.stdout
    for c in json.loads(result.stdout)["candidates"]:
        assert (f"quality: evals/{c['id']}/README.txt: skipped (not lm-evaluation-harness "
                "results)") in c["notes"], c["id"]
