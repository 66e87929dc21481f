"""What a user waits for (issue 14): `lasthop --help`, `lasthop run` of every bundled scenario
with and without its report, and a one-hour home run, each a whole process as a user starts
it, timed from outside; medians of several repetitions, peak RSS from the kernel (wait4).

Targets: `lasthop --help` <= 0.3 s; `lasthop run home` <= 1.5 s; the report <= 20 % of any run
(the run with its report against the same run with --no-report); a one-hour home run's report
<= 5 s and <= 500 MB (`lasthop report DIR` alone, reading the run back from disk).

    python bench/report_speed.py [--append BENCHMARKS.md] [--repeats 5] [--long-repeats 3]
    python bench/report_speed.py --lasthop "env PYTHONPATH=/tmp/old/python python -m lasthop" --label before
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIOS = ["dumbbell", "home", "hetperf", "saturation", "wcdma"]
LONG = ["--set", "simulation.duration=3600s"]


def _default_command() -> list[str]:
    script = Path(sys.executable).with_name("lasthop")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lasthop"]


class Bench:
    def __init__(self, command: list[str]):
        self.command = command

    def once(self, args: list[str]) -> tuple[float, float]:
        """Wall seconds and peak RSS (MiB) of one `lasthop ARGS` process."""
        t = time.perf_counter()
        p = subprocess.Popen([*self.command, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise SystemExit(f"lasthop {' '.join(args)} failed ({p.returncode}): {p.stderr.read().decode()[-2000:]}")
        p.stderr.close()
        return wall, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux

    def median(self, args: list[str], n: int) -> dict:
        runs = [self.once(args) for _ in range(n)]
        walls = [w for w, _ in runs]
        return {"median": statistics.median(walls), "min": min(walls), "max": max(walls),
                "rss": max(r for _, r in runs), "n": n}


def _cell(m: dict) -> str:
    return f"{m['median']:.2f} ({m['min']:.2f}–{m['max']:.2f})"


def measure(bench: Bench, repeats: int, long_repeats: int, work: Path) -> list[str]:
    rows = []
    m = bench.median(["--help"], max(repeats, 9))
    rows.append(f"| `lasthop --help` | {_cell(m)} | {m['rss']:.0f} | ≤ 0.3 s |")
    shares = []
    for sc in SCENARIOS:
        out = work / sc
        with_report = bench.median(["run", sc, "--out", str(out), "--force", "-q"], repeats)
        without = bench.median(["run", sc, "--out", str(out), "--force", "-q", "--no-report"], repeats)
        share = max(0.0, with_report["median"] - without["median"]) / with_report["median"]
        shares.append(share)
        target = "≤ 1.5 s" if sc == "home" else ""
        rows.append(f"| `lasthop run {sc}` | {_cell(with_report)} | {with_report['rss']:.0f} | {target} |")
        rows.append(f"| `lasthop run {sc} --no-report` (report's share of the run: **{100 * share:.0f} %**) | "
                    f"{_cell(without)} | {without['rss']:.0f} | ≤ 20 % |")
    out = work / "home-1h"
    long_with = bench.median(["run", "home", *LONG, "--out", str(out), "--force", "-q"], long_repeats)
    long_without = bench.median(["run", "home", *LONG, "--out", str(out) + "-nr", "--force", "-q", "--no-report"], long_repeats)
    shutil.rmtree(str(out) + "-nr", ignore_errors=True)
    report_alone = bench.median(["report", str(out)], long_repeats)
    share = max(0.0, long_with["median"] - long_without["median"]) / long_with["median"]
    rows.append(f"| `lasthop run home --set simulation.duration=3600s` | {_cell(long_with)} | {long_with['rss']:.0f} | |")
    rows.append(f"| the same with `--no-report` (report phase {long_with['median'] - long_without['median']:.2f} s, "
                f"**{100 * share:.0f} %** of the run) | {_cell(long_without)} | {long_without['rss']:.0f} | ≤ 5 s, ≤ 20 % |")
    rows.append(f"| `lasthop report` of that one-hour run (reads it back) | {_cell(report_alone)} | {report_alone['rss']:.0f} | "
                f"≤ 5 s, ≤ 500 MB |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--append", type=Path, help="Append the table to this Markdown file.")
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of each short case (median reported).")
    ap.add_argument("--long-repeats", type=int, default=3, help="Repetitions of each one-hour case.")
    ap.add_argument("--lasthop", help="The command to measure (default: this environment's lasthop).")
    ap.add_argument("--label", default="", help="Names the measured version in the heading (e.g. before).")
    args = ap.parse_args()
    bench = Bench(shlex.split(args.lasthop) if args.lasthop else _default_command())
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        rows = measure(bench, args.repeats, args.long_repeats, Path(d))
    load_after = os.getloadavg()[0]
    label = f" ({args.label})" if args.label else ""
    lines = [
        "",
        f"## Reports and start-up{label}",
        "",
        f"Made by `make bench` (`python bench/report_speed.py`): each case a whole `lasthop` process timed from outside, "
        f"median of {args.repeats} (one-hour cases: {args.long_repeats}; `--help`: {max(args.repeats, 9)}), min–max in "
        f"brackets; peak RSS the largest of the repetitions; {os.cpu_count()} cores, load average {load_before:.1f} before "
        f"and {load_after:.1f} after (other work on the machine slows every row).",
        "",
        "| command | wall s, median (min–max) | peak RSS MiB | target |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with args.append.open("a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
