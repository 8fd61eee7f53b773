"""No traceback on any input: every real benchmark and power sample of ../shared/samples,
mutated by Hypothesis (bytes flipped, cut, duplicated, hostile tokens written in: 1e999999,
a 400-digit integer, 1,000 nested brackets, invalid UTF-8, NaN), read through the readers'
entry points (`parse_bench`, `read_power`), detected and with the original's format forced.
A reader may refuse a mutant, but only with the project's own errors (ParseError naming the
file, ValidationFailed): any other exception is a traceback a user would see.

The suite runs a bounded number of mutants; SCORECARD_MUTANTS=2500 runs more locally.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.table import ValidationFailed
from sources.bench.registry import detect_format, parse_bench
from sources.errors import ParseError
from sources.power.registry import FORMATS as POWER_FORMATS
from sources.power.registry import read_power
from tests.samples import SAMPLES

MUTANTS = int(os.environ.get("SCORECARD_MUTANTS", "40"))
#: Sample folders of benchmark and power files (market files have their own fault tests).
FOLDERS = ("aiperf", "amd", "codecarbon", "genai_perf", "guidellm", "inferencex", "llmperf",
           "lm_eval", "mlperf", "nvidia_smi", "redfish", "sglang", "trtllm_bench", "vllm",
           "vllm_metrics", "vllm_sweep")
FILES = sorted(p for folder in FOLDERS for p in (SAMPLES / folder).glob("*")
               if p.is_file() and p.stat().st_size < 2_000_000) if SAMPLES.exists() else []
HOSTILE = (b"1e999999", b"9" * 400, b"-" + b"9" * 400, b"[" * 1000, b"{" * 1000,
           b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
           b"\xff\xfe\x00", b"NaN", b"null", b'"', b",,,,", b"\n\n", b"<a>" * 300, b"\x00",
           b"-1", b"0", b"1e308", b"true", b"[]", b"{}", b"\r")
OWN_ERRORS = (ParseError, ValidationFailed)


def _power_format(data: bytes, path: str) -> str | None:
    return next((tool for tool, reader in POWER_FORMATS.items()
                 if reader.detect(data, path)), None)


#: Each sample with the formats its original is read in (bench, power).
KNOWN = {path: (detect_format(path.read_bytes()), _power_format(path.read_bytes(), str(path)))
         for path in FILES}


@st.composite
def mutant(draw: st.DrawFn) -> tuple[Path, bytes]:
    path = draw(st.sampled_from(FILES))
    data = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "delete", "repeat", "replace"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(HOSTILE))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 200))]
        elif kind == "repeat":
            data[at:at] = data[at:at + draw(st.integers(1, 500))] * draw(st.integers(2, 20))
        else:  # a digit run or a quoted value replaced by a hostile token
            end = at
            while end < len(data) and chr(data[end]).isalnum():
                end += 1
            data[at:max(end, at + 1)] = draw(st.sampled_from(HOSTILE))
    return path, bytes(data)


def _read_all(path: Path, data: bytes) -> None:
    bench, power = KNOWN[path]
    name = str(path)
    for attempt in (lambda: parse_bench(data, path=name),
                    lambda: parse_bench(data, path=name, fmt=bench) if bench else None,
                    lambda: read_power(data, path=name),
                    lambda: read_power(data, path=name, format=power) if power else None):
        with contextlib.suppress(*OWN_ERRORS):  # refused, in the project's own words
            attempt()


@pytest.mark.skipif(not FILES, reason="../shared/samples is absent")
@settings(max_examples=MUTANTS, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=mutant())
def test_no_mutant_ends_in_a_traceback(case: tuple[Path, bytes]) -> None:
    path, data = case
    _read_all(path, data)


@pytest.mark.skipif(not FILES, reason="../shared/samples is absent")
def test_the_samples_themselves_are_read() -> None:
    # the originals are known formats: at least the bench and power readers each accept some
    assert sum(1 for bench, _ in KNOWN.values() if bench) >= 10
    assert sum(1 for _, power in KNOWN.values() if power) >= 3


@pytest.mark.parametrize("fmt", ["trace", "guidellm", "aiperf", "llmperf", "vllm"])
def test_json_nested_100000_deep_is_a_parse_error(fmt: str) -> None:
    # json.loads raises RecursionError here; the reader's entry point names file and error
    with pytest.raises(ParseError) as caught:
        parse_bench(b"[" * 100_000 + b"]" * 100_000, path="deep.json", fmt=fmt)
    assert caught.value.path == "deep.json" and "RecursionError" in caught.value.reason
