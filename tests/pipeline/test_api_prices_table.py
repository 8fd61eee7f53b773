"""The bundled API prices (sources/reference/api_prices.csv) go through the reader and pandera
validation of the other reference tables into the store (core__api_prices), and an API
candidate is priced from the stored row, citing it with its snapshot."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from bundled_files import changed

from pipeline import store
from pipeline.engine.resolved import Market
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs.assembly import resolve
from pipeline.inputs.market.read import read_market
from schemas.proposal import ProposalError, parse
from schemas.table import ValidationFailed
from sources import bundled
from tests.pipeline.test_offers import API, HEADER

LLAMA = b"scaleway,llama-3.3-70b-instruct,fr-par,FR,0.90,0.90,EUR,"


def _files(old: bytes, new: bytes) -> dict[str, bundled.RawFile]:
    return changed(api_prices=(old, new))


def _api_price(db: Path, files: dict[str, bundled.RawFile]) -> tuple[float, str | None]:
    """The API candidate's EUR per Mtok and the snapshot its price cites, from a store
    loaded with `files`."""
    con = store.connect(db)
    load_bundled(con, files)
    mkt = read_market(con, bundled.VINTAGE)
    con.close()
    resolved = resolve(parse(HEADER + API, "proposal.toml"), "proposal.toml", mkt)
    price = resolved.inputs.filter(input="price_eur_per_mtok").row(0, named=True)
    (cited,) = [s for s in resolved.sources if s["kind"] == "api_price"]
    assert cited["subject"] == "scaleway:llama-3.3-70b-instruct@fr-par"
    return price["mode"], cited["snapshot_sha256"]


def test_the_prices_are_stored_with_their_snapshot(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    prices = read_market(con, bundled.VINTAGE).api_prices
    con.close()
    assert prices is not None
    sha = hashlib.sha256(bundled.read("api_prices.csv").content).hexdigest()
    assert set(prices["snapshot_sha256"]) == {sha}
    llama = prices.filter(api_model="llama-3.3-70b-instruct").row(0, named=True)
    assert (llama["input_price_original_per_mtok"], llama["output_price_original_per_mtok"],
            llama["currency"], llama["zone"]) == (0.9, 0.9, "EUR", "FR")


def test_an_altered_stored_row_moves_the_price_and_its_cited_snapshot(db: Path) -> None:
    # As shipped: 0.90 EUR per million input and output tokens; [demand] requests of 1,000
    # prompt + 250 output tokens on the output basis: (0.9 x 1,000 + 0.9 x 250) / 250 = 4.5
    # EUR per million output tokens.
    shipped = bundled.read("api_prices.csv").content
    price, sha = _api_price(db, {n: bundled.read(n) for n in bundled.FILES})
    assert price == pytest.approx(4.5)
    assert sha == hashlib.sha256(shipped).hexdigest()
    # The stored row altered to 0.50 in / 2.00 out: (0.5 x 1,000 + 2.0 x 250) / 250 = 4.0
    # EUR per million output tokens, citing the altered file's snapshot.
    files = _files(LLAMA, b"scaleway,llama-3.3-70b-instruct,fr-par,FR,0.50,2.00,EUR,")
    price, sha = _api_price(db, files)
    assert price == pytest.approx(4.0)
    assert sha == hashlib.sha256(files["api_prices.csv"].content).hexdigest() != \
        hashlib.sha256(shipped).hexdigest()


@pytest.mark.parametrize(("new", "column"), [
    # a price typed per token instead of per million tokens (0.9 per token = 900,000 per Mtok)
    # is over the bound of 1,000 the field declares
    (b"scaleway,llama-3.3-70b-instruct,fr-par,FR,900000,0.90,EUR,",
     "input_price_original_per_mtok"),
    # a currency that is not an ISO 4217 code
    (b"scaleway,llama-3.3-70b-instruct,fr-par,FR,0.90,0.90,euro,", "currency"),
])
def test_a_bad_price_is_refused_by_validation_naming_its_column(
        db: Path, new: bytes, column: str) -> None:
    con = store.connect(db)
    with pytest.raises(ValidationFailed) as err:
        load_bundled(con, _files(LLAMA, new))
    con.close()
    assert err.value.table == "core__api_prices"
    assert f"column {column!r}" in str(err.value)


MISTRAL = API.replace('provider = "scaleway"', 'provider = "mistral"').replace(
    'cost = { api = "scaleway:llama-3.3-70b-instruct" }',
    'cost = { api = "mistral:mistral-small-2603" }')


def test_an_api_without_a_stated_place_is_priced_in_the_zone_the_candidate_states(
        market: Market) -> None:
    # Mistral Small 4 on Mistral's global endpoint, 0.12 EUR per million input and 0.50 per
    # million output tokens (sources/reference/api_prices.csv): requests of 1,000 prompt + 250
    # output tokens cost (0.12 x 1,000 + 0.50 x 250) / 250 = 245 / 250 = 0.98 EUR per million
    # output tokens, in the zone the candidate states (the row has none)
    resolved = resolve(parse(HEADER + MISTRAL + 'zone = "FR"\n', "p.toml"), "p.toml", market)
    price = resolved.inputs.filter(input="price_eur_per_mtok").row(0, named=True)
    assert price["mode"] == pytest.approx(0.98)
    assert resolved.static["zone"].to_list() == ["FR"]
    (cited,) = [s for s in resolved.sources if s["kind"] == "api_price"]
    assert cited["subject"] == "mistral:mistral-small-2603@global"
    assert cited["date"] == "2026-08-11"
    # without a zone of its own the candidate is refused, naming the key
    with pytest.raises(ProposalError) as err:
        resolve(parse(HEADER + MISTRAL, "p.toml"), "p.toml", market)
    assert "candidates[0] (id 'api').zone" in str(err.value)
    assert "states no place of processing" in str(err.value)
