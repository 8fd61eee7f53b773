"""Which candidates may be compared and in what order: the policy's gates (regulatory and
sovereignty), the sovereignty level, the Pareto ranks and the recommendation with what would
change it."""
