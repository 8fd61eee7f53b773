"""`python -m pipeline`: the `scorecard` command line.

A command cut short (Ctrl-C: 130, SIGTERM: 143) ends with its code at once, its output
flushed. Run as a module, Python would otherwise exit by SIGINT (-2) whatever the code, once a
KeyboardInterrupt has left Python code that C code was running (`PyRun_*`, as an extension
module's initialisation may do while the command imports): CPython then marks the interrupt
unhandled for the whole process and `python -m` acts on that mark after SystemExit (the
`scorecard` script, run as a file, exits with the code as it is). What a cut-short command
undoes is undone by then: its `finally` blocks and context managers ran on the way here."""

import os
import sys

from pipeline.cli import INTERRUPTED, TERMINATED, app

try:
    app(prog_name="scorecard")
except SystemExit as done:
    if done.code in (INTERRUPTED, TERMINATED):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(done.code)
    raise
