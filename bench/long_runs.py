"""Memory and time of long runs (issue 26): `lasthop run home --set simulation.duration=D` with
its report, for D = 180 s, 1 h and 24 h, each a whole process as a user starts it, timed from
outside: wall and CPU (user + system) seconds and peak RSS from the kernel (wait4). Medians of
--repeats processes (the 24-hour case: --long-repeats).

Targets: peak RSS <= 300 MB at 1 h and <= 500 MB at 24 h — memory must not grow with simulated
time (a run written to a directory hands its interval rows and traces to files as it goes). Runs
longer than an hour use 1 s intervals: the scenario limits budget the per-interval series at
1 000 000 rows (24 h of 100 ms intervals for 6 flows would be 5.2 million; README, "Memory").

    python bench/long_runs.py [--append BENCHMARKS.md] [--repeats 3] [--long-repeats 1] [--durations 180s,3600s,86400s]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"3600s": "≤ 300 MB", "86400s": "≤ 500 MB"}


def once(args: list[str]) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS (MiB) of one `lasthop ARGS` process."""
    exe = Path(sys.executable).with_name("lasthop")
    t = time.perf_counter()
    p = subprocess.Popen([str(exe), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"lasthop {' '.join(args)} failed: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--append", type=Path, help="Append the table to this Markdown file.")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--long-repeats", type=int, default=1, help="Repetitions of runs longer than an hour.")
    ap.add_argument("--durations", default="180s,3600s,86400s")
    args = ap.parse_args()
    rows = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        for dur in args.durations.split(","):
            long = dur.endswith("s") and float(dur[:-1]) > 3600
            n = args.long_repeats if long else args.repeats
            sets = ["--set", f"simulation.duration={dur}", *(["--set", "simulation.interval=1s"] if long else [])]
            runs = [once(["run", "home", "-q", "--force", "--out", f"{d}/{dur}", *sets]) for _ in range(n)]
            wall, cpu, rss = (statistics.median(r[i] for r in runs) for i in range(3))
            size = sum(f.stat().st_size for f in Path(d, dur).rglob("*") if f.is_file()) / 2**20
            rows.append(f"| `lasthop run home {' '.join(sets)}` | {n} | {wall:.1f} | {cpu:.1f} | "
                        f"{max(r[2] for r in runs):.0f} | {size:.0f} | {TARGETS.get(dur, '')} |")
            print(rows[-1], flush=True)
    text = "\n".join([
        "", "## Long runs: memory against simulated time", "",
        f"Made by `python bench/long_runs.py` ({os.cpu_count()} cores, load average {load:.1f} at the start): each a whole "
        "process with its report, medians of the repetitions; peak RSS the largest of them; MiB written is the results "
        "directory.", "",
        "| command | runs | wall s | CPU s | peak RSS MiB | MiB written | target |", "|---|---|---|---|---|---|---|", *rows, ""])
    print(text)
    if args.append:
        with args.append.open("a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
