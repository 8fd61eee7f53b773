"""An output folder replaced whole: the files of a run are written into a temporary sibling and
moved into place only once all are written, under a lock, so a reader, a second run or a
Ctrl-C or SIGTERM never leaves a mix of two runs' files or a half-written one.

`replaced` yields the folder to write into. When the block ends normally the new set
takes the old one's place (the two renames run with SIGINT and SIGTERM held back); when it
raises (an error, a Ctrl-C, a SIGTERM the CLI turns into an exception) the temporary folder is
removed and the old set stays. A second process writing the same folder meanwhile is refused
(`FolderBusy`); what a killed process left beside the folder (`.NAME.tmp-PID`, `.NAME.old-PID`)
is cleaned up by the next writer, the old set put back first if the kill fell between the two
renames.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HELD_BACK = {signal.SIGINT, signal.SIGTERM}


class FolderBusy(Exception):
    """Another process is writing the folder; the message names it."""


class NotAFolder(Exception):
    """The output path is a file (or something else that is no folder)."""


@contextmanager
def replaced(folder: Path) -> Iterator[Path]:
    """A new empty folder beside `folder` to write into, moved into its place when the block
    ends normally; removed, `folder` untouched, when it raises."""
    if folder.exists() and not folder.is_dir():
        raise NotAFolder(f"{folder}: is a file, not a folder to write the report into")
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    with _locked(parent / f".{folder.name}.lock", folder):
        _clean_up(folder)
        staging = parent / f".{folder.name}.tmp-{os.getpid()}"
        staging.mkdir()
        try:
            yield staging
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        old = parent / f".{folder.name}.old-{os.getpid()}"
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_BACK)
        try:
            if folder.exists():
                folder.rename(old)
            staging.rename(folder)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _locked(path: Path, folder: Path) -> Iterator[None]:
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(f"{folder}: another scorecard run is writing this folder; wait "
                             "for it or give another --out") from None
        yield  # the lock goes with the handle; the empty lock file stays (harmless, reused)


def _clean_up(folder: Path) -> None:
    """What a killed writer left beside `folder`: its old set put back if the new one never
    arrived, temporary folders removed (the lock is held: no other writer is at work)."""
    leftovers = sorted(folder.parent.glob(f".{folder.name}.old-*"))
    if leftovers and not folder.exists():
        leftovers.pop().rename(folder)
    for path in [*leftovers, *folder.parent.glob(f".{folder.name}.tmp-*")]:
        shutil.rmtree(path, ignore_errors=True)
