"""What a user waits for (issue 14): `lasthop --help`, `lasthop run` of every bundled scenario
with and without its report, and a one-hour home run, each a whole process as a user starts
it, timed from outside; medians of several repetitions, peak RSS from the kernel (wait4).

Targets: `lasthop --help` <= 0.3 s; `lasthop run home` <= 1.5 s; the report <= 20 % of any run
(the run with its report against the same run with --no-report); a one-hour home run's report
<= 5 s and <= 500 MB (`lasthop report DIR` alone, reading the run back from disk).

With --baseline, another lasthop (an older checkout) is measured in the same repetitions,
alternating with this one, so both see the same load on the machine.

--phases SCENARIO says where one `lasthop run SCENARIO` spends its time instead: each phase timed
inside a fresh process as the command runs it (imports, simulation, writing, the report),
medians of --repeats processes.

    python bench/report_speed.py [--append BENCHMARKS.md] [--repeats 5] [--long-repeats 3]
    python bench/report_speed.py --baseline "env PYTHONPATH=/tmp/old/python python -m lasthop" --baseline-label 469d902
    python bench/report_speed.py --phases home [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shlex
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


def once(command: list[str], args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `lasthop ARGS` process."""
    t = time.perf_counter()
    p = subprocess.Popen([*command, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = code
    if code != 0:
        raise SystemExit(f"{' '.join(command)} {' '.join(args)} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux


def measure(cases: list[tuple[list[str], list[str]]], n: int) -> list[dict]:
    """`n` repetitions of each (command, args), alternating; per case the median, min, max and
    peak RSS."""
    runs: list[list[tuple[float, float]]] = [[] for _ in cases]
    for _ in range(n):
        for i, (command, args) in enumerate(cases):
            runs[i].append(once(command, args))
    out = []
    for r in runs:
        walls = [w for w, _ in r]
        out.append({"median": statistics.median(walls), "min": min(walls), "max": max(walls), "rss": max(m for _, m in r)})
    return out


def _cell(m: dict) -> str:
    return f"{m['median']:.2f} ({m['min']:.2f}–{m['max']:.2f})"


def _cells(ms: list[dict]) -> str:
    return " | ".join(f"{_cell(m)} | {m['rss']:.0f}" for m in ms)


def table(commands: list[list[str]], repeats: int, long_repeats: int, work: Path) -> list[str]:
    def each(args: list[str], n: int, out: str | None = None, suffix: str = "") -> list[dict]:
        """`lasthop ARGS` for every command, each writing its own directory (`--out`)."""
        cases = []
        for i, c in enumerate(commands):
            extra = ["--out", f"{out}-{i}{suffix}"] if out else []
            cases.append((c, [*args, *extra]))
        return measure(cases, n)

    rows = [f"| `lasthop --help` | {_cells(each(['--help'], max(repeats, 9)))} | ≤ 0.3 s |"]
    for sc in SCENARIOS:
        with_report = each(["run", sc, "--force", "-q"], repeats, str(work / sc))
        without = each(["run", sc, "--force", "-q", "--no-report"], repeats, str(work / sc), "-nr")
        shares = " / ".join(f"{100 * max(0.0, w['median'] - n['median']) / w['median']:.0f} %" for w, n in zip(with_report, without))
        rows.append(f"| `lasthop run {sc}` | {_cells(with_report)} | {'≤ 1.5 s' if sc == 'home' else ''} |")
        rows.append(f"| `lasthop run {sc} --no-report` (the report's share of the run: **{shares}**) | {_cells(without)} | ≤ 20 % |")
    long_out = str(work / "home-1h")
    long_with = each(["run", "home", *LONG, "--force", "-q"], long_repeats, long_out)
    long_without = each(["run", "home", *LONG, "--force", "-q", "--no-report"], long_repeats, long_out, "-nr")
    report_alone = measure([(c, ["report", f"{long_out}-{i}"]) for i, c in enumerate(commands)], long_repeats)
    phases = " / ".join(f"{w['median'] - n['median']:.1f} s, {100 * max(0.0, w['median'] - n['median']) / w['median']:.0f} %"
                        for w, n in zip(long_with, long_without))
    rows.append(f"| `lasthop run home --set simulation.duration=3600s` | {_cells(long_with)} | |")
    rows.append(f"| the same with `--no-report` (the report phase: **{phases}** of the run) | {_cells(long_without)} | ≤ 5 s, ≤ 20 % |")
    rows.append(f"| `lasthop report` of that one-hour run (reads it back) | {_cells(report_alone)} | ≤ 5 s, ≤ 500 MB |")
    return rows


# One `lasthop run` in the order the command runs it, each phase timed.
PHASES = r"""
import sys, time
t0 = time.perf_counter()
marks = []
def mark(what):
    marks.append((what, time.perf_counter()))
import lasthop.cli
mark("typer, rich, lasthop.cli (after the interpreter's own ~0.03 s)")
from lasthop.runner import as_scenario, run
sc = as_scenario(sys.argv[1])
import numpy, pyarrow
mark("numpy, pyarrow")
res = run(sc)
mark("simulation, its tables to Arrow")
res.write(sys.argv[2], force=True)
mark("writing summary.json and Parquet")
from lasthop.report import run_report
from pathlib import Path
mark("lasthop.report's import")
run_report(Path(sys.argv[2]), results=res)
mark("the report: its figures as data for the browser, report.html")
prev = t0
for what, t in marks:
    print(f"{t - prev:.4f}\t{what}")
    prev = t
"""


def phases(scenario: str, repeats: int, work: Path) -> list[str]:
    """Median seconds of each phase of `lasthop run SCENARIO` over `repeats` fresh processes."""
    runs: dict[str, list[float]] = {}
    for i in range(repeats):
        out = subprocess.run([sys.executable, "-c", PHASES, scenario, str(work / f"phases-{i}")], capture_output=True,
                             text=True, check=True).stdout
        for line in out.strip().splitlines():
            seconds, what = line.split("\t", 1)
            runs.setdefault(what, []).append(float(seconds))
    total = sum(statistics.median(v) for v in runs.values())
    rows = [f"| {what} | {statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f}) | {100 * statistics.median(v) / total:.0f} % |"
            for what, v in runs.items()]
    return [f"| phase of `lasthop run {scenario}` (in-process) | s, median (min–max) | share |", "|---|---|---|", *rows,
            f"| sum of the medians | {total:.3f} | |"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--append", type=Path, help="Append the table to this Markdown file.")
    ap.add_argument("--repeats", type=int, default=5, help="Repetitions of each short case (median reported).")
    ap.add_argument("--long-repeats", type=int, default=3, help="Repetitions of each one-hour case.")
    ap.add_argument("--baseline", help="Another lasthop command to measure alongside (e.g. an older checkout).")
    ap.add_argument("--baseline-label", default="baseline", help="Its name in the table's heading.")
    ap.add_argument("--phases", metavar="SCENARIO", help="Time each phase of `lasthop run SCENARIO` instead.")
    args = ap.parse_args()
    if args.phases:
        with tempfile.TemporaryDirectory() as d:
            load = os.getloadavg()[0]
            text = "\n".join(["", *phases(args.phases, args.repeats, Path(d)), "",
                              f"(`python bench/report_speed.py --phases {args.phases} --repeats {args.repeats}`; "
                              f"{os.cpu_count()} cores, load average {load:.1f})", ""])
        print(text)
        if args.append:
            with args.append.open("a") as f:
                f.write(text)
        return
    commands = [_default_command()]
    labels = ["this version"]
    if args.baseline:
        commands.insert(0, shlex.split(args.baseline))
        labels.insert(0, args.baseline_label)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        rows = table(commands, args.repeats, args.long_repeats, Path(d))
    load_after = os.getloadavg()[0]
    head = " | ".join(f"{lab}: wall s, median (min–max) | {lab}: peak RSS MiB" for lab in labels)
    lines = [
        "",
        "## Reports and start-up",
        "",
        f"Made by `make bench` (`python bench/report_speed.py`): each case a whole `lasthop` process timed from outside, "
        f"median of {args.repeats} (one-hour cases: {args.long_repeats}; `--help`: {max(args.repeats, 9)}), min–max in "
        f"brackets; peak RSS the largest of the repetitions; {os.cpu_count()} cores, load average {load_before:.1f} before "
        f"and {load_after:.1f} after (other work on the machine slows every row)."
        + (f" {labels[0]} and {labels[1]} are measured in the same repetitions, one after the other." if args.baseline else ""),
        "",
        f"| command | {head} | target |",
        "|---|" + "---|---|" * len(commands) + "---|",
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
