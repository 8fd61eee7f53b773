"""The published JSON Schemas: the proposal file (schemas/proposal.py's models) and
the `scorecard run --json` document (schemas/result.py). `scorecard schema proposal|result`
prints them; the copies under docs/ are checked against these in tests/pipeline/test_schemas.py.
"""

from __future__ import annotations

from typing import Any

from schemas.proposal import Proposal
from schemas.result import result_schema

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
KINDS = ("proposal", "result")


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of the proposal file or the result document."""
    if kind not in KINDS:
        raise ValueError(f"unknown schema {kind!r}; one of: {', '.join(KINDS)}")
    document = Proposal.model_json_schema() if kind == "proposal" else result_schema()
    title = ("inference-scorecard proposal (TOML), docs/proposal.md" if kind == "proposal"
             else "inference-scorecard result (scorecard.json), docs/reports.md")
    return {"$schema": SCHEMA_DIALECT, **document, "title": title}
