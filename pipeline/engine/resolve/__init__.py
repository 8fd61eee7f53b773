"""Turn proposal candidates into metric inputs, each with its range, grade and source.

Declared figures come from the proposal; measured ones from benchmark and power evidence; a
cloud candidate's hourly price from the vintage's GPU offers; a zone's electricity price and
grid intensity from the vintage unless the candidate overrides them; an on-prem candidate's
cost lines from its TCO profile. Every numeric input is a row (low, mode, high) keyed by where
it was stated, so inputs stated once (a shared TCO profile, [defaults].pue, a zone's price)
share their Monte Carlo draws across candidates. A figure that cannot be found is null, with a
note saying why.

One module per input: `throughput`, `power` (with the PUE), `cost`, `zone_inputs` (the zone's
electricity price and grid intensity), `embodied`; `assembly` runs them for each candidate on a
`draft` (its row, inputs and notes so far); `records` holds what comes out, `ranges` the
arithmetic on declared numbers and ranges, `market_tables` the vintage's market.
"""

from pipeline.engine.resolve.assembly import resolve
from pipeline.engine.resolve.market_tables import Market
from pipeline.engine.resolve.records import Resolved

__all__ = ["Market", "Resolved", "resolve"]
