"""One self-contained HTML file: header, example-data banner, the scorecard table, per-candidate
reasons and notes, and sources. Every string from a proposal or a source is escaped."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from reports.scorecard_table import scorecard_gt

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1400px; color: #222; }
.banner { background: #fff3cd; border: 1px solid #e0c36a; padding: .6rem 1rem; margin: 1rem 0; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dl.meta dt { font-weight: 600; }
section { margin-top: 2rem; }
li { margin: .2rem 0; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def render_html(result: dict[str, Any]) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Scorecard: {_e(result['proposal'])}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Scorecard: {_e(result['proposal'])}</h1>",
        '<dl class="meta">',
        f"<dt>Vintage</dt><dd>{_e(result['vintage'])}</dd>",
        f"<dt>Generated at</dt><dd>{_e(result['generated_at'])}</dd>",
        f"<dt>Code version</dt><dd>{_e(result['code_version'])}</dd>",
        f"<dt>SLO</dt><dd>{_e(_slo(result['slo']))}</dd>",
        f"<dt>Policy</dt><dd>minimum sovereignty {_e(result['policy']['min_sovereignty'])}; "
        f"objectives {_e(', '.join(result['policy']['objectives']))}</dd>",
        "</dl>",
    ]
    if result["example_data"]:
        parts.append('<div class="banner" id="example-data"><strong>EXAMPLE DATA.</strong> '
                     "Some figures are illustrative declarations from the bundled example "
                     "proposal, not measurements of your hardware.</div>")
    parts.append('<section id="scorecard-section">')
    parts.append(scorecard_gt(result).as_raw_html())
    parts.append("</section>")
    parts.append('<section id="candidates"><h2>Candidates: sources, sovereignty and notes</h2>')
    for c in result["candidates"]:
        d = c["detail"]
        items = [
            f"Throughput ({_e(c['tokens_per_s_grade'])}): {_e(d['tokens_per_s_source'])}",
            f"Cost ({_e(d['cost_grade'])}): {_e(d['cost_source'])}",
            f"Power ({_e(d['power_grade'] or 'none')}): {_e(d['power_source'] or 'not given')}",
            f"Electricity ({_e(d['electricity_grade'] or 'none')}): "
            f"{_e(d['electricity_source'] or 'not available')}",
            f"Grid intensity ({_e(d['grid_grade'] or 'none')}): "
            f"{_e(d['grid_source'] or 'not available')}",
            f"Sovereignty: {_e(d['sovereignty_reason'])}",
        ]
        if c["exclusion_reason"]:
            items.append(f"<strong>Excluded:</strong> {_e(c['exclusion_reason'])}")
        items += [f"Note: {_e(n)}" for n in c["notes"]]
        parts.append(f"<h3>{_e(c['id'])}: {_e(c['label'])}</h3><ul>")
        parts += [f"<li>{i}</li>" for i in items]
        parts.append("</ul>")
    parts.append("</section>")
    parts.append('<section id="sources"><h2>Sources</h2><ul>')
    for s in result["sources"]:
        parts.append(f"<li>{_e(s['kind'])} {_e(s['subject'])}: "
                     f'<a href="{_e(s["url"])}">{_e(s["url"])}</a>, {_e(s["date"])}, '
                     f"{_e(s['licence'])}, sha256 {_e(s['snapshot_sha256'])}</li>")
    parts.append("</ul></section></body></html>")
    return "\n".join(parts) + "\n"


def _slo(slo: dict[str, Any]) -> str:
    limits = [f"{k} {v:g}" for k, v in sorted(slo.items()) if v is not None]
    return ", ".join(limits)


def write_html(result: dict[str, Any], path: Path) -> None:
    path.write_text(render_html(result), encoding="utf-8")
