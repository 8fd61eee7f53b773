"""An API candidate's latency against the proposal's SLO, whose attainment (the share of
requests meeting the SLO's limits, `slo.attainment`) counts as any goodput's does: a benchmark
run against the endpoint is read as any benchmark evidence is (no load level reaching the
attainment: no operating point, not eligible); a published TTFT and TPOT at a percentile
prove a share of requests by the percentile bound benchmark summaries are read with
(`goodput.percentile_bound`): enough is an operating point, a figure over its limit at a
percentile under the attainment is none (not eligible); and an attainment neither measured
nor proven is unknown, which grades the goodput `estimated` (as a run whose operating point
is not shown to be one), so `policy.allow_estimates = false` keeps it out of the ranking.
Each outcome is recorded as the "SLO attainment" check of the `latency` input."""

from __future__ import annotations

from pipeline.evidence.bench import ThroughputEvidence, throughput_from_evidence
from pipeline.evidence.goodput import TOLERANCE_S, Slo, p99_bounds, percentile_bound
from pipeline.inputs.draft import Draft
from pipeline.inputs.market.cost import basis_per_output_token, point_tokens_per_day
from pipeline.inputs.ranges import bounds
from pipeline.inputs.records import file_listing
from schemas.proposal import EvidenceLatency, PublishedLatency

CHECK = "SLO attainment"


def resolve_latency(d: Draft) -> None:
    latency = d.c.latency
    if d.c.deployment != "api":  # the proposal model keeps `latency` to api candidates
        return
    if latency is None:
        _unknown(d, "no latency given (latency = { evidence = ... } measured at the endpoint, "
                    "or { ttft_ms, tpot_ms, percentile, source } published)")
    elif isinstance(latency, PublishedLatency):
        _published(d, latency)
    else:
        assert isinstance(latency, EvidenceLatency)
        _measured(d, latency)


def _check(d: Draft, outcome: str, detail: str, check: str = CHECK) -> None:
    d.row["evidence_checks"] = [*d.row["evidence_checks"], {
        "input": "latency", "check": check, "outcome": outcome, "detail": detail}]


def _unknown(d: Draft, why: str) -> None:
    """The API's SLO attainment is not known: its goodput is not shown to meet the SLO."""
    _check(d, "not checked", why)
    d.row["tokens_per_s_grade"] = "estimated"
    d.notes.append(f"API: SLO attainment unknown: {why}; its goodput is graded estimated, as "
                   "any goodput not shown to meet the SLO (policy.allow_estimates = false "
                   "keeps it out of the ranking)")


def _published(d: Draft, latency: PublishedLatency) -> None:
    """A published latency at its percentile q: a figure at or under its limit proves q of the
    requests meet that limit (the limits combine by the union bound); a figure over its limit
    leaves at most q meeting it, which fails the SLO when q is under its attainment. The
    SLO's p99 bounds (`goodput.p99_bounds`, as for a run) are checked on figures published at
    p99: one over its bound is no operating point (not eligible); a bound whose figure is not
    published at p99 leaves the attainment unknown."""
    slo = d.proposal.slo
    q = latency.percentile
    figures = {"ttft": latency.ttft_ms, "tpot": latency.tpot_ms}
    if _p99_refused(d, latency, figures):
        return
    reported = {f"{name}_p{q:g}_s": ms / 1000.0 for name, ms in figures.items()
                if ms is not None}
    over = [f"{name.upper()} {ms:g} ms > {limit:g} ms" for name, ms, limit in (
        ("ttft", latency.ttft_ms, slo.ttft_ms), ("tpot", latency.tpot_ms, slo.tpot_ms))
        if ms is not None and limit is not None and ms > limit]
    at = f"p{q:g} ({latency.source})"
    if over and q / 100.0 < slo.attainment - TOLERANCE_S:
        detail = (f"{', '.join(over)} at {at}: at most {q / 100.0:.0%} of requests meet it, "
                  f"under the {slo.attainment:.0%} slo.attainment asks")
        _check(d, "failed", detail)
        d.row["no_goodput_reason"] = f"the API's published latency exceeds the SLO ({detail})"
        return
    share, reasons = percentile_bound(reported, Slo(**slo.model_dump()))
    proof = "; ".join(reasons)
    if share is not None and share >= slo.attainment - TOLERANCE_S:
        detail = (f"published latency at {at}: {proof}: at least {share:.4g} of requests "
                  f"meet the SLO, at or above the {slo.attainment:.0%} slo.attainment asks")
        _check(d, "passed", detail)
        d.notes.append(f"API: {detail}")
        return
    proven = "nothing" if not share else f"only {share:.4g} of requests"
    _unknown(d, f"the published latency at {at} proves {proven} meet the SLO ({proof}), "
                f"short of the {slo.attainment:.0%} slo.attainment asks")


def _p99_refused(d: Draft, latency: PublishedLatency, figures: dict[str, float | None]) -> bool:
    """The SLO's p99 bounds against the published figures: each checked as for a run ("SLO
    p99 TTFT"/"SLO p99 TPOT"); True when the API is done with (over a bound: no operating
    point, with the reason; a bound's figure not published at p99: unknown attainment)."""
    slo = Slo(**d.proposal.slo.model_dump())
    at = f"p{latency.percentile:g} ({latency.source})"
    over, unpublished = [], []
    for field, key, name, limit_s in p99_bounds(slo):
        ms = figures[key.split("_")[0]]
        if ms is None or latency.percentile != 99:
            unpublished.append(name)
            _check(d, "not checked", f"the p99 {name} is not published ({name} "
                   f"{'not given' if ms is None else f'{ms:g} ms'} at {at})", f"SLO p99 {name}")
            continue
        within = ms / 1000.0 <= limit_s
        detail = (f"the p99 {name} published is {ms:g} ms ({latency.source}), "
                  f"{'within' if within else 'over'} the {getattr(slo, field):g} ms "
                  f"slo.{field} bound")
        _check(d, "passed" if within else "failed", detail, f"SLO p99 {name}")
        if not within:
            over.append(detail)
    if over:
        d.row["no_goodput_reason"] = ("the API's published latency exceeds the SLO's p99 bound "
                                      f"({'; '.join(over)})")
        return True
    if unpublished:
        _unknown(d, f"p99 not published: the SLO bounds the p99 {' and '.join(unpublished)}, "
                    f"the latency is published at {at}")
        return True
    return False


def _measured(d: Draft, latency: EvidenceLatency) -> None:
    path = d.evidence_path(latency.evidence, "latency.evidence")
    ev = throughput_from_evidence(path, Slo(**d.proposal.slo.model_dump()),
                                  fmt=latency.format, tz=latency.tz, cache=d.cache)
    d.prov.add_files(ev.files, ev.file_dates)
    listing = file_listing(ev.files, d.prov.folder)
    d.row["evidence_checks"] = [*d.row["evidence_checks"], *(
        {"input": "latency", "check": name, "outcome": outcome, "detail": detail}
        for name, outcome, detail in ev.checks)]
    if ev.tokens_per_s is None:
        d.row["no_goodput_reason"] = (f"the API endpoint's benchmark ({listing}): "
                                      f"{ev.no_goodput_reason or 'no goodput under the SLO'}")
        return
    load = (f"{ev.concurrency} concurrent requests" if ev.concurrency is not None else
            f"{ev.request_rate:g} requests/s" if ev.request_rate is not None else "its load")
    d.notes.append(f"API: measured against the endpoint ({listing}): the SLO held at {load}, "
                   f"{_rate(ev.tokens_per_s)} output tokens/s of goodput")
    _against_demand(d, ev)


def _against_demand(d: Draft, ev: ThroughputEvidence) -> None:
    """The demand's peak against the goodput measured at the endpoint, both in output tokens
    per second (the goodput's basis; a total-basis demand in output tokens by the request
    mix)."""
    tokens_per_day, ratio = point_tokens_per_day(d), basis_per_output_token(d)
    if tokens_per_day is None or ratio is None or ev.tokens_per_s is None:
        return
    demand = d.proposal.demand
    assert demand is not None
    peak = tokens_per_day / 86_400.0 * bounds(demand.peak_factor)[1]
    output = peak / ratio
    said = (f"the demand's peak, {_rate(output)} output tokens/s"
            + (f" ({_rate(peak)} prompt + output tokens/s)" if ratio != 1.0 else ""))
    measured = f"the {_rate(ev.tokens_per_s)} output tokens/s of goodput measured"
    if output > ev.tokens_per_s:
        d.notes.append(f"API: {said}, is beyond {measured}: the SLO is shown to hold up to "
                       "that load only")
    else:
        d.notes.append(f"API: {said}, is within {measured}")


def _rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f}" if tokens_per_s >= 10 else f"{tokens_per_s:.3g}"
