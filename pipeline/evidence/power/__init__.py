"""Measured power: power logs and a fleet's Parquet samples, turned into energy over a window.

- `logs`: power logs to `PowerEvidence` (`power_from_evidence`), their samples in the store;
- `fleet`: a fleet's Parquet samples to `PowerEvidence` (`power_from_parquet`), out of core;
- `measured`: `PowerEvidence`, what both give a candidate;
- `energy`: the energy of power samples over a window (`window_energy`);
- `hashing`: big power logs hashed ahead while `evidence add` imports the rest.
"""
