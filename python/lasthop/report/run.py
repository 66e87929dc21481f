"""The report of one run: report.html in its results directory (figures drawn by the page from
the data it embeds, lasthop.report.charts), and with --png figures/*.png and *.svg (matplotlib).

Figures, each drawn once and all with the same time axis (0 to the simulated time):
throughput at the receiver per flow, in one panel per group of flows of similar rate (a 20 Mb/s
download beside a 50 kb/s game would flatten the game); one-way delay and jitter per flow (log
axis when flows differ by more than 100x); the delay CDF; TCP windows of traced flows; queue
lengths of traced queues that held at least QUEUE_SHOWN packets (the others are named); the MAC
counters of each WLAN. Long series are drawn as min/max envelopes (lasthop.report.envelope), so a
one-hour run costs about what a three-minute one does, and a panel of more than MANY_FLOWS flows
as their median and range. Tables: per flow, per WLAN member and per W-CDMA direction, numbers
in engineering notation.

All data is read and reduced first (RunData, _RunFigures.__init__); each figure is then a chart
(the *_chart methods, lasthop.report.charts): the page embeds it and draws it in the browser, and
with --png render.py draws the same chart with matplotlib as files, so they show the same thing.
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from lasthop._lazy import LazyModule
from lasthop.files import directory_kind, replace_file
from lasthop.errors import OutputError
from lasthop.report import charts, envelope, page, text
from lasthop.report.text import eng
from lasthop.results import Results, reading, world_of

# The figure files' code (matplotlib), imported for --png only (lasthop.report.plotting_missing
# says when it cannot be).
render = LazyModule("lasthop.report.render")

pa = LazyModule("pyarrow")
pq = LazyModule("pyarrow.parquet")

# Flows whose peak throughput is below 1/RATE_GROUP of the fastest flow of a panel start a new
# panel; at most MAX_RATE_PANELS panels (the slowest groups share the last one).
RATE_GROUP = 10.0
MAX_RATE_PANELS = 4
# Queues that never held this many packets are named in the caption, not drawn: at one or two
# packets a queue flickers between states faster than a panel can show, a block of colour.
QUEUE_SHOWN = 4
# More flows than this in a panel are drawn as their median and range.
MANY_FLOWS = 6

ReportProgress = Callable[[int, int, str], None]


class RunData:
    """What a run report reads: the summary and columns of its tables, from the Results in
    memory (right after a run) or from the directory's Parquet files (only the columns drawn,
    so a long run's traces are not loaded whole)."""

    def __init__(self, directory: Path, results: Results | None = None):
        self.directory = directory
        if results is not None:
            self.summary = results.summary
            self._tables = results._tables  # the run's Arrow tables, shared, not copied
            self.trace_names = results.traces
            self._files: dict[str, Path] = dict(results.trace_files)  # streamed ones: read by column
            return
        if directory_kind(directory) != "run":
            raise OutputError(f"{directory}: not a lasthop run results directory (no summary.json written by lasthop run)")
        loaded = Results.load(directory)  # every file checked: a damaged one is named, not met later
        self.summary = loaded.summary
        self._tables = {}
        self._files = dict(loaded.trace_files)
        self.trace_names = loaded.traces

    def reading(self, name: str):
        """A context in which a damaged value of table `name` is an OutputError naming its file."""
        return reading(self._files.get(name, name))

    def reduced(self, name: str, columns: list[str], t_end: float, step: bool = False) -> dict:
        """envelope.reduce of each of `columns` over the table's "time_s", read piece by piece
        (a long run's trace is never in memory whole); {} for a table without rows."""
        with self.reading(name):
            return self._reduced(name, columns, t_end, step)

    def _reduced(self, name: str, columns: list[str], t_end: float, step: bool) -> dict:
        if name in self._tables:
            t = self._tables[name]
            time_s = _numpy(t.column("time_s"))
            n, pieces = t.num_rows, lambda: [(time_s, [_numpy(t.column(c)) for c in columns])]
            t_last = float(time_s[-1]) if n else 0.0
        else:
            f = pq.ParquetFile(self._files[name])
            n = f.metadata.num_rows
            t_last = _last_time(f) if n else 0.0

            def pieces():
                # Row group by row group (a spooled trace's groups are its pieces, up to 2^18
                # rows; one written whole has groups of up to 2^20): iter_batches read ahead,
                # holding 100 MB of a one-hour run's 150 MB queue trace at once.
                for g in range(f.metadata.num_row_groups):
                    t = f.read_row_group(g, columns=["time_s", *columns], use_threads=False)
                    yield _numpy(t.column(0)), [_numpy(t.column(i + 1)) for i in range(len(columns))]
        if n == 0:
            return {}
        return dict(zip(columns, envelope.reduce_pieces(pieces, n, t_last, t_end, len(columns), step=step)))

    def columns(self, name: str, columns: list[str]) -> dict[str, np.ndarray]:
        with self.reading(name):
            return self._columns(name, columns)

    def _columns(self, name: str, columns: list[str]) -> dict[str, np.ndarray]:
        if name in self._tables:
            t = self._tables[name].select(columns)
            return {c: _numpy(t.column(c)) for c in columns}
        # Not read_table (it imports pandas); one thread (the reader's pool is slower on two busy
        # cores); numbers batch by batch into float64 arrays: reading a one-hour run's 9.5
        # million queue changes whole took 380 MB for 150 MB of data.
        f = pq.ParquetFile(self._files[name])
        n = f.metadata.num_rows
        schema = f.schema_arrow
        text = [c for c in columns if pa.types.is_string(schema.field(c).type) or pa.types.is_large_string(schema.field(c).type)]
        out = {c: (np.empty(n, dtype=object) if c in text else np.empty(n, dtype=np.float64)) for c in columns}
        at = 0
        for batch in f.iter_batches(batch_size=1 << 18, columns=columns, use_threads=False):
            for c in columns:
                out[c][at:at + batch.num_rows] = _numpy(batch.column(c))
            at += batch.num_rows
        return out


def _last_time(f) -> float:
    """The last "time_s" of a trace file with rows (what envelope.reduce takes from a series in
    memory), read from its last row group that has rows (a spooled trace's last may have none)."""
    last = max(g for g in range(f.metadata.num_row_groups) if f.metadata.row_group(g).num_rows > 0)
    return float(_numpy(f.read_row_group(last, columns=["time_s"], use_threads=False).column(0))[-1])


_NUMPY_TYPES = {"double": "<f8", "float": "<f4", "uint64": "<u8", "int64": "<i8", "uint32": "<u4", "int32": "<i4",
                "uint16": "<u2", "int16": "<i2", "uint8": "u1", "int8": "i1"}


def _numpy(column) -> np.ndarray:
    """An Arrow column as numpy, nulls as NaN, without pandas (pyarrow's own to_numpy imports
    it: half a second that `lasthop report` need not pay); strings through their dictionary."""
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        encoded = arr.dictionary_encode()
        names = np.array(encoded.dictionary.to_pylist(), dtype=object)
        return names[_numpy(encoded.indices)]
    dtype = np.dtype(_NUMPY_TYPES[str(arr.type)])
    validity, data = arr.buffers()[:2]
    n = len(arr)
    values = np.frombuffer(data, dtype=dtype, count=n, offset=arr.offset * dtype.itemsize) if n else np.empty(0, dtype)
    if arr.null_count:
        bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[arr.offset:arr.offset + n]
        values = np.where(bits.astype(bool), values, np.nan)
    return values


def rate_groups(peaks: dict[str, float]) -> list[list[str]]:
    """Flows grouped by peak rate, fastest first: a flow joins the current group unless its peak
    is below 1/RATE_GROUP of the group's first; at most MAX_RATE_PANELS groups."""
    order = sorted(peaks, key=lambda n: -peaks[n])
    groups: list[list[str]] = []
    for n in order:
        if groups and (peaks[n] * RATE_GROUP >= peaks[groups[-1][0]] or len(groups) == MAX_RATE_PANELS):
            groups[-1].append(n)
        else:
            groups.append([n])
    return groups


class _RunFigures:
    def __init__(self, data: RunData):
        self.data = data
        self.s = data.summary
        self.t_end = float(self.s["simulated_s"])
        iv = data.columns("intervals", ["flow", "t_start_s", "throughput_rx_bps", "delay_mean_ms", "jitter_mean_ms"])
        flow_col = iv.pop("flow").astype(str)
        self.flows = list(dict.fromkeys(flow_col))
        self.iv = {f: {k: v[flow_col == f] for k, v in iv.items()} for f in self.flows}
        # Everything is read and reduced here, before the figures are drawn (in forked children).
        self.with_delay = [f for f in self.flows if np.isfinite(self.iv[f]["delay_mean_ms"]).any()]
        self.cdf = data.columns("delay_cdf", ["flow", "quantile", "delay_ms"]) if "delay_cdf" in data.trace_names else None
        self.tcp_traces = self._tcp_traces()
        self.queue_traces = self._queue_traces()
        self.wlans = [w for w in self.s.get("wlans") or [] if w.get("members")]
        self.aggregating = [w for w in self.wlans if any((m.get("aggregation") or {}).get("ampdus") for m in w["members"])]
        self.rate_traces = self._rate_traces()
        self.round_trips = self._round_trips()

    def planned(self) -> list[tuple[str, Callable[[], dict]]]:
        """(what it shows, its chart) of each figure this run has data for, in the page's order."""
        out: list[tuple[str, Callable[[], dict]]] = []
        if self.flows:
            out.append(("throughput at the receiver per flow", self.throughput_chart))
        if self.with_delay:
            out.append(("one-way delay and jitter over time", self.delay_chart))
        if self.cdf is not None:
            out.append(("one-way delay CDF", self.cdf_chart))
        if self.round_trips:
            out.append(("round trips of the echo flows over time", self.rtt_chart))
        if self.tcp_traces:
            out.append(("TCP windows", self.tcp_chart))
        if self.queue_traces[0]:
            out.append(("queue lengths", self.queues_chart))
        out += [(f"802.11 MAC counters of WLAN {w['name']}", functools.partial(self.mac_chart, w)) for w in self.wlans]
        out += [(f"A-MPDU sizes and airtime of WLAN {w['name']}", functools.partial(self.ampdu_chart, w)) for w in self.aggregating]
        out += [(f"PHY rates of WLAN {name}", functools.partial(self.rates_chart, name, links)) for name, links in self.rate_traces]
        return out

    @functools.cached_property
    def colors(self) -> dict[str, str]:
        return charts.colors(self.flows)

    def _iv(self, flow: str, column: str, scale: float = 1.0) -> envelope.Raw | envelope.Envelope:
        d = self.iv[flow]
        return envelope.reduce(d["t_start_s"], d[column] * scale, self.t_end)

    def _lines(self, flows: list[str], column: str, scale: float = 1.0) -> list[tuple[str, tuple, envelope.Raw | envelope.Envelope]]:
        """(label, colour, series) to draw for `flows` in one panel: each flow, or beyond
        MANY_FLOWS (sixteen saturated stations are a block of colour) their median with a band
        from the lowest to the highest flow at each interval."""
        if len(flows) <= MANY_FLOWS:
            return [(f, self.colors[f], self._iv(f, column, scale)) for f in flows]
        ts = np.unique(np.concatenate([self.iv[f]["t_start_s"] for f in flows]))
        grid = np.full((len(flows), len(ts)), np.nan)
        for i, f in enumerate(flows):
            grid[i, np.searchsorted(ts, self.iv[f]["t_start_s"])] = self.iv[f][column] * scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an interval no flow has a value for stays NaN
            lo, median, hi = np.nanmin(grid, axis=0), np.nanmedian(grid, axis=0), np.nanmax(grid, axis=0)
        if envelope.is_dense(len(ts)):
            lo, hi = (envelope.reduce(ts, v, self.t_end) for v in (lo, hi))
            middle = envelope.reduce(ts, median, self.t_end)
            band = envelope.Envelope(middle.t, lo.lo, hi.hi, middle.mean)
        else:
            band = envelope.Envelope(ts, lo, hi, median)
        return [(f"{len(flows)} flows: median,\nband: lowest to highest", charts.PALETTE[0], band)]

    def _tcp_traces(self) -> list[tuple[str, dict]]:
        traces = []
        for t in [t for t in self.data.trace_names if t.startswith("tcp/") and not t.endswith("/receiver")]:
            reduced = self.data.reduced(t, [c for c, _, _ in TCP_WINDOWS], self.t_end, step=True)
            if reduced:
                traces.append((t, reduced))
        return traces

    def _queue_traces(self) -> tuple[list, list]:
        """(drawn, named only): queues that held QUEUE_SHOWN packets, reduced, and the others."""
        shown, small = [], []
        for t in [t for t in self.data.trace_names if t.startswith(("queue/", "wlan/"))]:
            reduced = self.data.reduced(t, ["packets"], self.t_end, step=True).get("packets")
            # An envelope's highest values cover every sample: the peak of the whole trace.
            with self.data.reading(t):
                peak = int(np.nanmax(envelope.values(reduced))) if reduced is not None else 0
            if peak >= QUEUE_SHOWN:
                shown.append((t, reduced, peak))
            else:
                small.append((t, None, peak))
        return shown, small

    def _round_trips(self) -> list[tuple[str, envelope.Raw | envelope.Envelope]]:
        """Per echo flow (round_trips/<flow>): its mean round trip per interval, in s."""
        out = []
        for t in [t for t in self.data.trace_names if t.startswith("round_trips/")]:
            c = self.data.columns(t, ["t_start_s", "rtt_mean_ms"])
            if np.isfinite(c["rtt_mean_ms"]).any():
                out.append((t[len("round_trips/"):], envelope.reduce(c["t_start_s"], c["rtt_mean_ms"] * 1e-3, self.t_end)))
        return out

    def _rate_traces(self) -> list[tuple[str, list[tuple[str, envelope.Raw | envelope.Envelope]]]]:
        """Per probed 802.11n/ac/ax WLAN: (its name, (link "from→to", its PHY rate in b/s as a step
        series) per link), from its rates/<name> table (a row per change)."""
        out = []
        for t in [t for t in self.data.trace_names if t.startswith("rates/")]:
            c = self.data.columns(t, ["time_s", "from", "to", "rate_mbps"])
            link = np.char.add(np.char.add(c["from"].astype(str), "→"), c["to"].astype(str))
            series = []
            for name in dict.fromkeys(link):
                m = link == name
                ts, ys = c["time_s"][m], c["rate_mbps"][m] * 1e6
                # The rate holds until the run's end: repeat the last value there.
                ts, ys = np.append(ts, self.t_end), np.append(ys, ys[-1])
                series.append((name, envelope.reduce(ts, ys, self.t_end, step=True)))
            out.append((t[len("rates/"):], series))
        return out

    # Each figure as a chart (lasthop.report.charts): drawn by the page (charts.js) and for
    # --png by render.py.

    def throughput_chart(self) -> dict:
        panels, dense, many = [], False, False
        for group in self.groups:
            lines = self._lines(group, "throughput_rx_bps")
            dense |= any(isinstance(r, envelope.Envelope) for _, _, r in lines)
            many |= len(group) > MANY_FLOWS
            panels.append(charts.panel("throughput at receiver", "b/s", [charts.series(n, c, r) for n, c, r in lines]))
        return charts.time_figure("throughput", _plain_title(self.s, "throughput at the receiver per flow"),
                                  self._throughput_caption(dense, many), self.t_end, panels)

    def delay_chart(self) -> dict:
        panels, logs, dense = [], [], False
        for column, what in [("delay_mean_ms", "one-way delay"), ("jitter_mean_ms", "mean |IPDV|")]:
            reduced = self._lines(self.with_delay, column, 1e-3)
            log = envelope.wide(np.concatenate([envelope.values(r) for _, _, r in reduced]))
            if log:
                logs.append(what)
            dense |= any(isinstance(r, envelope.Envelope) for _, _, r in reduced)
            panels.append(charts.panel(what, "s", [charts.series(n, c, r) for n, c, r in reduced], log=log))
        return charts.time_figure("delay", _plain_title(self.s, "one-way delay and jitter over time"),
                                  self._delay_caption(logs, dense), self.t_end, panels)

    def cdf_chart(self) -> dict:
        names = self.cdf["flow"].astype(str)
        flows = {}
        for f in dict.fromkeys(names):
            m = names == f
            flows[f] = (self.cdf["delay_ms"][m] / 1e3, self.cdf["quantile"][m])
        log = envelope.wide(self.cdf["delay_ms"])
        return charts.cdf_figure("delay_cdf", _plain_title(self.s, "one-way delay CDF"), _cdf_caption(log), flows, self.colors, log)

    def rtt_chart(self) -> dict:
        log = envelope.wide(np.concatenate([envelope.values(r) for _, r in self.round_trips]))
        series = [charts.series(f, self.colors.get(f, charts.PALETTE[0]), r) for f, r in self.round_trips]
        caption = ("each echo flow's mean round trip per interval (a request's send time to its echo's arrival, in the "
                   "interval the echo came back; its RPM and percentiles are in the flow table)"
                   + ("; log axis (flows at very different scales)" if log else ""))
        return charts.time_figure("rtt", _plain_title(self.s, "round trips over time"), caption, self.t_end,
                                  [charts.panel("round trip", "s", series, log=log)])

    def tcp_chart(self) -> dict:
        panels, dense = [], False
        for t, reduced in self.tcp_traces:
            dense |= any(isinstance(reduced[c], envelope.Envelope) for c, _, _ in TCP_WINDOWS)
            panels.append(charts.panel("window", "B", [charts.series(what, charts.NAMED[color], reduced[c], step=True)
                                                       for c, what, color in TCP_WINDOWS], legend_title=f"flow {t[4:]}"))
        return charts.time_figure("tcp", _plain_title(self.s, "TCP windows"), self._tcp_caption(dense), self.t_end, panels)

    def queues_chart(self) -> dict:
        shown, _ = self.queue_traces
        panels = [charts.panel("queue length (packets)", "", [charts.series("packets", charts.PALETTE[0], reduced, step=True)],
                               integer=True, legend_title=t) for t, reduced, _ in shown]
        dense = any(isinstance(reduced, envelope.Envelope) for _, reduced, _ in shown)
        return charts.time_figure("queues", _plain_title(self.s, "queue lengths"), self._queues_caption(dense), self.t_end, panels)

    def mac_chart(self, wlan: dict) -> dict:
        members = wlan.get("members") or []
        counters = [(name, color, [_mac_value(m, k) for m in members]) for k, name, color in self._mac_counters(members)]
        what = f"802.11 MAC counters of WLAN {wlan['name']}"
        return charts.bars_figure(f"mac_{wlan['name']}", _plain_title(self.s, what), _mac_caption(what, wlan),
                                  [m["node"] for m in members], counters, "frames")

    def ampdu_chart(self, wlan: dict) -> dict:
        members = [m for m in wlan["members"] if (m.get("aggregation") or {}).get("ampdus")]
        bins = ["1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", "128-255", "256"]
        used = [k for k in range(len(bins)) if any(m["aggregation"]["ampdu_size_histogram"][k] for m in members)]
        palette = charts.PALETTE
        counters = [(f"{bins[k]} MPDU{'s' if k else ''}", palette[i % len(palette)], [m["aggregation"]["ampdu_size_histogram"][k] for m in members])
                    for i, k in enumerate(used)]
        what = f"A-MPDU sizes and airtime of WLAN {wlan['name']}"
        return charts.bars_figure(f"ampdu_{wlan['name']}", _plain_title(self.s, what), _ampdu_caption(what, members, wlan.get("airtime_fairness")),
                                  [m["node"] for m in members], counters, "A-MPDUs")

    def rates_chart(self, name: str, links: list) -> dict:
        lines = [charts.series(link, charts.PALETTE[i % len(charts.PALETTE)], r, step=True) for i, (link, r) in enumerate(links)]
        what = f"PHY rates of WLAN {name}"
        caption = (f"{what}: the data rate each link sent its A-MPDUs at (its MCS, streams, width and guard interval), "
                   "from the run's rate table (Minstrel-HT's samples of other rates left out)")
        return charts.time_figure(f"rates_{name}", _plain_title(self.s, what), caption, self.t_end,
                                  [charts.panel("PHY rate", "b/s", lines)])

    @functools.cached_property
    def groups(self) -> list[list[str]]:
        return rate_groups({f: float(np.nanmax(d["throughput_rx_bps"], initial=0.0)) for f, d in self.iv.items()})

    def _throughput_caption(self, dense: bool, many: bool) -> str:
        caption = "throughput at the receiver per interval"
        if len(self.groups) > 1:
            caption += f"; flows whose peak rates differ by more than {RATE_GROUP:g}x are in separate panels"
        return caption + (_MANY if many else _BAND if dense else "")

    def _delay_caption(self, logs: list[str], dense: bool) -> str:
        caption = "one-way delay (mean of each interval) and jitter (mean |IPDV| of each interval)"
        if logs:
            caption += f"; log axis for {' and '.join(logs)} (flows at very different scales; intervals at 0 are not drawn)"
        return caption + (_MANY if len(self.with_delay) > MANY_FLOWS else _BAND if dense else "")

    def _tcp_caption(self, dense: bool) -> str:
        flows = ", ".join(t[4:] for t, _ in self.tcp_traces)
        return (f"cwnd, ssthresh and the advertised window seen by the sender, per traced TCP flow ({flows})"
                + (_BAND if dense else ""))

    def _queues_caption(self, dense: bool) -> str:
        _, small = self.queue_traces
        caption = "queue occupancy in packets of each traced queue"
        if small:
            caption += (f"; not drawn, never above {QUEUE_SHOWN - 1} packets: "
                        + ", ".join(f"{t} (at most {peak})" for t, _, peak in small))
        return caption + (_BAND if dense else "")

    @staticmethod
    def _mac_counters(members: list[dict]) -> list[tuple[str, str, str]]:
        return [(k, what, color) for k, what, color in MAC_COUNTERS if k == "drops" or all(k in m for m in members)]


def _plain_title(s: dict, what: str) -> str:
    """A figure's title as the page shows it: the run, then the overridden parameters."""
    params = s.get("overrides") or {}
    key = ", ".join(f"{k}={v}" for k, v in params.items() if k != "simulation.seed")
    return f"{s.get('scenario_name', 'run')} (seed {s.get('seed')}) — {what}" + (f"\n{key}" if key else "")


def _cdf_caption(log: bool) -> str:
    return "one-way delay CDF per flow" + ("; log axis (flows at very different scales)" if log else "")


def _mac_caption(what: str, wlan: dict) -> str:
    busy = wlan.get("busy_share")
    return (f"{what}: per member, frames attempted, retried, lost in collisions, received in error and dropped "
            f"(queue full + retry limit); {text.count(wlan.get('exchanges'))} exchanges, {text.count(wlan.get('collisions'))} collided"
            + (f", channel busy {100 * busy:.1f} % of the time" if busy is not None else ""))


def _ampdu_caption(what: str, members: list[dict], airtime_fairness: float | None = None) -> str:
    parts = []
    for m in members:
        a = m["aggregation"]
        mean = a["mpdus"] / a["ampdus"] if a["ampdus"] else 0.0
        parts.append(f"{m['node']} {100 * a['airtime_share']:.1f} % of the time on the air"
                     + (f" ({100 * a['station_airtime_share']:.1f} % with the AP's frames to it)" if a.get("station_airtime_share") else "")
                     + f", {mean:.1f} MPDUs per A-MPDU"
                     + (f", {a['block_ack_requests']} BlockAckRequests" if a["block_ack_requests"] else ""))
    jain = f"; Jain's fairness index of the stations' airtime {airtime_fairness:.3f}" if airtime_fairness is not None else ""
    return f"{what}: A-MPDUs sent per member by the number of MPDUs they held; " + "; ".join(parts) + jain


TCP_WINDOWS = [("cwnd_bytes", "cwnd", "tab:blue"), ("ssthresh_bytes", "ssthresh", "tab:orange"),
               ("peer_window_bytes", "advertised window", "tab:green")]
_MANY = (f"; a panel of more than {MANY_FLOWS} flows shows their median at each interval (the line) and the band from the "
         "lowest to the highest of them")
_BAND = "; long series: the line is the mean of each of the figure's time slices, the band its minimum to maximum"

MAC_COUNTERS = [("attempts", "attempts", "tab:blue"), ("retries", "retries", "tab:orange"), ("collisions", "collisions", "tab:purple"),
                ("frame_errors", "frame errors", "tab:brown"), ("drops", "drops (queue + retry limit)", "tab:red")]


def _mac_value(member: dict, key: str) -> float:
    if key == "drops":
        return float(member.get("queue_drops", 0) + member.get("retry_drops", 0))
    return float(member[key])


def _flow_table(s: dict) -> str:
    cols = ["flow", "proto", "goodput", "rx throughput", "sent", "received", "lost", "loss", "delay mean", "delay p99",
            "jitter mean", "jitter p99"]
    rows = []
    for f in s["flows"]:
        d, j = f.get("delay_ms") or {}, f.get("jitter_ms") or {}
        ms = lambda v: None if v is None else v / 1e3  # noqa: E731
        loss = f.get("loss_ratio")
        rows.append([f["name"], f.get("transport", ""), eng(f.get("goodput_bps"), "b/s"), eng(f.get("throughput_rx_bps"), "b/s"),
                     f"{f.get('sent_packets', 0)}", f"{f.get('received_packets', 0)}", f"{f.get('lost_packets', 0)}",
                     "–" if loss is None else f"{100 * loss:.3g} %", eng(ms(d.get("mean")), "s"), eng(ms(d.get("p99")), "s"),
                     eng(ms(j.get("mean")), "s"), eng(ms(j.get("p99")), "s")])
    return page.table(cols, rows, numeric_from=2)


def _round_trip_table(s: dict) -> str:
    """Echo flows' round trips and responsiveness (empty without echo flows)."""
    from lasthop.stats import rpm_category

    rows = []
    for f in s["flows"]:
        rt = f.get("round_trip")
        if not rt:
            continue
        d = rt["rtt_ms"]
        ms = lambda v: None if v is None else v / 1e3  # noqa: E731
        rpm = rt.get("rpm")
        rows.append([f["name"], f"{rt['echoes']}", f"{rt['echoes_lost']}", eng(ms(d.get("mean")), "s"), eng(ms(d.get("p95")), "s"),
                     eng(ms(d.get("p99")), "s"), eng(ms(rt.get("trimmed_mean_ms")), "s"),
                     "–" if rpm is None else f"{rpm:.0f} ({rpm_category(rpm)})"])
    if not rows:
        return ""
    return ("<p>Round trips of the echo flows, and responsiveness: 60 000 / the mean of the best 95 % of round trips "
            "(draft-ietf-ippm-responsiveness; from these probes alone)</p>"
            + page.table(["flow", "echoes", "lost", "RTT mean", "RTT p95", "RTT p99", "best 95 % mean", "RPM"], rows, numeric_from=1))


def _wlan_tables(s: dict) -> str:
    out = []
    for w in s.get("wlans") or []:
        members = w.get("members") or []
        if not members:
            continue
        keys = [k for k in members[0] if k not in ("node", "aggregation")]
        rows = [[m["node"], *(f"{m.get(k)}" for k in keys)] for m in members]
        out.append(f"<p>WLAN {html.escape(w['name'])}</p>" + page.table(["node", *(k.replace("_", " ") for k in keys)], rows))
        ac_rows = [[m["node"], a["ac"], f"{a['enqueued']}", f"{a['queue_drops']}", f"{a['sent']}",
                    eng(None if a.get("mean_access_delay_ms") is None else a["mean_access_delay_ms"] / 1e3, "s"), f"{a['max_queue_packets']}"]
                   for m in members for a in (m.get("aggregation") or {}).get("access_categories", [])]
        if ac_rows:
            out.append(f"<p>WLAN {html.escape(w['name'])}: access categories (EDCA)</p>"
                       + page.table(["node", "AC", "enqueued", "queue drops", "sent", "mean access delay", "max queue"], ac_rows, numeric_from=2))
    for c in s.get("wcdma") or []:
        keys = [k for k in c if k != "name"]
        out.append(f"<p>W-CDMA {html.escape(str(c['name']))}</p>" + page.table([k.replace("_", " ") for k in keys],
                                                                              [[f"{c[k]}" for k in keys]], numeric_from=0))
    return "\n".join(out)


def _report_parts(data: RunData, progress: ReportProgress | None) -> tuple[list, list, str, str]:
    """The figures (and their plan), the intro line and the tables of a run's report."""
    s = data.summary
    planned = _RunFigures(data).planned()
    figures = []
    for i, (_, chart) in enumerate(planned):
        figures.append(chart())
        if progress is not None:
            progress(i + 1, len(planned), "preparing the report")
    intro = (f"{html.escape(str(s.get('scenario_file')))}, lasthop {html.escape(str(s.get('lasthop_version')))}, "
             f"{s['simulated_s']:g} s {world_of(s)}" + (f", {s['events_processed']} events." if world_of(s) == "simulated" else "."))
    tables = page.section("Flows", _flow_table(s) + _round_trip_table(s)) + "\n" + page.section("Link layer", _wlan_tables(s))
    return figures, planned, intro, tables


def run_report(directory: str | Path, results: Results | None = None, progress: ReportProgress | None = None,
               png: bool = False) -> Path:
    """report.html for a `lasthop run` results directory: its tables and its figures as data the
    page draws when opened (charts.js); with `png`, also figures/*.svg and *.png drawn with
    matplotlib (for slides and papers). `results` (the run just written there) saves reading it
    back. `progress(done, total, what)` after each figure. Without matplotlib, `png` leaves the
    files out and the page says which and how to get them."""
    d = Path(directory)
    data = RunData(d, results)
    s = data.summary
    # A directory read back is untrusted: a summary value of the wrong kind is named, not a traceback.
    with reading(d / "summary.json", "summary") if results is None else contextlib.nullcontext():
        figures, planned, intro, tables = _report_parts(data, progress)
    note = ""
    if png:
        note = _figure_files(d, figures, [what for what, _ in planned], progress)
    else:
        page.clear_figures(d)  # an earlier report's files would no longer match the page
    out = d / "report.html"
    replace_file(out, page.page(f"lasthop — {s.get('scenario_name')} (seed {s.get('seed')})", intro, [], tables, note,
                                charts=figures))
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
