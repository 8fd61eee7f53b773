"""Measured evidence: benchmark results and power logs, read and turned into goodput and energy.

- `files`: the one folder walk, a file's head, which family each file is (benchmark or power);
- `bench`: benchmark runs, the `inspect` report, the operating point (`throughput_from_evidence`),
  their rows in the store;
- `goodput`: goodput under an SLO, percentiles and the knee of a sweep;
- `power`: power logs to `PowerEvidence` (`power_from_evidence`), their samples in the store;
- `fleet`: a fleet's Parquet samples to `PowerEvidence` (`power_from_parquet`), out of core;
- `measured`: `PowerEvidence`, what both give a candidate;
- `energy`: the energy of power samples over a window (`window_energy`);
- `inspection`: the `evidence inspect` report with a power log's energy, and its table;
- `add`: `evidence add`, both families into the store.

`bench` and `power` import `files`, never each other; `inspection` and `add` join them.
"""
