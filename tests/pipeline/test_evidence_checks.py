"""Checks recorded as data (issue 26 item 8): a candidate's row holds one record per check on
an input's evidence, the identity check's outcome beside the evidence's own."""

from __future__ import annotations

from pipeline.inputs.records import checks

OWN = (("SLO attainment", "passed", "4 of 4 offered requests (100.0%) meet the SLO"),)


def test_the_identity_outcome_beside_the_evidence_checks() -> None:
    held = checks("throughput", True, "held: model 'm' (the candidate's 'm')", OWN)
    assert held == [
        {"input": "throughput", "check": "identity", "outcome": "passed",
         "detail": "model 'm' (the candidate's 'm')"},
        {"input": "throughput", "check": "SLO attainment", "outcome": "passed",
         "detail": "4 of 4 offered requests (100.0%) meet the SLO"}]
    # a declared proxy whose identity differs: failed, in the identity check's words
    proxy = checks("throughput", False, "differs, a declared proxy (same GPU): model: the file "
                   "says 'a', the candidate 'b'", ())
    assert (proxy[0]["outcome"], proxy[0]["detail"]) == (
        "failed", "differs, a declared proxy (same GPU): model: the file says 'a', the "
        "candidate 'b'")
    # nothing to compare: not checked, with why
    unknown = checks("throughput", False, "not checked: the file and the candidate do not "
                     "both state a model or a precision", ())
    assert (unknown[0]["outcome"], unknown[0]["detail"]) == (
        "not checked", "the file and the candidate do not both state a model or a precision")
