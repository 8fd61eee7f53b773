"""The inputs read from the user's evidence files: `throughput` (benchmark runs, or a roofline
estimate), `power` (power logs, fleet energy files, or declared watts; with the PUE) and
`quality` (accuracy results against the policy's reference), each through `pipeline.evidence`'s
readers."""
