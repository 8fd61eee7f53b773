"""Strings from outside (proposal labels, evidence file names, source text) made safe for every
output: `plain` strips the bidi controls that reorder how text displays (an RLO turns
"exe.pdf" around) and the control characters no output shows; `spreadsheet_text` also writes
a string a spreadsheet would run as a formula (OWASP CSV injection: a leading = + - @, tab or
CR) as text, with a leading apostrophe. `plain_all` walks a whole value; `plain_json` tells from
the value's JSON text, in a fraction of the walk's time, whether the walk would change
anything."""

from __future__ import annotations

import re
from typing import Any

#: Unicode bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the C0/C1 controls but tab
#: and newline.
_UNSAFE = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: What a JSON text shows of a character `plain` removes, escaped: \uXXXX (C0, DEL, C1, bidi:
#: json.dumps with ensure_ascii=True writes every one so) or the short escapes \b and \f. An
#: escaped backslash followed by a "b" reads as one too: that errs towards walking the value.
_UNSAFE_ESCAPE = re.compile(r"\\(?:u(?:00[01][0-9a-fA-F]|007[fF]|00[89][0-9a-fA-F]|061[cC]"
                            r"|200[eEfF]|202[a-eA-E]|206[6-9])|[bf])")
#: the bytes of a UTF-8 text that are printable ASCII, tab, newline or CR
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\r"
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


def plain_json(text: str) -> bool:
    """Whether the JSON text of a value (json.dumps, with or without ensure_ascii; orjson)
    holds no character `plain` removes, keys included, neither raw nor escaped: True means
    `plain_all` of that value equals the value (of JSON types: dicts, lists, scalars). Two
    scans in C, not a walk of the value in Python (docs/performance.md): the escapes, then the
    characters left once printable ASCII is deleted from the UTF-8 bytes (a multi-byte
    character never holds an ASCII byte, so what is left decodes to the other characters)."""
    if _UNSAFE_ESCAPE.search(text):
        return False
    rest = text.encode("utf-8", "surrogatepass").translate(None, _PRINTABLE_ASCII)
    return _UNSAFE.search(rest.decode("utf-8", "surrogatepass")) is None


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
