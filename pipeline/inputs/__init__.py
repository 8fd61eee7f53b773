"""Everything a run reads, turned into the plain data the engine computes from
(pipeline/engine/resolved.py): the market of a vintage (`read_market`, from the store) and the
proposal's candidates resolved against it (`resolve`), each numeric input with its range,
grade and source.

Declared figures come from the proposal; measured ones from benchmark, power and quality
evidence (`evidence/`: `throughput`, `power` with the PUE, `quality`); a cloud candidate's
hourly price from the vintage's GPU offers; a zone's electricity price and grid intensity from
the vintage unless the candidate overrides them; an on-prem candidate's cost lines from its
TCO profile. Every numeric input is a row (low, mode, high) keyed by where it was stated, so
inputs stated once (a shared TCO profile, [defaults].pue, a zone's price) share their Monte
Carlo draws across candidates. A figure that cannot be found is null, with a note saying why.

Its stages, each in a room of its own: `market/` (the vintage's market read once, a
candidate's cost, its zone's electricity and grid, other currencies, `[[scan]]`s expanded into
candidates), `evidence/` (what a candidate's figures rest on: its goodput, power and quality
from the user's files or estimates, an API's latency, the identity and plausibility checks, and
`estimate`, the options of `scorecard estimate` resolved into the roofline's inputs) and
`reference/` (the cited tables: embodied emissions, the models table, the regulatory rules).
Here, the machinery every stage shares: `assembly` runs them for each candidate on a `draft`
(its row, inputs and notes so far), `records` collects the input rows and sources, `ranges`
does the arithmetic on declared numbers and ranges.
"""

from pipeline.inputs.assembly import resolve
from pipeline.inputs.market.read import read_market
from pipeline.inputs.reference.models import model_warnings

__all__ = ["model_warnings", "read_market", "resolve"]
