"""How old each source's figure is at the vintage, and whether that is too old.

A source's "as of" date is the end of the period its figure describes when the subject names
one (an electricity price for `FR 2025-12` is as of 2025-12-31, an annual grid intensity for
`FR 2025` as of 2025-12-31), else the date the figure was observed (a GPU offer). Its age is
counted to the last day of the vintage month. A figure is stale when its age exceeds the
limit of its kind: monthly prices may lag one month, annual intensities are published about a
year late, GPU prices move within weeks, the organisation's own measurements (benchmark,
power and eval files, dated by their runs) hold for a year, engines and drivers changing.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

from schemas.result import PartialMonth, Result, Source

#: kind -> (stale after this many days, the rule in words)
STALE_AFTER_DAYS: dict[str, tuple[int, str]] = {
    "gpu_offer": (62, "price observed within 2 months of the vintage"),
    "electricity_price": (45, "monthly price of the vintage month or the month before"),
    "grid_intensity": (548, "annual figure of the previous year or newer"),
    "evidence": (365, "own measurement within a year of the vintage"),
}
DEFAULT_STALE_AFTER = (92, "within 3 months of the vintage")
#: kinds a vintage does not age: a legal text binds as adopted until it is amended (its rows
#: carry the dates it applies from), whatever the month the prices are of
NOT_AGED = {"regulatory_rule": "a legal text: binds as adopted until amended, not aged",
            "sovereignty_objectives": "a published framework: applies until revised, not aged"}

_MONTH = re.compile(r"(\d{4})-(\d{2})$")
_YEAR = re.compile(r"(?<![\d-])(\d{4})$")


@dataclass(frozen=True)
class Freshness:
    kind: str
    subject: str
    as_of: date | None
    age_days: int | None
    stale: bool | None
    rule: str


def month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def as_of(source: Source) -> date | None:
    subject = source.subject
    if (m := _MONTH.search(subject)) and source.kind != "gpu_offer":
        return month_end(int(m[1]), int(m[2]))
    if (y := _YEAR.search(subject)) and source.kind == "grid_intensity":
        return date(int(y[1]), 12, 31)
    try:
        return date.fromisoformat(str(source.date)[:10])
    except ValueError:
        return None


def freshness(result: Result) -> list[Freshness]:
    """One entry per source of the result, in the result's order."""
    year, month = (int(x) for x in result.vintage.split("-"))
    end = month_end(year, month)
    out = []
    for s in result.sources:
        when = as_of(s)
        age = None if when is None else max(0, (end - when).days)
        if s.kind in NOT_AGED:
            out.append(Freshness(s.kind, s.subject, when, age, False, NOT_AGED[s.kind]))
            continue
        limit, rule = STALE_AFTER_DAYS.get(s.kind, DEFAULT_STALE_AFTER)
        out.append(Freshness(s.kind, s.subject, when, age,
                             None if age is None else age > limit,
                             f"{rule} (stale after {limit} days)"))
    return out


def partial_sentence(vintage: str, p: PartialMonth) -> str:
    """The warning of a vintage whose own data were fetched before its month ended: the
    share of the month they cover (the diff's, the report's first screen, the terminal)."""
    return (f"{vintage} is a partial month: data up to {p.through}, {p.days_covered} of "
            f"{p.days_in_month} days ({p.share_of_month:.0%} of the month); its monthly "
            "figures may move when the month is complete")
