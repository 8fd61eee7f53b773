"""Turning raw response bytes into Python values, with a ParseError that names the source,
the URL and what was wrong (invalid JSON, truncated XML, an error body sent with HTTP 200,
quoted on one line and cut short: it is the server's text; ingest redacts it)."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree

from sources.errors import ParseError
from sources.text import one_line


def load_json(data: bytes, *, source: str, url: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ParseError(source, url, "(body)", f"not valid JSON: {error}") from None


def load_json_object(data: bytes, *, source: str, url: str, required: tuple[str, ...]
                     ) -> dict[str, Any]:
    """A JSON object that must hold `required` keys; anything else (a list, an error object
    such as {"error": ...} served with HTTP 200, a renamed field) is a ParseError."""
    payload = load_json(data, source=source, url=url)
    if not isinstance(payload, dict):
        raise ParseError(source, url, "(body)",
                         f"expected a JSON object, got {type(payload).__name__}")
    missing = [key for key in required if key not in payload]
    if missing:
        hint = {k: payload[k] for k in ("error", "message", "detail") if k in payload}
        raise ParseError(source, url, f"key {missing[0]!r}",
                         f"missing from the response (keys: {sorted(payload)[:12]})"
                         + (f"; server said {one_line(str(hint), 200)}" if hint else ""))
    return payload


def load_xml(data: bytes, *, source: str, url: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise ParseError(source, url, f"XML {error.position}", f"not valid XML: {error}"
                         ) from None
