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


def process_times(variants: list[list[str]], repeats: int) -> list[float]:
    """Median wall time of each variant's whole `lasthop run` process; the variants take turns
    in each round, so that a shared machine's load drifting during the benchmark falls on all."""
    times: list[list[float]] = [[] for _ in variants]
    for _ in range(repeats):
        for i, args in enumerate(variants):
            with tempfile.TemporaryDirectory() as d:
                t = time.perf_counter()
                subprocess.run([lasthop(), "run", *args, "--out", d, "-q", "--force"], check=True, stdout=subprocess.DEVNULL)
                times[i].append(time.perf_counter() - t)
    return [statistics.median(t) for t in times]


def option_costs(scenario: str, repeats: int) -> dict[str, tuple[float, float, float]]:
    """Per option: median events per second, median wall time, and the median over rounds of
    legacy's events per second over the option's in the same round (paired: each round runs
    every option once, one after another)."""
    import lasthop

    rates: dict[str, list[float]] = {o: [] for o in OPTIONS}
    walls: dict[str, list[float]] = {o: [] for o in OPTIONS}
    for _ in range(repeats):
        for option in OPTIONS:
            r = lasthop.run(scenario, **{"wlans.home.ap_queueing": option})
            rates[option].append(r.summary["wall_clock"]["events_per_s"])
            walls[option].append(r.summary["wall_clock"]["wall_time_s"])
    return {o: (statistics.median(rates[o]), statistics.median(walls[o]),
                statistics.median(legacy / rate for legacy, rate in zip(rates["legacy"], rates[o]))) for o in OPTIONS}


def section(repeats: int) -> str:
    with_report, without = process_times([["rrul"], ["rrul", "--no-report"]], repeats)
    lines = [BEGIN, "## The AP's queue options (issue 28)", "",
             f"Made by `.venv/bin/python bench/queue_speed.py --repeats {repeats}` on {os.cpu_count()} cores "
             f"(load average {os.getloadavg()[0]:.2f} at the end); medians of {repeats}, the variants "
             "taking turns in each round.", "",
             f"- `lasthop run rrul` (70 s of RRUL across an 802.11ac hop), the whole process: **{with_report:.2f} s** with "
             f"report.html, {without:.2f} s with `--no-report` (target: 2 s).", "",
             "Cost per simulated event of each `ap_queueing` option against `legacy` (events per second, "
             "the run's wall time beside it; the options change what is carried, so runs are compared per event; "
             "the cost is the median of each round's ratio):", "",
             "| scenario | option | events/s | wall s | cost per event / legacy's |", "|---|---|---:|---:|---:|"]
    for scenario in ("home-ax", "rrul"):
        for option, (rate, wall, cost) in option_costs(scenario, repeats).items():
            lines.append(f"| {scenario} | {option} | {rate / 1e6:.2f} M | {wall:.2f} | {cost:.2f} |")
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
