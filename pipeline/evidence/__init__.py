"""Measured evidence: benchmark results and power logs, read and turned into goodput and energy.

- `files`: the one folder walk, a file's head, which family each file is (benchmark or power);
- `configuration`: the engine settings a benchmark run was measured under;
- `bench`: benchmark runs, the `inspect` report, the operating point (`throughput_from_evidence`),
  their rows in the store;
- `cache`: benchmark runs parsed once, read back from the store by the file's sha256;
- `goodput`: goodput under an SLO, percentiles and the knee of a sweep;
- `quality`: lm-evaluation-harness results and their comparison with a reference;
- `power/`: power logs and a fleet's Parquet samples to `PowerEvidence`, the energy over a
  window;
- `inspection`: the `evidence inspect` report with a power log's energy, and its table;
- `engine_state`: a vLLM start-up log's KV capacity and `/metrics`' queue, KV usage and
  preemptions (what `evidence inspect` shows under `engine_state`);
- `add`: `evidence add`, both families into the store.

`bench` and `power` import `files`, never each other; `inspection` and `add` join them.
"""
