"""The page's figures drawn with matplotlib, for the figure files of ``--png`` (figures/*.png and
*.svg): each chart (lasthop.report.charts for a run, sweep.py for a sweep) as a matplotlib
Figure, from the same data the page embeds, so a file shows what the page shows. One definition
of each figure (the chart), two renderers (charts.js in the browser, this module).

Layout as draw.py sets it: the same width and plot area for every figure (aligned time axes),
legends in the right margin, engineering notation on axes. The data is the page's, rounded to 4
significant digits, which no figure can tell apart.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
from matplotlib.ticker import FixedLocator, MaxNLocator, PercentFormatter

from lasthop.report import draw
from lasthop.report.envelope import Envelope, Raw
from lasthop.report.text import count, label

# (marker, line style) per value of the parameters beyond the second (a legend entry's "dash").
STYLES = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-.")]
FACET_COLUMNS = 3
FACET_HEIGHT = 2.1
# A tick label's width in inches per character (DejaVu Sans at 10 pt: "500 kb/s" is 0.60 in)
# and the space kept between two labels (about one character); ticks go at the swept values when
# their labels fit so.
CHAR_IN = 0.075
LABEL_GAP_IN = 0.08


def chart_figure(chart: dict):
    """The matplotlib Figure of one chart of a report page."""
    return {"time": _time, "cdf": _cdf, "bars": _bars, "sweep": _sweep}[chart["kind"]](chart)


def figure_files(directory: Path, charts: list[dict], progress=None) -> None:
    """figures/<id>.svg and .png of each chart, drawn over one process per core (draw.Figures),
    an earlier report's files removed first. `progress(done, total, what)` per figure."""
    with draw.Figures(directory, progress, len(charts), png=True) as figs:
        figs.draw([functools.partial(_add, figs, c) for c in charts])


def _add(figs, chart: dict) -> None:
    figs.add(chart_figure(chart), chart["id"], chart["caption"])


def _floats(values: list) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def _series(s: dict) -> Raw | Envelope:
    t = _floats(s["t"])
    if "y" in s:
        return Raw(t, _floats(s["y"]), bool(s["step"]))
    return Envelope(t, _floats(s["lo"]), _floats(s["hi"]), _floats(s["mean"]))


def _title(chart: dict) -> tuple[str, int]:
    return label(chart["title"]), chart["title"].count("\n") + 1


def _time(chart: dict):
    panels = chart["panels"]
    title, lines = _title(chart)
    p = draw.Panels([draw.panel_height(len(pn["series"]) + (pn["legend_title"] is not None)) for pn in panels], title, lines)
    for ax, pn in zip(p.axes, panels):
        if pn["log"]:
            ax.set_yscale("log", nonpositive="mask")  # zeros leave gaps, not drops to the edge
        for s in pn["series"]:
            draw.plot(ax, _series(s), s["color"], s["name"], log=pn["log"])
        if not pn["log"]:
            ax.set_ylim(bottom=0)
        if pn["integer"]:
            draw.integer_axis(ax.yaxis)
        else:
            draw.eng_axis(ax.yaxis, pn["unit"])
        ax.set_ylabel(label(pn["ylabel"]), fontsize=9)
        draw.legend_outside(ax, title=None if pn["legend_title"] is None else label(pn["legend_title"]))
    p.axes[0].set_xlim(0, chart["t_end"])
    p.axes[0].xaxis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10]))
    p.axes[-1].set_xlabel("time (s)")
    return p.fig


def _cdf(chart: dict):
    title, lines = _title(chart)
    p = draw.Panels([draw.panel_height(len(chart["series"])) + 0.8], title, lines, sharex=False)
    ax = p.axes[0]
    x = _floats(chart["x"])
    for s in chart["series"]:  # as the page draws it: steps on the flows' common grid
        ax.step(x, _floats(s["y"]), where="post", color=s["color"], label=label(s["name"]), linewidth=1)
    if chart["log"]:
        ax.set_xscale("log", nonpositive="mask")
    draw.eng_axis(ax.xaxis, chart["xunit"])
    ax.set_xlabel(chart["xlabel"])
    ax.set_ylabel(chart["ylabel"])
    ax.set_ylim(0, 1.0)
    draw.legend_outside(ax)
    return p.fig


def _bars(chart: dict):
    members, counters = chart["members"], chart["counters"]
    bar = 0.8 / len(counters)
    title, lines = _title(chart)
    p = draw.Panels([max(draw.PANEL, 0.11 * len(members) * len(counters))], title, lines, sharex=False)
    ax = p.axes[0]
    y = np.arange(len(members))
    top = max([v for c in counters for v in c["values"]], default=0)
    for i, c in enumerate(counters):
        ys = y - 0.4 + bar * (i + 0.5)
        ax.barh(ys, c["values"], height=bar * 0.9, color=c["color"], label=label(c["name"]))
        for yi, vi in zip(ys, c["values"]):
            ax.text(vi + top * 0.01, yi, count(vi), va="center", fontsize=6.5)
    ax.set_yticks(y, [label(m) for m in members])
    ax.invert_yaxis()
    ax.set_xlim(0, max(top, 1.0) * 1.12)
    ax.grid(False)
    ax.grid(axis="x", alpha=0.3)
    draw.eng_axis(ax.xaxis, "")
    ax.set_xlabel(chart["unit"])
    draw.legend_outside(ax)
    return p.fig


def _sweep(chart: dict):
    facets, x, yax, entries = chart["facets"], chart["x"], chart["y"], chart["legend"]["entries"]
    faceted = facets[0]["title"] is not None
    ncols = min(len(facets), FACET_COLUMNS)
    nrows = math.ceil(len(facets) / ncols)
    height = max(FACET_HEIGHT, draw.LEGEND_ROW * len(entries) + 0.4) if nrows == 1 else FACET_HEIGHT
    title, title_lines = _title(chart)
    top = draw.TOP_ONE_LINE + draw.TOP_LINE * (title_lines - 1) + (0.25 if faceted else 0)
    facet_gap = 0.45 if faceted else 0.0
    total = top + draw.BOTTOM + 0.1 + nrows * height + (nrows - 1) * (facet_gap + 0.25)
    fig = draw.Figure(figsize=(draw.WIDTH, total))
    plot_w = draw.WIDTH - draw.LEFT - draw.RIGHT
    col_gap = 0.25
    w = (plot_w - col_gap * (ncols - 1)) / ncols
    log, floor = yax["log"], yax["floor"]
    xs = np.array(x["positions"], dtype=np.float64)
    axes = []
    for i, facet in enumerate(facets):
        r, c = divmod(i, ncols)
        y0 = total - top - (r + 1) * height - r * (facet_gap + 0.25)
        ax = fig.add_axes(((draw.LEFT + c * (w + col_gap)) / draw.WIDTH, y0 / total, w / draw.WIDTH, height / total),
                          sharey=axes[0] if axes else None)
        axes.append(ax)
        ax.grid(alpha=0.3)
        for line, e in zip(facet["lines"], entries):
            mean, ci = _floats(line["mean"]), np.nan_to_num(_floats(line["ci"]))
            ok = np.isfinite(mean)
            if not ok.any():
                continue
            # On a log axis an interval reaching 0 or below is drawn down to the bottom edge, `floor`.
            below = np.minimum(ci, mean - floor) if log else ci
            marker, style = STYLES[e["dash"] % len(STYLES)]
            ax.errorbar(xs[ok], mean[ok], yerr=[np.maximum(below[ok], 0.0), ci[ok]], marker=marker, linestyle=style,
                        markersize=4, capsize=3, linewidth=1.2, color=e["color"], label=label(e["name"]))
        if faceted:
            ax.set_title(label(facet["title"]), fontsize=9)
        parameter_ticks(ax, x["positions"], x["labels"], x["numeric"], x["integer"], x["unit"], x["range"])
        if c == 0:
            ax.set_ylabel(label(yax["label"]))
        else:
            ax.tick_params(labelleft=False)
        if r == nrows - 1 or i + ncols >= len(facets):
            ax.set_xlabel(label(x["label"]), fontsize=9)
    if log:
        axes[0].set_yscale("log", nonpositive="mask")
        axes[0].set_ylim(bottom=floor)
    else:
        axes[0].set_ylim(bottom=0)
    if yax["unit"] == "%":
        axes[0].yaxis.set_major_formatter(PercentFormatter(xmax=100))
    else:
        draw.eng_axis(axes[0].yaxis, yax["unit"])
    handles, labels = [], []
    for ax in axes:  # every line once, even if the right-hand panel lacks some
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    axes[ncols - 1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                           title=label(chart["legend"]["title"]), title_fontsize=8, alignment="left")
    fig.suptitle(title, x=(draw.LEFT + plot_w / 2) / draw.WIDTH, y=1 - 0.08 / total, va="top", fontsize=11)
    return fig


def parameter_ticks(ax, pos: list[float], labels: list[str], numeric: bool, integer: bool, unit: str,
                    shown: tuple[float, float] | list[float]) -> None:
    """The x axis of a swept parameter over `shown`: categories at their indices; numbers and
    quantities on a proportional axis, ticked at the swept values (`labels`) when the labels fit
    side by side, else at a few round values (integers for integer parameters, engineering
    notation with the unit for quantities)."""
    ax.set_xlim(*shown)
    if not numeric:
        ax.xaxis.set_major_locator(FixedLocator(pos))
        ax.set_xticks(pos, [label(v) for v in labels])
        return
    if _labels_fit(ax, pos, labels, shown[1] - shown[0]):
        ax.set_xticks(pos, labels)
    elif integer:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    elif unit:
        draw.eng_axis(ax.xaxis, unit)


def _labels_fit(ax, pos: list[float], labels: list[str], shown: float) -> bool:
    """Whether labels centred at `pos` leave LABEL_GAP_IN between neighbours on `ax`, whose
    width shows `shown` in data units."""
    if len(pos) < 2:
        return True
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    return all((b - a) / shown * width_in >= CHAR_IN * (len(la) + len(lb)) / 2 + LABEL_GAP_IN
               for a, b, la, lb in zip(pos, pos[1:], labels, labels[1:]))
