"""`python -m pipeline`: the `scorecard` command line."""

from pipeline.cli import app

app(prog_name="scorecard")
