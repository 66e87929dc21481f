"""Export of lasthop runs to flent's data format (``.flent.gz``), so that flent's plots and batch
comparisons (``flent -i a.flent.gz -i b.flent.gz -p box_combine``) work on lasthop data.

The format is flent's ``ResultSet.serialise()`` (flent/resultset.py, file format version 4): a
JSON object with ``version``, ``x_values`` (the time of each step), ``results`` (one array of y
values per series, null where there is none), ``raw_values`` (per series, the records the test
tool reported, each with an absolute time ``t``) and ``metadata`` (flent's recorded settings:
NAME, HOSTS, TIME, T0, LENGTH, STEP_SIZE, TEST_PARAMETERS, SERIES_META, ...), gzipped text.

flent finds its plots by the test name (``metadata.NAME``) in its own test files, so a run is
exported as the flent test whose data sets it has, the series named as that test names them:

    one TCP flow, one UDP flow     voip-1up       "TCP upload", "VoIP::delay|jitter|loss|bitrate"
    one UDP flow                   voip           "VoIP::delay|jitter|loss|bitrate"
    one TCP flow                   tcp_1up_noping "TCP upload"
    N TCP flows (and <= 1 UDP)     tcp_nup        "TCP upload::1".."TCP upload::N" (+ VoIP, flent's
                                                   voip_host mixin)

    flent's RRUL: 4 TCP flows each way rrul (classes by DSCP: BE 0, BK 8, CS5 40, EF 46) or
    between two hosts, 3 echo flows        rrul_be (every flow DSCP 0): "TCP download BE".., "TCP
                                           upload BE".., sums, averages, "TCP totals", "Ping (ms)
                                           UDP EF|BK|BE" (rrul_be: BE1..BE3), "Ping (ms) avg"

Other runs (two UDP flows, say) name the flows to export with ``flows=``. flent's "upload" is each
flow's own direction (src -> dst). Values per lasthop interval (``simulation.interval`` is the
step): TCP goodput in Mbit/s, as netperf reports; for the UDP flow D-ITG's per-interval figures
as flent's D-ITG runner records them: mean one-way delay (ms), mean |IPDV| jitter (ms), packets
lost and received payload rate (kbit/s). Each y value stands at the start of its interval (as in
intervals.parquet); raw netperf-style records carry the interval's end and duration. With
``probes.packets`` for the UDP flow the raw VoIP records are its packets (seq, size, delay), with
``probes.tcp`` the TCP raw records carry ``tcp_rtt`` (smoothed RTT, ms) per interval for flent's
tcp_rtt plots. In the RRUL shapes the client (flent's LOCAL_HOST) is the end that echoes the
probes (``echo = true``, as ``scenarios/rrul.toml`` has them), the downloads flow towards it, and
a UDP ping series is its probe flow's mean round trip per interval (``round_trips/<flow>``).
Not exported: ``tcp_cwnd`` (ss reports it in segments; lasthop traces bytes), ICMP ping (lasthop
sends none: flent's ping series stay empty).

Simulated time has no date: TIME and T0 are the Unix epoch, so the same run gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from lasthop.errors import OutputError, did_you_mean
from lasthop.files import directory_kind, replace_file, safe_name
from lasthop.results import Results, reading

FILEFORMAT_VERSION = 4  # flent/resultset.py FILEFORMAT_VERSION
SUFFIX = ".flent.gz"
EPOCH = "1970-01-01T00:00:00.000000Z"  # flent's format_date(utc=True): "%Y-%m-%dT%H:%M:%S.%fZ"
UDP_IPV4_HEADER_BYTES = 28  # D-ITG's packet size is the UDP payload; lasthop's packet records count IP bytes
# flent's RECORDED_SETTINGS that lasthop has no value for (flent writes them as null).
_UNRECORDED = ("BATCH_TIME", "HTTP_GETTER_URLLIST", "HTTP_GETTER_DNS", "IP_VERSION")


class FlentExportError(ValueError):
    """A run that has no flent test shape (say, two UDP flows) unless flows are chosen."""


@dataclass(frozen=True)
class Shape:
    """The flent test a selection of flows is exported as."""

    test: str
    tcp: tuple[str, ...]
    udp: tuple[str, ...]
    # The RRUL shapes: flent's series name of each flow (TCP flows and echo probes), in flent's order.
    series: tuple[tuple[str, str], ...] = ()


# flent's rrul.conf: the markings of its four TCP flows each way and of its three UDP pings.
RRUL_CLASSES = {0: "BE", 8: "BK", 40: "CS5", 46: "EF"}
RRUL_PINGS = ("EF", "BK", "BE")


def _rrul_shape(flows: list[dict], dscp: dict[str, int]) -> Shape | None:
    """flent's rrul or rrul_be when the flows are its shape (module doc), else None."""
    probes = [f for f in flows if f.get("round_trip") is not None]
    tcp = [f for f in flows if f["transport"] == "tcp"]
    if len(probes) != 3 or len(tcp) != 8 or len({(f["src"], f["dst"]) for f in probes}) != 1:
        return None
    server, client = probes[0]["src"], probes[0]["dst"]
    down = [f["name"] for f in tcp if (f["src"], f["dst"]) == (server, client)]
    up = [f["name"] for f in tcp if (f["src"], f["dst"]) == (client, server)]
    pings = [f["name"] for f in probes]
    if len(down) != 4 or len(up) != 4:
        return None
    marks = {n: dscp.get(n, 0) for n in [*down, *up, *pings]}
    if all(m == 0 for m in marks.values()):
        series = [*((f"TCP download {'BE' if i == 0 else f'BE{i + 1}'}", n) for i, n in enumerate(down)),
                  *((f"TCP upload {'BE' if i == 0 else f'BE{i + 1}'}", n) for i, n in enumerate(up)),
                  *((f"Ping (ms) UDP BE{i + 1}", n) for i, n in enumerate(pings))]
        return Shape("rrul_be", tuple(down + up), tuple(pings), tuple(series))
    by_class = {(direction, RRUL_CLASSES.get(marks[n])): n for direction, names in (("download", down), ("upload", up)) for n in names}
    ping_class = {RRUL_CLASSES.get(marks[n]): n for n in pings}
    classes = list(RRUL_CLASSES.values())
    if len(by_class) != 8 or None in {c for _, c in by_class} or sorted(ping_class, key=str) != sorted(RRUL_PINGS):
        return None
    series = [*((f"TCP {d} {c}", by_class[(d, c)]) for d in ("download", "upload") for c in classes),
              *((f"Ping (ms) UDP {c}", ping_class[c]) for c in RRUL_PINGS)]
    return Shape("rrul", tuple(down + up), tuple(pings), tuple(series))


def choose_test(flows: list[dict], selected: Iterable[str] | None = None, dscp: dict[str, int] | None = None) -> Shape:
    """The flent test for these flows (summary.json's flow entries; `dscp`: each flow's DSCP, as the
    scenario sets it), or FlentExportError saying which flows to choose."""
    names = [f["name"] for f in flows]
    if selected is None:
        rrul = _rrul_shape(flows, dscp or {})
        if rrul is not None:
            return rrul
    if selected is not None:
        selected = list(dict.fromkeys(selected))
        for n in selected:
            if n not in names:
                raise FlentExportError(f"--flows {n!r}: no such flow{did_you_mean(n, names)} (flows: {', '.join(names)})")
        flows = [f for f in flows if f["name"] in selected]
    tcp = tuple(f["name"] for f in flows if f["transport"] == "tcp")
    udp = tuple(f["name"] for f in flows if f["transport"] == "udp")
    if len(udp) <= 1 and tcp:
        test = "voip-1up" if len(tcp) == 1 and udp else "tcp_1up_noping" if len(tcp) == 1 else "tcp_nup"
        return Shape(test, tcp, udp)
    if len(udp) == 1:
        return Shape("voip", tcp, udp)
    raise FlentExportError(
        f"flows {', '.join(f'{n} ({t})' for n, t in zip(names, [f['transport'] for f in flows])) or 'none'}: flent's tests "
        "carry TCP flows and at most one VoIP (UDP) stream; choose the flows to export with --flows, e.g. --flows "
        + ",".join([*tcp[:1], *udp[:1]]))


def _number(v: Any) -> float | None:
    """A JSON number, or null for a missing value (NaN, None)."""
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


def _interval_series(iv, flow: str, column: str, scale: float, starts: list[float]) -> list[float | None]:
    """`column` of `flow` at each interval start, times `scale` (null where the flow has no value)."""
    sub = iv[iv["flow"] == flow].set_index("t_start_s")[column].reindex(starts)
    return [_number(None if v is None else v * scale) for v in sub.tolist()]


class _Run:
    """What the export reads from a results directory: summary, intervals, traces."""

    def __init__(self, res: Results):
        self.summary = res.summary
        self.intervals = res.intervals
        self.traces = {name: res.trace(name) for name in res.traces if name.startswith(("tcp/", "packets/", "round_trips/"))}

    def flow(self, name: str) -> dict:
        return next(f for f in self.summary["flows"] if f["name"] == name)


def flent_data(directory: str | Path, flows: Iterable[str] | None = None, batch: dict | None = None) -> dict:
    """The flent result set of one lasthop run directory, as flent's ResultSet.serialise() has it."""
    res = Results.load(directory)
    # A directory read back is untrusted: a summary value of the wrong kind is named, not a traceback.
    with reading(Path(directory) / "summary.json", "summary"):
        return _flent_data(res, flows, batch)


def _flent_data(res: Results, flows: Iterable[str] | None, batch: dict | None) -> dict:
    run = _Run(res)
    scenario_flows = (run.summary.get("scenario") or {}).get("flows") or []
    dscp = {f.get("name"): f.get("dscp") or 0 for f in scenario_flows if isinstance(f, dict)}
    shape = choose_test(run.summary["flows"], flows, dscp)
    s = run.summary
    iv = run.intervals
    starts = sorted(set(iv["t_start_s"].tolist()))
    # simulation.interval, as the intervals are spaced (the last one may be cut short by the end).
    step = round(starts[1] - starts[0], 9) if len(starts) > 1 else float(s["simulated_s"])
    results: dict[str, list] = {}
    raw: dict[str, list] = {}
    meta: dict[str, dict] = {}

    tcp_names = ["TCP upload"] if shape.test == "voip-1up" or shape.test == "tcp_1up_noping" else \
        [f"TCP upload::{i + 1}" for i in range(len(shape.tcp))]
    if shape.series:
        _rrul_series(run, shape, iv, starts, step, results, raw, meta)
    for series, flow in zip(tcp_names, shape.tcp if not shape.series else ()):
        values = _interval_series(iv, flow, "goodput_bps", 1e-6, starts)
        results[series] = values
        raw[series] = _netperf_raw(starts, values, step) + _tcp_info_raw(run.traces.get(f"tcp/{flow}"), starts, step)
        meta[series] = {"UNITS": "Mbits/s", "MEAN_VALUE": _number(run.flow(flow)["goodput_bps"] * 1e-6),
                        "LASTHOP_FLOW": flow}
    for flow in shape.udp if not shape.series else ():
        f = run.flow(flow)
        results["VoIP::bitrate"] = _interval_series(iv, flow, "goodput_bps", 1e-3, starts)
        results["VoIP::delay"] = _interval_series(iv, flow, "delay_mean_ms", 1.0, starts)
        results["VoIP::jitter"] = _interval_series(iv, flow, "jitter_mean_ms", 1.0, starts)
        results["VoIP::loss"] = _interval_series(iv, flow, "lost_packets", 1.0, starts)
        raw["VoIP"] = _ditg_raw(run.traces.get(f"packets/{flow}"))
        # What flent's irtt runner records for a VoIP stream; its MOS and loss reducers read these.
        meta["VoIP"] = {"UNITS": "ms", "OWD_UP_MEAN": _number(f["delay_ms"]["mean"]),
                        "IPDV_UP_MEAN": _number(f["jitter_ms"]["mean"]), "PACKET_LOSS_RATE": _number(f["loss_ratio"]),
                        "PACKETS_SENT": f["sent_packets"], "PACKETS_RECEIVED": f["received_packets"], "LASTHOP_FLOW": flow}
        for k in ("VoIP::bitrate", "VoIP::delay", "VoIP::jitter", "VoIP::loss"):
            meta[k] = {"UNITS": {"VoIP::bitrate": "Kbits/s", "VoIP::loss": "count"}.get(k, "ms")}

    selected = [run.flow(n) for n in (*shape.tcp, *shape.udp)]
    if shape.series:  # flent runs on the client, against the server the probes come from
        probe = run.flow(shape.udp[0])
        local_host, hosts = probe["dst"], [probe["src"]]
    else:
        local_host, hosts = selected[0]["src"], list(dict.fromkeys(f["dst"] for f in selected))
    params = {"upload_streams": str(len(shape.tcp))} if shape.test == "tcp_nup" else {}
    if shape.test == "tcp_nup" and shape.udp:
        params["voip_host"] = run.flow(shape.udp[0])["dst"]
    title = _title(s)
    length = float(s["simulated_s"])
    metadata = {
        "NAME": shape.test,
        "TITLE": title,
        "TIME": EPOCH,
        "T0": EPOCH,
        "LOCAL_HOST": local_host,
        "HOST": hosts[0],
        "HOSTS": hosts,
        "LENGTH": length,
        "TOTAL_LENGTH": length,
        "STEP_SIZE": step,
        "TEST_PARAMETERS": params,
        "FLENT_VERSION": None,
        "DATA_FILENAME": flent_file_name(s),
        "HTTP_GETTER_WORKERS": None,
        "FAILED_RUNNERS": 0,
        "SERIES_META": meta,
        "BATCH_NAME": (batch or {}).get("name"),
        "BATCH_TITLE": (batch or {}).get("title"),
        "BATCH_UUID": (batch or {}).get("uuid"),
        **{k: None for k in _UNRECORDED},
        "NOTE": f"lasthop {s.get('lasthop_version')} simulation (flent's upload = each flow's own direction); flows: "
                + ", ".join(f"{f['name']} {f['src']}->{f['dst']} ({f['transport']})" for f in selected),
        "LASTHOP": {"scenario": s.get("scenario_name"), "seed": s.get("seed"), "overrides": s.get("overrides", {}),
                    "version": s.get("lasthop_version"), "flows": {f["name"]: f["transport"] for f in selected}},
    }
    return {"metadata": metadata, "version": FILEFORMAT_VERSION, "x_values": starts, "results": results, "raw_values": raw}


def _rrul_series(run: _Run, shape: Shape, iv, starts: list[float], step: float, results: dict, raw: dict, meta: dict) -> None:
    """flent's RRUL series (module doc) into `results`, `raw` and `meta`: each TCP flow's goodput
    and each probe's round trips per interval, then the sums and averages rrul.conf computes."""
    for series, flow in shape.series:
        if series.startswith("TCP"):
            values = _interval_series(iv, flow, "goodput_bps", 1e-6, starts)
            raw[series] = _netperf_raw(starts, values, step) + _tcp_info_raw(run.traces.get(f"tcp/{flow}"), starts, step)
            meta[series] = {"UNITS": "Mbits/s", "MEAN_VALUE": _number(run.flow(flow)["goodput_bps"] * 1e-6), "LASTHOP_FLOW": flow}
        else:
            values = _round_trips(run.traces.get(f"round_trips/{flow}"), starts)
            raw[series] = _netperf_raw(starts, values, step)
            meta[series] = {"UNITS": "ms", "MEAN_VALUE": _number(run.flow(flow)["round_trip"]["rtt_ms"]["mean"]), "LASTHOP_FLOW": flow}
        results[series] = values
    results["Ping (ms) ICMP"] = [None] * len(starts)
    raw["Ping (ms) ICMP"] = []
    tcp = [n for n, _ in shape.series if n.startswith("TCP")]
    for d in ("download", "upload"):
        of = [results[n] for n in tcp if n.startswith(f"TCP {d}")]
        results[f"TCP {d} sum"] = _combine(of, sum)
        results[f"TCP {d} avg"] = _combine(of, lambda v: sum(v) / len(v))
    results["TCP totals"] = _combine([results[n] for n in tcp], sum)
    results["Ping (ms) avg"] = _combine([results[n] for n, _ in shape.series if n.startswith("Ping")], lambda v: sum(v) / len(v))
    for n in ("TCP download sum", "TCP download avg", "TCP upload sum", "TCP upload avg", "TCP totals", "Ping (ms) avg", "Ping (ms) ICMP"):
        meta[n] = {"UNITS": "ms" if n.startswith("Ping") else "Mbits/s"}


def _combine(series: list[list], reduce) -> list[float | None]:
    """flent's sum and average runners: per step over the series that have a value (null where none has)."""
    out = []
    for values in zip(*series):
        present = [v for v in values if v is not None]
        out.append(reduce(present) if present else None)
    return out


def _round_trips(table, starts: list[float]) -> list[float | None]:
    """A probe flow's mean round trip (ms) at each interval start, null where no echo came back."""
    if table is None or table.empty:
        return [None] * len(starts)
    rtt = dict(zip(table["t_start_s"].tolist(), table["rtt_mean_ms"].tolist()))
    return [_number(rtt.get(t)) for t in starts]


def _netperf_raw(starts: list[float], values: list, step: float) -> list[dict]:
    """netperf demo-mode records: the rate over the `dur` seconds ending at `t`."""
    return [{"dur": step, "t": t + step, "val": v} for t, v in zip(starts, values) if v is not None]


def _tcp_info_raw(trace, starts: list[float], step: float) -> list[dict]:
    """flent's ss records (``tcp_rtt``, smoothed RTT in ms), one per interval: the last value in it."""
    if trace is None or trace.empty or "srtt_ms" not in trace:
        return []
    tr = trace[["time_s", "srtt_ms"]].dropna()
    out = []
    idx = 0
    times, srtt = tr["time_s"].tolist(), tr["srtt_ms"].tolist()
    for t0 in starts:
        last = None
        while idx < len(times) and times[idx] < t0 + step:
            last = srtt[idx]
            idx += 1
        if last is not None:
            out.append({"t": t0 + step, "tcp_rtt": last})
    return out


def _ditg_raw(packets) -> list[dict]:
    """D-ITG's per-packet records as flent's D-ITG runner keeps them (receive time, one-way delay
    in ms, sequence number, payload size); lost packets as flent's irtt runner marks them."""
    if packets is None or packets.empty:
        return []
    out = []
    for seq, sent, received, size, outcome in zip(packets["pkt_seq"].tolist(), packets["sent_s"].tolist(),
                                                  packets["received_s"].tolist(), packets["bytes"].tolist(),
                                                  packets["outcome"].tolist()):
        if outcome == "received" and received is not None and not math.isnan(received):
            out.append({"seq": int(seq), "size": int(size) - UDP_IPV4_HEADER_BYTES, "t": received,
                        "val": (received - sent) * 1e3})
        else:
            out.append({"lost": True, "seq": int(seq), "t": sent})
    return out


def _title(summary: dict) -> str:
    over = {k: v for k, v in (summary.get("overrides") or {}).items() if k != "simulation.seed"}
    return " ".join([str(summary.get("scenario_name")), f"seed:{summary.get('seed')}", *(f"{k}:{v}" for k, v in over.items())])


def flent_file_name(summary: dict) -> str:
    """``<scenario>-<overridden path>_<value>...-<seed, 2 digits>.flent.gz``: flent's batch naming,
    which its combination plots rely on. They group files by name after dropping the common prefix
    and the first number standing alone (the repetition, here the seed); so every other character
    that could set a number apart becomes ``_`` (0.01 -> 0_01)."""
    words = [_word(f"{k}_{v}") for k, v in (summary.get("overrides") or {}).items() if k != "simulation.seed"]
    return safe_name("-".join([_word(str(summary.get("scenario_name"))), *words, f"{int(summary.get('seed', 0)):02d}"]),
                     max_len=200) + SUFFIX


def _word(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text)


def dumps(data: dict) -> bytes:
    """The gzipped file: flent's json.dumps(indent=2, sort_keys=True), gzip with no name or time in
    its header, so the same run gives the same bytes."""
    try:
        text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False)
    except ValueError:  # a NaN or an infinity (read from a damaged trace): null, as flent writes a missing value
        from lasthop.report.page import finite

        text = json.dumps(finite(data), indent=2, sort_keys=True, allow_nan=False)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buf.getvalue()


def export_flent(directory: str | Path, out: str | Path | None = None, flows: Iterable[str] | None = None) -> list[Path]:
    """Writes the .flent.gz of a run directory (into `out`, a file or a directory; default the run
    directory), or of every finished run of a sweep directory (into `out`, default
    <sweep>/flent/). Returns the files written."""
    d = Path(directory)
    kind = directory_kind(d)
    if kind == "run":
        data = flent_data(d, flows)
        target = Path(out) if out is not None else d
        path = target if target.name.endswith(SUFFIX) and not target.is_dir() else target / data["metadata"]["DATA_FILENAME"]
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, dumps(data))
        return [path]
    if kind == "sweep":
        return _export_sweep(d, Path(out) if out is not None else d / "flent", flows)
    raise OutputError(f"{d}: not a lasthop results directory (no summary.json of lasthop run, no sweep.json of lasthop sweep)")


def _export_sweep(d: Path, out: Path, flows: Iterable[str] | None) -> list[Path]:
    from lasthop.sweep import read_sweep_meta

    meta = read_sweep_meta(d)
    params = [g["path"] for g in meta.get("grids", [])]
    batch_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, "lasthop:" + ",".join(r["run_id"] for r in meta["runs"])))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for r in meta["runs"]:
        run_dir = d / "runs" / r["run_id"]
        if not (run_dir / "summary.json").exists():
            continue  # failed or not run yet
        batch = {"name": meta.get("scenario_name"), "title": ", ".join(params) or None, "uuid": batch_uuid}
        data = flent_data(run_dir, flows, batch)
        path = out / data["metadata"]["DATA_FILENAME"]
        replace_file(path, dumps(data))
        written.append(path)
    return written
