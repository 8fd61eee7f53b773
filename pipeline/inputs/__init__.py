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

One module per input besides the evidence ones: `cost`, `zone_inputs` (the zone's electricity
price and grid intensity), `embodied`, `currency` (declared amounts in other currencies);
`assembly` runs them for each candidate on a `draft` (its row, inputs and notes so far);
`models` says when a candidate's model is not in the market's models table;
`records` collects the input rows and sources, `ranges` the arithmetic on declared numbers and
ranges, `plausibility` the bounds a declared figure is checked against, `market` reads the
vintage's market. `estimate` resolves the options of `scorecard estimate` (flags, TOML, the
reference tables, a measured sweep) into the roofline's inputs.
"""

from pipeline.inputs.assembly import resolve
from pipeline.inputs.market import read_market
from pipeline.inputs.models import model_warnings

__all__ = ["model_warnings", "read_market", "resolve"]
