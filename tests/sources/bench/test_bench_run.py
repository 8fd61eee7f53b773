"""The per-request frame every bench reader returns has the stored table's columns and dtypes."""

from __future__ import annotations

import polars as pl

from schemas.evidence import BENCH_REQUESTS
from schemas.fields import FIELDS
from sources.bench.run import ITLS, conform


def test_conformed_frame_is_the_stored_table_without_the_run_key() -> None:
    frame = conform(pl.DataFrame({"request_id": ["a"], "ttft_s": [0.25], "ok": [True],
                                  ITLS: [[0.01, 0.02]]}))
    stored = [c for c in BENCH_REQUESTS.columns if c not in ("bench_file", "run_index")]
    # 12 declared request columns in table order, then the optional gap list
    assert frame.columns == [*stored, ITLS] and len(stored) == 12
    assert all(frame.schema[c] == FIELDS[c].dtype for c in stored)
    # absent columns are null, never 0
    assert frame["output_tokens"][0] is None and frame["ttft_s"][0] == 0.25
