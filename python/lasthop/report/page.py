"""The HTML page of a report: self-contained (the SVGs inline, no script, no CDN, no font
download), tables of numbers in engineering notation, figures with captions."""

from __future__ import annotations

import html
from pathlib import Path


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
    match the page)."""
    for old in [*(directory / "figures").glob("*.svg"), *(directory / "figures").glob("*.png")]:
        old.unlink()


def not_drawn(figures: list[str], why: str, command: str) -> str:
    """The note of a report whose figures could not be drawn: which, why, and how to get them."""
    if not figures:
        return ""
    return (f'<p class="missing"><strong>Figures not drawn</strong> ({html.escape(why)}): '
            + "; ".join(html.escape(f) for f in figures)
            + f". With it installed, <code>{html.escape(command)}</code> draws them.</p>")


def page(title: str, intro_html: str, figures: list[tuple[str, str, str]], tables_html: str, note_html: str = "") -> str:
    figs = "\n".join(
        f'<figure id="{html.escape(n)}">{svg}<figcaption>{html.escape(c)}</figcaption></figure>' for n, c, svg in figures
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1000px; }}
h2 {{ font-size: 1.1em; margin-top: 1.5em; }}
figure {{ margin: 1.5em 0; }} figure svg {{ width: 100%; height: auto; }}
figcaption {{ color: #444; font-size: 0.9em; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
p.missing {{ background: #fff4d6; border: 1px solid #e0c36a; padding: 0.5em 0.8em; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{intro_html}</p>
{note_html}
{tables_html}
{figs}
</body></html>
"""
