"""Declared money in another currency: `{ amount = ..., currency = "USD" }` or a key naming the
currency (`usd_per_hour`), converted to EUR at the vintage's ECB rate through
`schemas.fx.convert_to_eur`, the rate named in the figure's source."""

from __future__ import annotations

import pytest
from proposals import candidate, proposal

from pipeline.engine.resolved import Market
from pipeline.inputs import resolve
from pipeline.inputs.market.currency import vintage_end
from schemas.proposal import ForeignMoney, ProposalError, parse

# The bundled vintage is 2026-10; the latest bundled USD rate on or before 2026-10-31 is the
# ECB's 2026-09-30 reference rate, 1.1355 USD per EUR (sources/reference/fx_rates.csv).
RATE = 1.1355

#: AWS p5.48xlarge (8 x H100) in eu-central-1, typed in at its USD list price
AWS = candidate("aws-p5", deployment='"cloud"', provider='"aws"', zone='"DE"',
                cost='{ usd_per_hour = 55.04, source = "AWS price list, p5.48xlarge" }')
TCO = """
[tco.us-quote]
source = "vendor quote in USD"
amortisation_months = 48
staff_usd_per_year = 11355
[tco.us-quote.capex]
gpus = { amount = { low = 200000, mode = 240000, high = 280000 }, currency = "USD" }
servers = 30000
"""



def _inputs(resolved: object, cid: str) -> dict[str, dict[str, object]]:
    frame = resolved.inputs  # type: ignore[attr-defined]
    return {r["input"]: r for r in frame.filter(frame["id"] == cid).iter_rows(named=True)}


def test_both_spellings_parse_to_the_same_amount() -> None:
    keyed = parse(proposal("t", AWS), "p.toml").candidates[0].cost
    table = parse(proposal("t", AWS.replace(
        "usd_per_hour = 55.04", 'eur_per_hour = { amount = 55.04, currency = "USD" }')),
        "p.toml").candidates[0].cost
    assert keyed == table
    assert keyed.eur_per_hour == ForeignMoney(amount=55.04, currency="USD")  # type: ignore[union-attr]


def test_a_usd_price_is_converted_at_the_vintages_ecb_rate(market: Market) -> None:
    resolved = resolve(parse(proposal("t", AWS), "p.toml"), "p.toml", market)
    price = _inputs(resolved, "aws-p5")["price_eur_per_hour"]
    # 55.04 USD / 1.1355 USD per EUR = 48.4720 EUR per hour
    assert price["mode"] == pytest.approx(55.04 / RATE, rel=1e-12)
    assert price["mode"] == pytest.approx(48.4720, abs=1e-4)
    assert price["source"] == ("AWS price list, p5.48xlarge; 55.04 USD at the ECB rate of "
                               "2026-09-30 (1.1355 USD per EUR)")
    row = resolved.static.row(0, named=True)
    assert row["zone"] == "DE-LU"  # the proposal: zone = "DE" with a USD price
    assert any("ECB rate of 2026-09-30" in n for n in row["notes"])
    assert any(s["kind"] == "fx_rate" for s in resolved.sources)


def test_tco_lines_in_usd_convert_bound_by_bound(market: Market) -> None:
    own = candidate("own", cost='{ tco = "us-quote" }')
    resolved = resolve(parse(proposal("t", TCO, own), "p.toml"), "p.toml", market)
    inputs = _inputs(resolved, "own")
    capex = inputs["capex_eur"]
    # GPUs 200,000 / 240,000 / 280,000 USD / 1.1355 + servers 30,000 EUR:
    # 176,133.86 + 30,000 = 206,133.86; 211,360.63 + 30,000 = 241,360.63;
    # 246,587.41 + 30,000 = 276,587.41
    assert capex["low"] == pytest.approx(200000 / RATE + 30000, rel=1e-12)
    assert capex["mode"] == pytest.approx(241360.63, abs=0.01)
    assert capex["high"] == pytest.approx(280000 / RATE + 30000, rel=1e-12)
    assert "240000 [200000 .. 280000] USD at the ECB rate of 2026-09-30" in capex["source"]
    # 11,355 USD / 1.1355 = 10,000 EUR a year
    assert inputs["staff_eur_per_year"]["mode"] == pytest.approx(10000.0, rel=1e-12)


def test_a_currency_without_a_rate_is_an_error_naming_the_key(market: Market) -> None:
    text = proposal("t", AWS.replace("usd_per_hour", "jpy_per_hour"))
    with pytest.raises(ProposalError) as caught:
        resolve(parse(text, "p.toml"), "p.toml", market)
    assert str(caught.value).startswith(
        "p.toml: candidates[0] (id 'aws-p5').cost.eur_per_hour: no ECB rate for JPY up to "
        "2026-10-31 in the store (currencies with a rate: USD)"), str(caught.value)


def test_a_negative_foreign_amount_is_refused_at_parse() -> None:
    with pytest.raises(ProposalError, match=r"cost\.eur_per_hour: must be positive, got -1"):
        parse(proposal("t", AWS.replace("55.04", "-1")), "p.toml")


def test_vintage_end() -> None:
    assert str(vintage_end("2026-10")) == "2026-10-31"
    assert str(vintage_end("2026-02")) == "2026-02-28"
    assert str(vintage_end("2026-12")) == "2026-12-31"
