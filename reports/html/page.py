"""What every page of the reports shares: its style sheet (screen and print), the escaping of
every string that comes from a proposal, evidence or a source, and the plain-table and number
helpers (reports/html/report.py, reports/html/first_screen.py, reports/html/diff_report.py)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from reports.cells import plain

CSS = """
body { font-family: "DejaVu Sans", Verdana, system-ui, sans-serif; margin: .8rem auto;
  max-width: 1600px; padding: 0 1rem; color: #222; font-size: 14px; }
h1 { margin: 0 0 .1rem; font-size: 1.35rem; }
h2 { border-bottom: 2px solid #1a7a3a; padding-bottom: .2rem; break-after: avoid; }
h3 { break-after: avoid; }
a { color: #125e2c; }
.banner { background: #fff3cd; border: 2px solid #e0a800; padding: .6rem 1rem; margin: 1rem 0;
  font-size: 1.05rem; }
.banner.slim { padding: .2rem .6rem; margin: .3rem 0; font-size: .9rem; }
p.meta, p.fresh { margin: .15rem 0; color: #444; font-size: .85rem; }
p.fresh.stale { color: #8a2a00; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .15rem 1rem; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
nav ol { columns: 3; margin: .5rem 0; }
nav#contents { font-size: .85rem; margin: .4rem 0; color: #444; }
section { margin-top: 2rem; }
#summary section { margin-top: .5rem; }
#recommendation { border: 2px solid #1a7a3a; border-radius: 4px; padding: .3rem .8rem;
  background: #f4faf5; }
#recommendation h2 .label { font-weight: 400; font-size: .9rem; color: #444; }
#recommendation h2 { border: 0; margin: 0; padding: 0; font-size: 1.2rem; }
#recommendation p { margin: .2rem 0; }
#recommendation .label { color: #444; font-size: .9rem; }
dl.figures { display: flex; flex-wrap: wrap; gap: .3rem 1.6rem; margin: .3rem 0; }
dl.figures div { min-width: 0; }
dl.figures dt { font-size: .75rem; color: #555; text-transform: uppercase;
  letter-spacing: .03em; }
dl.figures dd { margin: 0; font-weight: 600; }
ul.changes { margin: .1rem 0 .2rem; padding-left: 1.2rem; font-size: .9rem; }
ul.changes li { margin: 0; }
#excluded { font-size: .9rem; } #excluded h3 { display: inline; font-size: .9rem; }
#excluded ul { display: inline; padding: 0; margin: 0; } #excluded li { display: inline; }
#excluded li + li::before { content: "; "; }
p.basis { font-size: .8rem; color: #444; margin: .2rem 0; max-width: 1250px; }
table.plain { border-collapse: collapse; margin: .5rem 0; }
table.plain th, table.plain td { border: 1px solid #d0d0d0; padding: .25rem .5rem;
  vertical-align: top; text-align: left; overflow-wrap: break-word; }
table.long { width: 100%; }
table.long td:last-child, #sources-table td:nth-child(3), #sources-table td:nth-child(5),
  #formulas td:nth-child(2) { overflow-wrap: anywhere; }
table.long td:first-child { white-space: nowrap; }
table.plain th { background: #f3f3f3; } table.plain td.num { text-align: right;
  font-variant-numeric: tabular-nums; white-space: nowrap; overflow-wrap: normal; }
table.compact { font-size: 13px; margin: .25rem 0; width: 100%; }
table.compact th, table.compact td { padding: .1rem .4rem; overflow-wrap: normal; }
table.compact th { font-weight: 600; font-size: 11.5px; vertical-align: bottom; }
table.compact td small { color: #555; display: block; font-size: 11px; }
table.compact td:first-child { width: 31%; }
table.compact td.level, table.compact td.result { white-space: nowrap; }
table.compact td.num small { white-space: nowrap; }
tr.chosen td { background: #e3f2e1; font-weight: 600; } tr.chosen td small { font-weight: 400; }
tr.excluded td { color: #8a8a8a; }
tr.stale td { background: #fdecea; } tr.moved td { font-weight: 600; }
td.hash, span.hash { font-family: monospace; font-size: .8rem; overflow-wrap: anywhere; }
.wide { max-width: 100%; overflow-x: auto; }
figure { margin: 1rem 0; display: inline-block; vertical-align: top; max-width: 100%; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .9rem; color: #444; max-width: 600px; }
p.absent { color: #8a5a00; font-style: italic; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
li { margin: .15rem 0; }
#appendix > h2.appendix-title { margin-top: 2.5rem; border-bottom-width: 4px; }
@media print { body { max-width: none; margin: 0; padding: 0; zoom: 0.66; }
  nav { display: none; }
  #summary { break-after: page; }
  figure, table.plain, table.gt_table, tr, .keep, dl.figures, #recommendation {
    break-inside: avoid; }
  thead { display: table-header-group; }
  .wide { overflow: visible; }
  h2, h3, h2 + p, h3 + p { break-after: avoid; } }
@page { size: A4 landscape; margin: 12mm; }
"""


def escape(value: Any) -> str:
    """HTML text of a value, bidi and control characters stripped; None is the empty
    string. Quotes are escaped too, so the result is safe inside an attribute."""
    return html.escape(plain("" if value is None else str(value)))


def num(value: Any, digits: int = 4) -> str:
    """A figure as a table prints it: thousands separators, no exponent, 4 significant
    digits below 100; n/a for a missing one."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.{digits}g}"
    return escape(value)


def shortened(value: Any, keep: int = 12, css: str = "") -> str:
    """A long string (a 64-hex hash, a URL) cut to its first `keep` characters and an
    ellipsis, the whole value in the title attribute (escaped); a short one as it is."""
    text = "" if value is None else str(value)
    cls = f' class="{css}"' if css else ""
    if len(text) <= keep + 1:
        return f"<span{cls}>{escape(text)}</span>" if cls else escape(text)
    return f'<span{cls} title="{escape(text)}">{escape(text[:keep])}…</span>'


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, table_id: str,
          numeric: Sequence[int] = (), row_classes: Sequence[str] = (),
          css: str = "plain") -> str:
    """A plain HTML table; cells are escaped, numbers formatted, numeric columns aligned."""
    out = [f'<table class="{css}" id="{escape(table_id)}"><thead><tr>']
    out += [f"<th>{escape(h)}</th>" for h in headers]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(rows):
        cls = row_classes[i] if i < len(row_classes) and row_classes[i] else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for j, cell in enumerate(row):
            if j in numeric:
                out.append(f'<td class="num">{num(cell)}</td>')
            else:
                out.append(f"<td>{escape(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)
