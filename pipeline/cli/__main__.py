"""`python -m pipeline.cli`: the `scorecard` command line."""

from pipeline.cli import app

app(prog_name="scorecard")
