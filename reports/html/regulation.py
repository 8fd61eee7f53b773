"""The report's section on the rules a legal team signs: the sovereignty rubric by EU Cloud
Sovereignty Framework objective (the SEAL each candidate's facts support, then the evidence)
and the regulatory gates with their outcomes, legal basis and citation
(docs/sovereignty.md). Built from the result's frames; reports/templates/report.html lays it
out, escaping every value."""

from __future__ import annotations

from typing import Any

from reports.frames import Frames

#: how an outcome reads in the table
OUTCOMES = {"pass": "pass", "fail": "FAIL (excluded)", "needs_data": "needs data",
            "not_applicable": "not applicable"}
NOT_ESTABLISHED = "–"


def _seal(seal: int | None) -> str:
    return NOT_ESTABLISHED if seal is None else f"SEAL-{seal}"


def regulation_view(frames: Frames) -> dict[str, Any] | None:
    """The rubric (one row per candidate, one column per objective), its evidence and the
    gates; None when the result holds no rubric (a result stored before it)."""
    rubric = frames.rubric
    if rubric.height == 0:
        return None
    objectives = rubric.select("objective", "title", "weight_pct").unique(
        "objective", maintain_order=True)
    heads = ["Candidate"] + [f"{o} {t} ({w:g} %)" for o, t, w in objectives.rows()]
    table = []
    for (cid,), rows in rubric.group_by("id", maintain_order=True):
        seals = dict(zip(rows["objective"], rows["seal"], strict=True))
        table.append([cid] + [_seal(seals.get(o)) for o in objectives["objective"]])
    evidence = [[cid, objective, _seal(seal), text]
                for cid, objective, seal, text in rubric.select(
                    "id", "objective", "seal", "evidence").rows()]
    gates = frames.gates
    return {
        "rubric_heads": heads, "rubric": table, "evidence": evidence,
        "gates": [[r["id"], r["legal_basis"], r["requirement"], OUTCOMES[r["status"]],
                   r["reason"], r["source_url"]] for r in gates.iter_rows(named=True)],
        "gate_classes": ["stale" if r == "fail" else "" for r in gates["status"]],
    }
