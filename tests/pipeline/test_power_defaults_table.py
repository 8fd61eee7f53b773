"""The bundled power defaults (sources/reference/power_defaults.csv) go through the reader
and pandera validation of the other reference tables into the store (core__power_defaults),
and a derived figure cites the stored row with the file's snapshot."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from bundled_files import changed

from pipeline import store
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs.market.read import read_market
from schemas.table import ValidationFailed
from sources import bundled

OWN_SITE = b"pue,own_site,1.3,1.58,2.5,"


def _files(old: bytes, new: bytes) -> dict[str, bundled.RawFile]:
    return changed(power_defaults=(old, new))


def test_the_defaults_are_stored_with_their_snapshot(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    defaults = read_market(con, bundled.VINTAGE).power_defaults
    con.close()
    assert defaults is not None
    sha = hashlib.sha256(bundled.read("power_defaults.csv").content).hexdigest()
    # the file's 6 rows, each citing the file's sha256
    assert defaults.height == 6 and set(defaults["snapshot_sha256"]) == {sha}
    own = defaults.filter(default_figure="pue", default_site="own_site").row(0, named=True)
    assert (own["default_low"], own["default_mode"], own["default_high"]) == (1.3, 1.58, 2.5)


@pytest.mark.parametrize(("new", "column"), [
    # a PUE typed in per cent (158 for 1.58) is over the bound of 5 the field declares
    (b"pue,own_site,1.3,158,2.5,", "default_mode"),
    # a figure no input derives from
    (b"pue_ratio,own_site,1.3,1.58,2.5,", "default_figure"),
])
def test_a_bad_default_is_refused_by_validation_naming_its_column(
        db: Path, new: bytes, column: str) -> None:
    con = store.connect(db)
    with pytest.raises(ValidationFailed) as err:
        load_bundled(con, _files(OWN_SITE, new))
    con.close()
    assert err.value.table == "core__power_defaults"
    assert f"column {column!r}" in str(err.value)
