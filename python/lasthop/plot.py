"""``lasthop plot DIR... --metric M [--cdf|--ccdf] [--log]``: one metric of one or more runs as a
figure, in the spirit of flent's plots — a time series per flow, or its distribution.

Metrics, per flow:

    a column of intervals.parquet   goodput_bps, throughput_rx_bps, delay_mean_ms, jitter_mean_ms,
                                    lost_packets, ... — one value per interval
    delay_ms                        one-way delay of each packet: exact from a packet trace
                                    (probes.packets), else the run's delay quantiles (delay_cdf;
                                    distributions only)
    a column of a TCP trace         cwnd_bytes, ssthresh_bytes, srtt_ms, rtt_sample_ms, flight_bytes,
                                    ... — flows in probes.tcp, one sample per trace event

A time series draws each value where it was measured (intervals as steps from their start); a
distribution (``--cdf``, ``--ccdf``) is of the values shown, each counted once (an interval, a
packet, a trace event). ``--log`` makes the value axis logarithmic; a CCDF's probability axis is
always logarithmic, its tail being the point of drawing one. Values are in SI units with
engineering notation (12.2 Mb/s, 40 ms).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from lasthop._lazy import LazyModule
from lasthop.compare import CompareError, metric_unit, open_sources
from lasthop.errors import did_you_mean
from lasthop.files import replace_file

np = LazyModule("numpy")
pd = LazyModule("pandas")

PACKET_DELAY = "delay_ms"
_TCP_TRACE = "tcp/"


class PlotError(CompareError):
    """A metric, flow or directory that cannot be plotted."""


@dataclass
class Series:
    """What one line draws: values (and their times, for a time series) of one flow of one run."""

    name: str
    t: "np.ndarray | None"
    y: "np.ndarray"
    step: bool = False
    quantiles: "np.ndarray | None" = None  # a distribution given as quantiles (delay_cdf), not samples


class _Run:
    def __init__(self, directory: Path, label: str):
        from lasthop.results import Results

        self.label = label
        self.res = Results.load(directory)
        self.end = float(self.res.summary.get("simulated_s", 0.0))
        self.flows = [f["name"] for f in self.res.summary["flows"]]

    def trace(self, name: str):
        return self.res.trace(name) if name in self.res.traces else None


def _metric_names(runs: list[_Run]) -> list[str]:
    names = set()
    for r in runs:
        iv = r.res.table_columns("intervals")
        names.update(c for c in iv if c not in ("flow", "t_start_s"))
        for t in r.res.traces:
            if t.startswith(_TCP_TRACE) and not t.endswith("/receiver"):
                names.update(c for c in r.res.table_columns(t) if c not in ("time_s", "event"))
    names.add(PACKET_DELAY)
    return sorted(names)


def collect(runs: list[_Run], metric: str, flows: list[str], distribution: bool) -> list[Series]:
    """The series of `metric` for each run and flow (a flow without them is left out)."""
    out = []
    for r in runs:
        interval_columns = r.res.table_columns("intervals")
        iv = r.res.intervals if metric in interval_columns else None
        for flow in flows:
            if flow not in r.flows:
                continue
            name = f"{r.label} {flow}" if len(runs) > 1 else flow
            if iv is not None:
                f = iv[iv["flow"] == flow]
                out.append(Series(name, f["t_start_s"].to_numpy(float), f[metric].to_numpy(float), step=True))
            elif metric == PACKET_DELAY:
                s = _packet_delay(r, flow, name, distribution)
                if s is not None:
                    out.append(s)
            else:
                tr = r.trace(f"{_TCP_TRACE}{flow}")
                if tr is not None and metric in tr:
                    out.append(Series(name, tr["time_s"].to_numpy(float), tr[metric].to_numpy(float), step=True))
    return out


def _packet_delay(r: _Run, flow: str, name: str, distribution: bool) -> Series | None:
    packets = r.trace(f"packets/{flow}")
    if packets is not None:
        got = packets[packets["outcome"] == "received"]
        return Series(name, got["received_s"].to_numpy(float), (got["received_s"] - got["sent_s"]).to_numpy(float) * 1e3)
    if not distribution:
        return None
    cdf = r.trace("delay_cdf")
    if cdf is None:
        return None
    f = cdf[cdf["flow"] == flow]
    return Series(name, None, f["delay_ms"].to_numpy(float), quantiles=f["quantile"].to_numpy(float)) if len(f) else None


# What lasthop plot writes.
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def plot(directories: Iterable[str | Path], metric: str, out: str | Path, flows: Iterable[str] | None = None,
         cdf: bool = False, ccdf: bool = False, log: bool = False) -> Path:
    """Draws `metric` of the runs in `directories` into `out` (.png, .svg or .pdf) and returns it."""
    if cdf and ccdf:
        raise PlotError("--cdf and --ccdf: choose one")
    if Path(out).suffix.lower() not in FIGURE_SUFFIXES:
        # matplotlib would add ".png" to a name without one and write beside the path named.
        raise PlotError(f"--out {out}: a figure file's name ends in {', '.join(FIGURE_SUFFIXES)}, e.g. {Path(out).name or 'plot'}.png")
    from lasthop.report import plotting_missing

    missing = plotting_missing()
    if missing is not None:
        raise PlotError(f"lasthop plot draws with matplotlib, and {missing}")
    sources = open_sources(directories)
    for s in sources:
        if s.is_sweep:
            raise PlotError(f"{s.directory}: a sweep; lasthop plot draws runs (one is {s.directory}/runs/<id>), "
                            "lasthop compare draws sweeps")
    runs = [_Run(s.directory, s.label) for s in sources]
    known = _metric_names(runs)
    if metric not in known:
        raise PlotError(f"--metric {metric!r}: not a metric of these runs{did_you_mean(metric, known)}; valid: {', '.join(known)}")
    names = list(dict.fromkeys(n for r in runs for n in r.flows))
    wanted = list(dict.fromkeys(flows)) if flows else names
    for n in wanted:
        if n not in names:
            raise PlotError(f"--flow {n!r}: no such flow{did_you_mean(n, names)} (flows: {', '.join(names)})")
    series = collect(runs, metric, wanted, cdf or ccdf)
    if series and not any(np.isfinite(s.y).any() for s in series):
        raise PlotError(f"--metric {metric}: nothing to draw; the runs hold no value of it (an empty or damaged intervals table?)")
    if log and series and not any((np.isfinite(s.y) & (s.y > 0)).any() for s in series):
        raise PlotError(f"--log: every value of {metric} is 0 or less, which a logarithmic axis cannot show; drop --log")
    if not series:
        why = ("per-packet delays over time need a packet trace: add probes.packets = [...] to the scenario"
               if metric == PACKET_DELAY else "no flow of these runs has it (TCP traces: probes.tcp = [...])")
        raise PlotError(f"--metric {metric}: nothing to draw; {why}")
    fig = _figure(series, metric, runs, cdf, ccdf, log)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    from lasthop.report.draw import METADATA_PNG, METADATA_SVG

    metadata = METADATA_SVG if path.suffix == ".svg" else METADATA_PNG if path.suffix == ".png" else None
    replace_file(path, lambda f: fig.savefig(f, format=path.suffix[1:], dpi=100, metadata=metadata))
    return path


def _figure(series: list[Series], metric: str, runs: list[_Run], cdf: bool, ccdf: bool, log: bool):
    from lasthop.report import draw

    unit, scale = metric_unit(metric)
    what = f"{metric} {'CDF' if cdf else 'CCDF' if ccdf else 'over time'}"
    context = " vs ".join(r.label for r in runs) if len(runs) > 1 else \
        f"{runs[0].res.summary.get('scenario_name')} (seed {runs[0].res.summary.get('seed')})"
    panels = draw.Panels([draw.panel_height(len(series)) + 1.0], *draw.title_lines(what, context), sharex=False)
    ax = panels.axes[0]
    colors = draw.flow_colors([s.name for s in series])
    for s in series:
        if cdf or ccdf:
            x, p = _distribution(s)
            ax.plot(x * scale, 1.0 - p if ccdf else p, color=colors[s.name], label=draw.label(s.name), linewidth=1,
                    drawstyle="steps-post" if s.quantiles is None else "default")
        else:
            end = max(r.end for r in runs)
            draw.plot(ax, draw.reduce(s.t, s.y * scale, end, step=s.step), colors[s.name], s.name, log=log)
    value_axis = ax.xaxis if (cdf or ccdf) else ax.yaxis
    if log:
        (ax.set_xscale if (cdf or ccdf) else ax.set_yscale)("log")
    draw.eng_axis(value_axis, unit)
    if cdf or ccdf:
        ax.set_xlabel(metric)
        ax.set_ylabel("fraction above" if ccdf else "fraction at or below")
        if ccdf:
            ax.set_yscale("log")
    else:
        ax.set_xlabel("time (s)")
        ax.set_ylabel(metric)
    draw.legend_outside(ax)
    return panels.fig


def _distribution(s: Series):
    """(sorted values, fraction of values at or below each): the empirical CDF of the samples,
    or the quantile function read the other way round."""
    if s.quantiles is not None:
        return s.y, s.quantiles
    v = np.sort(s.y[np.isfinite(s.y)])
    return v, np.arange(1, len(v) + 1) / max(1, len(v))


def default_output(metric: str, cdf: bool, ccdf: bool) -> Path:
    return Path("results") / "plots" / f"{metric}{'-cdf' if cdf else '-ccdf' if ccdf else ''}.png"

