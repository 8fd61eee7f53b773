"""Checks recorded as data (issue 26 item 8): a candidate's row holds one record per check on
an input's evidence, the identity check's outcome beside the evidence's own."""

from __future__ import annotations

from pipeline.inputs.records import Identity, checks

OWN = (("SLO attainment", "passed", "4 of 4 offered requests (100.0%) meet the SLO"),)


def test_the_identity_outcome_beside_the_evidence_checks() -> None:
    passed = Identity("passed", "model 'm' (the candidate's 'm')")
    assert passed.held
    assert checks("throughput", passed, OWN) == [
        {"input": "throughput", "check": "identity", "outcome": "passed",
         "detail": "model 'm' (the candidate's 'm')"},
        {"input": "throughput", "check": "SLO attainment", "outcome": "passed",
         "detail": "4 of 4 offered requests (100.0%) meet the SLO"}]
    # a declared proxy whose identity differs: failed, in the identity check's words; a
    # detail that reads like another outcome is never taken for it (it is data, not text)
    proxy = Identity("failed", "not checked: says the file's note")
    assert not proxy.held
    assert checks("throughput", proxy, ())[0]["outcome"] == "failed"
    assert checks("throughput", proxy, ())[0]["detail"] == "not checked: says the file's note"
    # nothing to compare: not checked, with why; not held
    unknown = Identity("not checked", "the file records no accelerator or GPU count")
    assert not unknown.held
    assert (checks("power", unknown, ())[0]["input"], checks("power", unknown, ())[0][
        "outcome"]) == ("power", "not checked")
