"""A `[[scan]]`'s counts in words, for the terminal summary and the report's first screen."""

from __future__ import annotations

from schemas.result import ScanSummary


def scan_sentence(s: ScanSummary) -> str:
    """Offers considered, fitting, kept by the scan's filters; candidates generated and left
    eligible by the policy."""
    return (f"scan[{s.scan}] of the market for {s.model} ({', '.join(s.precisions)}, "
            f"{s.context_tokens} tokens of context): {s.offers_considered} offers considered, "
            f"{s.offers_fitting} fit the model in memory, {s.offers_kept} kept by the scan's "
            f"filters -> {s.candidates_generated} candidates generated, "
            f"{s.candidates_eligible} eligible under the policy")
