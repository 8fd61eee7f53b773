"""What every page of the reports shares: its style sheet and the escaping of every string
that comes from a proposal, evidence or a source (reports/html.py, reports/diff_report.py)."""

from __future__ import annotations

import html
from typing import Any

from reports.cells import plain

CSS = """
body { font-family: "DejaVu Sans", Verdana, system-ui, sans-serif; margin: 1.5rem auto;
  max-width: 1600px; padding: 0 1rem; color: #222; font-size: 14px; }
h1 { margin-bottom: .3rem; } h2 { border-bottom: 2px solid #1a7a3a; padding-bottom: .2rem; }
.banner { background: #fff3cd; border: 2px solid #e0a800; padding: .6rem 1rem; margin: 1rem 0;
  font-size: 1.05rem; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .15rem 1rem; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
nav ol { columns: 3; margin: .5rem 0; }
section { margin-top: 2rem; }
table.plain { border-collapse: collapse; margin: .5rem 0; }
table.plain th, table.plain td { border: 1px solid #d0d0d0; padding: .25rem .5rem;
  vertical-align: top; text-align: left; }
table.plain th { background: #f3f3f3; } table.plain td.num { text-align: right;
  font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.stale td { background: #fdecea; } tr.moved td { font-weight: 600; }
td.hash { font-family: monospace; font-size: .8rem; word-break: break-all; }
figure { margin: 1rem 0; display: inline-block; vertical-align: top; }
figcaption { font-size: .9rem; color: #444; max-width: 600px; }
p.absent { color: #8a5a00; font-style: italic; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
li { margin: .15rem 0; }
@media print { body { max-width: none; margin: 0; padding: 0; zoom: 0.66; }
  nav { display: none; } figure, table.plain, tr { break-inside: avoid; }
  h2 { break-after: avoid; } }
@page { size: A4 landscape; margin: 12mm; }
"""


def escape(value: Any) -> str:
    """HTML text of a value, bidi and control characters stripped; None is the empty
    string."""
    return html.escape(plain("" if value is None else str(value)))
