"""The figures of a run report as data for the browser: each figure a JSON-able dict that
report.html embeds and charts.js draws with the vendored uPlot (lasthop.report.page), so a
report costs no matplotlib at run time (its import alone took as long as the rest of a run).

A chart is the one definition of a figure: the page draws it in the browser (charts.js) and
``--png`` draws it with matplotlib (render.py), so both show the same thing. run.py builds a
run's charts from its reduced data (rate groups, envelopes, the median band of many flows, the
log-axis choice), sweep.py a sweep's (kind "sweep"). Kinds:

    time     panels sharing the time axis 0..t_end (throughput, delay and jitter, TCP windows,
             queues); series as samples (t, y) or envelopes (t, lo, hi, mean), steps or lines
    cdf      the one-way delay CDF of every flow on one x grid (the union of their delays)
    bars     a WLAN's MAC counters per member

Numbers are rounded to DIGITS significant digits (what a figure can show; the home run's data 206 kB
where full precision took 304 kB) and times to TIME_DIGITS; NaN is null (a gap). The same data
gives the same bytes.
"""

from __future__ import annotations

import numpy as np

from lasthop.report import envelope

DIGITS = 4
TIME_DIGITS = 7

# matplotlib's tab10, then the light half of tab20: the colours the --png figures use.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]
NAMED = {"tab:blue": "#1f77b4", "tab:orange": "#ff7f0e", "tab:green": "#2ca02c", "tab:red": "#d62728",
         "tab:purple": "#9467bd", "tab:brown": "#8c564b"}


def colors(names: list[str]) -> dict[str, str]:
    """One colour per name, in order, as the --png figures (draw.flow_colors) give them."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def numbers(values, digits: int = DIGITS) -> list:
    """`values` as a JSON list: `digits` significant digits (the float whose shortest repr has
    them, so the page holds "12.35", not "12.345678901"), NaN and None as null."""
    fmt = f"{{:.{digits}g}}"
    return [None if v is None or v != v else float(fmt.format(v)) for v in np.asarray(values, dtype=np.float64).tolist()]


def series(name: str, color: str, reduced: envelope.Raw | envelope.Envelope, step: bool = False) -> dict:
    """A reduced series (samples or an envelope) as the browser draws it."""
    if isinstance(reduced, envelope.Raw):
        return {"name": name, "color": color, "step": bool(reduced.step or step), "t": numbers(reduced.t, TIME_DIGITS),
                "y": numbers(reduced.y)}
    return {"name": name, "color": color, "step": False, "t": numbers(reduced.t, TIME_DIGITS), "lo": numbers(reduced.lo),
            "hi": numbers(reduced.hi), "mean": numbers(reduced.mean)}


def panel(ylabel: str, unit: str, lines: list[dict], log: bool = False, integer: bool = False, legend_title: str | None = None) -> dict:
    return {"ylabel": ylabel, "unit": unit, "log": bool(log), "integer": bool(integer), "legend_title": legend_title, "series": lines}


def time_figure(fid: str, title: str, caption: str, t_end: float, panels: list[dict]) -> dict:
    return {"id": fid, "kind": "time", "title": title, "caption": caption, "t_end": t_end, "panels": panels}


def cdf_figure(fid: str, title: str, caption: str, flows: dict[str, tuple[np.ndarray, np.ndarray]], flow_colors: dict[str, str],
               log: bool) -> dict:
    """Each flow's CDF (delays in s, ascending, and their quantiles) on one x grid, the union of
    every flow's delays (uPlot draws series that share one x array), drawn as steps: at a
    flow's own delays its quantiles, between them linear, 0 below its smallest delay and its
    last quantile from its largest on. So a flow whose packets all took the same time is a
    vertical step at that delay, not a point nobody sees."""
    # Rounded first (TIME_DIGITS: 0.1 µs at 100 ms), so the page's x values are the grid's own.
    grid = np.unique(np.array(numbers(np.concatenate([d for d, _ in flows.values()]), TIME_DIGITS), dtype=np.float64)) \
        if flows else np.empty(0)
    ys = []
    for name, (d, q) in flows.items():
        y = np.interp(grid, d, q)
        y[grid < d[0]] = 0.0
        y[grid >= d[-1]] = q[-1]
        ys.append({"name": name, "color": flow_colors.get(name, PALETTE[0]), "y": numbers(y)})
    return {"id": fid, "kind": "cdf", "title": title, "caption": caption, "xlabel": "one-way delay", "xunit": "s", "log": bool(log),
            "ylabel": "fraction of packets", "x": grid.tolist(), "series": ys}


def bars_figure(fid: str, title: str, caption: str, members: list[str], counters: list[tuple[str, str, list[float]]],
                unit: str) -> dict:
    """Grouped horizontal bars: per member, one bar per counter (name, colour, a value per member)."""
    return {"id": fid, "kind": "bars", "title": title, "caption": caption, "members": members, "unit": unit,
            "counters": [{"name": n, "color": NAMED.get(c, c), "values": [int(v) for v in vs]} for n, c, vs in counters]}


def label(name: str) -> str:
    """A name from a scenario as plain text: printable (the page escapes it)."""
    return "".join(c if c.isprintable() else "\ufffd" for c in str(name))

