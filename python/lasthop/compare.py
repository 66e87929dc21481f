"""``lasthop compare DIR...``: runs and sweeps side by side, in the spirit of flent's multi-file
plots — a table of chosen per-flow metrics and overlay figures.

A run contributes its flows' values (summary.json); a sweep one row per grid point and flow, the
mean over its seeds with the 95 % interval (Student t, as ``lasthop sweep`` reports). Metrics are
the numeric columns of flows.parquet (``goodput_bps``, ``delay_p99_ms``, ``loss_ratio``, ...),
matched between directories by flow name. Figures (``<out>/figures/``, and ``compare.html``):
per metric, bars per flow with one bar per directory (and grid point), or — when every directory
is a sweep over the same first parameter — the metric against that parameter, one line per
directory, each value placed by its SI value (500 kb/s below 1 Mb/s, as the core's unit parser reads
them); and for runs, the metric's per-interval series (goodput, throughput, delay, jitter,
packets) over time, one panel per flow, one line per run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from lasthop._lazy import LazyModule
from lasthop.errors import did_you_mean, did_you_mean_path
from lasthop.files import directory_kind, replace_file
from lasthop.quantities import SI_SUFFIX

pd = LazyModule("pandas")

DEFAULT_METRICS = ("goodput_bps", "delay_p99_ms", "jitter_p99_ms", "loss_ratio")
# A flow metric of flows.parquet and the column of intervals.parquet that is its time series:
# the same name (lasthop.results names both tables alike), but for the packet counts, which the
# intervals table names by direction.
INTERVAL_COLUMN = {
    **{c: c for c in ("goodput_bps", "throughput_rx_bps", "throughput_tx_bps", "delay_mean_ms", "delay_max_ms",
                      "jitter_mean_ms", "jitter_max_ms", "lost_packets")},
    "received_packets": "rx_packets", "sent_packets": "tx_packets",
}
_KEYS = ("name", "transport", "src", "dst")


class CompareError(ValueError):
    """Directories or metrics that cannot be compared (not lasthop's, an unknown metric or flow)."""


def metric_unit(column: str) -> tuple[str, float]:
    """The unit a column's values are shown in (engineering notation) and the factor to it, from
    the unit that ends the column's name (lasthop.results): ``goodput_bps`` b/s, ``delay_p99_ms``
    s (x 1e-3), ``start_s`` s, ``loss_ratio`` % (x 100), ``*_bytes`` B; counts have none."""
    return _UNITS.get(column.rpartition("_")[2], ("", 1.0))


_UNITS = {"bps": ("b/s", 1.0), "ms": ("s", 1e-3), "s": ("s", 1.0), "bytes": ("B", 1.0), "ratio": ("%", 100.0)}


@dataclass
class Source:
    """One directory being compared: a run or a sweep, and the name it goes by in tables and legends."""

    directory: Path
    kind: str
    label: str = ""
    params: list[str] = field(default_factory=list)

    @property
    def is_sweep(self) -> bool:
        return self.kind == "sweep"


def open_sources(directories: Iterable[str | Path]) -> list[Source]:
    """The directories as Sources, each labelled by its name (made unique by its parents)."""
    from lasthop.sweep import read_sweep_meta

    sources = []
    for d in map(Path, directories):
        kind = directory_kind(d)
        if kind is None:
            if not d.exists():
                raise CompareError(f"{d}: no such directory{did_you_mean_path(d)}")
            raise CompareError(f"{d}: not a lasthop results directory (no summary.json of lasthop run, "
                               "no sweep.json of lasthop sweep)")
        params = [g["path"] for g in read_sweep_meta(d).get("grids", [])] if kind == "sweep" else []
        sources.append(Source(d, kind, params=params))
    if not sources:
        raise CompareError("no directories to compare")
    _label(sources)
    return sources


def _label(sources: list[Source]) -> None:
    """Labels from the last path components, as few as make them unique."""
    parts = [Path(s.directory).resolve().parts for s in sources]
    for k in range(1, max(len(p) for p in parts) + 1):
        labels = ["/".join(p[-k:]) for p in parts]
        if len(set(labels)) == len(labels):
            break
    for s, lab in zip(sources, labels):
        s.label = lab


def _flows(source: Source):
    """The per-flow rows of a directory: a run's flows, or a sweep's flows × runs."""
    if source.is_sweep:
        from lasthop.sweep import SweepResults

        return SweepResults.load(source.directory).flows
    from lasthop.results import flows_frame, read_summary

    return flows_frame(read_summary(source.directory))


def metric_table(sources: list[Source], metrics: Iterable[str] | None = None, flows: Iterable[str] | None = None):
    """A tidy table: one row per source, grid point, flow and metric with ``mean``, ``ci95`` (half
    width; NaN for a run or one seed) and ``n`` (seeds)."""
    from lasthop.stats import t975

    frames = {s.label: _flows(s) for s in sources}
    not_metrics = {*_KEYS, "seed", "run_id", *(p + SI_SUFFIX for s in sources for p in s.params)}  # keys, SI values of swept ones
    numeric = sorted({c for f in frames.values() for c in f.columns
                      if c not in not_metrics and pd.api.types.is_numeric_dtype(f[c])
                      and not pd.api.types.is_bool_dtype(f[c])})
    chosen = list(dict.fromkeys(metrics)) if metrics else [m for m in DEFAULT_METRICS if m in numeric]
    for m in chosen:
        if m not in numeric:
            raise CompareError(f"--metric {m!r}: not a numeric flow metric of these directories{did_you_mean(m, numeric)}; "
                               f"valid: {', '.join(numeric)}")
    names = list(dict.fromkeys(n for f in frames.values() if "name" in f for n in f["name"]))
    wanted = list(dict.fromkeys(flows)) if flows else names
    for n in wanted:
        if n not in names:
            raise CompareError(f"--flow {n!r}: no such flow{did_you_mean(n, names)} (flows: {', '.join(names)})")
    rows = []
    for s in sources:
        f = frames[s.label]
        if f.empty:
            continue
        f = f[f["name"].isin(wanted)]
        keys = [p for p in s.params if p in f.columns]
        groups = f.groupby([*keys, "name"], sort=False) if keys else f.groupby("name", sort=False)
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            point = ", ".join(f"{p}={v}" for p, v in zip(keys, key[:-1]))
            for m in chosen:
                if m not in g:
                    continue
                v = g[m].astype(float).dropna()
                n = len(v)
                mean = float(v.mean()) if n else math.nan
                ci = float(v.std(ddof=1)) * t975(n - 1) / math.sqrt(n) if n > 1 else math.nan
                rows.append({"source": s.label, "point": point, "flow": key[-1], "metric": m, "mean": mean,
                             "ci95": ci, "n": n, **dict(zip(keys, map(str, key[:-1])))})
    return pd.DataFrame(rows, columns=["source", "point", "flow", "metric", "mean", "ci95", "n",
                                       *dict.fromkeys(p for s in sources for p in s.params)])


def format_value(metric: str, mean: float, ci95: float) -> str:
    """``12.2 Mb/s``, or ``12.2 Mb/s ± 310 kb/s`` with an interval."""
    from lasthop.report.text import eng

    unit, scale = metric_unit(metric)

    def one(v: float) -> str:
        if unit == "%":  # a share: 0.527 %, not 527 m%
            return "–" if math.isnan(v) else f"{v * scale:.3g} %"
        return eng(None if math.isnan(v) else v * scale, unit)

    return one(mean) if math.isnan(ci95) else f"{one(mean)} ± {one(ci95)}"


def wide_rows(table) -> tuple[list[str], list[list[str]]]:
    """The tidy table as display rows: source, grid point (if any), flow, one cell per metric."""
    metrics = list(dict.fromkeys(table["metric"]))
    with_points = bool((table["point"] != "").any())
    columns = ["source", *(["grid point"] if with_points else []), "flow", *metrics]
    rows = []
    for (source, point, flow), g in table.groupby(["source", "point", "flow"], sort=False):
        cells = {r.metric: format_value(r.metric, r.mean, r.ci95) for r in g.itertuples()}
        rows.append([source, *([point] if with_points else []), flow, *(cells.get(m, "–") for m in metrics)])
    return columns, rows


def write_figures(sources: list[Source], table, out: Path) -> Path:
    """compare.html and figures/ in `out`: per metric, bars or lines (sweeps over one parameter);
    for runs, the metric over time. Returns the page's path. Without matplotlib the page is the
    table and names the figures it lacks (lasthop.report.plotting_missing)."""
    from lasthop.report import page, plotting_missing

    out.mkdir(parents=True, exist_ok=True)
    metrics = list(dict.fromkeys(table["metric"]))
    flows = list(dict.fromkeys(table["flow"]))
    first = {s.params[0] if s.params else None for s in sources}
    by_parameter = all(s.is_sweep for s in sources) and len(first) == 1 and None not in first
    parameter = next(iter(first)) if by_parameter else None
    context = "compare " + " vs ".join(s.label for s in sources)
    runs = [s for s in sources if not s.is_sweep]
    missing = plotting_missing()
    items, note = [], ""
    if missing is not None:
        page.clear_figures(out)
        wanted = [f"{m} per flow" + (f"; {INTERVAL_COLUMN[m]} over time" if runs and m in INTERVAL_COLUMN else "") for m in metrics]
        note = page.not_drawn(wanted, missing, "lasthop compare ... (the same arguments)")
    else:
        from lasthop.report import draw

        with draw.Figures(out) as figs:
            for m in metrics:
                sub = table[table["metric"] == m]
                fig = _by_parameter_figure(sub, m, flows, parameter, context) if by_parameter \
                    else _bars_figure(sub, m, flows, context)
                figs.add(fig, f"compare-{m}", f"{m} per flow: mean over seeds with the 95 % interval for sweeps")
                if runs and m in INTERVAL_COLUMN:
                    figs.add(_over_time_figure(runs, INTERVAL_COLUMN[m], flows, context), f"time-{INTERVAL_COLUMN[m]}",
                             f"{INTERVAL_COLUMN[m]} per interval, one line per run")
        items = figs.items
    columns, rows = wide_rows(table)
    html = page.page(context, "Each directory's flows side by side (lasthop compare).", items,
                     page.table(columns, rows, numeric_from=len(columns) - len(metrics)), note)
    path = out / "compare.html"
    replace_file(path, html.encode("utf-8"))
    return path


def _bars_figure(sub, metric: str, flows: list[str], context: str):
    """One panel per flow (flows of very different rates keep their own scale), one bar per
    directory and grid point, the 95 % interval as an error bar."""
    import numpy as np

    from lasthop.report import draw

    unit, scale = metric_unit(metric)
    series = list(dict.fromkeys(zip(sub["source"], sub["point"])))
    names = [f"{a} {b}".strip() for a, b in series]
    panels = draw.Panels([draw.panel_height(len(series) if i == 0 else 1) for i in range(len(flows))],
                         *draw.title_lines(metric, context))
    colors = draw.flow_colors(names)
    for ax, flow in zip(panels.axes, flows):
        for i, ((source, point), name) in enumerate(zip(series, names)):
            row = sub[(sub["source"] == source) & (sub["point"] == point) & (sub["flow"] == flow)]
            if row.empty:
                continue
            mean, ci = float(row["mean"].iloc[0]) * scale, float(row["ci95"].iloc[0]) * scale
            ax.bar([i], [mean], 0.8, color=colors[name], label=draw.label(name), yerr=[0.0 if np.isnan(ci) else ci], capsize=3)
        ax.set_ylabel(draw.label(flow))
        ax.set_xticks([])
        draw.eng_axis(ax.yaxis, unit)
    draw.legend_outside(panels.axes[0])
    return panels.fig


def _by_parameter_figure(sub, metric: str, flows: list[str], parameter: str, context: str):
    from lasthop.report import draw
    from lasthop.report.sweep import parameter_axis, x_ticks

    unit, scale = metric_unit(metric)
    values = list(dict.fromkeys(sub[parameter]))
    axis = parameter_axis(parameter, values)
    lines = list(dict.fromkeys(zip(sub["source"], sub["point"].map(lambda p: _without(p, parameter)))))
    panels = draw.Panels([draw.panel_height(len(lines))] * len(flows), *draw.title_lines(metric, context))
    colors = draw.flow_colors([f"{a} {b}" for a, b in lines])
    for ax, flow in zip(panels.axes, flows):
        for source, rest in lines:
            rows = sub[(sub["flow"] == flow) & (sub["source"] == source)
                       & (sub["point"].map(lambda p: _without(p, parameter)) == rest)]
            rows = rows.assign(_x=[axis.positions[v] for v in rows[parameter]]).sort_values("_x", kind="stable")
            ax.errorbar(rows["_x"], rows["mean"] * scale, yerr=(rows["ci95"] * scale).fillna(0.0), marker="o", capsize=3,
                        color=colors[f"{source} {rest}"], label=draw.label(f"{source} {rest}".strip()), linewidth=1)
        ax.set_ylabel(draw.label(flow))
        draw.eng_axis(ax.yaxis, unit)
        draw.legend_outside(ax)
    last = panels.axes[-1]
    x_ticks(last, axis)
    last.set_xlabel(draw.label(axis.name))
    return panels.fig


def _without(point: str, parameter: str) -> str:
    return ", ".join(p for p in point.split(", ") if p and not p.startswith(f"{parameter}="))


def _simulated_s(run_dir: Path) -> float:
    from lasthop.results import read_summary

    end = read_summary(run_dir).get("simulated_s", 0.0)
    return float(end) if isinstance(end, (int, float)) else 0.0


def _over_time_figure(runs: list[Source], column: str, flows: list[str], context: str):
    from matplotlib.ticker import MaxNLocator

    from lasthop.report import draw

    unit, scale = metric_unit(column)
    panels = draw.Panels([draw.panel_height(len(runs))] * len(flows), *draw.title_lines(f"{column} over time", context))
    colors = draw.flow_colors([s.label for s in runs])
    for s in runs:
        from lasthop.results import reading

        with reading(s.directory / "intervals.parquet"):
            iv = pd.read_parquet(s.directory / "intervals.parquet", columns=["flow", "t_start_s", column])
        end = _simulated_s(s.directory)
        for ax, flow in zip(panels.axes, flows):
            f = iv[iv["flow"] == flow]
            if len(f):
                series = draw.reduce(f["t_start_s"].to_numpy(), f[column].to_numpy(dtype=float) * scale, end, step=True)
                draw.plot(ax, series, colors[s.label], s.label)
    for ax, flow in zip(panels.axes, flows):
        ax.set_ylabel(draw.label(flow))
        draw.eng_axis(ax.yaxis, unit)
        draw.legend_outside(ax)
    panels.axes[-1].set_xlabel("time (s)")
    panels.axes[-1].xaxis.set_major_locator(MaxNLocator(8))
    return panels.fig
