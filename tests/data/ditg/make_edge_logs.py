#!/usr/bin/env python3
"""Writes the hand-made edge-case logs of this directory (Python's struct, independent of
lasthop's writer) and, when Debian's ITGDec is installed, its output for each of them.

    python3 tests/data/ditg/make_edge_logs.py

Each log probes one rule of ITGDec.cpp (2.8.1): duplicates, reordering, gaps and loss events;
loss before the first received packet; a single-record flow (its -c jitter is 0/0); ITGDec's
"error lines"; a flow across 00:00 (negative delay); flows that start late (zero lines first);
two flows that differ only in their source port (ITGDec keeps them apart in its summary but
mixes their -c temporary files, so no combined_stats is stored for that log); an empty log.
"""
import shutil
import struct
import subprocess
from pathlib import Path

REC = struct.Struct("<9I46s46sdd")
HERE = Path(__file__).resolve().parent


def rec(flow, seq, tx, rx, size=100, sport=40000, dport=8999, src="10.0.0.1", dst="10.0.0.2"):
    """tx, rx: (hour, minute, second)."""
    return REC.pack(flow, seq, sport, dport, tx[0], tx[1], rx[0], rx[1], size, src.encode(), dst.encode(), tx[2], rx[2])


def at(s, delay):
    """A record sent at 12:00:s and received delay seconds later (within the same minute)."""
    return (12, 0, s), (12, 0, round(s + delay, 6))


LOGS = {
    # flow 1: 1 2 4 3 3 6 7 9 10 10 12 (gap, late fill, duplicate, gaps, duplicate, gap);
    # flow 2 starts at sequence 5 (4 lost before it) and later; flow 3 has a single record;
    # two error lines (hour 25, second 60).
    "edge-seq": [
        rec(1, 1, *at(1.000000, 0.010000)),
        rec(1, 2, *at(1.100000, 0.012000)),
        rec(1, 4, *at(1.300000, 0.011000)),
        rec(1, 3, *at(1.200000, 0.125000), size=300),
        rec(1, 3, *at(1.200000, 0.130000)),
        rec(2, 5, *at(1.350000, 0.020000), sport=40001, dport=9000, size=1000),
        rec(1, 6, *at(1.500000, 0.010000)),
        rec(1, 7, *at(1.600000, 0.016000)),
        rec(25, 1, (25, 0, 1.0), (25, 0, 1.1)),
        rec(2, 6, *at(1.650000, 0.021000), sport=40001, dport=9000, size=1000),
        rec(1, 9, *at(1.800000, 0.009000)),
        rec(1, 10, *at(1.900000, 0.010000)),
        rec(3, 1, *at(1.950000, 0.005000), sport=40002, dport=9001, size=64),
        rec(1, 10, *at(1.900000, 0.011000)),
        rec(2, 8, *at(2.250000, 0.019000), sport=40001, dport=9000, size=1000),
        rec(1, 12, *at(2.300000, 0.010000)),
        rec(1, 13, (12, 0, 2.4), (12, 0, 60.0)),
    ],
    # One flow across 00:00 UTC: the last two records are received after midnight.
    "edge-midnight": [
        rec(1, 1, (23, 59, 59.800000), (23, 59, 59.810000)),
        rec(1, 2, (23, 59, 59.900000), (23, 59, 59.910000)),
        rec(1, 3, (23, 59, 59.990000), (0, 0, 0.000500)),
        rec(1, 4, (0, 0, 0.090000), (0, 0, 0.100000)),
    ],
    # Two flows with the same flowId and addresses, different source ports.
    "edge-ports": [
        rec(1, 1, *at(1.0, 0.010), sport=40000),
        rec(1, 1, *at(1.0, 0.020), sport=40001),
        rec(1, 2, *at(1.1, 0.011), sport=40000),
        rec(1, 3, *at(1.2, 0.030), sport=40001),
    ],
    "edge-one": [rec(7, 3, *at(5.5, 0.002500), size=1472)],
    "edge-empty": [],
}
NO_SERIES = {"edge-ports"}


def main():
    for name, records in LOGS.items():
        (HERE / f"{name}.log").write_bytes(b"".join(records))
    itgdec = shutil.which("ITGDec")
    if not itgdec:
        print("ITGDec not installed: wrote the logs only")
        return
    for name in LOGS:
        log = HERE / f"{name}.log"
        out = subprocess.run([itgdec, log.name], cwd=HERE, capture_output=True, text=True, check=True).stdout
        (HERE / f"{name}.log.itgdec.txt").write_text(out)
        if name not in NO_SERIES:
            subprocess.run([itgdec, log.name, "-c", "100", f"{name}.log.combined_100.dat"], cwd=HERE, capture_output=True, check=True)
            series = HERE / f"{name}.log.combined_100.dat"
            if series.stat().st_size > 1_000_000:  # a day of 100 ms lines: kept xz-compressed
                subprocess.run(["xz", "-9", "-f", series.name], cwd=HERE, check=True)


if __name__ == "__main__":
    main()
