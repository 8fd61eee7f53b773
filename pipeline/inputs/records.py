"""What resolving collects on the way to a `Resolved` (pipeline/engine/resolved.py): each
candidate's numeric input rows, the sources cited, and how evidence files and reference rows
are named in a figure's source."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.inputs.ranges import bounds
from schemas.proposal import Number


class InputRows:
    """Collects one candidate's numeric inputs."""

    def __init__(self, cid: str):
        self.cid = cid
        self.rows: list[dict[str, Any]] = []

    def add(self, name: str, value: Number | None, key: str, grade: str | None,
            source: str | None) -> None:
        if value is None:
            return
        low, mode, high = bounds(value)
        self.rows.append({"id": self.cid, "input": name, "key": key, "low": low, "mode": mode,
                          "high": high, "grade": grade, "source": source})


@dataclass
class Provenance:
    """The sources behind the figures of one run, keyed so each is listed once."""

    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: the proposal's folder, once an evidence path was resolved against it: evidence files
    #: are listed relative to it (`shown`)
    folder: str | None = None

    def add(self, kind: str, subject: str, **facts: Any) -> None:
        self.items[(kind, subject)] = {"kind": kind, "subject": subject, **facts}

    def cite(self, kind: str, subject: str, row: dict[str, Any]) -> None:
        """A reference-table row: its URL, date, licence and snapshot hash."""
        self.add(kind, subject, url=row["source_url"], date=str(row["source_date"]),
                 licence=row["licence"], snapshot_sha256=row["snapshot_sha256"])

    def add_files(self, files: Sequence[tuple[str, str]],
                  dates: Mapping[str, str] | None = None) -> None:
        """Evidence files, each (path, sha256): the user's own data, named relative to the
        proposal's folder and by its hash, with no URL (the analyst's absolute path stays out
        of what a committee reads). `dates` gives a file its "as of"
        (for a benchmark file, the end of its latest run, UTC); a file listed twice (as
        throughput and power evidence) keeps the date it was first given."""
        for path, sha256 in files:
            subject = shown(path, self.folder)
            date = (dates or {}).get(path) or self.items.get(("evidence", subject), {}).get(
                "date")
            self.add("evidence", subject, url=None, date=date, licence="own data",
                     snapshot_sha256=sha256)

    def as_list(self) -> list[dict[str, Any]]:
        return [self.items[k] for k in sorted(self.items)]


def configuration_rows(configs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The static row's `evidence_configurations` from the evidence's configurations
    (`pipeline.evidence.bench.build_report`'s, without their sweeps): goodput at each one's
    operating point (the knee of its sweep, else its run or runs), per GPU on its recorded GPU
    count (else the candidate's gpu_count), `passes` when some load level meets the SLO,
    `chosen` for the one the candidate takes."""
    return [{
        "configuration": pairs(c["settings"]), "label": c["label"], "gpus": c["gpus"],
        "goodput_tokens_per_s": c["tokens_per_s"],
        "goodput_per_gpu_tokens_per_s": c["tokens_per_s_per_gpu"],
        "knee_concurrency": None if c.get("knee_concurrency") is None
        else float(c["knee_concurrency"]),
        "passes": bool(c["tokens_per_s"]), "chosen": bool(c["best"]),
        "runs": c.get("run_count"),
    } for c in configs]


@dataclass(frozen=True)
class Identity:
    """The outcome of an evidence identity check (pipeline/inputs/evidence/identity.py):
    "passed" (something compared, nothing different), "not checked" (nothing could be
    compared) or "failed" (a declared proxy that differs), and what was compared or differs."""

    outcome: str
    detail: str

    @property
    def held(self) -> bool:
        return self.outcome == "passed"


def checks(declaration: str, identity: Identity,
           evidence: Sequence[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The static row's `evidence_checks` for one input's evidence: its identity check and the
    evidence's own checks (`ThroughputEvidence.checks`)."""
    return [{"input": declaration, "check": name, "outcome": result, "detail": detail}
            for name, result, detail in [("identity", identity.outcome, identity.detail),
                                         *evidence]]


def pairs(settings: dict[str, str]) -> list[dict[str, str]]:
    return [{"setting": k, "value": v} for k, v in settings.items()]


def shown(path: str, folder: str | None) -> str:
    """An evidence file's path as the report shows it: relative to the proposal's `folder`
    (symbolic links not followed, so a file beside the proposal is never shown by where a
    link leads; one outside, under `allow_outside`, starts with `..`); as given without one."""
    if folder is None:
        return path
    return Path(os.path.relpath(Path(path).absolute(), Path(folder).absolute())).as_posix()


def shown_notes(notes: Sequence[str], paths: Sequence[str], folder: str | None) -> list[str]:
    """A candidate's notes with each evidence path in `paths` (as the readers were given it,
    and name the files under it) as the report shows it (`shown`): no local path in a note.
    The longest first, so a folder inside another is rewritten whole."""
    for path in sorted(set(paths), key=len, reverse=True):
        said = shown(path, folder)
        notes = [note.replace(path, said) for note in notes]
    return list(notes)


def file_listing(files: Sequence[tuple[str, str]], folder: str | None = None) -> str:
    """Evidence files, each (path, sha256), as a source names them (relative to `folder`,
    the proposal's, when given)."""
    return ", ".join(f"{shown(path, folder)} (sha256 {sha256[:12]})" for path, sha256 in files)


def cite(row: dict[str, Any]) -> str:
    """A reference-table row as a source names it: URL, date, licence, short snapshot hash."""
    return (f"{row['source_url']} ({row['source_date']}, {row['licence']}, sha256 "
            f"{str(row['snapshot_sha256'])[:12]})")
