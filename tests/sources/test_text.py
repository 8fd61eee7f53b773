"""sources.text: foreign text on one line with its controls escaped, and every form of a
secret redacted."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from sources.text import one_line, redact, redact_bytes


def test_one_line_escapes_controls_and_bidi_and_cuts() -> None:
    text = "a\nb\r\tc\x1b[31m\u202egnp.exe\x00"
    # newline, CR, tab shown as \n \r \t; ESC as \x1b; RLO as \u202e; NUL as \x00
    assert one_line(text) == "a\\nb\\r\\tc\\x1b[31m\\u202egnp.exe\\x00"
    # 500 characters cut to 10, the rest counted: 500 - 10 = 490
    assert one_line("y" * 500, 10) == "yyyyyyyyyy... (490 more characters)"


def test_one_line_never_cuts_a_url() -> None:
    """A URL the cut falls in is kept whole (its trailing colon is not its own); a URL longer
    than a browser takes is cut at that length (2,048 characters after its scheme)."""
    url = "https://data-api.ecb.europa.eu/service/data/EXR/D.USD.EUR.SP00.A?format=csvdata"
    text = f"fetch {url}: HTTP 503: " + "z" * 100
    # the URL: 8 + 22 + 18 + 16 + 15 = 79 characters from 6, ending at 85; the text: 6 + 79
    # + 12 (": HTTP 503: ") + 100 = 197. A cut at 20 falls in the URL: kept whole, 112 left
    assert one_line(text, 20) == f"fetch {url}... (112 more characters)"
    assert one_line(text, 4) == "fetc... (193 more characters)"  # a cut before it: as ever
    endless = "see http://h/" + "b" * 5000
    # "see " and the URL's "http://" and 2,048 characters after it kept: 4 + 7 + 2048 = 2059
    # of 4 + 9 + 5000 = 5013; 2954 left
    assert one_line(endless, 20) == endless[:2059] + "... (2954 more characters)"


@given(secret=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF),
                      min_size=6, max_size=30))
def test_no_form_of_a_secret_survives(secret: str) -> None:
    import re
    from urllib.parse import quote, quote_plus
    b64 = base64.b64encode(secret.encode()).decode()
    encoded = quote(secret, safe="")
    lower_hex = re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)  # %2b%2f%3d
    forms = {secret, encoded, lower_hex, quote_plus(secret), b64, b64.rstrip("="),
             base64.urlsafe_b64encode(secret.encode()).decode()}
    text = " | ".join(sorted(forms))
    shown = redact(text, [secret])
    for form in forms:
        assert form not in shown
    assert secret.encode() not in redact_bytes(text.encode(), [secret])


def test_a_secret_echoed_in_other_case_escaped_or_encoded_twice_is_redacted() -> None:
    import json
    from urllib.parse import quote
    secret = "Ab/Cd+Ef=Gh12kL"
    echoes = {
        "lower case": secret.lower(),                 # ab/cd+ef=gh12kl
        "upper case": secret.upper(),
        "JSON with an escaped slash": 'Ab\\/Cd+Ef=Gh12kL',
        "JSON document": json.dumps({"key": secret}),
        "percent-encoded twice": quote(quote(secret, safe=""), safe=""),  # Ab%252FCd%252B...
        "percent-encoded twice, lower-case hex": quote(quote(secret, safe=""), safe="").lower(),
    }
    for name, echo in echoes.items():
        line = f"server said: {echo} (retry later)"
        assert redact(line, [secret]) == "server said: *** (retry later)" or (
            name == "JSON document"
            and redact(line, [secret]) == 'server said: {"key": "***"} (retry later)'), name
        assert redact_bytes(line.encode(), [secret]).count(b"***") == 1, name
    assert redact("nothing secret here", [secret]) == "nothing secret here"
    assert redact("no secret at all", []) == "no secret at all"


def test_a_non_ascii_secret_in_other_case_is_redacted_from_bytes_too() -> None:
    # a bytes pattern folds ASCII case only: KÉY-É stayed in the stored snapshot (review)
    secret = "kéy-é-0123"
    for data in ("kéy-é-0123".encode(), "KÉY-É-0123".encode()):
        assert redact_bytes(b"echo " + data, [secret]) == b"echo ***"
