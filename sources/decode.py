"""Turning raw response bytes into Python values, with a ParseError that names the source,
the URL and what was wrong (invalid JSON, truncated XML, an error body sent with HTTP 200,
quoted on one line and cut short: it is the server's text; ingest redacts it)."""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from typing import Any
from xml.etree import ElementTree

from sources.errors import ParseError
from sources.http import DEFAULT_MAX_BYTES
from sources.text import one_line

#: bytes read from an archive member at a time while its inflated size is counted
_PIECE_BYTES = 1 << 20


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


def unzip_first(data: bytes, suffix: str, *, source: str, url: str,
                max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The first member of a zip archive whose name ends with `suffix`, inflated piece by piece
    and refused once it passes `max_bytes` (the response cap): a small archive that inflates
    to gigabytes stops at the cap, whatever size its header claims."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in archive.namelist() if n.endswith(suffix)]
            if not names:
                raise ParseError(source, url, "(zip)", f"no {suffix} file inside the archive")
            out = bytearray()
            with archive.open(names[0]) as member:
                while piece := member.read(_PIECE_BYTES):
                    out += piece
                    if len(out) > max_bytes:
                        raise ParseError(source, url, f"(zip) {names[0]}",
                                         f"inflates past the cap of {max_bytes} bytes: refused")
            return bytes(out)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError,
            zlib.error, RuntimeError) as error:  # RuntimeError: an encrypted member
        raise ParseError(source, url, "(zip)", f"not a readable zip: {error}") from None
