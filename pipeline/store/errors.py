"""The store's errors that its modules share: `StoreError` (the store cannot be used; the
message names the file and says why on one line), `SnapshotFileError` (a raw snapshot kept
beside the store is missing or altered) and `SnapshotWriteError` (its file cannot be written),
each said on one line by the CLI, never a traceback."""

from __future__ import annotations


class StoreError(Exception):
    """The store's file cannot be used; the message names it and says why on one line."""


class SnapshotFileError(StoreError, ValueError):
    """A raw snapshot's file beside the store is missing, unreadable or holds other bytes than
    its sha256 says; the message names the file and the snapshot. A ValueError too, so a
    source whose stored answer cannot be read fails alone (`pipeline.ingest.pull`)."""


class SnapshotWriteError(StoreError, OSError):
    """A raw snapshot's file beside the store cannot be written (a full disk, a folder that
    refuses writes); the message names the file, the snapshot and its URL, and the OS's cause
    (`errno` kept). An OSError too, as the error it wraps."""

    def __str__(self) -> str:
        return str(self.strerror)  # the message whole, without OSError's "[Errno N]"
