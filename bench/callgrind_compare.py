"""Compare the instructions two `lasthop-bench` builds execute, case by case, under callgrind.

    python bench/callgrind_compare.py BASE_BENCH_EXE HEAD_BENCH_EXE [--cases a,b] [--jobs 2]
        [--base-name 469d902] [--head-name this] [--append FILE]

Each argument is a `lasthop-bench` executable built at one revision (`cargo build --release -p
lasthop-bench`, copied out of target/). For every case, each build runs once as
`valgrind --tool=callgrind EXE --case CASE`: one process that builds the scenario and runs it
7 times (the bench's repetitions) and collects the results. The table gives the instructions
executed (callgrind's `Ir` total for that whole process) and their ratio. Unlike wall-clock time,
instruction counts do not depend on other work on the machine, so two builds can be compared on
a shared machine run by run; they do not see cache misses or branch mispredictions, so a ratio
of instructions is a guide to a ratio of times, not a substitute.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CASES = [
    "dumbbell-30s",
    "dumbbell-100s-10M",
    "dumbbell-100s-100M",
    "home-180s",
    "wlan-sat-1",
    "wlan-sat-4",
    "wlan-sat-16",
    "wlan-sat-50",
]


def instructions(exe: str, case: str) -> int:
    """Callgrind's instruction total for one `EXE --case CASE` process."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", exe, "--case", case],
            check=True,
            capture_output=True,
        )
        text = out.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.MULTILINE)
    if not m:
        raise RuntimeError(f"{exe} --case {case}: no instruction total in callgrind's output")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("head")
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--head-name", default="head")
    ap.add_argument("--cases", help="comma-separated subset of: " + ", ".join(CASES))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="callgrind runs at once (counts do not depend on it)")
    ap.add_argument("--append", type=Path, help="append the Markdown section to this file")
    a = ap.parse_args()
    cases = a.cases.split(",") if a.cases else CASES
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"--cases: unknown {', '.join(unknown)}; valid: {', '.join(CASES)}")
    jobs = [(c, w, exe) for c in cases for w, exe in (("base", a.base), ("head", a.head))]
    counts: dict[tuple[str, str], int] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = {pool.submit(instructions, exe, c): (c, w) for c, w, exe in jobs}
        for f in concurrent.futures.as_completed(futures):
            counts[futures[f]] = f.result()
            print(f"{futures[f][0]} {futures[f][1]}: {counts[futures[f]]}", file=sys.stderr)
    lines = [
        f"\n## Instruction counts against {a.base_name}\n",
        f"Made by `python bench/callgrind_compare.py BASE HEAD --base-name {a.base_name} --head-name {a.head_name}` "
        f"(two `lasthop-bench` builds): per case, the instructions callgrind counts for one `lasthop-bench --case "
        f"CASE` process (scenario set-up, 7 runs and their results), the same on any machine and under any load.\n",
        f"| case | {a.base_name} instructions | {a.head_name} instructions | ratio |",
        "|---|---|---|---|",
    ]
    for c in cases:
        b, h = counts[(c, "base")], counts[(c, "head")]
        lines.append(f"| {c} | {b:,} | {h:,} | {h / b:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.append:
        with a.append.open("a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
