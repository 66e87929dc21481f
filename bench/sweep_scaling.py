"""Sweep throughput with 1 and 2 local workers (issue 4's target: >= 1.8x on 2 cores for runs
of about 1 s). Each configuration runs a fresh 12-run sweep 3 times; medians are reported."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import lasthop

RUNS = 12
REPEATS = 3
# About 1 s of wall time per run on this machine: the dumbbell with a 100 Mb/s bottleneck.
SCENARIO = {"links.bottleneck.rate": "100Mbps", "links.access.rate": "1Gbps", "simulation.duration": "450s",
            "probes.queues": "[]", "probes.tcp": "[]"}


def one(workers: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        lasthop.sweep("dumbbell", {"links.bottleneck.loss": ["0"]}, seeds=RUNS, out=Path(d), workers=workers, **SCENARIO)
        wall = time.perf_counter() - t
    return RUNS / wall, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", type=Path)
    args = ap.parse_args()
    t = time.perf_counter()
    lasthop.run("dumbbell", **SCENARIO)
    single = time.perf_counter() - t
    rates = {w: [one(w)[0] for _ in range(REPEATS)] for w in (1, 2)}
    med = {w: statistics.median(v) for w, v in rates.items()}
    lines = [
        "",
        "## Sweep scaling",
        "",
        f"Made by `make bench` (`python bench/sweep_scaling.py`): {RUNS} runs of the dumbbell with a 100 Mb/s "
        f"bottleneck for 450 s (one run alone: {single:.2f} s), local worker processes, fresh cache each time, "
        f"{REPEATS} repetitions, medians; {os.cpu_count()} cores.",
        "",
        "| workers | runs/s (median) | all repetitions |",
        "|---|---|---|",
        *[f"| {w} | {med[w]:.3f} | {', '.join(f'{x:.3f}' for x in v)} |" for w, v in rates.items()],
        "",
        f"Speed-up with 2 workers: **{med[2] / med[1]:.2f}x** (target ≥ 1.8x).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with args.append.open("a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
