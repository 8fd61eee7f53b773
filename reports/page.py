"""What every page of the reports shares, for reports/html/ and reports/figures/ alike: the
templates (reports/templates/: the style sheet, the pages, the sections and their small
tables), the escaping of every value a template prints, and the formatting of numbers.

Every `{{ value }}` of a template is escaped (bidi and control characters stripped, then
HTML-escaped, quotes too): a string from a proposal, evidence or a source cannot reach a page
unescaped. Only markup our own code builds (great-tables' table, the charts' SVG) is
passed as `Markup`, where it is built.

The numbers, each format named for what it prints: `num` a table cell, `figure_text` a figure
in a given format, `eur` an amount in whole euros, `significant` a diff's figures and changes,
`money`, `quantity`, `span` and `volume` the charts' captions and labels (kEUR, units, stated
ranges, token volumes). The great-tables scorecard formats its own columns
(reports/html/scorecard_table.py), the workbook its cells with Excel number formats
(reports/files/xlsx.py).
"""

from __future__ import annotations

import contextlib
import functools
import html
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from markupsafe import Markup

from reports.cells import plain


def _printed(value: Any) -> Markup:
    """What a template prints for `{{ value }}`: markup as it is; anything else as HTML
    text, bidi and control characters stripped, quotes escaped too (so it is safe inside an
    attribute), None as the empty string."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(plain("" if value is None else str(value))))


class _CompiledTemplates(FileSystemBytecodeCache):
    """Jinja2's cache of compiled templates, which never fails a report: a folder that cannot
    be written (or that vanished) costs the compile only."""

    def dump_bytecode(self, bucket: Any) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_templates() -> FileSystemBytecodeCache | None:
    try:
        return _CompiledTemplates()
    except (OSError, RuntimeError):  # no temporary folder of our own: compile every time
        return None


@functools.cache
def templates() -> Environment:
    """The templates of reports/templates/, loaded once per process; each compiled once per
    template text and Python version, not in every process: Jinja2 keeps the compiled code in
    the user's own folder of the temporary directory (its `FileSystemBytecodeCache`, which
    checks the template's checksum and refuses a folder another user owns)."""
    environment = Environment(loader=PackageLoader("reports", "templates"), autoescape=True,
                              bytecode_cache=_compiled_templates(),
                              undefined=StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, finalize=_printed)
    environment.filters["num"] = num
    return environment


def render(template: str, **context: Any) -> str:
    """The template of reports/templates/ filled with `context`."""
    return templates().get_template(template).render(context)


def macros(template: str) -> Any:
    """The macros of a template of reports/templates/, to call from Python (each returns
    `Markup`)."""
    return templates().get_template(template).module


def num(value: Any, digits: int = 4) -> str:
    """A figure as a table prints it: thousands separators, no exponent, 4 significant
    digits below 100; n/a for a missing one."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.{digits}g}"
    return str(value)


def eur(amount: float | None) -> str:
    """Euros a reader can take in at a glance: 31,543 EUR (n/a when not computed)."""
    return "n/a" if amount is None else f"{amount:,.0f} EUR"


def figure_text(value: float | None, spec: str) -> str:
    """A figure in the format `spec` (`,.0f`: 1,281), n/a for a missing one."""
    return "n/a" if value is None else format(value, spec)


def significant(value: float | None, signed: bool = False) -> str:
    """A figure to 4 significant digits (`+` before a positive one when `signed`: a
    change), 0 for zero, n/a for a missing one."""
    if value is None:
        return "n/a"
    if value == 0:
        return "0"
    return f"{value:+.4g}" if signed else f"{value:.4g}"


def is_money(unit: str | None) -> bool:
    """EUR, or EUR per a time or a thing (EUR/month); not EUR/Mtok-style rates that stay
    small, which also pass: they never reach a thousand."""
    return bool(unit) and str(unit).split("/")[0] == "EUR"


def money(amount: float, unit: str = "EUR") -> str:
    """Euros as a reader takes them in: 312 kEUR, 1.25 MEUR, 840 EUR, 125.3 kEUR/month."""
    size = abs(amount)
    if size >= 1e6:
        return f"{amount / 1e6:.4g} M{unit}"
    if size >= 1e3:
        return f"{amount / 1e3:.4g} k{unit}"
    return f"{amount:.4g} {unit}"


def quantity(amount: float | None, unit: str | None) -> str:
    """A figure with its unit; EUR amounts as `money`, no exponents."""
    if amount is None:
        return "n/a"
    if unit == "EUR" or (is_money(unit) and abs(amount) >= 1e3):
        return money(amount, str(unit))
    if abs(amount) >= 1e4:
        text = f"{amount:,.0f}"
    elif amount == int(amount):
        text = f"{amount:.0f}"
    else:
        text = f"{amount:.4g}"
    return f"{text} {unit}" if unit else text


def span(low: float, high: float, unit: str | None) -> str:
    """A stated range: `312 kEUR to 382 kEUR`, `3400 to 4400 tokens/s` (a ratio unitless)."""
    if unit == "EUR" or (is_money(unit) and max(abs(low), abs(high)) >= 1e3):
        return f"{money(low, str(unit))} to {money(high, str(unit))}"
    unit = None if unit == "ratio" else unit
    return f"{quantity(low, None)} to {quantity(high, unit)}"


def volume(tokens_per_day: float) -> str:
    """A daily token volume: 128 M tokens/day."""
    for size, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if tokens_per_day >= size:
            return f"{tokens_per_day / size:.3g} {prefix} tokens/day"
    return f"{tokens_per_day:.3g} tokens/day"
