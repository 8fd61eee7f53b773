"""What a power measurement gives a scorecard candidate: `PowerEvidence` (average power and
energy over the benchmark window, with the files read and the full `EnergyResult`), made by
`pipeline.evidence.power.logs` (power logs) and `pipeline.evidence.power.fleet` (a fleet's Parquet
samples). Apart from both so that the fleet's path imports none of the log readers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.evidence.power.energy import EnergyResult


@dataclass(frozen=True)
class EvidenceFile:
    path: str
    sha256: str
    tool: str
    rows: int


@dataclass(frozen=True)
class PowerEvidence:
    average_power_w: float
    energy_j: float
    boundary: str
    method: str
    grade: str
    notes: tuple[str, ...]
    files: tuple[EvidenceFile, ...]
    energy: EnergyResult

    def joules_per_token(self, tokens: float) -> float | None:
        return self.energy.joules_per_token(tokens)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (times ISO UTC), for `evidence inspect --json` and reports."""
        e = self.energy
        return {
            "average_power_w": self.average_power_w, "energy_j": self.energy_j,
            "boundary": self.boundary, "method": self.method, "grade": self.grade,
            "window_start_utc": e.window.start_utc.isoformat(),
            "window_end_utc": e.window.end_utc.isoformat(),
            "window_s": e.window.duration_s, "uncertainty_s": e.window.uncertainty_s,
            "energy_range_j": list(e.energy_range_j) if e.energy_range_j else None,
            "gpus": list(e.gpus), "idle_power_w": e.idle_power_w,
            "samples_in_window": e.samples_in_window,
            "samples_outside_window": e.samples_outside_window,
            "gaps": [{"device_id": g.device_id, "start_utc": g.start_utc.isoformat(),
                      "end_utc": g.end_utc.isoformat(), "duration_s": g.duration_s,
                      "kind": g.kind} for g in e.gaps],
            "resets": [{"device_id": r.device_id, "at_utc": r.at_utc.isoformat(),
                        "before_j": r.before_j, "after_j": r.after_j} for r in e.resets],
            "stable": e.stable, "stability_reasons": list(e.stability_reasons),
            "notes": list(self.notes),
            "files": [{"path": f.path, "sha256": f.sha256, "tool": f.tool, "rows": f.rows}
                      for f in self.files],
        }
