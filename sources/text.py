"""Text that came from outside (server bodies, file contents) made safe to show, and secrets
taken out of everything shown or stored.

- `one_line`: one line, bounded length, control and bidi characters escaped (`\\x1b`,
  `\\u202e`), so a body can never move the cursor, reorder a terminal line or spill over
  many lines. Printing it as rich `Text` (never as markup) is the caller's half.
- `redact` / `redact_bytes`: the one redaction function every message, log, `loads.error`,
  note and stored snapshot goes through. Each secret is replaced in every form a request or
  an echoing server may carry it, in any letter case: as written, JSON-escaped (`\\/`
  included), percent-encoded once or twice (quote and quote_plus), and base64 (standard and
  URL-safe, with or without padding).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Collection
from urllib.parse import quote, quote_plus

REDACTED = "***"
#: Longest foreign text shown in one message.
MAX_SHOWN = 300
#: C0/C1 controls and DEL, and the Unicode bidi controls (LRE..RLO, LRI..PDI, LRM/RLM/ALM).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: The longest URL `one_line` keeps whole (browsers take about 2,000 characters; counted after
#: its scheme), and a URL: up to the next space, quote or bracket, a colon or full stop after
#: it not its own.
_LONGEST_URL = 2048
_URL = re.compile(rf"https?://[^\s'\"<>()\[\]]{{1,{_LONGEST_URL}}}(?<![:.,;])")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def one_line(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` on one line, its control and bidi characters escaped, cut to `limit`
    characters (with "..." and the count left out); a URL the cut falls in is kept whole (a
    cut one cannot be opened), up to the longest a browser takes."""
    shown = _UNSAFE.sub(_escape, text)
    if len(shown) > limit:
        cut = next((url.end() for url in _URL.finditer(shown, max(0, limit - _LONGEST_URL),
                                                       limit + _LONGEST_URL)
                    if url.start() < limit < url.end()), limit)
        if cut < len(shown):
            shown = f"{shown[:cut]}... ({len(shown) - cut} more characters)"
    return shown


def secret_forms(secret: str) -> list[str]:
    """Every form of `secret` to look for (matched in any letter case), longest first (so a
    form holding another is replaced whole)."""
    if not secret:
        return []
    raw = secret.encode()
    escaped = json.dumps(secret)[1:-1]
    forms = {secret, escaped, escaped.replace("/", "\\/"),
             json.dumps(secret, ensure_ascii=False)[1:-1]}
    for encoded in (quote_plus(secret), quote(secret, safe="")):
        forms |= {encoded, quote(encoded, safe="")}
    for b64 in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = b64.decode()
        forms |= {text, text.rstrip("=")}
    return sorted((f for f in forms if f), key=len, reverse=True)


def _pattern(secrets: Collection[str]) -> str | None:
    """Every form, and its upper- and lower-case spelling (a bytes pattern folds ASCII case
    only), as one alternation, longest first."""
    forms = sorted({c for s in secrets for f in secret_forms(s) for c in (f, f.upper(), f.lower())},
                   key=len, reverse=True)
    return "|".join(map(re.escape, forms)) or None


def redact(text: str, secrets: Collection[str]) -> str:
    """`text` with every form of every secret, in any letter case, replaced by ***."""
    pattern = _pattern(secrets)
    return text if pattern is None else re.sub(pattern, REDACTED, text, flags=re.IGNORECASE)


def redact_bytes(data: bytes, secrets: Collection[str]) -> bytes:
    """`data` with every form of every secret, in any letter case, replaced by *** (a body
    that echoes the request is stored without the key)."""
    pattern = _pattern(secrets)
    return data if pattern is None else re.sub(pattern.encode(), REDACTED.encode(), data,
                                               flags=re.IGNORECASE)
