"""Fuzzing the inputs other than scenarios (issue 24): D-ITG logs, results directories, D-ITG
traffic files and the receiver's control protocol, with bench/fuzz_inputs.py's cases (see its
docstring for what a case of each surface is). A fixed set of seeds, so CI explores the same
cases every time; the standalone run (FUZZING.md) explores thousands more.

The promise checked: every case ends in a result or lasthop's own clear error (for the receiver:
an answer, or the connection closed by a limit or a refusal, and afterwards a real session
served whole and a clean stop) — never a traceback, a panic, a hang, a memory blow-up or a
crash. Each file case runs in a lasthop.pool worker (20 s, 4 GiB of address space), so a hang or
a crash fails the test instead of stopping the suite.
"""

import sys
from collections import Counter

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import fuzz_inputs as fz  # noqa: E402

SEEDS = range(7_000_000, 7_000_150)  # 150 cases a surface: ~21 s on one worker in all


@pytest.mark.parametrize("surface", [s for s in fz.SURFACES])
def test_every_case_ends_in_a_result_or_a_clear_error(surface):
    # One worker: the real-time emulator tests run beside this file on the same two cores, and
    # every extra runnable process slows the real TCP stacks they measure.
    rows = fz.run_surface(surface, list(SEEDS), workers=1, timeout_s=20.0, memory=4 << 30)
    outcomes = Counter(o for _, o, _ in rows)
    failed = [(seed, o, d) for seed, o, d in rows if o in fz.FAILURES or o == "garbled"]
    assert not failed, "\n".join(f"{o} (seed {seed}): {d[:500]}\n  .venv/bin/python bench/fuzz_inputs.py "
                                 f"--surface {surface} --replay {seed}" for seed, o, d in failed[:10])
    # The cases reach both sides of the reader: some give results, some are refused. A fuzzer
    # whose every case is refused at the door tests nothing.
    ok, refused = ("answered", "refused") if surface == "receiver" else ("result", "clear_error")
    assert outcomes[ok] >= 15 and outcomes[refused] >= 2, outcomes
