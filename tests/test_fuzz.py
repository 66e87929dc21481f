"""Fuzzing the Python face with hypothesis: ``lasthop.run`` on a bundled scenario with generated
``--set`` overrides — paths drawn from the scenarios' own fields (plus misspelt ones), values
mutated: empty, huge, negative, NaN, infinities, unicode, NUL, wrong types, random numbers with
random units, the field's own unit at another magnitude.

The promise checked (issue 10): every call returns results or raises lasthop's own errors —
ScenarioError with a clear message (bench/fuzz_scenarios.py's ``unclear`` rule) or
SimulationError (the watchdog, or RunTimeout: still advancing at the wall-clock limit) — and
answers within that limit plus the pool's grace; nothing else: no other exception, no panic, no
hang, no memory blow-up. Each case runs in a lasthop.pool worker (2 s simulated at most, a 5 s
wall-clock limit, 2 GB of address space), so a hang or a crash fails the test instead of stopping
the suite. 200 examples, derandomized, so CI explores the same ones every time; the standalone
fuzzer (bench/fuzz_scenarios.py, FUZZING.md) explores more.
"""

import re
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is in the dev extra: pip install -e '.[dev]'")
from hypothesis import HealthCheck, event, given, settings, strategies as st  # noqa: E402

from lasthop import _core  # noqa: E402
from lasthop.pool import LocalPool, TaskFailed  # noqa: E402

from conftest import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import fuzz_scenarios as fz  # noqa: E402

WALL_LIMIT_S = 5.0
NAMES = list(_core.bundled_names())
ALLOWED = {"ran", "accepted", "rejected_clear", "simulation_error", "slow"}


@pytest.fixture(scope="module")
def pool():
    with LocalPool(1, timeout_s=WALL_LIMIT_S, memory=2 << 30) as p:
        yield p


def _mutations():
    return st.one_of(
        st.sampled_from(fz.VALUES),
        st.builds(lambda n, u: f"{n}{u}", st.sampled_from(fz.NUMBERS + fz.MAGNITUDES), st.sampled_from(fz.UNITS)),
        st.text(max_size=12),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
    )


def _unit(value) -> str | None:
    """The unit of a numeric field's value ("24ms" -> "ms", 7 -> ""), None if not numeric."""
    m = re.match(r"^-?[0-9.]+(?:[eE][-+]?[0-9]+)?([A-Za-zµ%]*)$", str(value))
    return m.group(1) if m and not isinstance(value, bool) else None


@st.composite
def cases(draw):
    name = draw(st.sampled_from(NAMES))
    fields = fz.FIELDS_OF(name)
    numeric = sorted(p for p, v in fields.items() if _unit(v) is not None)
    overrides = [("simulation.duration", f"{fz.MAX_SIM_S:g}s")]
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3]))):
        kind = draw(st.integers(0, 19))
        if kind < 12:  # a numeric field at another magnitude, in its own unit: likely to run
            path = draw(st.sampled_from(numeric))
            value = draw(st.sampled_from(fz.MAGNITUDES)) + _unit(fields[path])
        elif kind < 19:  # any field, any mutation
            path = draw(st.sampled_from(sorted(fields)))
            value = draw(_mutations())
        else:  # a path that does not exist
            path, value = draw(st.sampled_from(fz.NAME_PATHS)), draw(_mutations())
        overrides.append((path, value))
    return {"kind": "set", "name": name, "overrides": overrides}


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
def test_any_overrides_give_results_or_lasthops_own_clear_error(pool, case):
    try:
        outcome, detail = pool.submit(fz.run_case, case, True, WALL_LIMIT_S).result()
    except TaskFailed as e:  # hung past the limit, out of memory, or the worker died
        outcome, detail = e.cause, str(e)
    event(outcome)  # pytest --hypothesis-show-statistics shows how many ran, were rejected, ...
    assert outcome in ALLOWED, f"{outcome}: {detail}\nreproduce: {fz.reproducer(case)}"
