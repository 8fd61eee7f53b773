"""Declared money in another currency, in EUR: converted at the ECB rate of the vintage (the
latest reference rate on or before its last day) through the one conversion,
`schemas.fx.convert_to_eur`; the amount, the rate and its date go into the figure's source
and the candidate's notes."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl

from pipeline.inputs.draft import Draft
from schemas.fx import convert_to_eur
from schemas.proposal import ForeignMoney, Money, Number, ProposalError, Range


def vintage_end(vintage: str) -> date:
    """The last day of the month YYYY-MM."""
    year, month = map(int, vintage.split("-"))
    first_next = date(year + month // 12, month % 12 + 1, 1)
    return first_next - timedelta(days=1)


def in_eur(d: Draft, value: Money | None, key: str) -> tuple[Number | None, str]:
    """`value` in EUR, and the words saying how it was converted ("" when it was in EUR).
    `key` is the figure's proposal key (`candidates[0].cost.eur_per_hour`, `tco.x...`)."""
    if not isinstance(value, ForeignMoney):
        return value, ""
    amount = value.amount
    if value.currency == "EUR":
        return amount, ""
    points = [amount.low, amount.mode, amount.high] if isinstance(amount, Range) else [amount]
    day = vintage_end(d.mkt.vintage)
    rates = d.mkt.fx if d.mkt.fx is not None else pl.DataFrame(
        schema={"rate_date": pl.Date(), "currency": pl.String(), "units_per_eur": pl.Float64()})

    def convert() -> pl.DataFrame:
        staged = pl.DataFrame({
            "provider_id": "declared", "offer_id": [str(i) for i in range(len(points))],
            "region": "", "pricing_model": "", "source_date": [day] * len(points),
            "currency": value.currency, "price_original_per_hour": [float(x) for x in points],
            "gpu_count": 1})
        return convert_to_eur(staged, rates.select("rate_date", "currency", "units_per_eur"))

    # the same amount (a copied candidate's) is converted once per run
    converted = d.mkt.once(("in_eur", value.currency, *points), convert)
    if converted["fx_units_per_eur"].null_count():
        known = ", ".join(sorted(set(rates["currency"].to_list()))) or "none"
        where = key.replace(d.key, d.where, 1) if key.startswith(d.key) else key
        raise ProposalError(d.path, where, f"no ECB rate for {value.currency} up to {day} in "
                                           f"the store (currencies with a rate: {known})")
    eur = converted["price_eur_per_hour"].to_list()
    rate, rate_date = converted["fx_units_per_eur"][0], converted["fx_date"][0]
    written = (f"{amount.mode:g} [{amount.low:g} .. {amount.high:g}]"
               if isinstance(amount, Range) else f"{amount:g}")
    words = (f"{written} {value.currency} at the ECB rate of {rate_date} ({rate:g} "
             f"{value.currency} per EUR)")
    row = d.mkt.once(("fx_rate", value.currency, rate_date), lambda: rates.filter(
        (pl.col("currency") == value.currency) & (pl.col("rate_date") == rate_date)
    ).row(0, named=True))
    if "source_url" in row:
        d.prov.cite("fx_rate", f"{value.currency} {rate_date}", row)
    d.notes.append(f"{key}: {words}")
    result: Number = (Range(low=eur[0], mode=eur[1], high=eur[2]) if isinstance(amount, Range)
                      else eur[0])
    return result, words
