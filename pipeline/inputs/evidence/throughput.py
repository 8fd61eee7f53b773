"""A candidate's goodput (tokens/s): declared in the proposal, measured from benchmark evidence
under the proposal's SLO, or estimated as a roofline ceiling times an efficiency (the ceiling
optionally calibrated on a measured run at concurrency 1)."""

from __future__ import annotations

from typing import Any, cast

from pipeline.engine.roofline import (
    RooflineInputError,
    apply_calibration,
    calibrate,
    estimate,
    inputs_from_reference,
)
from pipeline.engine.roofline.calibration import transfer
from pipeline.engine.roofline.kv import sized_request_tokens
from pipeline.engine.roofline.model import RooflineInputs
from pipeline.engine.roofline.planning import serving
from pipeline.engine.roofline.reference import with_model
from pipeline.engine.roofline.serving import draft_step_ms, speculative, warm_prefill_s
from pipeline.evidence.bench import ThroughputEvidence, inspect, throughput_from_evidence
from pipeline.evidence.goodput import Slo
from pipeline.inputs.draft import Draft
from pipeline.inputs.evidence.estimate import serving_error
from pipeline.inputs.evidence.identity import check_identity
from pipeline.inputs.market.cost import basis_per_output_token
from pipeline.inputs.ranges import bounds, scaled, spread, sum_numbers
from pipeline.inputs.records import (
    checks,
    configuration_rows,
    file_listing,
    pairs,
    shown,
)
from schemas.proposal import (
    Calibration,
    EstimatedThroughput,
    EvidenceThroughput,
    Number,
    Range,
    point,
)
from sources.errors import ParseError


def resolve_throughput(d: Draft) -> Any:
    """The throughput inputs; returns the benchmark evidence (its window aligns the power log)
    when the throughput was measured, else None."""
    t = d.c.throughput
    demand = d.proposal.demand
    if demand is not None and demand.output_tokens_p95 is not None:
        # the p95 request duration is reported beside the mean's (the operating point's TTFT
        # and TPOT at the p95 length)
        d.inputs.add("request_output_tokens_p95", demand.output_tokens_p95,
                     "demand.output_tokens_p95", "declared", "proposal [demand]")
    if isinstance(t, EstimatedThroughput):
        _estimated(d, t)
        return None
    if isinstance(t, EvidenceThroughput):
        return _measured(d, t)
    tokens: Number | None = t.tokens_per_s
    if _total(d):
        if t.input_tokens_per_s is None:
            tokens = _on_total_basis(d, t.tokens_per_s, "give throughput.input_tokens_per_s")
        else:
            tokens = sum_numbers([t.tokens_per_s, t.input_tokens_per_s])
    d.inputs.add("tokens_per_s", tokens, f"{d.key}.throughput.tokens_per_s",
                 "declared", t.source)
    d.row["tokens_per_s_grade"] = "declared"
    d.row["tokens_per_s_source"] = t.source
    return None


def _measured(d: Draft, t: EvidenceThroughput) -> Any:
    path = d.evidence_path(t.evidence, "throughput.evidence")
    try:
        ev = throughput_from_evidence(path, _slo(d), fmt=t.format, tz=t.tz, choose=t.choose,
                                      gpu_count=d.c.gpu_count, cache=d.cache)
    except ParseError as err:  # named by the key that gave the file
        raise d.error("throughput.evidence", str(err)) from None
    identity = check_identity(d, ev.configuration, t.evidence, t.proxy,
                              gpu_count=ev.configuration_gpus, fewer_gpus_ok=True)
    # a declared proxy grades evidence whose identity did not hold (or could not be checked)
    # `proxy`; a grade the evidence's own checks lowered (estimated) stays what it is
    grade = ("proxy" if t.proxy is not None and not identity.held and ev.grade != "estimated"
             else ev.grade)
    tokens: Number | None = ev.tokens_per_s
    if _total(d) and tokens is not None:
        if ev.input_per_output is None:
            tokens = _no_total(d, "the evidence gives no per-request input lengths")
        else:
            tokens = scaled(tokens, 1.0 + ev.input_per_output)
            d.notes.append(f"token basis total: goodput x (1 + {ev.input_per_output:.4g} input "
                           "tokens per output token of the requests meeting the SLO)")
    # the file as the report shows it: relative to the proposal's folder, no local path
    source = shown(str(path), d.prov.folder)
    d.inputs.add("tokens_per_s", tokens, f"{d.key}.throughput", grade, source)
    d.row["tokens_per_s_grade"] = grade
    d.row["raw_tokens_per_s"] = ev.output_tokens_per_s
    d.row["tokens_per_s_source"] = f"{t.evidence}: {file_listing(ev.files, d.prov.folder)}"
    if len(ev.configurations) > 1 or set(ev.configuration) - {"model"}:
        d.row["tokens_per_s_source"] += (
            f"; configuration {ev.configuration_label}"
            + (f" (best of {len(ev.configurations)} by {ev.choose})"
               if len(ev.configurations) > 1 else ""))
    if ev.configuration_gpus is not None and ev.configuration_gpus != d.c.gpu_count:
        d.notes.append(f"the configuration chosen ran on {ev.configuration_gpus} GPU(s), the "
                       f"candidate declares gpu_count {d.c.gpu_count}: its goodput is used as "
                       "measured, not scaled")
    if ev.configurations:
        d.row["evidence_configurations"] = configuration_rows(ev.configurations)
        d.row["evidence_configuration"] = pairs(ev.configuration)
    _operating_point(d, ev, source, grade)
    d.notes.extend(ev.notes)
    d.prov.add_files(ev.files, ev.file_dates)
    d.row["no_goodput_reason"] = ev.no_goodput_reason
    d.row["evidence_checks"] = checks("throughput", identity, ev.checks)
    if ev.tokens_per_s is None:
        d.notes.append("goodput not computed from the evidence (see the notes above): CPM, "
                       "energy and carbon are null")
    return ev


def _operating_point(d: Draft, ev: ThroughputEvidence, path: str, grade: str) -> None:
    """Little's law beside the goodput sizing from the measured operating point: the
    concurrency the client held at the knee (or the chosen run) and its median TTFT and TPOT
    (queueing included, as measured). A request-rate sweep records no concurrency: the
    Little's-law count is then null."""
    level = f"{d.key}.throughput"
    where = "the operating point (the knee, else the run)"
    if ev.concurrency is None:
        if ev.tokens_per_s is not None and d.proposal.demand is not None:
            d.notes.append("no Little's-law instance count: the evidence's operating point "
                           "records no concurrency (an open-loop request-rate run)")
        return
    d.inputs.add("operating_concurrency", float(ev.concurrency), level, grade,
                 f"concurrency {ev.concurrency} at {where} of {path}")
    d.inputs.add("operating_ttft_s", ev.ttft_p50_s, level, grade,
                 f"median TTFT at {where} of {path} (queueing included)")
    d.inputs.add("operating_tpot_s", ev.tpot_p50_s, level, grade,
                 f"median TPOT at {where} of {path}")


def _estimated(d: Draft, t: EstimatedThroughput) -> None:
    e, c = t.estimate, d.c
    model = d.mkt.row("models", model=e.model)
    if model is None:
        known = ", ".join(d.mkt.models["model"].to_list())
        raise d.error("throughput.estimate.model", f"unknown model {e.model!r}; known: "
                                                   f"{known}")
    # disaggregated prefill: each decode replica has a prefill pool of as many GPUs beside it
    pools = 2 if e.kv_link_gbs is not None else 1
    tp = e.tensor_parallel or c.gpu_count // (pools * e.pipeline_parallel)
    group = tp * e.pipeline_parallel
    if not tp or c.gpu_count % (group * pools):
        raise d.error("throughput.estimate.tensor_parallel",
                      f"tensor_parallel {tp} x pipeline_parallel {e.pipeline_parallel} = "
                      f"{group} GPUs per replica" + (" x 2 (a prefill pool beside each decode "
                                                     "replica, kv_link_gbs)" if pools > 1
                                                     else "")
                      + f" does not divide gpu_count {c.gpu_count}")
    topology: dict[str, Any] = {
        "tensor_parallel": tp, "pipeline_parallel": e.pipeline_parallel,
        "replicas": c.gpu_count // (group * pools), "allreduce_us": e.allreduce_us}
    if e.lookup_embeddings is not None:
        topology["lookup_embeddings"] = e.lookup_embeddings
    for key in ("block_size", "kv_read_factor"):
        if getattr(e, key) is not None:
            topology[key] = getattr(e, key)
    demand = d.proposal.demand
    prompt = int(demand.prompt_tokens) if demand and demand.prompt_tokens else None
    if e.concurrency is not None:
        prompt = e.prompt_tokens
    batch = e.concurrency or e.batch
    context = e.prompt_tokens or e.context
    assert batch is not None and context is not None  # the schema requires one form
    try:
        inputs = inputs_from_reference(model, d.gpu_row(), precision=e.precision,
                                       batch=batch, context=context,
                                       prompt_tokens=prompt or None, **topology)
        if e.calibration is not None:
            inputs = _calibrated(d, inputs, e.calibration)
        if e.concurrency is not None:
            _served(d, t, inputs, topology)
            return
        result = estimate(inputs)
    except RooflineInputError as err:
        raise d.error("throughput.estimate", str(err)) from None
    assert e.batch is not None and e.efficiency is not None  # the warm-decode form
    d.row["tokens_per_s_grade"] = "estimated"
    ceiling = result.tokens_per_s_total
    # Little's law beside the goodput sizing: each replica's operating concurrency is the
    # batch, TTFT the prefill bound at the demand's prompt length (the TPOT follows from the
    # goodput in the metric steps)
    d.inputs.add("operating_concurrency", float(e.batch * topology["replicas"]),
                 f"{d.key}.throughput.estimate.batch", "estimated",
                 f"batch {e.batch} per replica x {topology['replicas']} replica(s)")
    _kv_bound(d, e.batch, result.kv_capacity_tokens)
    ttft_s = result.ttft_lower_bound_ms / 1e3
    ttft_source = (f"roofline TTFT lower bound for {inputs.prompt_tokens or e.context} prompt "
                   "tokens (no queueing: optimistic)")
    hit = point(e.prefix_hit_rate)  # a number: a range needs the serving form (the schema)
    if hit is not None:
        try:
            ttft_s = warm_prefill_s(inputs, hit)
        except RooflineInputError as err:
            raise d.error("throughput.estimate.prefix_hit_rate", str(err)) from None
        ttft_source += (f", warm: the prefill without the prefix hit rate {hit:g}"
                        f"'s cached tokens ({e.effects_source}); cold "
                        f"{result.ttft_lower_bound_ms:.1f} ms")
    # the prefill reaches the same share of its roofline as the decode (as `scorecard
    # estimate` sizes it); the efficiency's mode, as the TTFT is a single figure
    efficiency = bounds(e.efficiency)[1]
    ttft_source += f" / efficiency {efficiency:g}"
    d.inputs.add("operating_ttft_s", ttft_s / efficiency, f"{d.key}.throughput.estimate",
                 "estimated", ttft_source)
    spec, factor = "", cast(Number, 1.0)
    if ceiling is not None:
        factor, spec = _speculative(d, inputs)
    if ceiling is None:
        d.notes.append(f"no estimated goodput: {result.ceiling_reason}")
        d.row["tokens_per_s_source"] = f"roofline: {result.ceiling_reason}"
        return
    replicas = f" x {topology['replicas']} replicas" if topology["replicas"] > 1 else ""
    pp = f" PP {e.pipeline_parallel}" if e.pipeline_parallel > 1 else ""
    source = (f"roofline ceiling {result.tokens_per_s_total:.0f} tokens/s ({result.bound}-bound, "
              f"{e.model} {e.precision}, batch {e.batch}, context {e.context}, TP "
              f"{tp}{pp}{replicas}){spec} x efficiency {spread(e.efficiency)}")
    if inputs.calibration_source:
        source += f"; calibrated on {inputs.calibration_source}"
    tokens = _times(factor, scaled(e.efficiency, ceiling))
    d.inputs.add("tokens_per_s", _on_total_basis(d, tokens, "an estimate counts output tokens "
                                                 "only") if _total(d) else tokens,
                 f"{d.key}.throughput.estimate", "estimated", source)
    d.row["tokens_per_s_source"] = source
    d.notes.append("goodput is a design-stage estimate (roofline ceiling x efficiency), not a "
                   "measurement")


def _served(d: Draft, t: EstimatedThroughput, inputs: RooflineInputs,
            topology: dict[str, Any]) -> None:
    """The serving form: goodput, TTFT and TPOT at the estimate's load from the serving model
    `scorecard estimate` uses (planning.serving), checked against the proposal's SLO; the
    range from the model's measured error unless an efficiency is given."""
    e = t.estimate
    assert e.concurrency is not None and e.prompt_tokens is not None \
        and e.output_tokens is not None
    serialised = bool(e.serialised)
    error_range, error_source = serving_error(inputs)
    served = serving(inputs, concurrency=e.concurrency, prompt_tokens=e.prompt_tokens,
                     output_tokens=e.output_tokens, chunk_tokens=e.chunk_tokens,
                     serialised=serialised, gpu=d.c.gpu,
                     error_range=None if e.efficiency is not None else error_range,
                     error_source=None if e.efficiency is not None else error_source,
                     prefix_hit_rate=(
                         (e.prefix_hit_rate.low, e.prefix_hit_rate.mode, e.prefix_hit_rate.high)
                         if isinstance(e.prefix_hit_rate, Range) else e.prefix_hit_rate),
                     kv_link_gb_per_s=e.kv_link_gbs)
    d.row["tokens_per_s_grade"] = "estimated"
    key = f"{d.key}.throughput.estimate"
    replicas = topology["replicas"]
    d.inputs.add("operating_concurrency", float(e.concurrency * replicas),
                 f"{key}.concurrency", "estimated",
                 f"concurrency {e.concurrency} per replica x {replicas} replica(s)")
    chunk = served["chunk_tokens"]
    d.notes.extend(served["assumptions"])
    goodput = served["goodput_tokens_per_s"]
    if goodput is None:
        d.notes.append(f"no estimated goodput: {served['reason']}")
        d.row["tokens_per_s_source"] = f"serving model: {served['reason']}"
        d.row["no_goodput_reason"] = served["reason"]
        return
    _kv_bound(d, e.concurrency, estimate(inputs).kv_capacity_tokens)
    efficiency = bounds(e.efficiency)[1] if e.efficiency is not None else 1.0
    ttft_s = served["ttft_s"] / efficiency
    tpot_s = served["tpot_ms"] / 1e3 / efficiency
    ttft_source = (f"serving model TTFT for {e.prompt_tokens} prompt tokens at concurrency "
                   f"{e.concurrency}, the prefill queue included")
    if e.prefix_hit_rate is not None:
        ttft_source += (f", warm: prefix hit rate {spread(e.prefix_hit_rate)} removes "
                        f"{served['prefix_cached_tokens']:,} tokens of each prefill "
                        f"({e.effects_source}); cold {served['cold_ttft_s']:.3f} s")
    if e.efficiency is not None:
        ttft_source += f" / efficiency {efficiency:g}"
    elif error_range[1] != 1:
        ttft_source += (f" / {error_range[1]:.3g}, the mode of the model's measured error on "
                        "datasheet rates")
    d.inputs.add("operating_ttft_s", ttft_s, key, "estimated", ttft_source)
    missed = _slo_missed(d, ttft_s, tpot_s)
    if missed:
        reason = (f"the estimated {missed} at concurrency {e.concurrency} misses the SLO: no "
                  "request meets it, so no goodput (lower the concurrency)")
        d.notes.append(reason)
        d.row["no_goodput_reason"] = reason
        d.row["tokens_per_s_source"] = f"serving model: {reason}"
        d.inputs.add("tokens_per_s", None, key, "estimated", reason)
        return
    factor, spec = _speculative(d, inputs)
    band = served["goodput_range"]
    tokens: Number = _times(factor, (
        scaled(e.efficiency, goodput) if e.efficiency is not None else
        Range(low=band["low"], mode=band["mode"], high=band["high"])))
    what = ("serialised (one request at a time)" if serialised else
            f"disaggregated prefill, KV over {e.kv_link_gbs:g} GB/s (+"
            f"{served['kv_transfer_ms']:,.2f} ms), a prefill pool beside each replica"
            if served["disaggregated"] else
            f"chunked prefill {chunk:,} tokens per step"
            + (" (vLLM's default on this GPU, EngineArgs.get_batch_defaults)"
               if served["chunk_default"] else ""))
    source = (f"serving model {served['model_goodput_tokens_per_s']:.1f} tokens/s "
              f"({e.model} {e.precision}, concurrency {e.concurrency} x {replicas} replica(s), "
              f"{e.prompt_tokens} prompt + {e.output_tokens} output tokens, {what}; TPOT "
              f"{served['model_tpot_ms']:.1f} ms, TTFT {served['model_ttft_s']:.2f} s){spec} x "
              + (f"efficiency {spread(e.efficiency)}" if e.efficiency is not None else
                 f"measured error {error_range[0]:.3f} / {error_range[1]:.3g} / "
                 f"{error_range[2]:.3f} ({error_source})"))
    if inputs.calibration_source:
        source += f"; calibrated on {inputs.calibration_source}"
    d.inputs.add("tokens_per_s", _on_total_basis(d, tokens, "an estimate counts output tokens "
                                                 "only") if _total(d) else tokens,
                 key, "estimated", source)
    d.row["tokens_per_s_source"] = source
    d.notes.append("goodput is a design-stage estimate (the serving model at the stated "
                   "load), not a measurement")


def _slo_missed(d: Draft, ttft_s: float, tpot_s: float) -> str | None:
    """Which of the estimated TTFT and TPOT miss the proposal's SLO (None: both meet it)."""
    slo = d.proposal.slo
    missed = []
    if ttft_s * 1e3 > slo.ttft_ms:
        missed.append(f"TTFT {ttft_s * 1e3:,.0f} ms > {slo.ttft_ms:g} ms")
    if slo.tpot_ms is not None and tpot_s * 1e3 > slo.tpot_ms:
        missed.append(f"TPOT {tpot_s * 1e3:,.1f} ms > {slo.tpot_ms:g} ms")
    return " and ".join(missed) or None


def _speculative(d: Draft, inputs: RooflineInputs) -> tuple[Number, str]:
    """The goodput factor of declared speculative decoding at the inputs' batch and context
    (1 without it): the plain decode step over the speculative TPOT, the verification of k + 1
    tokens per sequence and the k draft steps counted (serving.speculative); a range when the
    acceptance is one. And the words for the source."""
    e = d.c.throughput.estimate  # type: ignore[union-attr]
    if e.speculative_acceptance is None:
        return 1.0, ""
    draft_ms = e.speculative_draft_ms
    draft_what = f"draft step {draft_ms:g} ms (declared)"
    if e.speculative_draft_model is not None:
        row = d.mkt.row("models", model=e.speculative_draft_model)
        if row is None:
            known = ", ".join(d.mkt.models["model"].to_list())
            raise d.error("throughput.estimate.speculative_draft_model",
                          f"unknown model {e.speculative_draft_model!r}; known: {known}")
        draft_ms = draft_step_ms(with_model(inputs, row, precision=e.precision))
        draft_what = (f"draft step {draft_ms:.3g} ms ({e.speculative_draft_model}'s roofline "
                      "step on the same GPUs)")
    elif draft_ms == 0:
        draft_what = ("draft step 0 ms (declared free: a draft model's or head's time is not "
                      "counted; give speculative_draft_ms or speculative_draft_model)")
    low, mode, high = bounds(e.speculative_acceptance)
    each = {a: speculative(inputs, acceptance=a, draft_tokens=e.speculative_draft_tokens,
                           draft_step_ms=draft_ms) for a in {low, mode, high}}
    at = each[mode]
    factor: Number = (Range(low=each[low]["factor"], mode=at["factor"], high=each[high]["factor"])
                      if low < high else at["factor"])
    d.notes.append(
        f"speculative decoding (declared: {e.effects_source}): acceptance "
        f"{spread(e.speculative_acceptance)}, {e.speculative_draft_tokens} drafted tokens, "
        f"{draft_what}; verification of {e.speculative_draft_tokens + 1} tokens per sequence "
        f"{at['verification_ms']:.3g} ms against the plain step {at['plain_step_ms']:.3g} ms: "
        f"{at['tokens_per_pass']:.4g} tokens per pass, goodput x {spread(factor)}")
    return factor, f" x speculative decoding {spread(factor)}"


def _times(a: Number, b: Number) -> Number:
    """The product of two figures, either a range: low x low, mode x mode, high x high (both
    move together: the conservative spread)."""
    (al, am, ah), (bl, bm, bh) = bounds(a), bounds(b)
    return Range(low=al * bl, mode=am * bm, high=ah * bh) if al * bl < ah * bh else am * bm


def kv_fit(kv_capacity_tokens: int, prompt_tokens: float, output_tokens: float) -> int:
    """Sequences of prompt + output tokens whose KV cache fits a replica's free memory."""
    return int(kv_capacity_tokens // (prompt_tokens + output_tokens))


def _kv_bound(d: Draft, batch: int, kv_capacity_tokens: int | None) -> None:
    """With p95 request lengths, the batch the KV cache holds when every sequence in flight is
    of p95 length (the mean for a length without p95): a note when the estimate's batch
    exceeds it (the batch is then not reachable for a tail of long requests)."""
    demand = d.proposal.demand
    if demand is None or (demand.prompt_tokens_p95 is None and demand.output_tokens_p95 is None):
        return
    sized = sized_request_tokens(demand.prompt_tokens, demand.output_tokens,
                                 demand.prompt_tokens_p95, demand.output_tokens_p95)
    if kv_capacity_tokens is None or sized is None or sum(sized) <= 0:
        return
    prompt, output = sized
    fits = kv_fit(kv_capacity_tokens, prompt, output)
    text = (f"KV bound at the p95 lengths: {kv_capacity_tokens:,} KV tokens per replica / "
            f"({prompt:g} prompt + {output:g} output tokens) = {fits} sequences")
    if fits < batch:
        d.notes.append(f"{text}, below the estimate's batch {batch}: at p95 lengths the batch "
                       "is not reachable and the goodput and Little's-law counts are optimistic")
    else:
        d.notes.append(f"{text}: the estimate's batch {batch} fits")


def _total(d: Draft) -> bool:
    return d.proposal.policy.token_basis == "total"


def _on_total_basis(d: Draft, tokens: Number, why: str) -> Number | None:
    """An output-token rate on the total token basis where the request mix it was had at is
    known: an API's serving replica is assumed to serve the proposal's own requests, so it
    reads ([demand] prompt_tokens + output_tokens) / output_tokens tokens per output token;
    another candidate's rate was had at a mix the proposal does not state: None, noted with
    `why`."""
    ratio = basis_per_output_token(d) if d.c.deployment == "api" else None
    if ratio is None:
        return _no_total(d, why)
    total = scaled(tokens, ratio)
    d.notes.append(f"token basis total: the API's serving replica is assumed to serve the "
                   f"[demand]'s requests, {ratio:.4g} prompt + output tokens per output token: "
                   f"{spread(tokens)} output tokens/s -> {spread(total)} tokens/s")
    return total


def _no_total(d: Draft, why: str) -> Number | None:
    """No goodput on the total token basis (input + output): None, and the note saying why."""
    d.notes.append(f"no goodput on the total token basis (policy.token_basis): {why}; CPM, "
                   "energy and carbon are null")
    return None


def _calibrated(d: Draft, inputs: Any, cal: Calibration) -> Any:
    """Roofline inputs with the rates a concurrency-1 run implies (datasheet rates kept for
    what the run does not measure)."""
    tpot_ms, ttft_ms, source = cal.tpot_ms, cal.ttft_ms, cal.source
    if cal.evidence is not None:
        key = "throughput.estimate.calibration.evidence"
        path = d.evidence_path(cal.evidence, key)
        runs = [r for r in inspect([path], _slo(d), tz=cal.tz, cache=d.cache)["runs"]
                if r["concurrency"] == 1]
        if not runs:
            raise d.error(key, f"no run at concurrency 1 in {path}")
        run = runs[0]
        tpot_ms = tpot_ms or (run["tpot_p50_s"] * 1000 if run["tpot_p50_s"] else None)
        ttft_ms = ttft_ms or (run["ttft_p50_s"] * 1000 if run["ttft_p50_s"] else None)
        source = source or f"{run['path']} (sha256 {run['sha256'][:12]}, p50)"
    assert source is not None  # the proposal model requires it without evidence
    e = d.c.throughput.estimate  # type: ignore[union-attr]
    key = "throughput.estimate.calibration"
    if cal.gpu is None and cal.model is None and cal.tensor_parallel is None:
        try:
            return apply_calibration(inputs, calibrate(
                inputs, source=source, tpot_ms=tpot_ms, context=cal.context,
                ttft_ms=ttft_ms if cal.prompt_tokens else None,
                prompt_tokens=cal.prompt_tokens))
        except RooflineInputError as err:
            raise d.error(key, str(err)) from None
    # a run elsewhere: its MBU and MFU over its own GPU's peaks, applied to this GPU
    gpu = d.mkt.row("hardware", gpu=cal.gpu) if cal.gpu is not None else d.gpu_row()
    if gpu is None:
        raise d.error(f"{key}.gpu", f"unknown GPU {cal.gpu!r}")
    model_id = cal.model or e.model
    model = d.mkt.row("models", model=model_id)
    if model is None:
        raise d.error(f"{key}.model", f"unknown model {model_id!r}")
    tp = cal.tensor_parallel or inputs.tensor_parallel
    run = inputs_from_reference(model, gpu, precision=e.precision, batch=1,
                                context=cal.context or 1, tensor_parallel=tp)
    try:
        measured = calibrate(run, source=source, tpot_ms=tpot_ms, context=cal.context,
                             ttft_ms=ttft_ms if cal.prompt_tokens else None,
                             prompt_tokens=cal.prompt_tokens)
    except RooflineInputError as err:
        raise d.error(key, f"{err} (the run of {model_id} on {tp} x {gpu['gpu']})") from None
    where = f"{model_id} on {tp} x {gpu['gpu']}"
    d.notes.append(f"estimated (calibrated on {source}): the run of {where} reached "
                   + ", ".join(f"{n} {v:.1%}" for n, v in (("MBU", measured.mbu),
                                                         ("MFU", measured.mfu)) if v is not None)
                   + f" of its datasheet peaks, applied to {d.c.gpu}'s")
    return transfer(inputs, measured, run=where)


def _slo(d: Draft) -> Slo:
    """The proposal's SLO as the goodput computation takes it."""
    return Slo(**d.proposal.slo.model_dump())
