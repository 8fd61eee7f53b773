"""`scorecard run` writes the engine's plain data as built once it validates strictly, without
dumping the validated model again (pipeline/run.py `validated`): the text must be the one the
model's own dump gives, byte for byte, and data that needs a conversion goes the model's way."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

from pipeline.engine.scorecard import compute, contract_data
from pipeline.inputs import resolve
from pipeline.run import validated
from pipeline.workspace import dumps, opened
from schemas.result import Result


def _example_data(db: Path) -> dict[str, Any]:
    with opened(None, None, db) as o:
        card = compute(o.proposal, resolve(o.proposal, o.name, o.market, o.cache), o.market)
        return contract_data(card, "2026-11-29T12:00:00+00:00", "test")


def _dates_only(value: object) -> str:
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} in the engine's plain data")


def test_the_example_is_written_as_built_and_as_the_model_dumps_it(tmp_path: Path) -> None:
    data = _example_data(tmp_path / "s.duckdb")
    # plain data only (a model object in it would be written as its str()): JSON types and
    # dates, which the model's dump also leaves as dates
    json.dumps(data, default=_dates_only)
    Result.model_validate(data, strict=True)  # the path `validated` takes: no conversion
    result, text = validated(data)
    assert text == dumps(Result.model_validate(data).document())
    assert result == Result.model_validate(data)


def test_data_that_needs_a_conversion_is_written_from_the_model(tmp_path: Path) -> None:
    data = copy.deepcopy(_example_data(tmp_path / "s.duckdb"))
    # a sovereignty level of 3.0 is the integer 3 to the model (lax mode): the text says 3
    data["candidates"][0]["sovereignty_level"] = float(data["candidates"][0]["sovereignty_level"])
    _, text = validated(data)
    assert text == dumps(Result.model_validate(data).document())
    assert f'"sovereignty_level":{int(data["candidates"][0]["sovereignty_level"])},' in text \
        or f'"sovereignty_level": {int(data["candidates"][0]["sovereignty_level"])},' in text
