"""The fleet behind each figure: its sizing for the demand and the break-even, the plan over
the horizon (nodes arriving late, a fallback) and mixes of an own base with a burst."""
