"""Compare the simulator's speed at two revisions on the same machine, alternating.

    python bench/compare_revisions.py BASE_BENCH_EXE HEAD_BENCH_EXE [--rounds 6] [--append FILE]

Each argument is a `lasthop-bench` executable built at one revision (`cargo build --release -p
lasthop-bench`, copied out of target/). Every round runs every case once per executable, the two
in alternating order, each run in its own process that times 7 repetitions; so load from other
work on a shared machine falls on both revisions alike. The table gives, per case, the median of
all repetitions of each revision and their ratio, and the ratio of the minima (the least disturbed
runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CASES = [
    "dumbbell-30s",
    "dumbbell-100s-10M",
    "dumbbell-100s-100M",
    "dumbbell-1000s-10M",
    "home-180s",
    "wlan-sat-1",
    "wlan-sat-4",
    "wlan-sat-16",
    "wlan-sat-50",
]


def run_case(exe: str, case: str) -> tuple[list[float], int]:
    out = subprocess.run([exe, "--case", case], check=True, capture_output=True, text=True).stdout
    v = json.loads(out)
    return v["walls"], v["events"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("head")
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--head-name", default="head")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--append", type=Path)
    ap.add_argument("--cases", help="comma-separated subset of: " + ", ".join(CASES))
    a = ap.parse_args()
    cases = a.cases.split(",") if a.cases else CASES
    walls = {(c, w): [] for c in cases for w in ("base", "head")}
    events = {}
    load_before = os.getloadavg()[0]
    for r in range(a.rounds):
        for case in cases:
            order = [("base", a.base), ("head", a.head)]
            if r % 2:
                order.reverse()
            for which, exe in order:
                w, ev = run_case(exe, case)
                walls[(case, which)] += w
                events[(case, which)] = ev
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()[0]
    lines = [
        f"\n## Speed of this revision against {a.base_name}\n",
        f"Made by `python bench/compare_revisions.py BASE HEAD --rounds {a.rounds}` (two `lasthop-bench` builds, "
        f"{a.base_name} and {a.head_name}): {a.rounds} rounds, each running every case once per build in alternating "
        f"order, 7 timed repetitions per run, so {7 * a.rounds} timings per case and build; load average "
        f"{load_before:.2f} before, {load_after:.2f} after.\n",
        f"| case | events ({a.base_name} / {a.head_name}) | {a.base_name} ms, median (min) | {a.head_name} ms, median (min) | ratio of medians | ratio of minima |",
        "|---|---|---|---|---|---|",
    ]
    for case in cases:
        b, h = walls[(case, "base")], walls[(case, "head")]
        mb, mh = statistics.median(b), statistics.median(h)
        eb, eh = events[(case, "base")], events[(case, "head")]
        lines.append(
            f"| {case} | {eb} / {eh} | {mb * 1e3:.1f} ({min(b) * 1e3:.1f}) | {mh * 1e3:.1f} ({min(h) * 1e3:.1f}) "
            f"| {mh / mb:.3f} | {min(h) / min(b):.3f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if a.append:
        with a.append.open("a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
