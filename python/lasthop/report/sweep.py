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

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lasthop._lazy import LazyModule
from lasthop.files import replace_file
from lasthop.results import reading
from lasthop.quantities import swept_parameter
from lasthop.report import charts, envelope, page, text
from lasthop.report.run import ReportProgress

# matplotlib, imported for --png and lasthop compare only (see lasthop.report.run).
render = LazyModule("lasthop.report.render")

# (column of flows.parquet, what, unit, scale from the column's unit to the axis unit)
METRICS = [("goodput_bps", "goodput", "b/s", 1.0), ("delay_p99_ms", "one-way delay p99", "s", 1e-3),
           ("jitter_mean_ms", "mean |IPDV|", "s", 1e-3), ("loss_ratio", "loss", "%", 100.0)]

# Line styles, one per value of the parameters beyond the second (charts.js DASHES, render.STYLES).
LINE_STYLES = 4


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


def _metric_chart(agg, meta: dict, column: str, what: str, unit: str, scale: float, x: Axis, facet: Axis | None,
                  extra: list[str]) -> dict:
    """One metric's figure as a chart (drawn by the page's charts.js, kind "sweep", and for
    --png by render.py): per facet (a value of the second parameter) and per line (a flow and
    the values of the further parameters) the mean and the CI half-width at each swept value of
    `x` (null where the grid has no such point), in the axis unit; a log axis when the means
    differ by more than 100x, with `floor` its bottom (a whisker reaching 0 ends there)."""
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
    pos, labels, lo_hi = x_layout(x)
    entries = [{"name": charts.label(", ".join(k)), "color": colors[k[0]],
                "dash": extra_values.index(k[1:]) % LINE_STYLES} for k in keys]
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


def x_layout(x: Axis) -> tuple[list[float], list[str], list[float]]:
    """The swept values' positions in ascending order, their tick labels (categories as written;
    integer counts as integers; plain numbers as written, 0.01 not 10 m; quantities in
    engineering notation with their SI unit, 500 kb/s, 2 ms) and the axis' range."""
    order = sorted(x.values, key=lambda v: x.positions[v])
    pos = [x.positions[v] for v in order]
    span = max(pos) - min(pos) if pos else 0.0
    if not x.numeric:
        return pos, [charts.label(v) for v in order], [-0.5, len(pos) - 0.5]
    if span > 0:
        shown = [min(pos) - 0.06 * span, max(pos) + 0.06 * span]
    else:
        shown = [pos[0] - abs(pos[0]) * 0.5 - 1, pos[0] + abs(pos[0]) * 0.5 + 1]
    if x.integer:
        return pos, [f"{int(p)}" for p in pos], shown
    return pos, [text.eng(p, x.unit) if x.unit else f"{p:g}" for p in pos], shown


def x_ticks(ax, x: Axis) -> None:
    """A matplotlib x axis for a swept parameter (lasthop compare's figures): see
    render.parameter_ticks."""
    pos, labels, shown = x_layout(x)
    render.parameter_ticks(ax, pos, labels, x.numeric, x.integer, x.unit, shown)


def _report_parts(res, meta: dict, progress: ReportProgress | None) -> tuple[list, str, str, str, list]:
    """The figures, name, intro line, failed-runs table and metrics of a sweep's report."""
    metrics = [m for m in METRICS if not res.flows.empty and m[0] in res.flows] if res.params else []
    name = meta.get("scenario_name", "sweep")
    figures = []
    if metrics:
        x = parameter_axis(res.params[0], _grid_values(meta, res.flows, res.params[0]))
        facet = parameter_axis(res.params[1], _grid_values(meta, res.flows, res.params[1])) if len(res.params) > 1 else None
        aggregates = {column: _aggregate(res, column) for column, *_ in metrics}
        for i, (column, what, unit, scale) in enumerate(metrics):
            figures.append(_metric_chart(aggregates[column], meta, column, what, unit, scale, x, facet, res.params[2:]))
            if progress is not None:
                progress(i + 1, len(metrics), "preparing the report")
    grids = ", ".join(f"{g['path']} ∈ {{{', '.join(g['values'])}}}" for g in meta["grids"]) or "no grid"
    intro = html.escape(f"{meta['scenario_file']}: {grids}; {meta['seeds']} seed(s); {len(res.flows)} flow rows; "
                        f"{len(res.failed)} failed runs.")
    table = ""
    if len(res.failed):
        cols = list(res.failed.columns)
        table = page.section("Failed runs", page.table(cols, [[str(v) for v in r] for r in res.failed.itertuples(index=False)],
                                                       numeric_from=len(cols)))
    return figures, name, intro, table, metrics


def sweep_report(directory: str | Path, progress: ReportProgress | None = None, png: bool = False) -> Path:
    """report.html for a sweep directory, its figures drawn by the page (charts.js); with `png`
    also figures/*.svg and *.png drawn with matplotlib. `progress(done, total, what)` after each
    figure."""
    from lasthop.sweep import SweepResults, read_sweep_meta

    d = Path(directory)
    res = SweepResults.load(d)
    meta = read_sweep_meta(d)
    # sweep.json read back is untrusted: a value of the wrong kind is named, not a traceback.
    with reading(d / "sweep.json", "sweep definition"):
        figures, name, intro, table, metrics = _report_parts(res, meta, progress)
    note = ""
    if png:
        note = _figure_files(d, figures, [f"{what} vs {res.params[0]}" for _, what, _, _ in metrics], progress)
    else:
        page.clear_figures(d)
    out = d / "report.html"
    replace_file(out, page.page(f"lasthop sweep — {name}", intro, [], table, note, charts=figures))
    return out


def _figure_files(d: Path, figures: list[dict], whats: list[str], progress: ReportProgress | None) -> str:
    """figures/*.svg and *.png drawn with matplotlib (render.py); without it, the page's note
    naming them."""
    from lasthop.report import plotting_missing

    missing = plotting_missing()
    if missing is not None:
        page.clear_figures(d)
        return page.not_drawn(whats, missing, "lasthop report --png <this directory>", "Figure files (--png) not drawn")
    render.figure_files(d, figures, progress)
    return ""
