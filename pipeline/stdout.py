"""Writing to a standard output whose reader may leave (`scorecard run | head -1`): once the
pipe is closed, what is left to print goes to /dev/null and the command carries on, as
`head` expects of the programs it reads, rather than ending with a BrokenPipeError (click's
exit 1, the code of invalid input, with no message) or a report folder half-written."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def to_stdout(write: Callable[[], object]) -> None:
    """Run `write` (prints to sys.stdout) and flush; on a closed pipe, point stdout's file
    descriptor at /dev/null, so the rest of the output and the flush at exit are dropped
    quietly."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
