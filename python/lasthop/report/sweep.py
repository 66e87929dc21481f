"""The report of a sweep: each metric against the first swept parameter, mean ± 95 % CI across
seeds, one line per flow, one panel per value of the second parameter (further parameters add
lines, named in the legend). Legends sit beside the panels, never on the data; the x axis
carries the parameter's name and unit, with integer ticks for integer parameters.

Swept values are placed by their SI values, as the core's unit parser reads them
(lasthop.quantities): "500kbps,1Mbps,2Mbps,5Mbps" at 5e5 .. 5e6 on a proportional axis ticked
"500 kb/s" .. "5 Mb/s", "500us,2ms" at 0.5 ms and 2 ms. Values that are no quantities of one
kind ("false,true", "newreno,cubic") are categories in the grid's order.
"""

from __future__ import annotations

import functools
import html
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lasthop._lazy import LazyModule
from lasthop.quantities import swept_parameter
from lasthop.report import charts, envelope, page, text
from lasthop.report.run import ReportProgress

# matplotlib, imported when a figure is drawn (see lasthop.report.run).
draw = LazyModule("lasthop.report.draw")
ticker = LazyModule("matplotlib.ticker")

# (column of flows.parquet, what, unit, scale from the column's unit to the axis unit)
METRICS = [("goodput_bps", "goodput", "b/s", 1.0), ("delay_p99_ms", "one-way delay p99", "s", 1e-3),
           ("jitter_mean_ms", "mean |IPDV|", "s", 1e-3), ("loss_ratio", "loss", "%", 100.0)]

FACET_COLUMNS = 3
# (marker, line style) per value of the parameters beyond the second.
STYLES = [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-.")]
FACET_HEIGHT = 2.1


@dataclass
class Axis:
    """How a swept parameter's values are placed on an axis."""

    path: str
    values: list[str]               # in the grid's order
    positions: dict[str, float]     # value -> x: its SI value, or its index for categories
    unit: str                       # the SI unit ("b/s", "s", "B", "packets"), "" for numbers and categories
    numeric: bool
    integer: bool

    @property
    def name(self) -> str:
        return f"{self.path} ({self.unit})" if self.unit else self.path

    def describe(self, value: str) -> str:
        return f"{self.path} = {value}"


def parameter_axis(path: str, values: list[str]) -> Axis:
    """SI values when every value is a quantity of one kind, else categories in order."""
    q = swept_parameter(path, values)
    if q.numeric:
        return Axis(path, list(q.values), dict(q.si), q.unit, True, q.integer)
    return Axis(path, list(q.values), {v: float(i) for i, v in enumerate(q.values)}, "", False, True)


def _grid_values(meta: dict, flows, path: str) -> list[str]:
    for g in meta.get("grids", []):
        if g["path"] == path:
            return [str(v) for v in g["values"]]
    return [str(v) for v in dict.fromkeys(flows[path].astype(str))]


def _aggregate(res, column: str):
    """Mean and 95 % CI per grid point and flow, the parameters as text (as in the grid)."""
    agg = res.aggregate(column, by=res.params)
    for p in res.params:
        agg[p] = agg[p].astype(str)
    return agg


def _metric_figure(agg, meta: dict, column: str, what: str, unit: str, scale: float, x: Axis, facet: Axis | None,
                   extra: list[str]) -> tuple:
    facets = facet.values if facet else [None]
    ncols = min(len(facets), FACET_COLUMNS)
    nrows = math.ceil(len(facets) / ncols)
    flows = list(dict.fromkeys(agg["name"]))
    colors = draw.flow_colors(flows)
    lines_keys = list(dict.fromkeys(zip(*(agg[c] for c in ["name", *extra])))) if len(agg) else []
    extra_values = list(dict.fromkeys(k[1:] for k in lines_keys))
    height = max(FACET_HEIGHT, draw.LEGEND_ROW * len(lines_keys) + 0.4) if nrows == 1 else FACET_HEIGHT
    title, title_lines = text.title_lines(
        f"{what} vs {x.path}", str(meta.get("scenario_name", "sweep")),
        f"mean ± 95 % CI over {meta['seeds']} seed(s), base seed {meta['base_seed']}")
    top = draw.TOP_ONE_LINE + draw.TOP_LINE * (title_lines - 1) + (0.25 if facet else 0)
    facet_gap = 0.45 if facet else 0.0
    total = top + draw.BOTTOM + 0.1 + nrows * height + (nrows - 1) * (facet_gap + 0.25)
    fig = draw.Figure(figsize=(draw.WIDTH, total))
    plot_w = draw.WIDTH - draw.LEFT - draw.RIGHT
    col_gap = 0.25
    w = (plot_w - col_gap * (ncols - 1)) / ncols
    means = agg["mean"].to_numpy(dtype=float) * scale
    log = envelope.wide(means)  # flows at very different scales (a download beside a voice call)
    # On a log axis an interval reaching 0 or below is drawn down to the bottom edge, `floor`.
    floor = 0.5 * float(means[means > 0].min()) if log else 0.0
    axes = []
    for i, fv in enumerate(facets):
        r, c = divmod(i, ncols)
        y0 = total - top - (r + 1) * height - r * (facet_gap + 0.25)
        ax = fig.add_axes(((draw.LEFT + c * (w + col_gap)) / draw.WIDTH, y0 / total, w / draw.WIDTH, height / total),
                          sharey=axes[0] if axes else None)
        axes.append(ax)
        ax.grid(alpha=0.3)
        sub = agg if fv is None else agg[agg[facet.path] == fv]
        for key in lines_keys:
            m = (sub["name"] == key[0])
            for col, val in zip(extra, key[1:]):
                m &= sub[col] == val
            s = sub[m]
            if s.empty:
                continue
            s = s.assign(_x=[x.positions[v] for v in s[x.path]]).sort_values("_x")
            label = text.label(", ".join(key))  # the legend's title names the parameters
            ci = np.nan_to_num(s["ci95"].to_numpy(dtype=float) * scale)
            mean = s["mean"].to_numpy(dtype=float) * scale
            below = np.minimum(ci, mean - floor) if log else ci
            style = extra_values.index(key[1:]) % len(STYLES)  # a flow's colour, a line style per further value
            ax.errorbar(s["_x"], mean, yerr=[np.maximum(below, 0.0), ci], marker=STYLES[style][0],
                        linestyle=STYLES[style][1], markersize=4, capsize=3, linewidth=1.2, color=colors[key[0]], label=label)
        if fv is not None:
            ax.set_title(text.label(facet.describe(fv)), fontsize=9)
        x_ticks(ax, x)
        if c == 0:
            ax.set_ylabel(what)
        else:
            ax.tick_params(labelleft=False)
        if r == nrows - 1 or i + ncols >= len(facets):
            ax.set_xlabel(text.label(x.name), fontsize=9)
    if log:
        axes[0].set_yscale("log", nonpositive="mask")
        axes[0].set_ylim(bottom=floor)
    else:
        axes[0].set_ylim(bottom=0)
    _y_axis(axes[0], unit)
    legend_ax = axes[ncols - 1]
    handles, labels = [], []
    for ax in axes:  # every line once, even if the right-hand panel lacks some
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    legend_ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                     title=text.label(",\n".join(["flow", *extra])), title_fontsize=8, alignment="left")
    fig.suptitle(title, x=(draw.LEFT + plot_w / 2) / draw.WIDTH, y=1 - 0.08 / total, va="top", fontsize=11)
    caption = f"{what} against {x.name}, mean ± 95 % CI across seeds (Student t), one line per flow"
    if facet:
        caption += f"; one panel per value of {facet.name}"
    if log:
        caption += "; log axis (flows at very different scales): a bar down to the bottom edge is an interval that includes 0"
    return fig, caption


def _metric_chart(agg, meta: dict, column: str, what: str, unit: str, scale: float, x: Axis, facet: Axis | None,
                  extra: list[str]) -> dict:
    """The figure _metric_figure draws, as data for the browser (charts.js, kind "sweep"): per
    facet and per line (a flow and the values of the further parameters) the mean and the
    CI half-width at each swept value of `x` (null where the grid has no such point)."""
    facets = facet.values if facet else [None]
    flows = list(dict.fromkeys(agg["name"]))
    colors = charts.colors(flows)
    keys = list(dict.fromkeys(zip(*(agg[c] for c in ["name", *extra])))) if len(agg) else []
    extra_values = list(dict.fromkeys(k[1:] for k in keys))
    order = sorted(x.values, key=lambda v: x.positions[v])
    means = agg["mean"].to_numpy(dtype=float) * scale
    log = envelope.wide(means)
    floor = 0.5 * float(means[means > 0].min()) if log else 0.0
    # (facet value, line key, x value) -> (mean, ci), in the axis unit
    points = {}
    cols = [facet.path if facet else None, *extra]
    for row_key, name, xv, mean, ci in zip(zip(*(agg[c] if c else [None] * len(agg) for c in cols)), agg["name"], agg[x.path],
                                           agg["mean"].to_numpy(dtype=float), agg["ci95"].to_numpy(dtype=float)):
        points[(row_key[0], (name, *row_key[1:]), xv)] = (mean * scale, ci * scale)
    out_facets = []
    for fv in facets:
        lines = []
        for key in keys:
            vals = [points.get((fv, key, xv), (np.nan, np.nan)) for xv in order]
            lines.append({"mean": charts.numbers([m for m, _ in vals]), "ci": charts.numbers([c for _, c in vals])})
        out_facets.append({"title": None if fv is None else facet.describe(fv), "lines": lines})
    pos = [x.positions[v] for v in order]
    span = max(pos) - min(pos) if pos else 0.0
    if not x.numeric:
        lo_hi = [-0.5, len(pos) - 0.5]
    elif span > 0:
        lo_hi = [min(pos) - 0.06 * span, max(pos) + 0.06 * span]
    else:
        lo_hi = [pos[0] - abs(pos[0]) * 0.5 - 1, pos[0] + abs(pos[0]) * 0.5 + 1]
    if x.integer and x.numeric:
        labels = [f"{int(p)}" for p in pos]
    elif x.numeric:
        labels = [text.eng(p, x.unit) if x.unit else f"{p:g}" for p in pos]
    else:
        labels = [charts.label(v) for v in order]
    entries = [{"name": charts.label(", ".join(k)), "color": colors[k[0]],
                "dash": extra_values.index(k[1:]) % len(STYLES)} for k in keys]
    caption = f"{what} against {x.name}, mean ± 95 % CI across seeds (Student t), one line per flow"
    if facet:
        caption += f"; one panel per value of {facet.name}"
    if log:
        caption += "; log axis (flows at very different scales): a bar down to the bottom edge is an interval that includes 0"
    title = (f"{meta.get('scenario_name', 'sweep')} — {what} vs {x.path}\n"
             f"mean ± 95 % CI over {meta['seeds']} seed(s), base seed {meta['base_seed']}")
    return {"id": f"sweep_{column}", "kind": "sweep", "title": title, "caption": caption,
            "x": {"label": x.name, "unit": x.unit, "numeric": x.numeric, "integer": x.integer, "positions": pos,
                  "labels": labels, "range": lo_hi},
            "y": {"label": what, "unit": unit, "log": bool(log), "floor": floor},
            "facets": out_facets, "legend": {"title": ",\n".join(["flow", *extra]), "entries": entries}}


# A tick label's width in inches per character (DejaVu Sans at 10 pt: "500 kb/s" is 0.60 in)
# and the space kept between two labels (about one character); ticks go at the swept values when
# their labels fit so.
CHAR_IN = 0.075
LABEL_GAP_IN = 0.08


def x_ticks(ax, x: Axis) -> None:
    """Categories at their indices; integer counts as integers; plain numbers as written;
    quantities in engineering notation with their SI unit (500 kb/s, 2 ms). Numbers and
    quantities on a proportional axis. Ticks sit at the
    swept values when their labels fit side by side, else at a few round values."""
    pos = sorted(x.positions[v] for v in x.values)
    if not x.numeric:
        ax.xaxis.set_major_locator(ticker.FixedLocator(pos))
        ax.set_xticks(pos, [text.label(v) for v in x.values])
        ax.set_xlim(-0.5, len(pos) - 0.5)
        return
    span = max(pos) - min(pos)
    if span > 0:
        ax.set_xlim(min(pos) - 0.06 * span, max(pos) + 0.06 * span)
    if x.integer:
        labels = [f"{int(p)}" for p in pos]
    else:  # plain numbers (a loss ratio) as written: 0.01, not 10 m
        labels = [text.eng(p, x.unit) if x.unit else f"{p:g}" for p in pos]
    if _labels_fit(ax, pos, labels, 1.12 * span):
        ax.set_xticks(pos, labels)
    elif x.integer:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    elif x.unit:
        draw.eng_axis(ax.xaxis, x.unit)


def _labels_fit(ax, pos: list[float], labels: list[str], shown: float) -> bool:
    """Whether labels centred at `pos` leave LABEL_GAP_IN between neighbours on `ax`, whose
    width shows `shown` in data units."""
    if len(pos) < 2:
        return True
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    return all((b - a) / shown * width_in >= CHAR_IN * (len(la) + len(lb)) / 2 + LABEL_GAP_IN
               for a, b, la, lb in zip(pos, pos[1:], labels, labels[1:]))


def _y_axis(ax, unit: str) -> None:
    if unit == "%":
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(xmax=100))
    else:
        draw.eng_axis(ax.yaxis, unit)


def sweep_report(directory: str | Path, progress: ReportProgress | None = None, png: bool = False) -> Path:
    """report.html for a sweep directory, its figures drawn by the page (charts.js); with `png`
    also figures/*.svg and *.png drawn with matplotlib. `progress(done, total, what)` after each
    figure."""
    from lasthop.sweep import SweepResults

    d = Path(directory)
    res = SweepResults.load(d)
    meta = json.loads((d / "sweep.json").read_text())
    metrics = [m for m in METRICS if not res.flows.empty and m[0] in res.flows] if res.params else []
    name = meta.get("scenario_name", "sweep")
    figures, note, aggregates = [], "", {}
    if metrics:
        x = parameter_axis(res.params[0], _grid_values(meta, res.flows, res.params[0]))
        facet = parameter_axis(res.params[1], _grid_values(meta, res.flows, res.params[1])) if len(res.params) > 1 else None
        aggregates = {column: _aggregate(res, column) for column, *_ in metrics}
        for i, (column, what, unit, scale) in enumerate(metrics):
            figures.append(_metric_chart(aggregates[column], meta, column, what, unit, scale, x, facet, res.params[2:]))
            if progress is not None:
                progress(i + 1, len(metrics), "preparing the report")
    if png:
        note = _figure_files(d, metrics, aggregates, meta, res, progress)
    else:
        page.clear_figures(d)
    grids = ", ".join(f"{g['path']} ∈ {{{', '.join(g['values'])}}}" for g in meta["grids"]) or "no grid"
    intro = html.escape(f"{meta['scenario_file']}: {grids}; {meta['seeds']} seed(s); {len(res.flows)} flow rows; "
                        f"{len(res.failed)} failed runs.")
    table = ""
    if len(res.failed):
        cols = list(res.failed.columns)
        table = page.section("Failed runs", page.table(cols, [[str(v) for v in r] for r in res.failed.itertuples(index=False)],
                                                       numeric_from=len(cols)))
    out = d / "report.html"
    out.write_text(page.page(f"lasthop sweep — {name}", intro, [], table, note, charts=figures))
    return out


def _figure_files(d: Path, metrics: list, aggregates: dict, meta: dict, res, progress: ReportProgress | None) -> str:
    """figures/*.svg and *.png drawn with matplotlib; without it, the page's note naming them."""
    from lasthop.report import plotting_missing

    missing = plotting_missing()
    if missing is not None:
        page.clear_figures(d)
        return page.not_drawn([f"{what} vs {res.params[0]}" for _, what, _, _ in metrics], missing,
                              "lasthop report --png <this directory>", "Figure files (--png) not drawn")
    with draw.Figures(d, progress, len(metrics), png=True) as figs:
        if metrics:
            x = parameter_axis(res.params[0], _grid_values(meta, res.flows, res.params[0]))
            facet = parameter_axis(res.params[1], _grid_values(meta, res.flows, res.params[1])) if len(res.params) > 1 else None

            def draw_metric(column: str, what: str, unit: str, scale: float) -> None:
                fig, caption = _metric_figure(aggregates[column], meta, column, what, unit, scale, x, facet, res.params[2:])
                figs.add(fig, f"sweep_{column}", caption)

            figs.draw([functools.partial(draw_metric, *metric) for metric in metrics])
    return ""
