"""Strings from outside (proposal labels, evidence file names, source text) made safe for every
output: `plain` strips the bidi controls that reorder how text displays (an RLO turns
"exe.pdf" around) and the control characters no output shows; `spreadsheet_text` also writes
a string a spreadsheet would run as a formula (OWASP CSV injection: a leading = + - @, tab or
CR) as text, with a leading apostrophe."""

from __future__ import annotations

import re
from typing import Any

#: Unicode bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the C0/C1 controls but tab
#: and newline.
_UNSAFE = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: What a spreadsheet takes for the start of a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plain(text: str) -> str:
    """`text` without bidi controls and without control characters (tab, newline and CR
    kept)."""
    return _UNSAFE.sub("", text)


def spreadsheet_text(text: str) -> str:
    """`text` as a spreadsheet cell shows it and never runs it: `plain`, then a leading
    apostrophe when it starts like a formula (`=HYPERLINK(...)` stays text)."""
    text = plain(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def spreadsheet_value(value: Any) -> Any:
    """A cell value: strings through `spreadsheet_text`, anything else as it is."""
    return spreadsheet_text(value) if isinstance(value, str) else value


def plain_all(value: Any) -> Any:
    """`value` (a result, a chart spec: dicts, lists, scalars) with every string, keys
    included, through `plain`."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {plain_all(key): plain_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_all(item) for item in value]
    return value
