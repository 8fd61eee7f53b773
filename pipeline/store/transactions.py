"""Ending a transaction that failed: `rollback(con)` rolls back what is open, and says nothing
when the database has ended the transaction itself (a COMMIT that could not write, a full
disk): the error that ended it is the one to report, not "cannot rollback - no transaction is
active" in its place."""

from __future__ import annotations

import duckdb


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK the open transaction; nothing when there is none any more."""
    try:
        con.execute("ROLLBACK")
    except duckdb.TransactionException as error:
        if "no transaction is active" not in str(error):
            raise
