"""Every figure of the scorecard, declared once: the inputs its formulas read, the steps they
compute, and the other figures of the result a report shows (ranges, sizing, break-even), each
with the roles the reports give it.

The declarations are data, in schemas/outputs.toml (one table per column; TOML refuses a name
declared twice): the column name (which carries the unit, as in the store), the unit, the name
a person reads ("CPM"), the meaning and, for a figure candidates are compared on, which way is
better. pipeline/engine/metrics.py takes its units and meanings from here and the reports their
labels ("CPM (EUR/Mtok)"); the store's own columns are declared in schemas/fields.py, and a
name declared in both has the same unit in both.

The roles, each optional: `decimals` (how tables print the figure), `short` (a narrower name
for tight tables), `integer` (a whole number: Int64 in the tables), `ranged` (its Monte Carlo
p5/p50/p95 stand beside it in the tables that show it), `objective` (the name a proposal's
`policy.objectives` gives it as a Pareto objective; its direction is `better`), `shown_in` (the
outputs that show it, SHOWN_IN) and `plausible`. Each output lists its figures in the file's
order (`columns_for`); the candidate keys that are not figures (names, grades, status) are
placed beside them by the report that shows them (`layout`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DECLARATIONS = Path(__file__).with_name("outputs.toml")
BETTER = ("lower", "higher")
#: the outputs a figure can be shown in: "json", a contract key of each candidate in the JSON
#: (a figure without it is under the candidate's `detail`); "csv", the scorecard table (CSV,
#: Parquet and the workbook's Scorecard sheet); "scorecard", the full scorecard of the HTML
#: report; "summary", the terminal summary of `scorecard run`
SHOWN_IN = ("json", "csv", "scorecard", "summary")
#: the percentiles of a ranged figure, each a column `<figure>_<p>` beside it
PERCENTILES = ("p5", "p50", "p95")


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
    decimals: int | None = None
    short: str | None = None
    integer: bool = False
    ranged: bool = False
    objective: str | None = None
    shown_in: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The title with the unit, as headers and axes show it: "CPM (EUR/Mtok)"."""
        return f"{self.title} ({self.unit})"


_TEXTS = ("unit", "title", "meaning", "better", "plausible_per", "short", "objective")
_OPTIONAL = {"better", "plausible", "plausible_per", "decimals", "short", "integer", "ranged",
             "objective", "shown_in"}


def _check(name: str, entry: dict[str, Any]) -> None:
    """A ValueError naming the column when a value of its declaration is mistyped or out of
    its choices, or its roles contradict one another."""
    def fail(why: str) -> None:
        raise ValueError(f"{name}: {why}")

    for key in _TEXTS:
        if key in entry and not isinstance(entry[key], str):
            fail(f"{key} is a string, not {entry[key]!r}")
    if entry.get("better") not in (None, *BETTER):
        fail(f"better is one of {BETTER}, not {entry['better']!r}")
    if entry.get("plausible_per") not in (None, "gpu"):
        fail("plausible_per is \"gpu\" or absent")
    plausible = entry.get("plausible")
    if plausible is not None and not (
            isinstance(plausible, list) and len(plausible) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in plausible)
            and plausible[0] < plausible[1]):
        fail("plausible is [low, high] with low < high")
    decimals = entry.get("decimals")
    if decimals is not None and (type(decimals) is not int or not 0 <= decimals <= 6):
        fail(f"decimals is a whole number from 0 to 6, not {decimals!r}")
    for key in ("integer", "ranged"):
        if not isinstance(entry.get(key, False), bool):
            fail(f"{key} is true or false, not {entry[key]!r}")
    shown = entry.get("shown_in", [])
    if not (isinstance(shown, list) and all(s in SHOWN_IN for s in shown)
            and len(set(shown)) == len(shown)):
        fail(f"shown_in lists some of {SHOWN_IN}, each once, not {shown!r}")
    if "objective" in entry and "better" not in entry:
        fail("an objective declares which way is better")
    if entry.get("ranged") and not (shown and decimals is not None):
        fail("a ranged figure is shown somewhere, with its decimals")
    if "summary" in shown and decimals is None:
        fail("a figure of the summary declares its decimals")
    if "scorecard" in shown and "csv" not in shown:
        fail("a figure of the full scorecard is in the scorecard table too (\"csv\"): the "
             "report reads it from there")


#: in a declaration's name, the hour of a table declared once for each of the day's 24 (two
#: digits: hour_HH_demand_ratio -> hour_00_demand_ratio ...; in its title too, `{hour}` in
#: its meaning the hour's number)
HOUR = "HH"


def _hours(declarations: dict[str, Any]) -> dict[str, Any]:
    """`declarations` with each table named with HOUR declared once per hour, in its place."""
    out: dict[str, Any] = {}
    for name, entry in declarations.items():
        if HOUR not in name:
            out[name] = entry
            continue
        for h in range(24):
            out[name.replace(HOUR, f"{h:02d}")] = {
                k: (v.replace(HOUR, f"{h:02d}").replace("{hour}", str(h))
                    if isinstance(v, str) else v) for k, v in entry.items()}
    return out


def parse(declarations: dict[str, Any]) -> dict[str, Output]:
    """column -> its declaration, in the file's order; a missing, unknown or mistyped key, a
    `better` other than lower/higher, an unknown output in `shown_in` or an objective named
    twice is a ValueError naming the column."""
    outputs: dict[str, Output] = {}
    objectives: dict[str, str] = {}
    for name, entry in declarations.items():
        keys = set(entry) if isinstance(entry, dict) else set()
        if not {"unit", "title", "meaning"} <= keys <= {"unit", "title", "meaning", *_OPTIONAL}:
            raise ValueError(f"{name}: an output declares unit, title, meaning and optionally "
                             f"{', '.join(sorted(_OPTIONAL))}; got {sorted(keys)}")
        _check(name, entry)
        objective = entry.get("objective")
        if objective is not None and objective in objectives:
            raise ValueError(f"{name}: objective {objective!r} is {objectives[objective]}'s")
        if objective is not None:
            objectives[objective] = name
        plausible = entry.get("plausible")
        outputs[name] = Output(
            name, **{k: v for k, v in entry.items() if k not in ("plausible", "shown_in")},
            plausible=None if plausible is None else (float(plausible[0]), float(plausible[1])),
            shown_in=tuple(entry.get("shown_in", ())))
    return outputs


#: column -> its declaration
OUTPUTS: dict[str, Output] = parse(_hours(tomllib.loads(DECLARATIONS.read_text(
    encoding="utf-8"))))


def columns_for(output: str) -> tuple[str, ...]:
    """The figures `output` (one of SHOWN_IN) shows, in the declarations' order."""
    if output not in SHOWN_IN:
        raise ValueError(f"{output!r} is not one of {SHOWN_IN}")
    return tuple(name for name, o in OUTPUTS.items() if output in o.shown_in)


def layout(figures: Sequence[str], lead: Sequence[str] = (),
           beside: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """A table's columns: `lead`, then each of `figures` followed by the keys `beside` places
    after it (its grade, its boundary, the status after the sovereignty level)."""
    after = beside or {}
    return (*lead, *(c for f in figures for c in (f, *after.get(f, ()))))


#: the figures shown in the JSON as keys of each candidate, in the contract's order
CONTRACT_FIGURES = columns_for("json")
#: the figures whose p5/p50/p95 the tables show beside them, in order
RANGED = tuple(name for name, o in OUTPUTS.items() if o.ranged)
#: Pareto objective (policy.objectives) -> (column, +1 when higher is better, -1 when lower)
OBJECTIVES: dict[str, tuple[str, int]] = {
    o.objective: (name, 1 if o.better == "higher" else -1)
    for name, o in OUTPUTS.items() if o.objective is not None}
