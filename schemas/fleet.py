"""A fleet's power samples as Parquet, the one layout `scorecard export --parquet` writes (its
`fleet_power_samples/` folder) and `scorecard evidence add --parquet`, a candidate's `power = {
parquet = "DIR" }`, `scorecard evidence sql` and docs/energy.md's queries read:

    DIR/day=YYYY-MM-DD/*.parquet      gpu_uuid, timestamp_utc, power_w (W), energy_j (J)

Hive partitions by the sample's UTC day (`day`, a DATE); one row per reading of one GPU at one
instant, power and/or a cumulative energy counter; every GPU one stream at the `gpu_board`
boundary. `PARQUET_TYPES` are the columns' types as DuckDB reads them (checked per file by
pipeline.evidence.power.fleet); `energy_j` is optional."""

from __future__ import annotations

from schemas.table import Table, duckdb_type

FLEET_SAMPLES = Table(
    "fleet_power_samples",
    "A fleet's GPU power and energy-counter readings, Parquet partitioned by UTC day.",
    ("gpu_uuid", "timestamp_utc", "power_w", "energy_j", "day"),
    key=("gpu_uuid", "timestamp_utc"),
    required=("gpu_uuid", "timestamp_utc", "day"),
    provenance=False,
)

#: the partition column (a folder level, not a column of the files)
PARTITION = "day"
#: the columns every file holds, and the optional one, with their DuckDB types
REQUIRED = ("gpu_uuid", "timestamp_utc", "power_w")
OPTIONAL = ("energy_j",)
PARQUET_TYPES = {name: duckdb_type(name).replace("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE")
                 for name in REQUIRED + OPTIONAL}
