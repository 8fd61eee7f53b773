"""Big files hashed ahead of their turn: `scorecard evidence add` starts hashing the files it is
given before it imports DuckDB, polars and the readers, so that a big power log's sha256 is
ready when the add needs it (docs/energy.md, "Hashed ahead").

`HashedAhead` starts one thread hashing, in order, the regular files among the paths given of
at least `min_bytes` (`AHEAD_BYTES` unless told; folders are walked later, by the add; smaller
files are hashed by the add when their turn comes). A benchmark result that big is hashed in
vain, on the other core while the modules import: its reader reads it whole and hashes those
bytes (power logs can be JSON too, so no name tells them apart beforehand).
Its `sha256` method gives a file's digest, waiting for it when its turn has not come yet,
or None when it was not hashed ahead, could not be read, or has changed since (another size,
modification time, inode or change time, which no `touch` can set back): the caller then
hashes it itself. Standard library only, so that it can be imported first.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path

#: Files smaller than this are not hashed ahead: the add hashes them in a moment itself.
AHEAD_BYTES = 16 << 20
#: Bytes read and hashed at a time (`file_sha256`).
PIECE_BYTES = 16 << 20


class HashedAhead:
    def __init__(self, paths: Sequence[Path], min_bytes: int = AHEAD_BYTES) -> None:
        self._files = [Path(p).resolve() for p in paths if _big_file(Path(p), min_bytes)]
        self._done: dict[Path, tuple[tuple[int, ...], str] | None] = {}
        self._ready = threading.Condition()
        threading.Thread(target=self._hash_all, name="hash-ahead", daemon=True).start()

    def _hash_all(self) -> None:
        for path in self._files:
            found = None
            try:
                before = _identity(path.stat())
                digest = file_sha256(path)
                if _identity(path.stat()) == before:
                    found = (before, digest)
            except Exception:  # unread (gone, unreadable, no memory): the add hashes it
                pass  # itself and says what is wrong; its turn is over, so no caller waits on
            with self._ready:
                self._done[path] = found
                self._ready.notify_all()

    def sha256(self, path: Path, stat: os.stat_result) -> str | None:
        path = path.resolve()
        if path not in self._files:
            return None
        with self._ready:
            self._ready.wait_for(lambda: path in self._done)
            found = self._done[path]
        if found is None or found[0] != _identity(stat):
            return None
        return found[1]


def _identity(stat: os.stat_result) -> tuple[int, ...]:
    """What changes when a file's bytes may have: its size, modification and change times,
    and which file it is."""
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev


def file_sha256(path: Path) -> str:
    """The file's sha256, read in pieces of `PIECE_BYTES`: reading and hashing each release
    the GIL, which another thread (the imports, a parse) meanwhile holds, so each piece waits
    for it once, where `hashlib.file_digest`'s 256 KiB pieces would wait for it at each piece
    (docs/energy.md, "Hashed ahead")."""
    digest, piece = hashlib.sha256(), bytearray(PIECE_BYTES)
    with path.open("rb", buffering=0) as handle:
        while read := handle.readinto(piece):
            digest.update(memoryview(piece)[:read])
    return digest.hexdigest()


def _big_file(path: Path, min_bytes: int) -> bool:
    try:
        return path.is_file() and path.stat().st_size >= min_bytes
    except OSError:
        return False
