"""The published JSON Schemas: the proposal file (schemas/proposal.py's models), the
`scorecard run --json` document and the `scorecard diff --json` one (schemas/result.py).
`scorecard schema proposal|result|diff` prints them; the copies under docs/ are checked
against these in tests/pipeline/test_schemas.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemas.proposal import Proposal
from schemas.result import diff_schema, result_schema

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: kind -> what builds its schema, and its title
_SCHEMAS: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "proposal": (Proposal.model_json_schema,
                 "inference-scorecard proposal (TOML), docs/proposal.md"),
    "result": (result_schema, "inference-scorecard result (scorecard.json), docs/reports.md"),
    "diff": (diff_schema, "inference-scorecard diff (scorecard diff --json), docs/reports.md"),
}
KINDS = tuple(_SCHEMAS)


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of the proposal file, the result document or the diff document."""
    if kind not in KINDS:
        raise ValueError(f"unknown schema {kind!r}; one of: {', '.join(KINDS)}")
    build, title = _SCHEMAS[kind]
    return {"$schema": SCHEMA_DIALECT, **build(), "title": title}
