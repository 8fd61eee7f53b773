"""What a candidate's figures rest on, from the user's evidence files or estimates:
`throughput` (benchmark runs, or a roofline estimate; `estimate` resolves `scorecard
estimate`'s options into the roofline's inputs), `power` (power logs, fleet energy files, or
declared watts; with the PUE), `quality` (accuracy results against the policy's reference) and
`latency` (an API's latency against the SLO), each through `pipeline.evidence`'s readers; and
the checks on them: `identity` (what a file says it measured against the candidate) and
`plausibility` (declared figures within their plausible bounds)."""
