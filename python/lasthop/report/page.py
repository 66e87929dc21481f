"""The HTML page of a report: one self-contained file (no CDN, no font download, nothing
fetched: it works offline and can be mailed), tables of numbers in engineering notation,
figures with captions.

Figures come in two kinds. Charts (the reports of `lasthop run` and `lasthop sweep`) are data:
the page embeds each chart's JSON (lasthop.report.charts, sweep.py) and draws it when opened,
with the vendored uPlot (vendor/: MIT, a 51 kB script; scripts/vendor-uplot.sh re-fetches it
from the npm registry) and charts.js, so writing a report costs no matplotlib (whose import
alone took as long as a short run). Inline SVGs (`lasthop compare`, and anything else drawn
with matplotlib) are pasted as they are.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from pathlib import Path

VENDOR = Path(__file__).with_name("vendor")


def table(columns: list[str], rows: list[list[str]], numeric_from: int = 1) -> str:
    """An HTML table of already formatted cells; columns from `numeric_from` on align right."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "\n".join(
        "<tr>" + "".join(f'<td{" class=num" if i >= numeric_from else ""}>{html.escape(str(c))}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def section(heading: str, content: str) -> str:
    return f"<h2>{html.escape(heading)}</h2>\n{content}" if content else ""


def clear_figures(directory: Path) -> None:
    """Removes the figures an earlier report left in `directory`/figures/ (they would no longer
    match the page); a symlink planted as figures/ is not followed."""
    figures = directory / "figures"
    if figures.is_symlink() or not figures.is_dir():
        return
    for old in [*figures.glob("*.svg"), *figures.glob("*.png")]:
        old.unlink()


def not_drawn(figures: list[str], why: str, command: str, heading: str = "Figures not drawn") -> str:
    """The note of a report whose figures could not be drawn: which, why, and how to get them."""
    if not figures:
        return ""
    return (f'<p class="missing"><strong>{html.escape(heading)}</strong> ({html.escape(why)}): '
            + "; ".join(html.escape(f) for f in figures)
            + f". With it installed, <code>{html.escape(command)}</code> draws them.</p>")


@functools.lru_cache(maxsize=1)
def _scripts() -> str:
    """uPlot's style sheet and script, then charts.js, to inline in a page. uPlot's header
    comment (its repository's address) becomes its name, version and licence, so the page holds
    no address at all."""
    version = (VENDOR / "VERSION").read_text(encoding="utf-8").splitlines()[0]
    uplot = (VENDOR / "uPlot.iife.min.js").read_text(encoding="utf-8")
    uplot = re.sub(r"\A/\*!.*?\*/", lambda _: f"/*! {version}; lasthop/report/vendor/uPlot.LICENSE */", uplot, count=1, flags=re.S)
    css = (VENDOR / "uPlot.min.css").read_text(encoding="utf-8")
    ours = Path(__file__).with_name("charts.js").read_text(encoding="utf-8")
    return f"<style>{css}</style>\n<script>{uplot}</script>\n<script>{ours}</script>"


def chart_data(charts: list[dict]) -> str:
    """The charts as the JSON text a page embeds: compact, "<" escaped so no text from a
    scenario can close the script element."""
    try:
        text = json.dumps(charts, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # a NaN or an infinity (read from a damaged trace): a gap in the chart
        text = json.dumps(finite(charts), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c")


def finite(value):
    """`value` with every NaN and infinity replaced by None (null in JSON: no point)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def _chart(i: int, chart: dict) -> str:
    title = "<br>".join(html.escape(line) for line in chart["title"].split("\n"))
    return (f'<figure id="{html.escape(chart["id"])}" class="chart" data-chart="{i}"><div class="chart-title">{title}</div>'
            f'<div class="chart-body"></div><figcaption>{html.escape(chart["caption"])}</figcaption></figure>')


def page(title: str, intro_html: str, figures: list[tuple[str, str, str]], tables_html: str, note_html: str = "",
         charts: list[dict] | None = None) -> str:
    """The page: `figures` (name, caption, inline SVG) as they are, then `charts` (JSON-able
    dicts, drawn in the browser)."""
    figs = "\n".join(
        f'<figure id="{html.escape(n)}">{svg}<figcaption>{html.escape(c)}</figcaption></figure>' for n, c, svg in figures
    )
    if charts:
        figs += "\n" + "\n".join(_chart(i, c) for i, c in enumerate(charts))
        figs += (f'\n<script type="application/json" id="lasthop-charts">{chart_data(charts)}</script>\n{_scripts()}'
                 '\n<noscript><p class="missing">The figures of this page are drawn by its script: allow JavaScript '
                 "to see them.</p></noscript>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1060px; }}
h2 {{ font-size: 1.1em; margin-top: 1.5em; }}
figure {{ margin: 1.5em 0; }} figure svg {{ width: 100%; height: auto; }}
figcaption {{ color: #444; font-size: 0.9em; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
p.missing {{ background: #fff4d6; border: 1px solid #e0c36a; padding: 0.5em 0.8em; }}
.chart-title {{ font-size: 0.95em; font-weight: bold; margin: 0 0 0.3em 85px; white-space: pre-line; }}
.panel {{ display: flex; align-items: flex-start; }}
.legend {{ font-size: 12px; padding: 8px 0 0 8px; width: 210px; flex: none; overflow-wrap: anywhere; }}
.legend .head {{ color: #444; margin-bottom: 2px; }}
.legend .entry {{ display: flex; align-items: center; margin: 1px 0; }}
.legend .swatch {{ flex: none; width: 22px; height: 0; border-top: 2px solid; margin-right: 6px; }}
.legend .box {{ flex: none; width: 12px; height: 12px; margin-right: 6px; }}
.legend .value {{ color: #555; margin-left: 6px; font-variant-numeric: tabular-nums; }}
.legend .head.value {{ margin-left: 0; min-height: 1.2em; }}
.facets {{ display: flex; flex-wrap: wrap; }}
.facet-title {{ font-size: 12px; text-align: center; }}
.bars td {{ border: none; padding: 1px 4px; }}
.bars .bar {{ display: inline-block; height: 10px; vertical-align: middle; margin-right: 4px; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{intro_html}</p>
{note_html}
{tables_html}
{figs}
</body></html>
"""
