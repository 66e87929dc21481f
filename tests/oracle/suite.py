"""The ns-3 cross-validation suite: cases, the lasthop side of each, the ns-3 runs (one subprocess
per run, at most two at a time, cached on disk) and the statistics both sides share.

Cases (issue 9):
- dumbbell: loss {0, 0.5, 1, 2 %} on the bottleneck's data direction x SACK {on, off} x 5 seeds;
  the bundled `dumbbell` with its bottleneck queue at 42 packets (1 BDP), MSS 1448, 1 MiB
  buffers, initial window 10, per-ACK congestion avoidance; 100 s, goodput also after 10 s.
- home: the bundled `home` with ns-3's 802.11g parameters (constant 54/24 Mb/s, no RTS/CTS, no
  frame errors, AP queue 100 packets, SACK on) x 5 seeds.

ns-3 results are cached in `results/ns3-oracle-cache/` (gitignored) under a hash of the run's
parameters (a replayed schedule by its content), the builders' source and the ns3 version; a
rerun with nothing changed starts no ns-3 process. lasthop runs take well under a second and are
not cached.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

import lasthop

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / "results" / "ns3-oracle-cache"
SEEDS = (1, 2, 3, 4, 5)
MAX_PARALLEL = 2  # the machine has 2 cores and is shared

# ----------------------------------------------------------------------------------- dumbbell

LOSSES = (0.0, 0.005, 0.01, 0.02)
DB_DURATION_S = 100.0
DB_WARMUP_S = 10.0
DB_MSS = 1448
DB_QUEUE = 42  # packets: the 50 ms x 10 Mb/s bandwidth-delay product in 1500 B packets
DB_BUFFER = 1 << 20
INITIAL_CWND = 10  # ns-3's default (RFC 6928); lasthop's default would be RFC 5681's 3
CA_INCREASE = "per_ack"  # ns-3's NewReno: cwnd += MSS^2/cwnd per ACK in congestion avoidance


# ns-3's NewReno without SACK either behaves (lasthop's worst seed retransmits under 3 % of its
# segments) or falls into a mode where every recovery resends a burst of segments the receiver
# already has (15-21 % of its segments): FIDELITY.md note B. A run above this share is in that mode.
DUP_MODE_SHARE = 0.05


def retx_share(r: dict) -> float:
    return r["retransmitted_segments"] / max(1, r["segments_sent"])


@dataclass(frozen=True)
class DumbbellCase:
    loss: float
    sack: bool

    @property
    def label(self) -> str:
        return f"loss {self.loss * 100:g} %, SACK {'on' if self.sack else 'off'}"


DUMBBELL_CASES = [DumbbellCase(l, s) for s in (True, False) for l in LOSSES]


def _aligned_tcp(t: str, ca_increase: str) -> dict:
    """The TCP settings both lasthop cases align with ns-3 (prefix `t`: the flow's tcp table)."""
    return {
        t + "initial_cwnd": INITIAL_CWND,
        t + "delayed_ack": "200ms",
        t + "rto_min": "1s",
        t + "rto_initial": "1s",
        t + "ca_increase": ca_increase,
        t + "limited_transmit": True,
    }


def dumbbell_overrides(case: DumbbellCase, ca_increase: str = CA_INCREASE) -> dict[str, Any]:
    """lasthop's `dumbbell` set to the aligned configuration (every TCP value explicit)."""
    t = "flows.bulk.tcp."
    return {
        "simulation.duration": f"{DB_DURATION_S:g}s",
        "links.bottleneck.queue": f"{DB_QUEUE}p",
        "links.bottleneck.loss_a_to_b": case.loss,  # ns-3: RateErrorModel at the receiver's device
        t + "mss": f"{DB_MSS}B",
        t + "sack": case.sack,
        t + "send_buffer": "1MiB",
        t + "receive_buffer": "1MiB",
        **_aligned_tcp(t, ca_increase),
        "probes.packets": '["voice"]',
        "probes.queues": "[]",
        "probes.tcp": '["bulk"]',
    }


def dumbbell_ns3_params(case: DumbbellCase, seed: int, voice_schedule: Path, ssthresh: str = "ns3") -> dict:
    """`ssthresh = "half_window"`: the diagnostic ns-3 whose NewReno takes ssthresh = half the
    window (RFC 5681 eq. 4) instead of half the pipe (see ns3_common.NewRenoHalfWindow)."""
    return {
        "seed": seed, "loss": case.loss, "ssthresh": ssthresh, "duration": DB_DURATION_S, "warmup": DB_WARMUP_S,
        "access_rate": "100Mbps", "access_delay": "1ms",
        "bottleneck_rate": "10Mbps", "bottleneck_delay": "24ms", "queue": DB_QUEUE,
        "tcp": {"sack": case.sack, "mss": DB_MSS, "initial_cwnd": INITIAL_CWND, "buffer": DB_BUFFER},
        "udp": [{"name": "voice", "schedule": str(voice_schedule)}],
    }


def lasthop_dumbbell(case: DumbbellCase, seed: int, ca_increase: str = CA_INCREASE) -> dict:
    res = lasthop.run("dumbbell", seed=seed, **dumbbell_overrides(case, ca_increase))
    bulk = next(f for f in res.summary["flows"] if f["name"] == "bulk")
    iv = res.intervals
    iv = iv[(iv["flow"] == "bulk") & (iv["t_start_s"] >= DB_WARMUP_S - 1e-9)]
    tcp = bulk["tcp"]
    tr = res.trace("tcp/bulk")
    fr = tr[tr["event"] == "fast_retransmit"]
    # Where each retransmission timeout struck: during fast recovery (a lost retransmission, which
    # RFC 6675 cannot detect), in the open state (too few duplicate ACKs), or right after a timeout.
    where = {"recovery": 0, "open": 0, "after_timeout": 0}
    state = "open"
    for e in tr["event"]:
        if e == "fast_retransmit":
            state = "recovery"
        elif e == "recovery_exit":
            state = "open"
        elif e == "timeout":
            where[state] += 1
            state = "after_timeout"
    return {
        "goodput_bps": bulk["delivered_bytes"] * 8 / DB_DURATION_S,
        "goodput_after_warmup_bps": float(iv["goodput_bps"].mean()),
        "segments_sent": tcp["segments_sent"],
        "retransmitted_segments": tcp["retransmitted_segments"],
        "timeouts": tcp["timeouts"],
        "fast_recoveries": tcp["fast_retransmits"],
        # ssthresh set at each fast retransmit over FlightSize/2 then (RFC 5681 eq. 4's value)
        "ssthresh_over_half_flight":
            float((fr["ssthresh_bytes"] / (fr["flight_bytes"] / 2)).mean()) if len(fr) else -1.0,
        "timeouts_where": where,
        "udp": {"voice": packet_records(res, "voice")},
    }


# ----------------------------------------------------------------------------------- home

HOME_UDP = [("video", "AP", "N0"), ("game-down", "W1", "N1"), ("game-up", "N1", "W1"),
            ("chat-down", "W2", "N2"), ("chat-up", "N2", "W2")]
HOME_DURATION_S = 180.0
HOME_FTP_START_S = 135.0
HOME_MSS = 1460  # lasthop's default, MTU - 40; ns-3 set to it
HOME_METRIC_FROM_S = 1.0  # ns-3 stations associate (a beacon, up to 102 ms) before the first second


def home_overrides(ca_increase: str = CA_INCREASE) -> dict[str, Any]:
    """lasthop's `home` with ns-3's parameters: constant 54/24 Mb/s, no RTS/CTS (threshold above
    any MSDU), no frame errors, AP queue 100, SACK on, and the FTP's TCP as in the dumbbell."""
    t = "flows.ftp.tcp."
    return {
        "wlans.home.errors": '{ model = "ideal" }',
        "wlans.home.rts_threshold": "2347B",
        "wlans.home.data_rate": "54Mbps",
        "wlans.home.control_rate": "24Mbps",
        "wlans.home.ap_queue": "100p",
        "wlans.home.retry_short": 7,
        "wlans.home.retry_long": 4,
        t + "sack": True,
        t + "mss": f"{HOME_MSS}B",
        **_aligned_tcp(t, ca_increase),
        "probes.packets": json.dumps([n for n, _, _ in HOME_UDP]),
        "probes.tcp": "[]",
    }


def lasthop_home(seed: int, ca_increase: str = CA_INCREASE) -> tuple[dict, Any]:
    res = lasthop.run("home", seed=seed, **home_overrides(ca_increase))
    ftp = next(f for f in res.summary["flows"] if f["name"] == "ftp")
    tcp = ftp["tcp"]
    out = {
        "ftp": {"goodput_bps": ftp["delivered_bytes"] * 8 / (HOME_DURATION_S - HOME_FTP_START_S),
                "segments_sent": tcp["segments_sent"], "retransmitted_segments": tcp["retransmitted_segments"],
                "timeouts": tcp["timeouts"], "fast_recoveries": tcp["fast_retransmits"]},
        "udp": {n: packet_records(res, n) for n, _, _ in HOME_UDP},
    }
    return out, res


def home_ns3_params(seed: int, schedules: dict[str, Path], ssthresh: str = "ns3") -> dict:
    return {
        "seed": seed, "ssthresh": ssthresh, "duration": HOME_DURATION_S, "wired_rate": "100Mbps", "wired_queue": 140,
        "data_mode": "ErpOfdmRate54Mbps", "control_mode": "ErpOfdmRate24Mbps", "ap_queue": 100, "sta_queue": 50,
        "tcp": {"sack": True, "mss": HOME_MSS, "initial_cwnd": INITIAL_CWND, "buffer": DB_BUFFER},
        "ftp": {"src": "W3", "dst": "N3", "start_s": HOME_FTP_START_S},
        "udp": [{"name": n, "src": s, "dst": d, "schedule": str(schedules[n])} for n, s, d in HOME_UDP],
    }


# ----------------------------------------------------------------------------------- packets

def packet_records(res, flow: str) -> list[tuple[int, int, int, int]]:
    """(seq, send_ns, recv_ns or -1, ip_bytes) of every packet of a flow, from lasthop's trace."""
    t = res.trace(f"packets/{flow}")
    recv = t["received_s"].to_numpy()
    return [(int(q), round(s * 1e9), -1 if (r != r) else round(r * 1e9), int(b))
            for q, s, r, b in zip(t["pkt_seq"], t["sent_s"], recv, t["bytes"])]


def write_schedule(records: list, name: str) -> Path:
    """A replay schedule ("send_ns ip_bytes" lines) in the cache, named by its content."""
    text = "".join(f"{s} {b}\n" for _, s, _, b in records)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = CACHE / "schedules" / f"{name}-{digest}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def udp_metrics(records: list, from_s: float, end_s: float) -> dict:
    """One definition for both simulators, over packets sent in [from_s, end_s - 1 s) (the last
    second's packets may still be in flight): loss ratio, receive throughput (IP bytes), one-way
    delay mean and p99, and mean |IPDV| between consecutive sequence numbers (RFC 3393)."""
    a = np.array(records, dtype=np.int64).reshape(-1, 4)
    a = a[(a[:, 1] >= from_s * 1e9) & (a[:, 1] < (end_s - 1.0) * 1e9)]
    a = a[np.argsort(a[:, 0])]
    got = a[:, 2] >= 0
    delay = (a[got, 2] - a[got, 1]) / 1e6
    d_all = np.where(got, a[:, 2] - a[:, 1], -1)
    both = (d_all[1:] >= 0) & (d_all[:-1] >= 0) & (np.diff(a[:, 0]) == 1)
    ipdv = np.abs(np.diff(d_all))[both] / 1e6
    span = (a[-1, 1] - a[0, 1]) / 1e9 if len(a) > 1 else float("nan")
    return {
        "sent": int(len(a)),
        "loss_ratio": float(1 - got.mean()) if len(a) else float("nan"),
        "throughput_rx_bps": float(a[got, 3].sum() * 8 / span) if span == span and span > 0 else float("nan"),
        "delay_mean_ms": float(delay.mean()) if len(delay) else float("nan"),
        "delay_p99_ms": float(np.percentile(delay, 99)) if len(delay) else float("nan"),
        "jitter_mean_ms": float(ipdv.mean()) if len(ipdv) else float("nan"),
    }


# ----------------------------------------------------------------------------------- ns-3 runs

def ns3_version() -> str | None:
    try:
        return metadata.version("ns3")
    except metadata.PackageNotFoundError:
        return None


def ns3_importable() -> tuple[bool, str]:
    """Whether `from ns import ns` works, checked in a subprocess (the import takes ~15 s and
    loads all of ns-3 into the process)."""
    if ns3_version() is None:
        return False, "the ns3 package is not installed (pip install 'lasthop[oracle]' or make fidelity)"
    r = subprocess.run([sys.executable, "-c", "from ns import ns; ns.Simulator.Now()"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return False, f"ns3 {ns3_version()} is installed but does not import: {r.stderr.strip()[-300:]}"
    return True, ""


def _sources_digest(builder: str) -> str:
    h = hashlib.sha256()
    for name in ("ns3_common.py", f"ns3_{builder}.py"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()


def _cache_key(builder: str, params: dict) -> str:
    p = json.loads(json.dumps(params))
    for u in p.get("udp", []):
        u["schedule"] = Path(u["schedule"]).name  # content-named
    blob = json.dumps({"builder": builder, "params": p, "sources": _sources_digest(builder), "ns3": ns3_version()},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass
class Ns3Job:
    builder: str  # "dumbbell" or "home"
    params: dict
    result: dict | None = None
    cached: bool = False
    wall_s: float = 0.0
    key: str = field(init=False, default="")

    def __post_init__(self):
        self.key = _cache_key(self.builder, self.params)

    @property
    def path(self) -> Path:
        return CACHE / self.builder / f"{self.key}.json"


def run_ns3(jobs: list[Ns3Job], log: Callable[[str], None] = print) -> list[Ns3Job]:
    """Runs the jobs not in the cache, at most MAX_PARALLEL ns-3 processes at a time."""
    todo = []
    for j in jobs:
        if j.path.exists():
            j.result = json.loads(j.path.read_text())["result"]
            j.cached = True
        else:
            todo.append(j)
    if todo:
        log(f"ns-3: {len(jobs) - len(todo)} runs cached, {len(todo)} to run ({MAX_PARALLEL} at a time)")

    def one(j: Ns3Job) -> Ns3Job:
        import time

        t = time.perf_counter()
        env = dict(os.environ, PYTHONPATH=str(HERE))
        r = subprocess.run([sys.executable, str(HERE / f"ns3_{j.builder}.py"), json.dumps(j.params)],
                           capture_output=True, text=True, cwd=HERE, env=env)
        j.wall_s = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"ns-3 {j.builder} run failed ({r.returncode}): {j.params}\n{r.stderr[-2000:]}")
        j.result = json.loads(r.stdout.strip().splitlines()[-1])
        j.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = j.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"builder": j.builder, "params": j.params, "ns3": ns3_version(),
                                   "wall_s": j.wall_s, "result": j.result}))
        tmp.replace(j.path)
        log(f"ns-3 {j.builder} seed {j.params['seed']} done in {j.wall_s:.0f} s")
        return j

    with ThreadPoolExecutor(MAX_PARALLEL) as ex:
        list(ex.map(one, todo))
    return jobs


# ----------------------------------------------------------------------------------- collection

def collect_dumbbell(seeds, log: Callable[[str], None] = print) -> dict:
    """Per case: lasthop runs (per_ack and, for contrast, bytes), ns-3 runs (as shipped and the
    half-window-ssthresh diagnostic), all per seed."""
    out = {}
    jobs = []
    for case in DUMBBELL_CASES:
        rows = {"lasthop": [], "lasthop_bytes": []}
        for s in seeds:
            rows["lasthop"].append(lasthop_dumbbell(case, s))
            rows["lasthop_bytes"].append(lasthop_dumbbell(case, s, ca_increase="bytes"))
            sched = write_schedule(rows["lasthop"][-1]["udp"]["voice"], "voice")
            for variant in ("ns3", "half_window") if case.loss > 0 else ("ns3",):
                jobs.append((case, variant, Ns3Job("dumbbell", dumbbell_ns3_params(case, s, sched, variant))))
        out[case] = rows
    run_ns3([j for _, _, j in jobs], log=log)
    for case, variant, j in jobs:
        out[case].setdefault(variant, []).append(j.result)
    return out


def collect_home(seeds, log: Callable[[str], None] = print) -> dict:
    lh, jobs = [], []
    for s in seeds:
        r, res = lasthop_home(s)
        r["wlan"] = res.summary["wlans"][0]
        lh.append(r)
        scheds = {n: write_schedule(r["udp"][n], f"home-{n}") for n, _, _ in HOME_UDP}
        for variant in ("ns3", "half_window"):
            jobs.append(Ns3Job("home", home_ns3_params(s, scheds, variant)))
    run_ns3(jobs, log=log)
    return {"lasthop": lh, "ns3": [j.result for j in jobs if j.params["ssthresh"] == "ns3"],
            "half_window": [j.result for j in jobs if j.params["ssthresh"] == "half_window"]}


# ----------------------------------------------------------------------------------- statistics

def mean_ci(xs) -> tuple[float, float]:
    """Mean and half-width of the 95 % Student-t confidence interval."""
    from scipy import stats

    a = np.asarray([x for x in xs if x == x], dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), float("nan")
    return float(a.mean()), float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))
