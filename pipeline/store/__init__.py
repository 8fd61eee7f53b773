"""The DuckDB file that is the project's memory: raw snapshots, loads, core tables, scorecards.

Every SQL statement on the store lives here: `db` (the file, its DDL, queries into frames),
`snapshots` (raw_snapshots, big ones in files beside the store), `errors` (StoreError,
SnapshotFileError, SnapshotWriteError), `loads` (loads and load_snapshots), `scorecards`
(out__scorecard), `power_samples` (core__power_samples, a view over two tables), `staging`
(Python data handed to an INSERT), `market` (the market of a vintage as a run reads it),
`vintages` (which vintage's rows each source gives), `evidence` (the parsed-evidence cache)
and `caches` (work a rerun need not redo). The names other rooms use are re-exported: `from pipeline
import store; store.load(...)`.
"""

from pipeline.store.db import (
    DEFAULT_DB,
    StoreBusy,
    StoreError,
    connect,
    db_path,
    ensure_tables,
    frame,
)
from pipeline.store.loads import (
    Attempt,
    Batch,
    Fetch,
    LastLoad,
    LoadFailed,
    LoadResult,
    coverage,
    has_loads_up_to,
    last_attempts,
    last_good_loads,
    latest_vintage,
    load,
    record_failure,
)
from pipeline.store.scorecards import (
    StoredRun,
    bundled_only,
    previous_vintage,
    published,
    save_run,
    save_scorecard,
    stored_runs,
    stored_scorecard,
)
from pipeline.store.snapshots import (
    Snapshot,
    latest_load_snapshots,
    save_snapshot,
    sha256,
    snapshot_content,
)

__all__ = [
    "DEFAULT_DB",
    "Attempt",
    "Batch",
    "Fetch",
    "LastLoad",
    "LoadFailed",
    "LoadResult",
    "Snapshot",
    "StoreBusy",
    "StoreError",
    "StoredRun",
    "bundled_only",
    "connect",
    "coverage",
    "db_path",
    "ensure_tables",
    "frame",
    "has_loads_up_to",
    "last_attempts",
    "last_good_loads",
    "latest_load_snapshots",
    "latest_vintage",
    "load",
    "previous_vintage",
    "published",
    "record_failure",
    "save_run",
    "save_scorecard",
    "save_snapshot",
    "sha256",
    "snapshot_content",
    "stored_runs",
    "stored_scorecard",
]
