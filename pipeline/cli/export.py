"""`scorecard export --parquet DIR`: the store's core tables as Parquet in the Hive layout
(`DIR/<table>/vintage=<vintage>/source=<source>/*.parquet`), for engines that read Parquet
(DuckDB, Spark, Trino), and the GPU-board power samples once more in the fleet layout
(`DIR/fleet_power_samples/day=<date>/*.parquet`, schemas/fleet.py), which `evidence add
--parquet`, `power = { parquet = ... }` and the fleet query (`evidence sql`) read as written.

Registered by pipeline/cli/__init__.py (`app.command("export")(export)`); the work
(`pipeline.store.loads.export_parquet`) is imported inside the command so `scorecard --help`
stays fast.
"""

from pathlib import Path
from typing import Annotated

import typer


def export(
    parquet: Annotated[Path, typer.Option(
        "--parquet", help="Folder to write the tables into (each table's folder replaced).",
        show_default=False)],
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: $SCORECARD_DB or ./scorecard.duckdb).",
        show_default=False)] = None,
) -> None:
    """Write every core table of the store as Parquet partitioned by vintage and source, and
    the GPU-board power samples as a fleet's Parquet (DIR/fleet_power_samples, by day)."""
    import duckdb

    from pipeline.evidence.power.fleet import export_samples
    from pipeline.store import connect, db_path
    from pipeline.store.loads import export_parquet
    from schemas.fleet import FLEET_SAMPLES

    path = db_path(db)
    if not path.exists():
        typer.echo(f"error: {path}: no store there (run `scorecard run` or `scorecard "
                   "ingest` first, or give --db)", err=True)
        raise typer.Exit(1)
    try:
        con = connect(path, read_only=True)
        try:
            written = export_parquet(con, parquet)
            if any(table == "core__power_samples" for table, _ in written):
                fleet = parquet / FLEET_SAMPLES.name
                written.append((FLEET_SAMPLES.name, export_samples(con, fleet)))
        finally:
            con.close()
    except (duckdb.Error, OSError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    for table, rows in written:
        typer.echo(f"{parquet / table}: {rows} rows")
