"""The scorecard table as CSV and Parquet: one row per candidate, columns named with their
unit (`cpm_eur_per_mtok`, ...) as in the store, numbers as numbers, nulls as empty/null."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.frames import scorecard_frame


def write_csv(result: dict[str, Any], path: Path) -> None:
    scorecard_frame(result).write_csv(path, null_value="")


def write_parquet(result: dict[str, Any], path: Path) -> None:
    scorecard_frame(result).write_parquet(path, statistics=False)
