#!/usr/bin/env python3
"""lasthop gen's rate accuracy and peak rate on loopback (issue 12's targets).

    .venv/bin/python bench/gen_rate.py [--runs 3] [--seconds 5] [--peak-seconds 3]

- Accuracy: one CBR flow of 64-byte UDP payloads at 100, 1 000 and 10 000 pkt/s for
  `--seconds`: the share of the requested packets (rate × duration) the receiver got, and at
  10 kpkt/s the 99th percentile of |IDT − 100 µs| over the send times the sender stamped
  (one clock read per sendmmsg batch, so two packets sent together count as a 100 µs error).
  Targets: ≥ 99.9 % at every rate, p99 ≤ 10 µs.
- Peak: a CBR flow asking for 1 Mpkt/s of 64-byte payloads for `--peak-seconds`, both ends
  logging every packet: the packet rate actually sent, and the receiver's loss. Target: ≥ 600 k
  pkt/s with < 0.1 % loss.

Prints the median (and the range) of `--runs` runs of each, and a Markdown table to paste into
BENCHMARKS.md. The machine's load average is printed too: these are wall-clock measurements.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from lasthop import gen


def receiver(realtime: bool = False) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([sys.executable, "-m", "lasthop", "gen", "recv", "--listen", "127.0.0.1:0", *(["--realtime"] if realtime else [])],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r":(\d+)", p.stderr.readline())
    assert m, "the receiver did not start"
    return p, f"127.0.0.1:{m.group(1)}"


def flows(rate: float) -> str:
    return f'[[flows]]\nname = "f"\napp = {{ type = "cbr", size = "64B", interval = "{round(1e9 / rate)}ns" }}\n'


def one(to: str, rate: float, seconds: float, packets: bool, realtime: bool) -> dict:
    res = gen.send(to, text=flows(rate), duration=seconds, packets=packets, loss_timeout=1.0, realtime=realtime)
    f = res.flow("f")
    requested = round(rate * seconds)
    out = {
        "received_share": f["received_packets"] / requested,
        # The rate achieved: a sender that cannot keep up is late and sends for longer.
        "sent_rate": f["sent_packets"] / max(res.summary["measure"]["flows"][0]["send_span_s"] or 0.0, seconds),
        "loss": (f["sent_packets"] - f["received_packets"]) / max(f["sent_packets"], 1),
    }
    if packets:
        sent = np.sort(res.trace("packets/f")["sent_s"].to_numpy())
        err = np.abs(np.diff(sent) - 1.0 / rate) * 1e6
        out["idt_p99_err_us"] = float(np.percentile(err, 99))
        out["idt_within_10us"] = float((err <= 10).mean())
        out["late_mean_us"] = res.summary["measure"]["flows"][0]["send_late_mean_us"]
    return out


def med(xs: list[float]) -> str:
    return f"{statistics.median(xs):.4g} ({min(xs):.4g}–{max(xs):.4g})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--peak-seconds", type=float, default=3.0)
    ap.add_argument("--realtime", action="store_true", help="sender and receiver at SCHED_FIFO priority (gen send/recv --realtime)")
    a = ap.parse_args()
    p, to = receiver(a.realtime)
    try:
        print(f"load average before: {os.getloadavg()}")
        rows = []
        for rate in (100, 1000, 10_000):
            runs = [one(to, rate, a.seconds, packets=rate == 10_000, realtime=a.realtime) for _ in range(a.runs)]
            share = [100 * r["received_share"] for r in runs]
            idt = [r["idt_p99_err_us"] for r in runs if "idt_p99_err_us" in r]
            rows.append((f"{rate} pkt/s, % of requested received", med(share)))
            if idt:
                rows.append((f"{rate} pkt/s, IDT p99 error µs", med(idt)))
                rows.append((f"{rate} pkt/s, IDTs within 10 µs of nominal, %", med([100 * r["idt_within_10us"] for r in runs])))
                rows.append((f"{rate} pkt/s, mean lateness after the deadline, µs", med([r["late_mean_us"] for r in runs])))
            print(rows[-1], flush=True)
        peak = [one(to, 1_000_000, a.peak_seconds, packets=False, realtime=a.realtime) for _ in range(a.runs)]
        rows.append(("peak 64-B UDP, pkt/s sent (both logs)", med([r["sent_rate"] for r in peak])))
        rows.append(("peak 64-B UDP, receive loss %", med([100 * r["loss"] for r in peak])))
        print(f"load average after: {os.getloadavg()}")
        print(f"\n| measure ({a.runs} runs: median (min–max){', --realtime' if a.realtime else ''}) | value |\n|---|---|")
        for k, v in rows:
            print(f"| {k} | {v} |")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


if __name__ == "__main__":
    main()
