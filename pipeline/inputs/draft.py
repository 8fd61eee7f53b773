"""One candidate being resolved: its static row, numeric inputs and notes as each input module
fills them in, the error that names the candidate's key in the proposal file, and where its
evidence files are (inside the proposal's folder unless the proposal allows otherwise)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipeline.engine.resolved import Market
from pipeline.inputs.records import InputRows, Provenance
from schemas.proposal import Candidate, Proposal, ProposalError


class Draft:
    """The candidate `c` (index `index` in the proposal at `path`) against the market `mkt`;
    the sources it cites go to the run's `prov`; its evidence files are read back from the
    store `cache` when they were parsed before (`pipeline.evidence.cache`; None: parsed)."""

    def __init__(self, index: int, c: Candidate, proposal: Proposal, path: str, mkt: Market,
                 prov: Provenance, cache: Any | None = None):
        self.c, self.proposal, self.path, self.mkt, self.prov = c, proposal, path, mkt, prov
        self.cache = cache
        at = proposal.written_at(index)  # its place in the file, mixes counted
        self.key = f"candidates[{at}]"
        self.where = f"candidates[{at}] (id {c.id!r})"
        self.notes: list[str] = []
        #: the evidence files and folders read (`evidence_path`), as the readers name them
        self.evidence_paths: list[str] = []
        self.inputs = InputRows(c.id)
        self.row: dict[str, Any] = {
            "id": c.id, "label": c.label, "deployment": c.deployment, "provider": c.provider,
            "region": c.region, "gpu": c.gpu, "gpu_count": c.gpu_count, "model": c.model,
            "precision": c.precision, "engine": c.engine, "example_data": c.example_data,
            "evidence_configurations": [], "evidence_configuration": None,
            "quality": None, "quality_exclusion": None,
            "quality_validation": None, "identity_check": None, "evidence_checks": [],
            "power_identity_check": None, "quality_identity_check": None,
        }

    def error(self, key: str, problem: str) -> ProposalError:
        return ProposalError(self.path, f"{self.where}.{key}", problem)

    def evidence_path(self, text: str, key: str) -> Path:
        """The evidence file or folder `text` names, relative to the proposal's folder, which
        it must stay inside (symbolic links followed), as must every symbolic link inside the
        folder, unless the proposal sets `allow_outside = true`: `evidence = "../../etc"`, or
        a folder holding a link to /etc, is refused."""
        folder = Path(self.path).parent
        path = folder / text  # an absolute `text` replaces the folder
        if not path.exists():
            raise self.error(key, f"no such file or folder: {path}")
        if not self.proposal.allow_outside:
            inside = folder.resolve()
            if not path.resolve().is_relative_to(inside):
                raise self.outside(key, repr(text), inside)
            links = sorted(p for p in path.rglob("*") if p.is_symlink()) if path.is_dir() else []
            for link in links:
                if not (target := Path(os.path.realpath(link))).is_relative_to(inside):
                    shown = (Path(text) / link.relative_to(path)).as_posix()
                    raise self.outside(key, f"{shown!r} (a symbolic link to {target})", inside)
        self.prov.folder = str(folder)  # the files read are listed relative to it
        self.evidence_paths.append(str(path))
        return path

    def outside(self, key: str, what: str, folder: Path) -> ProposalError:
        return self.error(key, f"{what} leads outside the proposal's folder ({folder}): move "
                          "the evidence beside the proposal, or set allow_outside = true at "
                          "the top of the proposal")

    def gpu_row(self) -> dict[str, Any]:
        """The candidate's accelerator: the market's hardware table, or a `[hardware.NAME]`
        of the proposal, given as a row of that table, cited as declared."""
        declared = self.proposal.hardware.get(self.c.gpu)
        if declared is not None:
            name = self.c.gpu
            citation = f"declared in the proposal, [hardware.{name}]: {declared.source}"
            self.prov.add("hardware", name, url=None, date=None,
                          licence="declared in the proposal", snapshot_sha256=None,
                          source=declared.source)
            return {"gpu": name, "gpu_vendor": declared.vendor, "form_factor": None,
                    "memory_gb": declared.memory_gb,
                    "memory_bandwidth_gb_per_s": declared.memory_bandwidth_gb_per_s,
                    "bf16_dense_tflops": declared.bf16_dense_tflops,
                    "fp8_dense_tflops": declared.fp8_dense_tflops, "tdp_w": declared.tdp_w,
                    "source_url": citation, "source_date": None,
                    "licence": "declared in the proposal", "snapshot_sha256": None}
        gpu = self.mkt.row("hardware", gpu=self.c.gpu)
        assert gpu is not None  # checked before any input is resolved
        return gpu
