"""Answers that grow once decoded: a gzip body is counted as it inflates (the response cap
holds for the decoded bytes, whatever the compressed length says), and an XML entity bomb is
refused by the parser, not expanded (issue 27, R3; the zip bomb: tests/sources/test_ecb.py)."""

from __future__ import annotations

import gzip

import pytest
import requests
from pytest_httpserver import HTTPServer

from sources.decode import load_xml
from sources.errors import ParseError
from sources.http import FetchError, FetchPolicy, fetch

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>"""


def test_a_gzip_body_is_capped_as_it_inflates(httpserver: HTTPServer) -> None:
    # 10 MB of zeros in about 10 kB: Content-Length is the compressed size, under the cap
    body = gzip.compress(b"\0" * 10_000_000)
    assert len(body) < 20_000
    httpserver.expect_request("/bomb").respond_with_data(
        body, headers={"Content-Encoding": "gzip"})
    policy = FetchPolicy(retries=0, backoff_s=0.0, sleep=lambda s: None, max_bytes=1_000_000)
    with requests.Session() as session, pytest.raises(
            FetchError, match="exceeds the cap of 1000000 bytes"):
        fetch(session, httpserver.url_for("/bomb"), source="test", policy=policy)


def test_an_xml_entity_bomb_is_refused_not_expanded() -> None:
    with pytest.raises(ParseError, match="not valid XML: limit on input amplification"):
        load_xml(BILLION_LAUGHS, source="ecb", url="https://example.test/x.xml")
