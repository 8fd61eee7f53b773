"""Every market source `scorecard ingest` runs, by name, in the order they run: ecb first (USD
prices are converted with its rates). Each is a module of the shape `sources.job` describes."""

from __future__ import annotations

from sources.job import MarketSource
from sources.market import (
    aws,
    azure,
    ecb,
    electricity_maps,
    ember,
    energy_charts,
    entsoe,
    odre,
    omie,
    ovhcloud,
    scaleway,
)

_ORDER: tuple[MarketSource, ...] = (ecb, energy_charts, scaleway, ovhcloud, azure, aws, ember,
                                    electricity_maps, omie, entsoe, odre)

#: Source name -> its module.
SOURCES: dict[str, MarketSource] = {source.SOURCE: source for source in _ORDER}
