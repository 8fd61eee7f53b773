"""The published proposal schema knows the currency key forms the parser reads: a money key
with another currency in place of `eur` (`usd_per_hour`, `usd_per_kw_month`, ...) is not
flagged by an editor, and a required money key is still required in one of its forms."""

from __future__ import annotations

import copy
import tomllib
from importlib import resources
from typing import Any

import pytest

from pipeline.engine.contract import schema
from schemas.proposal import ForeignMoney, Proposal

jsonschema = pytest.importorskip("jsonschema")


def _example() -> dict[str, Any]:
    text = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
    return tomllib.loads(text)


def _errors(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema("proposal"))
    return sorted(e.message for e in validator.iter_errors(document))


def test_a_proposal_with_currency_keys_validates_and_parses() -> None:
    data = _example()
    first = data["candidates"][0]  # onprem-fr-h100-fp16, a typed-in cost
    first["cost"] = {"usd_per_hour": 12.5, "source": "quote in USD"}
    first["electricity_usd_per_kwh"] = 0.2
    data["tco"]["hgx-h200"]["hosting"] = {"kind": "colocation", "gbp_per_kw_month": 170}
    del data["tco"]["hgx-h200"]["staff_eur_per_year"]
    data["tco"]["hgx-h200"]["staff_usd_per_year"] = 16_000
    assert _errors(data) == []
    # and the parser reads each under its EUR key as an amount in that currency
    parsed = Proposal.model_validate(data)
    cost = parsed.candidates[0].cost
    assert cost.eur_per_hour == ForeignMoney(amount=12.5, currency="USD")  # type: ignore[union-attr]
    assert parsed.candidates[0].electricity_eur_per_kwh == ForeignMoney(amount=0.2,
                                                                         currency="USD")
    profile = parsed.tco["hgx-h200"]
    assert profile.hosting.eur_per_kw_month == ForeignMoney(  # type: ignore[union-attr]
        amount=170, currency="GBP")


def test_a_required_money_key_missing_in_every_form_is_still_flagged() -> None:
    data = _example()
    broken = copy.deepcopy(data)
    broken["candidates"][0]["cost"] = {"source": "quote"}  # neither eur_ nor usd_per_hour
    assert _errors(broken) != []
    typo = copy.deepcopy(data)
    typo["candidates"][0]["cost"] = {"usd_per_hr": 12.5, "source": "quote"}  # not a money key
    assert _errors(typo) != []
    hosting = copy.deepcopy(data)
    hosting["tco"]["hgx-h200"]["hosting"] = {"kind": "colocation"}
    assert _errors(hosting) != []
    both = copy.deepcopy(data)  # the parser refuses a money key given in two forms
    both["tco"]["hgx-h200"]["staff_usd_per_year"] = 16_000  # beside staff_eur_per_year
    assert _errors(both) != []
    with pytest.raises(ValueError, match="staff_eur_per_year"):
        Proposal.model_validate(both)


def test_a_currency_key_takes_the_amount_alone() -> None:
    # `usd_per_hour = { amount = 12.5, currency = "USD" }` names the currency twice: the
    # parser refuses a table there, so the schema does too (an editor flags it)
    data = _example()
    data["candidates"][0]["cost"] = {"usd_per_hour": {"amount": 12.5, "currency": "USD"},
                                     "source": "quote in USD"}
    assert _errors(data) != []
    with pytest.raises(ValueError, match="`usd_per_hour` names the currency already"):
        Proposal.model_validate(data)
    # the EUR key keeps its table form, and a currency key its range form
    data["candidates"][0]["cost"] = {"eur_per_hour": {"amount": 12.5, "currency": "USD"},
                                     "source": "quote in USD"}
    assert _errors(data) == []
    data["candidates"][0]["cost"] = {"usd_per_hour": {"low": 11.0, "mode": 12.5, "high": 14.0},
                                     "source": "quote in USD"}
    assert _errors(data) == []
