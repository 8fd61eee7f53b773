"""What every page of the reports shares, for reports/html/ and reports/figures/ alike: the
templates (reports/templates/: the style sheet, the pages, the sections and their small
tables), the escaping of every value a template prints, and the formatting of numbers.

Every `{{ value }}` of a template is escaped (bidi and control characters stripped, then
HTML-escaped, quotes too): a string from a proposal, evidence or a source cannot reach a page
unescaped. Only markup our own code builds (great-tables' table, the charts' SVG) is
passed as `Markup`, where it is built.
"""

from __future__ import annotations

import functools
import html
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from reports.cells import plain


def _printed(value: Any) -> Markup:
    """What a template prints for `{{ value }}`: markup as it is; anything else as HTML
    text, bidi and control characters stripped, quotes escaped too (so it is safe inside an
    attribute), None as the empty string."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(plain("" if value is None else str(value))))


@functools.cache
def templates() -> Environment:
    """The templates of reports/templates/, loaded once per process."""
    environment = Environment(loader=PackageLoader("reports", "templates"), autoescape=True,
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
