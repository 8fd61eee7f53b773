"""Reading JSON documents the benchmark tools write: one value, a pretty-printed value, or
several values one after the other (vLLM `--append-result`), or JSON Lines records, with errors
that name the line and column. Also the cheap look at a file's head that `detect` functions use,
and the name of the other file of a run a tool writes as two (`partner`)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import Path
from typing import Any

from sources.errors import ParseError

HEAD_BYTES = 65_536
#: the UTF-8 byte-order mark some editors (Notepad, Excel's "CSV UTF-8") put at a file's start
BOM = b"\xef\xbb\xbf"


def head(path_or_bytes: str | Path | bytes, size: int = HEAD_BYTES) -> bytes:
    """The first `size` bytes of a file or a byte string (b"" for an unreadable path), a
    byte-order mark at the start dropped: the readers decode with it dropped ("utf-8-sig"),
    so every detector, benchmark or power, looks past it."""
    if isinstance(path_or_bytes, bytes | bytearray | memoryview):
        return bytes(path_or_bytes[:size]).removeprefix(BOM)
    try:
        with Path(path_or_bytes).open("rb") as f:
            return f.read(size).removeprefix(BOM)
    except OSError:
        return b""


def paired_name(name: str, suffixes: tuple[str, str]) -> str | None:
    """`name` with one of the two suffixes swapped for the other (None when it has neither):
    the other file of a run a tool writes as two."""
    first, second = suffixes
    for this, other in ((first, second), (second, first)):
        if name.endswith(this):
            return name[: -len(this)] + other
    return None


def decode_text(data: bytes, source: str, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ParseError(source, path, f"byte {err.start}", "not UTF-8 text") from None


def _position(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


class _Constant:
    """A NaN or Infinity as json read it, until `_settled` says whether it may stand."""

    def __init__(self, name: str) -> None:
        self.name = name


def _settled(value: Any, settings: Collection[str], source: str, path: str, where: str) -> Any:
    """`value` with +Infinity kept (as float inf) where a key named in `settings` holds it in
    the value's object (or an object of its list of runs); any other NaN or Infinity is a
    ParseError naming its key."""
    def check(item: Any, at: str) -> None:
        if isinstance(item, _Constant):
            raise ParseError(source, path, at, f"non-standard JSON constant {item.name}")
        if isinstance(item, dict):
            for key, inner in item.items():
                check(inner, f"{at}: key {key!r}")
        elif isinstance(item, list):
            for n, inner in enumerate(item):
                check(inner, f"{at}[{n}]")

    for run in value if isinstance(value, list) else [value]:  # one run, or a list of runs
        if isinstance(run, dict):
            for key in settings:
                if isinstance(run.get(key), _Constant) and run[key].name == "Infinity":
                    run[key] = math.inf
    check(value, where)
    return value


def json_values(data: bytes, source: str, path: str, *, settings: Collection[str] = ()
                ) -> list[Any]:
    """Every JSON value in the bytes, in order (at least one), NaN/Infinity rejected, except
    Infinity as the value of a top-level key in `settings`: a load setting a tool writes so
    (SGLang's and vLLM's `request_rate: Infinity`, every request at once), read as float
    inf."""
    text = decode_text(data, source, path)
    seen: list[_Constant] = []

    def constant(name: str) -> _Constant:
        seen.append(_Constant(name))
        return seen[-1]

    decoder = json.JSONDecoder(parse_constant=constant if settings else reject_constant)
    values: list[Any] = []
    pos = 0
    end = len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise ParseError(source, path, _position(text, err.pos), f"invalid JSON: {err.msg}"
                             ) from None
        except ValueError as err:  # from reject_constant
            raise ParseError(source, path, _position(text, pos), str(err)) from None
        values.append(_settled(value, settings, source, path, f"value {len(values) + 1}")
                      if seen else value)
    if not values:
        raise ParseError(source, path, "line 1", "empty file: no JSON value")
    return values


def json_lines(text: str, source: str, path: str, *,
               constants: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of JSON Lines text; a line that is not a
    JSON object, or holds NaN or Infinity unless `constants` allows them, is a ParseError
    naming the line."""
    decoder = json.JSONDecoder() if constants else json.JSONDecoder(
        parse_constant=reject_constant)
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = decoder.decode(line)
        except json.JSONDecodeError as err:
            raise ParseError(source, path, f"line {n} column {err.colno}",
                             f"invalid JSON: {err.msg}") from None
        except ValueError as err:  # from reject_constant
            raise ParseError(source, path, f"line {n}", str(err)) from None
        if not isinstance(record, dict):
            raise ParseError(source, path, f"line {n}", "expected a JSON object per line")
        records.append((n, record))
    return records


def reject_constant(name: str) -> float:
    """`parse_constant` hook for json: NaN and Infinity are not JSON, and not a figure."""
    raise ValueError(f"non-standard JSON constant {name}")


def number(value: Any, source: str, path: str, where: str) -> float | None:
    """A finite float from a JSON number or numeric string; None for null; ParseError else."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ParseError(source, path, where, f"expected a number, got {value!r}")
    if isinstance(value, int | float):
        out = float(value)
    elif isinstance(value, str):
        try:
            out = float(value.replace(",", ""))
        except ValueError:
            raise ParseError(source, path, where, f"expected a number, got {value!r}") from None
    else:
        raise ParseError(source, path, where, f"expected a number, got {type(value).__name__}")
    if math.isnan(out):
        return None
    return out


#: the largest whole number a benchmark file may give (a count, a token total, a timestamp in
#: ns): what a 64-bit integer column holds
INTEGER_LIMIT = 2**63 - 1


def integer(value: Any, source: str, path: str, where: str) -> int | None:
    """A whole number within +-INTEGER_LIMIT (a count of -1e308 is refused here, naming the
    key, rather than overflowing later); None for null; ParseError else."""
    out = number(value, source, path, where)
    if out is None:
        return None
    if math.isinf(out) or out != int(out):
        raise ParseError(source, path, where, f"expected a whole number, got {value!r}")
    if abs(out) > INTEGER_LIMIT:
        raise ParseError(source, path, where, f"{value!r} is beyond any count or timestamp "
                         f"(at most {INTEGER_LIMIT:,} in size)")
    return int(out)
