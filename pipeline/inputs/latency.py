"""An API candidate's latency against the proposal's SLO: a benchmark run against the
endpoint, read as any benchmark evidence is (the SLO's attainment decides), or the provider's
published TTFT and TPOT. An API that does not meet the SLO has no operating point under it and
is not eligible, with the reason."""

from __future__ import annotations

from pipeline.evidence.bench import throughput_from_evidence
from pipeline.evidence.goodput import Slo
from pipeline.inputs.draft import Draft
from pipeline.inputs.ranges import bounds
from pipeline.inputs.records import file_listing
from schemas.proposal import EvidenceLatency, PublishedLatency


def resolve_latency(d: Draft) -> None:
    latency, slo = d.c.latency, d.proposal.slo
    if latency is None:
        if d.c.deployment == "api":
            d.notes.append("API: no latency given (latency = { evidence = ... } measured at "
                           "the endpoint, or { ttft_ms, source } published): the SLO is not "
                           "checked")
        return
    if isinstance(latency, PublishedLatency):
        over = [f"{name} {value:g} ms > {limit:g} ms" for name, value, limit in (
            ("TTFT", latency.ttft_ms, slo.ttft_ms), ("TPOT", latency.tpot_ms, slo.tpot_ms))
            if value is not None and limit is not None and value > limit]
        if over:
            d.row["no_goodput_reason"] = (f"the API's published latency exceeds the SLO "
                                          f"({', '.join(over)}; {latency.source})")
        else:
            d.notes.append(f"API: published latency within the SLO's limits ({latency.source}); "
                           "a published figure, not the share of requests meeting them: a "
                           "benchmark against the endpoint measures that")
        return
    assert isinstance(latency, EvidenceLatency)
    path = d.evidence_path(latency.evidence, "latency.evidence")
    ev = throughput_from_evidence(path, Slo(**slo.model_dump()), fmt=latency.format,
                                  tz=latency.tz, cache=d.cache)
    d.prov.add_files(ev.files, ev.file_dates)
    listing = file_listing(ev.files, d.prov.folder)
    if ev.tokens_per_s is None:
        d.row["no_goodput_reason"] = (f"the API endpoint's benchmark ({listing}): "
                                      f"{ev.no_goodput_reason or 'no goodput under the SLO'}")
        return
    load = (f"{ev.concurrency} concurrent requests" if ev.concurrency is not None else
            f"{ev.request_rate:g} requests/s" if ev.request_rate is not None else "its load")
    d.notes.append(f"API: measured against the endpoint ({listing}): the SLO held at {load}, "
                   f"{ev.tokens_per_s:,.0f} output tokens/s of goodput")
    demand = d.proposal.demand
    if demand is not None and demand.tokens_per_day is not None:
        peak = bounds(demand.tokens_per_day)[1] / 86_400.0 * bounds(demand.peak_factor)[1]
        if peak > ev.tokens_per_s:
            d.notes.append(f"API: the demand's peak, {peak:,.0f} tokens/s, is beyond the load "
                           "measured: the SLO is shown to hold up to that load only")
