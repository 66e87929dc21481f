"""ns-3 as a standing oracle (issue 9): runs the aligned dumbbell and home scenarios in lasthop and
in ns-3 (the `ns3` PyPI package, `pip install 'lasthop[oracle]'`) and writes FIDELITY.md.

    make fidelity            # installs the extra into .venv, then: python bench/fidelity.py

The ns-3 builders and the case definitions are in tests/oracle/; ns-3 results are cached in
results/ns3-oracle-cache/, so a second run only reruns lasthop (a few seconds).
"""

from __future__ import annotations

import argparse
import math
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import lasthop  # noqa: E402
from lasthop.models import mathis, padhye  # noqa: E402
from oracle import suite  # noqa: E402
from oracle.suite import DumbbellCase, mean_ci  # noqa: E402

TOLERANCE = 0.10
# Mathis/Padhye inputs for the dumbbell: base RTT 2 x (1 + 24) ms plus the serialization of a
# 1500 B packet at 10 and 100 Mb/s and of its 40 B ACK (the queue is nearly empty at these loss
# rates); b = 2 packets per ACK (delayed ACKs, and per-ACK growth of SMSS^2/cwnd); T0 = the 1 s
# minimum RTO; the receiver window 1 MiB / 1448 B = 724 packets.
BASE_RTT_S = 0.050 + 1500 * 8 / 10e6 + 1500 * 8 / 100e6 + 40 * 8 / 10e6 + 40 * 8 / 100e6
MODEL_B = 2
DUP_MODE_SHARE = suite.DUP_MODE_SHARE
retx_share = suite.retx_share
# The bottleneck's goodput ceiling: 10 Mb/s x 1448/1500, less the voice flow (188 B per 20 ms).
CEILING_BPS = (10e6 - 188 * 8 / 0.020) * 1448 / 1500


def fmt(m: float, ci: float, scale: float = 1e6, digits: int = 2) -> str:
    if m != m:
        return "—"
    if ci != ci:
        return f"{m / scale:.{digits}f}"
    return f"{m / scale:.{digits}f} ± {ci / scale:.{digits}f}"


def ratio(a: float, b: float) -> float:
    return a / b if b and b == b and a == a else float("nan")


def verdict(r: float, note: str = "") -> str:
    if r != r:
        return "—"
    ok = abs(r - 1) <= TOLERANCE
    return ("✓" if ok else "✗") + (f" {note}" if note and not ok else "")


# ----------------------------------------------------------------------------------- dumbbell

def col(runs: list[dict], key: str) -> tuple[float, float]:
    return mean_ci([r[key] for r in runs])


def models(loss: float) -> tuple[float, float]:
    if loss == 0:
        return float("nan"), float("nan")
    return (mathis(suite.DB_MSS, BASE_RTT_S, loss, b=MODEL_B),
            padhye(suite.DB_MSS, BASE_RTT_S, loss, t0_s=1.0, b=MODEL_B, wmax=suite.DB_BUFFER / suite.DB_MSS))


def dumbbell_sections(res: dict) -> tuple[list[str], dict]:
    L: list[str] = []
    verdicts = {}
    L += ["## Dumbbell", "",
          "Goodput in Mb/s, mean ± 95 % CI (Student t) over the seeds, **after the first 10 s** (10–100 s). "
          "*ratio* is lasthop / ns-3. *ns-3 ½W* is the diagnostic ns-3 whose NewReno sets ssthresh to half "
          "the window (RFC 5681 eq. 4) instead of half its pipe (note A). Mathis and Padhye use MSS 1448 B, "
          f"RTT {BASE_RTT_S * 1e3:.1f} ms (base), b = {MODEL_B}, T0 = 1 s, W_max = 724; the bottleneck's "
          f"goodput ceiling with the voice flow is {CEILING_BPS / 1e6:.2f} Mb/s.", "",
          "| case | lasthop | ns-3 | ratio | within 10 % | ns-3 ½W | lasthop / ns-3 ½W | Mathis | Padhye | notes |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for case, rows in res.items():
        lh = col(rows["lasthop"], "goodput_after_warmup_bps")
        n3 = col(rows["ns3"], "goodput_after_warmup_bps")
        hw = col(rows["half_window"], "goodput_after_warmup_bps") if "half_window" in rows else (float("nan"),) * 2
        m, p = models(case.loss)
        r, rh = ratio(lh[0], n3[0]), ratio(lh[0], hw[0])
        verdicts[case] = (r, rh)
        notes = notes_for(case, rows, r)
        L.append(f"| {case.label} | {fmt(*lh)} | {fmt(*n3)} | {r:.3f} | {verdict(r)} | {fmt(*hw)} | "
                 f"{'—' if rh != rh else f'{rh:.3f}'} | {fmt(m, float('nan'))} | {fmt(p, float('nan'))} | {notes} |")
    L += ["", "Whole run (0–100 s, slow start included), Mb/s:", "",
          "| case | lasthop | ns-3 | ratio | ns-3 ½W | lasthop / ns-3 ½W |", "|---|---|---|---|---|---|"]
    for case, rows in res.items():
        lh = col(rows["lasthop"], "goodput_bps")
        n3 = col(rows["ns3"], "goodput_bps")
        hw = col(rows["half_window"], "goodput_bps") if "half_window" in rows else (float("nan"),) * 2
        rh = ratio(lh[0], hw[0])
        L.append(f"| {case.label} | {fmt(*lh)} | {fmt(*n3)} | {ratio(lh[0], n3[0]):.3f} | {fmt(*hw)} | "
                 f"{'—' if rh != rh else f'{rh:.3f}'} |")
    L += ["", "Loss recovery per 100 s run (means over the seeds; ns-3 counts from its socket's `Retransmission`, "
          "`RTO` and `CongState` traces), and ssthresh at fast retransmit over FlightSize/2 (note A):", "",
          "| case | retransmitted segments lasthop / ns-3 / ns-3 ½W | timeouts | fast recoveries | "
          "ssthresh ÷ ½FlightSize lasthop / ns-3 / ns-3 ½W | segments sent per retransmission lasthop / ns-3 |",
          "|---|---|---|---|---|---|"]
    for case, rows in res.items():
        def m(v, k):
            return np.mean([r[k] for r in rows[v]]) if v in rows else float("nan")

        def mr(v):
            xs = [r["ssthresh_over_half_flight"] for r in rows.get(v, []) if r["ssthresh_over_half_flight"] >= 0]
            return np.mean(xs) if xs else float("nan")

        spr = [ratio(m(v, "segments_sent"), m(v, "retransmitted_segments")) for v in ("lasthop", "ns3")]
        L.append(
            f"| {case.label} | {m('lasthop', 'retransmitted_segments'):.0f} / {m('ns3', 'retransmitted_segments'):.0f} / "
            f"{m('half_window', 'retransmitted_segments'):.0f} | {m('lasthop', 'timeouts'):.1f} / {m('ns3', 'timeouts'):.1f} | "
            f"{m('lasthop', 'fast_recoveries'):.0f} / {m('ns3', 'fast_recoveries'):.0f} | "
            f"{mr('lasthop'):.2f} / {mr('ns3'):.2f} / {mr('half_window'):.2f} | {spr[0]:.0f} / {spr[1]:.0f} |".replace("nan", "—"))
    L += ["", "The 64 kb/s voice flow beside the bulk transfer (lasthop's packet schedule replayed in ns-3; "
          "packets sent in 0–99 s, same metric code for both), mean over seeds:", "",
          "| case | delay mean ms lasthop / ns-3 | delay p99 ms | jitter (mean \\|IPDV\\|) ms | loss % |",
          "|---|---|---|---|---|"]
    for case, rows in res.items():
        mets = {v: [suite.udp_metrics(r["udp"]["voice"], 0.0, suite.DB_DURATION_S) for r in rows[v]]
                for v in ("lasthop", "ns3")}

        def mm(v, k, s=1.0):
            return np.mean([x[k] for x in mets[v]]) * s

        L.append(f"| {case.label} | {mm('lasthop', 'delay_mean_ms'):.2f} / {mm('ns3', 'delay_mean_ms'):.2f} | "
                 f"{mm('lasthop', 'delay_p99_ms'):.2f} / {mm('ns3', 'delay_p99_ms'):.2f} | "
                 f"{mm('lasthop', 'jitter_mean_ms'):.3f} / {mm('ns3', 'jitter_mean_ms'):.3f} | "
                 f"{mm('lasthop', 'loss_ratio', 100):.2f} / {mm('ns3', 'loss_ratio', 100):.2f} |")
    L += ["", "ns-3 without SACK per seed (note B): goodput after 10 s in Mb/s and, in brackets, the share of its "
          f"segments that were retransmissions; a run above {DUP_MODE_SHARE:.0%} is in the duplicate-resending mode. "
          "*normal-mode* averages the other seeds:", "",
          "| case | ns-3 per seed | lasthop | ns-3 normal-mode | lasthop / normal-mode | within 10 % |", "|---|---|---|---|---|---|"]
    for case, rows in res.items():
        if case.sack:
            continue
        per = ", ".join(f"{r['goodput_after_warmup_bps'] / 1e6:.2f} [{retx_share(r) * 100:.1f} %]" for r in rows["ns3"])
        normal = [r for r in rows["ns3"] if retx_share(r) <= DUP_MODE_SHARE]
        lh = col(rows["lasthop"], "goodput_after_warmup_bps")
        nm = col(normal, "goodput_after_warmup_bps") if normal else (float("nan"),) * 2
        r = ratio(lh[0], nm[0])
        verdicts[("normal-mode", case)] = r
        L.append(f"| {case.label} | {per} | {fmt(*lh)} | {fmt(*nm)} ({len(normal)} seeds) | "
                 f"{'—' if r != r else f'{r:.3f}'} | {verdict(r)} |")
    L += ["", "lasthop's default congestion avoidance (`ca_increase = \"bytes\"`, Linux's byte counting) beside the "
          "aligned `per_ack`, goodput after 10 s, Mb/s:", "", "| case | lasthop per_ack | lasthop bytes | bytes / per_ack |",
          "|---|---|---|---|"]
    for case, rows in res.items():
        a, b = col(rows["lasthop"], "goodput_after_warmup_bps"), col(rows["lasthop_bytes"], "goodput_after_warmup_bps")
        L.append(f"| {case.label} | {fmt(*a)} | {fmt(*b)} | {ratio(b[0], a[0]):.3f} |")
    return L, verdicts


def notes_for(case: DumbbellCase, rows: dict, r: float) -> str:
    notes = []
    dup_mode = not case.sack and any(retx_share(x) > DUP_MODE_SHARE for x in rows["ns3"])
    if case.loss == 0 and not dup_mode:
        notes.append("C")
    elif case.loss > 0 and (abs(r - 1) > TOLERANCE or case.sack):
        notes.append("A")
    if dup_mode:
        notes.append("B")
    if case.loss >= 0.02:
        notes.append("D")
    return ", ".join(notes)


# ----------------------------------------------------------------------------------- home

def home_sections(res: dict) -> tuple[list[str], dict]:
    L = ["## Home scenario with ns-3's parameters", "",
         "Per flow, mean ± 95 % CI over the seeds. UDP flows: packets sent from 1 s to 179 s (ns-3's stations "
         "associate first), both simulators' per-packet records through the same metric code; receive throughput "
         "in kb/s of IP bytes. FTP: goodput over its 45 s (135–180 s) in Mb/s.", "",
         "| flow | metric | lasthop | ns-3 | ratio | within 10 % |", "|---|---|---|---|---|---|"]
    verdicts = {}
    for name, _, _ in suite.HOME_UDP:
        m = {v: [suite.udp_metrics(r["udp"][name], suite.HOME_METRIC_FROM_S, suite.HOME_DURATION_S) for r in res[v]]
             for v in ("lasthop", "ns3")}
        for key, label, scale, dig, judged in (
                ("throughput_rx_bps", "throughput kb/s", 1e3, 1, True),
                ("loss_ratio", "loss %", 0.01, 3, False),
                ("delay_mean_ms", "delay mean ms", 1, 2, False),
                ("delay_p99_ms", "delay p99 ms", 1, 2, False),
                ("jitter_mean_ms", "jitter ms", 1, 3, False)):
            a = mean_ci([x[key] for x in m["lasthop"]])
            b = mean_ci([x[key] for x in m["ns3"]])
            r = ratio(a[0], b[0])
            if judged:
                verdicts[(name, key)] = r
            L.append(f"| {name} | {label} | {fmt(*a, scale, dig)} | {fmt(*b, scale, dig)} | "
                     f"{'—' if r != r else f'{r:.3f}'} | {verdict(r) if judged else 'E'} |")
    a = mean_ci([r["ftp"]["goodput_bps"] for r in res["lasthop"]])
    b = mean_ci([r["ftp"]["goodput_bps"] for r in res["ns3"]])
    r = ratio(a[0], b[0])
    verdicts[("ftp", "goodput_bps")] = r
    L.append(f"| ftp | goodput Mb/s | {fmt(*a)} | {fmt(*b)} | {r:.3f} | {verdict(r)} G |")
    for key, label in (("retransmitted_segments", "retransmitted segments"), ("timeouts", "timeouts"),
                       ("fast_recoveries", "fast recoveries")):
        a = mean_ci([r["ftp"][key] for r in res["lasthop"]])
        b = mean_ci([r["ftp"][key] for r in res["ns3"]])
        L.append(f"| ftp | {label} | {fmt(*a, 1, 1)} | {fmt(*b, 1, 1)} | {ratio(a[0], b[0]):.3f} | G |")
    L += ["", "FTP goodput per seed, Mb/s (*ns-3 ½W*: the diagnostic NewReno of note A):", "",
          "| seed | lasthop | ns-3 | ns-3 ½W | ns-3 timeouts |", "|---|---|---|---|---|"]
    for i, (x, y, z) in enumerate(zip(res["lasthop"], res["ns3"], res["half_window"])):
        L.append(f"| {i + 1} | {x['ftp']['goodput_bps'] / 1e6:.2f} | {y['ftp']['goodput_bps'] / 1e6:.2f} | "
                 f"{z['ftp']['goodput_bps'] / 1e6:.2f} | {y['ftp']['timeouts']} |")
    w = [r["wlan"] for r in res["lasthop"]]
    coll = np.mean([x["collisions"] / max(1, x["exchanges"]) for x in w])
    L += ["", f"lasthop's DCF over the 180 s: {np.mean([x['exchanges'] for x in w]):.0f} exchanges, "
          f"{coll * 100:.2f} % of them collisions, air busy {np.mean([x['busy_share'] for x in w]) * 100:.1f} % "
          "of the time (mean over seeds)."]
    return L, verdicts


# ----------------------------------------------------------------------------------- the file

SETTINGS = """\
## What is aligned

| setting | lasthop (overrides of the bundled scenario) | ns-3 3.44 (tests/oracle/) |
|---|---|---|
| topology | `dumbbell`: 100 Mb/s 1 ms access, 10 Mb/s 24 ms bottleneck | point-to-point links, same rates and delays |
| bottleneck queue | `links.bottleneck.queue = "42p"` (1 BDP) | DropTail device queue 42p both ways; the default FQ-CoDel queue disc removed |
| link loss | `links.bottleneck.loss_a_to_b` (router → receiver) | `RateErrorModel`, packet unit, on the receiver's bottleneck device |
| TCP | NewReno, `sack` on/off, `mss = "1448B"`, 1 MiB buffers, `initial_cwnd = 10`, delayed ACK 200 ms (every 2nd segment), `rto_min = rto_initial = "1s"`, `limited_transmit = true`, `ca_increase = "per_ack"`, no timestamps | `TcpNewReno` with `TcpClassicRecovery` (not PRR), `Sack` on/off, `Timestamp` off, `SegmentSize` 1448, 1 MiB buffers, `InitialCwnd` 10, `DelAckCount` 2, `DelAckTimeout` 200 ms, `MinRto` 1 s, RTT estimate and SYN timeout 1 s, `LimitedTransmit` on, Nagle on, window scaling on |
| voice flow | 160 B every 20 ms from 0.5 s | lasthop's packet schedule replayed (same times, same sizes) |
| home WLAN | `home` with `errors = ideal`, `data_rate = 54Mbps`, `control_rate = 24Mbps`, `rts_threshold = 2347B` (never), `ap_queue = 100p`, station queues 50p, `retry_short = 7` | 802.11g, `ConstantRateWifiManager` ErpOfdmRate54Mbps / ErpOfdmRate24Mbps, RTS never, `WifiMac::FrameRetryLimit` 7, AP `WifiMacQueue` 100p, stations 50p, no 500 ms queue sojourn limit, ARP caches pre-filled, Yans channel at 10 m (error-free at 54 Mb/s) |
| home flows | video, game, chat as bundled; FTP W3 → N3 from 135 s, SACK on, MSS 1460, initial window 10, 1 MiB buffers, `per_ack` | UDP flows replay lasthop's per-seed packet schedules; BulkSend + PacketSink with the TCP settings above (MSS 1460) |
| seeds | `simulation.seed` = 1..N | `RngSeedManager` seed 1, run 1..N |
"""

NOTES = """\
## Differences and why

**A. ns-3 sets ssthresh to half its pipe, not half the window.** On the third duplicate ACK ns-3
3.44's `TcpSocketBase::EnterRecovery` calls `GetSsThresh(tcb, BytesInFlight())`. With SACK,
`BytesInFlight()` is RFC 6675's *pipe*: the outstanding data less the segments already SACKed
(three, by then) and the one marked lost; without SACK it is the outstanding data less the
duplicate ACKs, plus one segment. RFC 5681 eq. 4 and RFC 6675 §5 (4.2) say FlightSize / 2, Linux
says cwnd / 2, and lasthop takes (FlightSize − the RFC 3042 limited-transmit segments) / 2. With
windows of 10–20 segments at 0.5–2 % loss, four segments are 20–40 % of the window. Measured at
every fast retransmit of the lossy runs, ssthresh ÷ (FlightSize/2) is {ns3_ratio} in ns-3 and
{lh_ratio} in lasthop (table "Loss recovery"), so each loss cuts ns-3's window deeper and its
goodput is {sack_gap} lower with SACK. The column *ns-3 ½W* is the same ns-3 with only
`GetSsThresh` replaced by max(2 SMSS, max(cwnd, pipe) / 2) (a subclass of `TcpNewReno` swapped
into the socket before the first data segment; tests/oracle/ns3_common.py): lasthop is within
{hw_range} of it in every lossy SACK case, which attributes the gap to this one rule. lasthop follows
the RFC here and is not tuned towards ns-3. Both ns-3 variants and lasthop lie between Padhye's
model (which counts the timeouts) and Mathis's (which does not).

**B. ns-3's NewReno without SACK: the duplicate-resending mode.** Some ns-3 runs without SACK fall,
after the loss burst that ends slow start, into a mode they never leave: every recovery resends a
burst of segments the receiver already has, {dup_share} of all segments sent are retransmissions
(lasthop's worst seed: {lh_worst_share}), and the window no longer shrinks with losses, so the run
keeps the queue full ({dup_goodput} Mb/s whatever the loss rate). The lossless case is deterministic
and all five of its runs are in that mode (which also costs the voice flow {voice_loss} % loss against
lasthop's {voice_loss_lh} %); at 0.5 % loss {n05} of 5 seeds are, at 1 % {n1}, at 2 % {n2} — the
bimodality across seeds the issue lists as a known ns-3 quirk. Against the ns-3 seeds that stay in
the normal mode lasthop is within {normal_range} (table "ns-3 without SACK per seed"); there the
remaining difference is note A (ns-3's ssthresh is (FlightSize − 2 MSS)/2 without SACK). lasthop
is not tuned towards the quirk.

**C. Lossless bottleneck.** Both fill the 10 Mb/s bottleneck (lasthop {c_lh} Mb/s, ns-3 {c_n3} Mb/s
with SACK): ns-3's point-to-point device adds a 2-byte PPP header to every frame (1502 B on the
wire per 1500 B packet, 0.13 %), and the 42-packet DropTail sawtooth differs slightly (voice delay
mean {c_delay}).

**D. Retransmission timeouts at 2 % loss.** lasthop times out {f_lh} times per 100 s with SACK where
ns-3 does {f_n3} (½W: {f_hw}); goodput is not affected beyond note A (lasthop / ns-3 ½W =
{f_ratio}). Of lasthop's timeouts at 2 % with SACK, {f_rec} struck during fast recovery (a lost
retransmission, which RFC 6675 recovery cannot detect, so the 1 s RTO ends it), {f_open} in the open
state (a loss with too few segments after it for three duplicate ACKs) and {f_after} right after
another timeout. ns-3's `TcpTxBuffer::NextSeg` does not resend a lost retransmission either, so
why it times out half as often is **not established**; ns-3 exposes no per-state timeout count to
compare with. Open.
"""


def fill_notes(db: dict, db_verdicts: dict) -> str:
    def ratio_of(v):
        xs = [r["ssthresh_over_half_flight"] for case, rows in db.items() if case.loss > 0
              for r in rows.get(v, []) if r["ssthresh_over_half_flight"] >= 0 and retx_share(r) <= DUP_MODE_SHARE]
        return np.mean(xs) if xs else float("nan")

    def gp(case, v, runs=None):
        return np.mean([r["goodput_after_warmup_bps"] for r in (runs or db[case][v])])

    lossy_sack = [c for c in db if c.sack and c.loss > 0]
    hw = [abs(db_verdicts[c][1] - 1) for c in lossy_sack if db_verdicts[c][1] == db_verdicts[c][1]]
    gaps = [1 - gp(c, "ns3") / gp(c, "lasthop") for c in lossy_sack]
    nosack = {c.loss: c for c in db if not c.sack}
    dup = [r for c in nosack.values() for r in db[c]["ns3"] if retx_share(r) > DUP_MODE_SHARE]
    ndup = {l: sum(retx_share(r) > DUP_MODE_SHARE for r in db[c]["ns3"]) for l, c in nosack.items()}
    normal = [abs(v - 1) for k, v in db_verdicts.items() if isinstance(k, tuple) and k[0] == "normal-mode" and v == v]
    lh_share = max(retx_share(r) for c in db for r in db[c]["lasthop"])
    c0s, c0n = DumbbellCase(0.0, True), DumbbellCase(0.0, False)

    def voice(case, v, key, scale=1.0):
        return np.mean([suite.udp_metrics(r["udp"]["voice"], 0.0, suite.DB_DURATION_S)[key] for r in db[case][v]]) * scale

    c2 = DumbbellCase(0.02, True)
    where = {k: sum(r["timeouts_where"][k] for r in db[c2]["lasthop"]) for k in ("recovery", "open", "after_timeout")}
    total = max(1, sum(where.values()))

    def tmo(v):
        return np.mean([r["timeouts"] for r in db[c2][v]])

    return NOTES.format(
        ns3_ratio=f"{ratio_of('ns3'):.2f}", lh_ratio=f"{ratio_of('lasthop'):.2f}",
        sack_gap=f"{min(gaps) * 100:.0f}–{max(gaps) * 100:.0f} %",
        hw_range=f"{max(hw) * 100:.1f} %" if hw else "—",
        dup_share=f"{min(map(retx_share, dup)) * 100:.0f}–{max(map(retx_share, dup)) * 100:.0f} %" if dup else "—",
        lh_worst_share=f"{lh_share * 100:.1f} %",
        dup_goodput=f"{min(r['goodput_after_warmup_bps'] for r in dup) / 1e6:.1f}–"
                    f"{max(r['goodput_after_warmup_bps'] for r in dup) / 1e6:.1f}" if dup else "—",
        voice_loss=f"{voice(c0n, 'ns3', 'loss_ratio', 100):.2f}", voice_loss_lh=f"{voice(c0n, 'lasthop', 'loss_ratio', 100):.2f}",
        n05=ndup.get(0.005, 0), n1=ndup.get(0.01, 0), n2=ndup.get(0.02, 0),
        normal_range=f"{max(normal) * 100:.1f} %" if normal else "—",
        c_lh=f"{gp(c0s, 'lasthop') / 1e6:.3f}", c_n3=f"{gp(c0s, 'ns3') / 1e6:.3f}",
        c_delay=f"{voice(c0s, 'lasthop', 'delay_mean_ms'):.1f} ms in lasthop, {voice(c0s, 'ns3', 'delay_mean_ms'):.1f} ms in ns-3",
        f_lh=f"{tmo('lasthop'):.1f}", f_n3=f"{tmo('ns3'):.1f}", f_hw=f"{tmo('half_window'):.1f}",
        f_ratio=f"{db_verdicts[c2][1]:.3f}",
        f_rec=f"{where['recovery'] / total:.0%}", f_open=f"{where['open'] / total:.0%}",
        f_after=f"{where['after_timeout'] / total:.0%}")


HOME_NOTES = """\
**E. Home UDP loss, delay and jitter: shown, not judged.** What the UDP flows deliver is the same to
{udp_tput} (judged rows); their losses are below {udp_loss} % in both. Mean one-way delays agree to
{udp_delay} ms per flow except where the FTP's queue differs (seed 1, note G, lowers ns-3's video
and chat-down delays). lasthop's mean |IPDV| is {jit_lo}–{jit_hi} × ns-3's, the higher values on the
three flows the AP sends (where they queue behind the FTP's segments): the cause is not isolated;
candidates are the DCF details of note F. Left as comparisons.

**F. Home: the WLAN models.** With the channel error-free and the rates fixed, what differs is in the
DCF: ns-3 sends a beacon every 102.4 ms at 1 Mb/s DSSS (about 1 % of the air time) and lasthop none;
ns-3's EIFS after a collision is 342 µs (SIFS + an 802.11b ACK at 1 Mb/s, 304 µs, + DIFS,
`WifiPhy::Configure80211b`, which 802.11g inherits) instead of the standard's 88 µs, so a collision
costs ns-3's contenders more idle time; ns-3 starts with association (the metrics start at 1 s).
None of this moves the judged rows by more than the CI.

**G. Home FTP, seed {g_seed}.** In {g_agree} of the 5 seeds ns-3's FTP goodput is within
{g_range} of lasthop's. In seed {g_seed} ns-3 ({g_n3} Mb/s against lasthop's {g_lh}) has a retransmission
timeout during fast recovery at about 151 s, and sets ssthresh from its pipe (note A): traced once for
seed 1, 9.5 segments where half the 127-segment window would be 64; per-ACK congestion avoidance then grows
the window by about half a segment per ~90 ms round trip, so refilling the ~200-segment path takes
the rest of the run. lasthop, like Linux, keeps the ssthresh of the recovery when a timeout strikes
inside it. The diagnostic ns-3 ½W gives {g_hw} Mb/s in that seed.
"""


def fill_home_notes(hm: dict) -> str:
    names = [n for n, _, _ in suite.HOME_UDP]

    def m(v, n, k):
        return np.mean([suite.udp_metrics(r["udp"][n], suite.HOME_METRIC_FROM_S, suite.HOME_DURATION_S)[k]
                        for r in hm[v]])

    tput = max(abs(m("lasthop", n, "throughput_rx_bps") / m("ns3", n, "throughput_rx_bps") - 1) for n in names)
    loss = max(max(m(v, n, "loss_ratio") for n in names) for v in ("lasthop", "ns3")) * 100
    delay = [abs(m("lasthop", n, "delay_mean_ms") - m("ns3", n, "delay_mean_ms")) for n in names]
    jit = [m("lasthop", n, "jitter_mean_ms") / m("ns3", n, "jitter_mean_ms") for n in names]
    g = [(i + 1, x["ftp"]["goodput_bps"], y["ftp"]["goodput_bps"], z["ftp"]["goodput_bps"])
         for i, (x, y, z) in enumerate(zip(hm["lasthop"], hm["ns3"], hm["half_window"]))]
    worst = max(g, key=lambda t: abs(t[1] / t[2] - 1))
    rest = [abs(t[1] / t[2] - 1) for t in g if t is not worst]
    return HOME_NOTES.format(
        udp_tput=f"{tput * 100:.2f} %", udp_loss=f"{loss:.2f}", udp_delay=f"{sorted(delay)[len(delay) // 2]:.1f}",
        jit_lo=f"{min(jit):.2f}", jit_hi=f"{max(jit):.2f}", g_seed=worst[0], g_agree=len(rest),
        g_range=f"{max(rest) * 100:.1f} %", g_n3=f"{worst[2] / 1e6:.1f}", g_lh=f"{worst[1] / 1e6:.1f}",
        g_hw=f"{worst[3] / 1e6:.1f}")


def git_describe() -> str:
    r = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "FIDELITY.md")
    ap.add_argument("--seeds", type=int, default=len(suite.SEEDS))
    args = ap.parse_args()
    ok, why = suite.ns3_importable()
    if not ok:
        sys.exit(f"fidelity: {why}")
    seeds = list(range(1, args.seeds + 1))
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.0f} s] {msg}", flush=True)

    log("dumbbell")
    db = suite.collect_dumbbell(seeds, log)
    log("home")
    hm = suite.collect_home(seeds, log)
    n_ns3 = sum(len(rows.get(v, [])) for rows in db.values() for v in ("ns3", "half_window")) + \
        len(hm["ns3"]) + len(hm["half_window"])
    db_lines, db_verdicts = dumbbell_sections(db)
    hm_lines, hm_verdicts = home_sections(hm)
    as_shipped = [v[0] for k, v in db_verdicts.items() if isinstance(k, DumbbellCase) and v[0] == v[0]]
    # The aligned comparisons: lossless with SACK against ns-3; lossy with SACK against ns-3 ½W
    # (note A closed); without SACK against ns-3's normal-mode seeds (note B set aside); home rows.
    aligned = ([db_verdicts[DumbbellCase(0.0, True)][0]]
               + [v[1] for k, v in db_verdicts.items() if isinstance(k, DumbbellCase) and k.sack and k.loss > 0]
               + [v for k, v in db_verdicts.items() if isinstance(k, tuple) and k[0] == "normal-mode" and v == v]
               + [r for r in hm_verdicts.values() if r == r])

    def within(xs):
        return sum(abs(r - 1) <= TOLERANCE for r in xs)
    cmd = ("`make fidelity`, i.e. `.venv/bin/python bench/fidelity.py --out FIDELITY.md`"
           if args.seeds == len(suite.SEEDS) else f"`.venv/bin/python bench/fidelity.py --seeds {args.seeds}`")
    head = [
        "# FIDELITY: lasthop against ns-3",
        "",
        f"Made by {cmd}: lasthop {lasthop.__version__} ({git_describe()}), ns3 {suite.ns3_version()} "
        f"(PyPI), Python {platform.python_version()}, {len(seeds)} seeds per row. The {n_ns3} ns-3 runs take about "
        "45 min on 2 shared cores and are cached in results/ns3-oracle-cache/ (then a rerun takes a minute); "
        "`.venv/bin/pytest -m ns3 tests/test_ns3_oracle.py` asserts the aligned rows.",
        "",
        f"**Aligned comparisons: {within(aligned)} of {len(aligned)} within ±{TOLERANCE * 100:.0f} %** (lossless "
        "dumbbell with SACK; lossy SACK rows against ns-3 with the RFC's ssthresh, note A; rows without SACK "
        "against the ns-3 seeds outside its duplicate-resending mode, note B; the home rows judged). "
        f"Against ns-3 as shipped, {within(as_shipped)} of {len(as_shipped)} dumbbell rows are within "
        f"±{TOLERANCE * 100:.0f} %; every row outside has a lettered note below.",
        "",
    ]
    text = "\n".join(head + SETTINGS.splitlines() + [""] + db_lines + [""] + hm_lines + [""]
                     + fill_notes(db, db_verdicts).splitlines() + [""] + fill_home_notes(hm).splitlines()) + "\n"
    args.out.write_text(text)
    # The 802.11n/ac/ax section (its ns-3 side kept in tests/data/wifi/): bench/fidelity_wifi.py.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fidelity_wifi

    fidelity_wifi.write_section(args.out, fidelity_wifi.section(), fidelity_wifi.OWNER)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
