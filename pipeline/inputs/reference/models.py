"""A candidate's `model` against the market's `models` table (sources/reference/models.csv).

No figure reads a candidate's model (a roofline estimate names its own, and is refused there
when the table lacks it), but the report shows it and evidence files are checked against it,
so a name the table does not know is most likely a typo: it is said, with the closest known
names, as the candidate's note and on stderr at run time, and not refused (a model the table
has no figures for is still a fine thing to compare)."""

from __future__ import annotations

import difflib

from pipeline.engine.resolved import Market
from pipeline.inputs.evidence.identity import model_name
from schemas.proposal import Proposal


def unknown_models(proposal: Proposal, mkt: Market) -> dict[str, str]:
    """The note on each model of the hand-listed candidates that the table does not know,
    by model (each name looked at once, however many candidates name it; a scan's candidates
    take a model the table knows, pipeline/inputs/market/scan.py)."""
    names = {c.model for c in proposal.candidates if c.model is not None}
    return {m: said for m in sorted(names) if (said := _unknown(m, mkt)) is not None}


def model_warnings(proposal: Proposal, mkt: Market) -> list[str]:
    """The stderr lines of `unknown_models`: one per model, with the candidates naming it."""
    said = unknown_models(proposal, mkt)
    lines = []
    for model, note in said.items():
        ids = [c.id for c in proposal.candidates if c.model == model]
        more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
        lines.append(f"{', '.join(ids[:3])}{more}: {note}")
    return lines


def _unknown(model: str, mkt: Market) -> str | None:
    """The note on `model` when the table does not know it, else None. Names compare as the
    evidence's alias table compares them (`meta-llama/Llama-3.1-70B-Instruct` is
    `Llama-3.1-70B`)."""
    if mkt.row("models", model=model) is not None:
        return None
    known = {model_name(m): m for m in mkt.models["model"].to_list()}
    if model_name(model) in known:
        return None
    close = difflib.get_close_matches(model_name(model), list(known), n=3, cutoff=0.6)
    listed = (f"closest: {', '.join(known[c] for c in close)}" if close
              else f"known: {', '.join(known.values())}")
    return (f"model {model!r} is not in the reference models table ({listed}): a typo? It "
            "is shown as written and evidence files are checked against it")
