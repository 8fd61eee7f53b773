"""`staged`: a frame or Arrow stream registered under a name for the statements of a block,
the one way the store hands Python data to an INSERT.

Why not `try: ... finally: con.unregister(name)`: in a transaction that a failed statement
aborted, DuckDB refuses the unregister too ("Current transaction is aborted"), and that error
hid the one that mattered (a stream's read error, a constraint). Here the failed statement's
error is raised; the name then stays registered until the connection closes or the next
registration under it replaces it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import duckdb


@contextlib.contextmanager
def staged(con: duckdb.DuckDBPyConnection, name: str, data: Any) -> Iterator[None]:
    con.register(name, data)
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.TransactionException):
            con.unregister(name)
        raise
    con.unregister(name)
