"""A candidate's quality: its lm-evaluation-harness evidence compared with the reference
candidate's under `policy.quality` (a drop beyond the tolerance makes it not eligible, with
the reason); under the policy, a candidate without evidence whose precision or engine differs
from the reference's is not validated: not eligible unless the policy waives it
(`unvalidated = "allow"` with a reason). Where candidates differ in precision, a note on each
candidate whose precision change has no quality evidence.

`reference_quality` reads the reference candidate's evidence once per run (None without
`policy.quality`); `resolve_quality` fills a candidate draft's `quality` (the JSON contract's
`{"reference", "tasks", "grade"}`, None without evidence), `quality_exclusion` (the reason
it is not eligible, else None) and `quality_validation` (None without the policy): the
`reference` itself, its evidence `held` or `not held` against the reference's, no evidence
needed (`same as the reference`: its precision and engine), or none given for another
precision or engine: `not validated` (not eligible) or `waived` by the policy (eligible, the
reason on the first screen).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.engine.resolved import Market
from pipeline.evidence.quality import (
    QualityError,
    QualityEvidence,
    compare,
    load_quality,
    summary,
)
from pipeline.inputs.draft import Draft
from pipeline.inputs.evidence.identity import check_identity, precision_name
from pipeline.inputs.records import Provenance, checks
from schemas.proposal import (
    Candidate,
    EstimatedThroughput,
    Proposal,
    ProposalError,
    QualityPolicy,
)


@dataclass(frozen=True)
class Reference:
    """policy.quality's reference candidate: its evidence (read once per run) and its
    precision and engine (`_setup`), which a candidate without evidence must share."""

    evidence: QualityEvidence
    setup: tuple[str | None, str | None]


def reference_quality(proposal: Proposal, path: str, mkt: Market, prov: Provenance
                      ) -> Reference | None:
    rule = proposal.policy.quality
    if rule is None:
        return None
    found = [(i, c) for i, c in enumerate(proposal.candidates) if c.id == rule.reference]
    if not found:
        raise ProposalError(path, "policy.quality.reference", f"{rule.reference!r} names no "
                            f"candidate (ids: {', '.join(c.id for c in proposal.candidates)})")
    index, ref = found[0]
    if ref.quality is None:
        raise ProposalError(path, "policy.quality.reference", f"candidate {ref.id!r} has no "
                            "quality evidence to compare against (give it quality = { "
                            "evidence = \"evals/...\" })")
    d = Draft(index, ref, proposal, path, mkt, prov)
    return Reference(load_quality(d.evidence_path(ref.quality.evidence, "quality.evidence")),
                     _setup(ref))


def resolve_quality(d: Draft, reference: Reference | None,
                    precisions: frozenset[str]) -> None:
    """`precisions`: every candidate's (`precisions_of`, found once per proposal)."""
    q, rule = d.c.quality, d.proposal.policy.quality
    d.row["quality"] = None
    d.row["quality_exclusion"] = None
    if q is None:
        _unvalidated_precision(d, precisions)
        if rule is not None and reference is not None:
            _without_evidence(d, rule, reference)
        return
    is_reference = rule is not None and reference is not None and d.c.id == rule.reference
    # the reference's files were read once for everyone (`reference_quality`); its path is
    # taken here all the same, so that its notes name its files as the report does
    path = d.evidence_path(q.evidence, "quality.evidence")
    own = (reference.evidence if is_reference and reference is not None
           else load_quality(path))
    d.prov.add_files(own.files, own.dates)
    d.notes.extend(f"quality: {n}" for n in own.notes)
    # the GPUs the results were scored on (where the file says the model ran on its machine)
    # against the candidate's; the GPU count is no identity of an accuracy
    identity = check_identity(d, {}, q.evidence, q.proxy, declaration="quality", counts=False,
                              accelerators=tuple(dict.fromkeys(
                                  name for r in own.results for name in r.accelerators)))
    d.row["evidence_checks"] = [*d.row["evidence_checks"],
                                *checks("quality", identity, [])]
    grade = "proxy" if q.proxy is not None and not identity.held else "measured"
    if rule is None or reference is None:
        d.row["quality"] = {"reference": None, "tasks": summary(own), "grade": grade}
        d.notes.append("quality evidence read, not checked: no policy.quality names a "
                       "reference candidate and the tasks to hold")
        return
    try:
        result = compare(own, reference.evidence, list(rule.tasks), rule.max_drop)
    except QualityError as err:
        raise ProposalError(d.path, "policy.quality.tasks", str(err)) from None
    if is_reference:
        # the reference against itself: no drop, its own stderr
        for row in result.tasks:
            own_score = own.score(row["task"], row["metric"])
            row.update(drop=0.0, within_tolerance=True,
                       stderr=None if own_score is None else own_score.stderr)
        result.notes.clear()
    d.row["quality"] = {"reference": rule.reference, "tasks": result.tasks, "grade": grade}
    d.row["quality_validation"] = ("reference" if is_reference else
                                   "not held" if result.failures else "held")
    d.notes.extend(result.notes)
    source = f"{q.evidence} against {rule.reference!r}, max_drop {rule.max_drop:g}"
    if result.failures:
        d.row["quality_exclusion"] = (
            f"quality below the reference {rule.reference!r} beyond max_drop "
            f"{rule.max_drop:g} (one combined stderr allowed): " + "; ".join(result.failures))
        d.notes.append(f"quality ({source}): not held: " + "; ".join(result.failures))
    elif d.c.id != rule.reference:
        d.notes.append(f"quality ({source}): held on {len(result.tasks)} task(s): "
                       + ", ".join(f"{t['task']} drop {t['drop']:.4g}" for t in result.tasks))


def _without_evidence(d: Draft, rule: QualityPolicy, reference: Reference) -> None:
    """Under policy.quality, a candidate without quality evidence: with the reference's
    precision and engine (compared through the alias table; a side that states none differs
    from one that states one) it needs none; with another it is not validated: not eligible,
    unless the policy waives it (`unvalidated = "allow"`, noted with the reason)."""
    differences = [
        f"{what} {'not stated' if mine is None else mine}, the reference's "
        f"{'not stated' if theirs is None else theirs}"
        for what, mine, theirs in zip(("precision", "engine"), _setup(d.c), reference.setup,
                                      strict=True) if mine != theirs]
    if not differences:
        d.row["quality_validation"] = "same as the reference"
        return
    said = (f"quality not validated against the reference {rule.reference!r}: "
            + "; ".join(differences) + ", and no quality evidence is given")
    if rule.unvalidated == "allow":
        d.row["quality_validation"] = "waived"
        d.notes.append(f"{said}; allowed by policy.quality unvalidated = \"allow\": "
                       f"{rule.unvalidated_reason}")
        return
    d.row["quality_validation"] = "not validated"
    d.row["quality_exclusion"] = (f"{said} (give quality = {{ evidence = \"evals/...\" }}, or "
                                  "waive it: policy.quality unvalidated = \"allow\" with an "
                                  "unvalidated_reason)")


def _setup(c: Candidate) -> tuple[str | None, str | None]:
    """A candidate's precision (canonical through the alias table, pipeline/inputs/
    identity.py) and engine (lower case), as quality is validated on them; None: not
    stated."""
    return precision(c), None if c.engine is None else c.engine.strip().lower()


def _unvalidated_precision(d: Draft, precisions: frozenset[str]) -> None:
    """Where candidates differ in precision, a candidate without quality evidence is noted:
    its precision change is a speed claim whose quality is not shown."""
    mine = precision(d.c)
    others = sorted(precisions - {mine} if mine is not None else set())
    if mine is None or not others:
        return
    d.notes.append(f"precision {mine} differs from other candidates' ({', '.join(others)}) "
                   "and no quality evidence is given: the precision change is unvalidated "
                   "(give quality = { evidence = \"evals/...\" } with lm-evaluation-harness "
                   "results and policy.quality)")


def precisions_of(proposal: Proposal) -> frozenset[str]:
    """Every candidate's precision: found once per proposal, not once per candidate (a scan
    per candidate would make the resolve quadratic in the candidates)."""
    return frozenset(p for c in proposal.candidates if (p := precision(c)) is not None)


def precision(c: Candidate) -> str | None:
    """A candidate's precision: its `precision` label, else its estimate's precision, through
    the alias table (pipeline/inputs/evidence/identity.py: `BF16` and `bfloat16` are `bf16`);
    a name the table does not know, lower case."""
    stated = c.precision or (c.throughput.estimate.precision
                             if isinstance(c.throughput, EstimatedThroughput) else None)
    if not stated:
        return None
    return precision_name(stated) or stated.strip().lower()
