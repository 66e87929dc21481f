"""What the Linux AP's queue options cost (issue 28), into BENCHMARKS.md:

1. `lasthop run rrul` as a user runs it, the whole process timed from outside (report written;
   and with --no-report), median of --repeats processes;
2. the simulator's cost per event under each `ap_queueing` option against "legacy", on
   `home-ax` and on `rrul`: the options change what is carried (airtime fairness moves 3x the
   laptop's packets on home-ax), so wall time per run is no measure of what they cost; wall time
   per processed event is (`wall_clock.events_per_s`), median of --repeats runs in this process.

    .venv/bin/python bench/queue_speed.py [--repeats 5] [--md BENCHMARKS.md]
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

from md_sections import markers, write_section

ROOT = Path(__file__).resolve().parent.parent
OWNER = "bench/queue_speed.py"
BEGIN, END = markers(OWNER)
OPTIONS = ["legacy", "fq_codel", "airtime", "aql"]


def lasthop() -> str:
    return str(Path(sys.executable).with_name("lasthop"))


def process_time(args: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            subprocess.run([lasthop(), "run", *args, "--out", d, "-q", "--force"], check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def events_per_s(scenario: str, option: str, repeats: int) -> tuple[float, float]:
    import lasthop

    rates, walls = [], []
    for _ in range(repeats):
        r = lasthop.run(scenario, **{"wlans.home.ap_queueing": option})
        rates.append(r.summary["wall_clock"]["events_per_s"])
        walls.append(r.summary["wall_clock"]["wall_time_s"])
    return statistics.median(rates), statistics.median(walls)


def section(repeats: int) -> str:
    with_report = process_time(["rrul"], repeats)
    without = process_time(["rrul", "--no-report"], repeats)
    lines = [BEGIN, "## The AP's queue options (issue 28)", "",
             f"Made by `.venv/bin/python bench/queue_speed.py --repeats {repeats}` on {os.cpu_count()} cores "
             f"(load average {os.getloadavg()[0]:.2f} at the end); medians of {repeats}.", "",
             f"- `lasthop run rrul` (70 s of RRUL across an 802.11ac hop), the whole process: **{with_report:.2f} s** with "
             f"report.html, {without:.2f} s with `--no-report` (target: 2 s).", "",
             "Cost per simulated event of each `ap_queueing` option against `legacy` (events per second, "
             "the run's wall time beside it; the options change what is carried, so runs are compared per event):", "",
             "| scenario | option | events/s | wall s | cost per event / legacy's |", "|---|---|---:|---:|---:|"]
    for scenario in ("home-ax", "rrul"):
        base = None
        for option in OPTIONS:
            rate, wall = events_per_s(scenario, option, repeats)
            base = base or rate
            lines.append(f"| {scenario} | {option} | {rate / 1e6:.2f} M | {wall:.2f} | {base / rate:.2f} |")
    lines += ["", END]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--md", type=Path, default=ROOT / "BENCHMARKS.md")
    ap.add_argument("--print", action="store_true")
    args = ap.parse_args()
    text = section(args.repeats)
    if args.print:
        sys.stdout.write(text)
    else:
        write_section(args.md, text, OWNER)
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
