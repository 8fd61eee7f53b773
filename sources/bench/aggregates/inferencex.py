"""SemiAnalysis InferenceX aggregated result rows (`agg_*.json`): one run per file, a public
benchmark of hardware the buyer may not have, so its goodput is graded `reference`.

Two row schemas: fixed sequence lengths (`conc`, `isl`/`osl`, `tput_per_gpu`,
`output_tput_per_gpu`, `{mean,median,std,p90,p99,p99.9}_{ttft,tpot,itl,e2el}`) and the
agentic one (`users` instead of `conc`, `ttlt`, `num_requests_successful`,
`duration_seconds`, no TPOT). Latencies are in seconds; throughput is per GPU, times the GPUs
(`tp` x `dp` when `dp_attention` is "true"... read as tp: InferenceX's single-node rows use
one TP group) for the run's total. The configuration is the row's own: `framework`,
`image` (its tag the engine version), `model`, `precision`, `tp`, `ep`, `spec_decoding`,
`hw`. No window: a duration only when the row gives `duration_seconds`.
"""

from __future__ import annotations

import re
from pathlib import Path

from sources.bench.jsondoc import head, integer, number
from sources.bench.run import BenchRun
from sources.bench.summary import one_object, summary_run
from sources.errors import ParseError

TOOL = "inferencex"
_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|ttlt)$")
_METRIC = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e", "ttlt": "e2e"}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    return top.startswith(b"{") and b'"tput_per_gpu"' in top and b'"hw"' in top


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    doc = one_object(data, TOOL, path)

    def num(key: str) -> float | None:
        return number(doc.get(key), TOOL, path, f"key {key!r}")

    tp = integer(doc.get("tp"), TOOL, path, "key 'tp'")
    if tp is None or tp < 1:
        raise ParseError(TOOL, path, "key 'tp'", "missing or not a positive GPU count")
    per_gpu = num("output_tput_per_gpu")
    reported: dict[str, float | int | None] = {
        "output_tokens_per_s": None if per_gpu is None else per_gpu * tp,
        "completed": integer(doc.get("num_requests_successful"), TOOL, path,
                             "key 'num_requests_successful'"),
        "offered": integer(doc.get("num_requests_total"), TOOL, path,
                           "key 'num_requests_total'"),
    }
    for key in doc:
        match = _KEY.match(key)
        if match and not (match.group(2) == "e2el" and f"{match.group(1)}_ttlt" in doc):
            stat = "p50" if match.group(1) == "median" else match.group(1)
            reported[f"{_METRIC[match.group(2)]}_{stat}_s"] = num(key)
    image = doc.get("image")
    version = image.rsplit(":", 1)[-1] if isinstance(image, str) and ":" in image else None
    params = {k: str(v) for k, v in {
        "engine": doc.get("framework"), "engine_version": version,
        "precision": doc.get("precision"), "tp": tp, "ep": doc.get("ep"),
        "spec_decoding": doc.get("spec_decoding"), "hardware": doc.get("hw"),
        "gpu_count": tp,
    }.items() if v is not None}
    concurrency = integer(doc.get("conc", doc.get("users")), TOOL, path, "key 'conc'")
    model = doc.get("model")
    return [summary_run(
        TOOL, path, 0, reported, concurrency=concurrency, duration=num("duration_seconds"),
        model=model if isinstance(model, str) else None, params=params,
        notes=[f"InferenceX aggregated row ({doc.get('hw')}, {doc.get('framework')} "
               f"{version}): a public benchmark, graded reference; throughput = "
               f"output_tput_per_gpu x tp {tp}"],
        itl="chunk", tpot="last_minus_first_over_n_minus_1")]
