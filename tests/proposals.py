"""Proposal text for tests: one place for the plain on-prem candidate most tests start from.

Importable from tests because pyproject sets pytest's `pythonpath = ["tests"]`.
"""

from __future__ import annotations

HEADER = """
[proposal]
name = "{name}"
[slo]
ttft_ms = 1500
"""

#: TOML lines of a candidate, in order; override any by keyword.
CANDIDATE = {
    "label": '"own node"',
    "deployment": '"on_prem"',
    "provider": '"self"',
    "zone": '"FR"',
    "gpu": '"H100-SXM-80GB"',
    "gpu_count": "8",
    "pue": "1.3",
    "throughput": '{ tokens_per_s = 4000, source = "bench" }',
    "power": '{ watts = 5600, boundary = "gpu_board", source = "TDP" }',
    "cost": '{ eur_per_hour = 11.0, source = "quote" }',
}


def candidate(cid: str, **overrides: str) -> str:
    """A `[[candidates]]` block: 8 x H100 in FR at 4,000 tokens/s, 5,600 W, PUE 1.3,
    11 EUR/h, unless overridden (values are TOML text)."""
    fields = {**CANDIDATE, **overrides}
    return "[[candidates]]\n" + f'id = "{cid}"\n' + "".join(
        f"{key} = {value}\n" for key, value in fields.items())


def proposal(name: str, *blocks: str) -> str:
    """A proposal: the header (name, TTFT 1500 ms), then tables and candidate blocks."""
    return HEADER.format(name=name) + "\n".join(blocks)


MEASURED_HEADER = """
[proposal]
name = "{name}"
[slo]
ttft_ms = 300
tpot_ms = 50
"""


def measured(name: str, throughput: str, power: str, *, allow_outside: bool = False) -> str:
    """A proposal (TTFT 300 ms, TPOT 50 ms) whose one candidate `lab`, 2 x H100 in FR at PUE
    1.3 and 5.76 EUR/h, is scored from evidence (`throughput`, `power`: TOML text);
    `allow_outside` lets its evidence lie outside the proposal's folder."""
    return (("allow_outside = true\n" if allow_outside else "") + MEASURED_HEADER.format(
        name=name) + candidate("lab", label='"our own node, measured"', gpu_count="2",
                               throughput=throughput, power=power,
                               cost='{ eur_per_hour = 5.76, source = "quote" }'))
