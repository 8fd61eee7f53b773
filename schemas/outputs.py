"""Every figure of the scorecard, declared once: the inputs its formulas read, the steps they
compute, and the other figures of the result a report shows (ranges, sizing, break-even).

The declarations are data, in schemas/outputs.toml (one table per column; TOML refuses a name
declared twice): the column name (which carries the unit, as in the store), the unit, the name
a person reads ("CPM"), the meaning and, for a figure candidates are compared on, which way is
better. pipeline/engine/metrics.py takes its units and meanings from here and the reports their
labels ("CPM (EUR/Mtok)"); the store's own columns are declared in schemas/fields.py, and a
name declared in both has the same unit in both.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DECLARATIONS = Path(__file__).with_name("outputs.toml")
BETTER = ("lower", "higher")


@dataclass(frozen=True)
class Output:
    name: str
    unit: str
    title: str
    meaning: str
    better: Literal["lower", "higher"] | None = None
    #: the range a proposal's figure must lie in unless the candidate overrides plausibility
    #: (per GPU when `plausible_per` is "gpu": the figure over the candidate's gpu_count)
    plausible: tuple[float, float] | None = None
    plausible_per: Literal["gpu"] | None = None

    @property
    def label(self) -> str:
        """The title with the unit, as headers and axes show it: "CPM (EUR/Mtok)"."""
        return f"{self.title} ({self.unit})"


def parse(declarations: dict[str, Any]) -> dict[str, Output]:
    """column -> its declaration, in the file's order; a missing, unknown or mistyped key, or a
    `better` other than lower/higher, is a ValueError naming the column."""
    outputs = {}
    optional = {"better", "plausible", "plausible_per"}
    for name, entry in declarations.items():
        keys = set(entry) if isinstance(entry, dict) else set()
        if not {"unit", "title", "meaning"} <= keys <= {"unit", "title", "meaning", *optional}:
            raise ValueError(f"{name}: an output declares unit, title, meaning and optionally "
                             f"{', '.join(sorted(optional))}; got {sorted(keys)}")
        entry = dict(entry)
        plausible = entry.pop("plausible", None)
        if not all(isinstance(v, str) for v in entry.values()):
            raise ValueError(f"{name}: every value but plausible is a string")
        if entry.get("better") not in (None, *BETTER):
            raise ValueError(f"{name}: better is one of {BETTER}, not {entry['better']!r}")
        if entry.get("plausible_per") not in (None, "gpu"):
            raise ValueError(f"{name}: plausible_per is \"gpu\" or absent")
        if plausible is not None and not (
                isinstance(plausible, list) and len(plausible) == 2
                and all(isinstance(v, int | float) for v in plausible)
                and plausible[0] < plausible[1]):
            raise ValueError(f"{name}: plausible is [low, high] with low < high")
        outputs[name] = Output(name, **entry, plausible=None if plausible is None else
                               (float(plausible[0]), float(plausible[1])))
    return outputs


#: column -> its declaration
OUTPUTS: dict[str, Output] = parse(tomllib.loads(DECLARATIONS.read_text(encoding="utf-8")))
