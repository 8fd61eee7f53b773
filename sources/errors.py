"""The one error a parser raises: it names the source (tool or publisher), the file and the
field or line at fault, so a user can open the file and see what went wrong; and `reading`,
the guard at each reader entry point that turns what a hostile file can make any parser
raise (overflow, recursion, decoding, type and lookup errors) into that ParseError."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager

import polars as pl


class ParseError(ValueError):
    """Raised by every parse function for bytes it cannot read as its format.

    `source` is the tool or publisher (e.g. "vllm", "nvidia-smi"), `path` the file (or URL) the
    bytes came from, `where` the field, key, line or byte offset at fault.
    """

    def __init__(self, source: str, path: str, where: str, message: str) -> None:
        self.source = source
        self.path = path
        self.where = where
        self.reason = message
        super().__init__(f"{source}: {path}: {where}: {message}")


#: What a malformed file can make parsing code raise besides ParseError: a huge integer
#: (OverflowError), JSON nested 1,000 deep (RecursionError), bytes in no encoding
#: (UnicodeError, a ValueError), a number where a list was (TypeError), a missing key or
#: index (LookupError), broken XML (SyntaxError), a CSV or polars refusal.
UNREADABLE = (ArithmeticError, RecursionError, LookupError, TypeError, ValueError,
              AttributeError, SyntaxError, csv.Error, pl.exceptions.PolarsError)


@contextmanager
def reading(source: str, path: str) -> Iterator[None]:
    """Run a parse: a ParseError passes as raised; any of UNREADABLE becomes a ParseError
    naming `source`, `path` and the error's line when it carries one."""
    try:
        yield
    except ParseError:
        raise
    except UNREADABLE as error:
        line = getattr(error, "lineno", None)
        where = f"line {line}" if isinstance(line, int) else "(file)"
        text = " ".join(str(error).split())[:200]
        raise ParseError(source, path, where,
                         f"unreadable ({type(error).__name__}: {text})") from None
