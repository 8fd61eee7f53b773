"""What users ask of a computed scorecard: the derivation of one figure (`explain`) and what
changed between two runs, and why (`diff`)."""
