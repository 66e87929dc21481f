"""Throughput of the emulator: iperf3 (Debian's) from one namespace to the other across
bench/emu_unconstrained.toml (a 100 Gb/s link, no delay), so the emulator — not the link model —
is the bottleneck. Prints iperf3's receiver rate and the emulator's counters.

    sudo .venv/bin/python bench/emu_throughput.py [--seconds 5] [--parallel 1] [--udp RATE] [--steer-receives]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from lasthop import _core


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--udp", default=None, help="UDP at this rate (iperf3 -u -b RATE), 1500-byte packets")
    ap.add_argument("--steer-receives", action="store_true", help="the emulator with receive steering (steering.rs)")
    args = ap.parse_args()
    scenario = Path(__file__).with_name("emu_unconstrained.toml")
    emu = _core.Emulation(scenario.read_text(), str(scenario), [], flows=False, timed=False, handle_signals=True,
                          steer_receives=args.steer_receives)
    try:
        ns = dict(emu.namespaces())
        server = subprocess.Popen(["ip", "netns", "exec", ns["b"], "iperf3", "-s", "-1", "-J"], stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        client = ["ip", "netns", "exec", ns["a"], "iperf3", "-c", "10.0.0.2", "-t", str(args.seconds), "-P", str(args.parallel), "-J"]
        if args.udp:
            client += ["-u", "-b", args.udp, "-l", "1472"]
        out = json.loads(subprocess.run(client, capture_output=True, text=True, check=True).stdout)
        server.wait(timeout=30)
    finally:
        _, _, emulator, *_ = emu.finish()
    end = out["end"]
    rx = end.get("sum_received") or end.get("sum")
    em = json.loads(emulator)
    print(f"iperf3 {'UDP ' + args.udp if args.udp else 'TCP'} x{args.parallel}, {args.seconds} s: "
          f"{rx['bits_per_second'] / 1e6:.1f} Mb/s received"
          + (f", loss {rx.get('lost_percent', 0):.2f} %" if args.udp else ""))
    print(f"emulator: {em['packets_read']} packets read ({em['packets_read'] / args.seconds:.0f}/s), "
          f"{em['packets_written']} written, lateness p50 {em['release_lateness_us']['p50']} µs "
          f"p99 {em['release_lateness_us']['p99']} µs, realtime {em['realtime_scheduling']}, steering {em['receive_steering']}")


if __name__ == "__main__":
    main()
