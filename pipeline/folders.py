"""An output folder replaced whole: the files of a run are written into a temporary sibling and
moved into place only once all are written, under a lock, so a reader, a second run or a
Ctrl-C or SIGTERM never leaves a mix of two runs' files or a half-written one.

`replaced(folder, owned)` yields the folder to write into. A folder that exists must hold
nothing but the files named in `owned` (a report's own files): a folder of other files is never
replaced (`NotAFolder`). When the block ends normally the new set takes the old one's place;
a SIGINT or SIGTERM that arrives during the two renames is held until they and the clean-up
are done, then delivered. When the block raises (an error, a Ctrl-C, a SIGTERM the CLI turns
into an exception) the temporary folder is removed and the old set stays. A second process
writing the same folder meanwhile is refused (`FolderBusy`); what a killed process left beside
the folder (`.NAME.tmp-PID`, `.NAME.old-PID`) is cleaned up by the next writer, the old set
put back first if the kill fell between the two renames.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import signal
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_HELD_BACK = (signal.SIGINT, signal.SIGTERM)


class FolderBusy(Exception):
    """Another process is writing the folder; the message names it."""


class NotAFolder(Exception):
    """The output path is no folder of reports: a file, or a folder holding other files."""


@contextmanager
def replaced(folder: Path, owned: Collection[str]) -> Iterator[Path]:
    """A new empty folder beside `folder` to write into, moved into its place when the block
    ends normally; removed, `folder` untouched, when it raises. `owned`: the names of the
    files the block writes (only a folder holding nothing else is replaced)."""
    folder = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise NotAFolder(f"{folder}: is a file, not a folder to write the report into")
    if folder.is_dir() and (others := sorted(p.name for p in folder.iterdir()
                                             if not (p.is_file() and p.name in owned))):
        raise NotAFolder(f"{folder}: holds {len(others)} file(s) or folder(s) that are not "
                         f"this report's ({', '.join(others[:3])}"
                         f"{', ...' if len(others) > 3 else ''}); the report replaces its "
                         "folder whole, so give an empty or new folder with --out")
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
        with _signals_held():
            if folder.exists():
                folder.rename(old)
            staging.rename(folder)
            shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM recorded, not acted on, while the block runs (whichever thread the
    process lets take them, Python runs handlers in the main thread), then handled as they
    would have been: the handler that was in place called, or the default action taken.
    Outside the main thread handlers cannot be set: the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        pending.append(signum)

    previous = {s: signal.signal(s, hold) for s in _HELD_BACK}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for held in dict.fromkeys(pending):  # as it would have been acted on
            handler = previous[signal.Signals(held)]
            if callable(handler):
                handler(held, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), held)


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
    name = glob.escape(folder.name)
    leftovers = sorted(folder.parent.glob(f".{name}.old-*"))
    if leftovers and not folder.exists():
        leftovers.pop().rename(folder)
    for path in [*leftovers, *folder.parent.glob(f".{name}.tmp-*")]:
        shutil.rmtree(path, ignore_errors=True)

