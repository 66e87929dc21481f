"""Fuzzes lasthop's Python face with generated scenarios and writes the counts to FUZZING.md.

    .venv/bin/python bench/fuzz_scenarios.py --cases 10000 --seed 1 --out FUZZING.md

Each case is a bundled scenario with 1-3 ``--set`` overrides drawn from its own field paths
(plus misspelt and new ones) with mutated values — empty, huge, negative, NaN, infinities,
unicode, NUL, wrong types, random numbers with random units — or, for a quarter of the cases,
its TOML text mutated (a line deleted, duplicated, swapped, truncated, a value replaced, bytes
inserted). Every case is validated through ``lasthop.Scenario`` (the core's resolve_scenario
plus the Python face's error rewriting); a sample of the accepted ones (``--run-share``) is run
with ``lasthop.run`` at 2 s of simulated time at most. Cases run in a lasthop.pool.LocalPool:
a per-case wall-clock limit (``--case-timeout``, default 5 s) and an address-space limit
(``--memory``, default 2 GB) turn hangs and memory blow-ups into counted outcomes.

Outcomes: accepted (and ran), rejected with a clear error, rejected with an unclear one (the
rule is :func:`unclear`), SimulationError, slow (valid and still advancing when the wall-clock
limit stopped it), hang (no answer: the worker was killed), memory blow-up, panic, crash (a
worker killed by a signal), traceback (any other Python exception). Each is listed with a
reproducer; the script exits 1 if any case hung, blew up, panicked, crashed, raised a
traceback or was rejected unclearly.

tests/test_fuzz.py draws from the same vocabulary (FIELDS_OF, VALUES, UNITS, unclear) with hypothesis.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_SIM_S = 2.0

VALUES = [
    "", " ", "0", "-0", "1", "-1", "-1e9", "1e308", "-1e308", "1e-308", "1.5", "nan", "-nan", "inf", "-inf",
    "99999999999999999999999", "18446744073709551616", "9223372036854775808", "-9223372036854775809",
    "true", "false", "[]", "[1, 2]", '["x"]', "{}", "{a = 1}", '""', '"x"', "'x'", "é", "名前", "\u0000", "\x7f",
    "0x10", "1_000", "1979-05-27", "10ms", "0s", "0ns", "1ns", "1us", "100Gbps", "0bps", "1bps", "0B", "1B",
    "65508B", "0p", "1p", "100000000p", "64KiB", "16EiB", "x" * 300, "10 ms", "10MS", "10 Mb/s", "-5ms",
    "1e400s", "NaNs", "infms", "[[1]]", "dumbbell", "../../x", "/etc/passwd", "None",
]
UNITS = ["ns", "us", "µs", "ms", "s", "min", "h", "d", "bps", "kbps", "Mbps", "Gbps", "Tbps", "B", "kB", "KB", "MB",
         "GB", "KiB", "MiB", "GiB", "TiB", "p", "%", "", " ", "x", "Hz", "dB"]
NUMBERS = ["0", "1", "-1", "0.5", "1e-9", "1e9", "1e20", "123456789012", "3.14159", "nan", "inf", "-0.0"]
NAME_PATHS = ["flows.nope.start", "links.nope.rate", "flow.bulk.start", "simulation.durration", "flows.0.app.typ",
              "flows.99.start", "simulation", "probes.nope", "nodes.0.name", "flows..start", ".", "a.b.c.d.e.f"]


def unit_value(rng: random.Random) -> str:
    return f"{rng.choice(NUMBERS)}{rng.choice(UNITS)}"


def fields_of(resolved: dict) -> dict[str, object]:
    """Every settable dotted path of a resolved scenario and its value: tables by key, arrays
    of tables by element name (or index), lists of scalars as a whole."""
    out: dict[str, object] = {}

    def walk(node, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else k)
        elif isinstance(node, list) and node and all(isinstance(e, dict) for e in node):
            for i, e in enumerate(node):
                key = e.get("name") if isinstance(e.get("name"), str) and "." not in e["name"] else str(i)
                walk(e, f"{prefix}.{key}")
        elif prefix:
            out[prefix] = node

    walk(resolved, "")
    return out


_FIELDS: dict[str, dict[str, object]] = {}


def FIELDS_OF(name: str) -> dict[str, object]:
    """Field paths and values of bundled scenario `name` (cached)."""
    if name not in _FIELDS:
        from lasthop import Scenario

        _FIELDS[name] = fields_of(Scenario.bundled(name).resolved)
    return _FIELDS[name]


def literal(value: object) -> str:
    """A value of the resolved scenario as a --set value (to put it in another field)."""
    return json.dumps(value) if isinstance(value, (list, dict, bool)) or value is None else str(value)


_NUM_UNIT = re.compile(r"^(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)([A-Za-zµ%]*)$")
MAGNITUDES = ["0", "0.000000001", "0.000001", "0.001", "0.01", "0.1", "0.5", "1", "2", "3", "7", "10", "100", "1000", "65535",
              "65536", "1000000", "1000000000", "4294967296", "1000000000000", "1000000000000000", "18446744073709551615"]


def rescale(rng: random.Random, current: object) -> str | None:
    """The field's own value with another magnitude, in its own unit (``24ms`` -> ``1e-06ms``):
    the values most likely to pass validation and reach the engine."""
    if isinstance(current, bool) or current is None:
        return None
    m = _NUM_UNIT.match(str(current))
    if not m:
        return None
    pool = MAGNITUDES if "." in m.group(1) or m.group(2) else [x for x in MAGNITUDES if "." not in x]
    return f"{rng.choice(pool)}{m.group(2)}"


def mutate_value(rng: random.Random, others: list[str], current: object = None) -> str:
    scaled = rescale(rng, current) if rng.random() < 0.6 else None
    if scaled is not None:
        return scaled
    r = rng.random()
    if r < 0.45:
        return rng.choice(VALUES)
    if r < 0.75:
        return unit_value(rng)
    if r < 0.85 and others:
        return rng.choice(others)
    return "".join(rng.choice("0123456789.-+eE_ abcxyzµ名\u0000[]{}\"'=,") for _ in range(rng.randint(0, 12)))


def mutate_text(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        op = rng.randrange(6)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3 and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = f"{key}= {rng.choice(VALUES + [unit_value(rng), repr(unit_value(rng)).replace(chr(39), chr(34))])}"
        elif op == 4:
            k = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:k] + rng.choice(["\u0000", "[", "]", "\"", "=", "é", "\x7f", "[[", "#", "\\"]) + lines[i][k:]
        else:
            lines = lines[: i + 1]
        if not lines:
            lines = [""]
    return "\n".join(lines)


def make_case(rng: random.Random, names: list[str]) -> dict:
    name = rng.choice(names)
    # At most 2 s of simulated time, unless a case sets the duration itself (then it only runs
    # if the result is at most 2 s).
    short = [("simulation.duration", f"{MAX_SIM_S:g}s")]
    if rng.random() < 0.25:
        from lasthop import _core

        return {"kind": "text", "name": name, "text": mutate_text(rng, _core.bundled_scenario(name)), "overrides": short}
    fields = FIELDS_OF(name)
    paths, others = list(fields), [literal(v) for v in fields.values()]
    numeric = [p for p, v in fields.items() if rescale(rng, v) is not None]
    overrides = list(short)
    for _ in range(rng.choices([1, 2, 3], weights=[3, 2, 1])[0]):
        r = rng.random()
        if r < 0.6:  # a numeric field at another magnitude, in its own unit: likely to run
            path = rng.choice(numeric)
            value = rescale(rng, fields[path])
        elif r < 0.95:  # any field, any mutation
            path = rng.choice(paths)
            value = mutate_value(rng, others, fields.get(path))
        else:  # a path that does not exist
            path, value = rng.choice(NAME_PATHS), mutate_value(rng, others)
        overrides.append((path, value))
    return {"kind": "set", "name": name, "overrides": overrides}


def unclear(message: str, case: dict) -> str | None:
    """Why a ScenarioError message is not a clear one, or None. Clear: each line names the
    source (the file, or 'bundled scenario NAME'); a bundled scenario's lines cite no line
    numbers (the user has no file to open); a problem caused by an override cites it."""
    label = "fuzz.toml" if case["kind"] == "text" else f"bundled scenario {case['name']}"
    lines = message.split("\n")
    if not message.strip():
        return "empty message"
    for line in lines:
        if not line.startswith(label + ": "):
            return f"a line does not start with {label!r}"
        if len(line) > 3000:
            return "a line over 3000 characters"
        if "panicked" in line or "Traceback" in line:
            return "a panic or traceback in the message"
    if case["kind"] == "set" and re.search(r"\bline \d+\b", message):
        return "cites a line number of a bundled scenario"
    if "TOML parse error" in message:
        return "the TOML parser's raw multi-line report (of the rewritten document)"
    return None


def run_case(case: dict, run: bool, wall_limit_s: float) -> tuple[str, str]:
    """Runs in a worker: (outcome, detail)."""
    import lasthop
    from lasthop import _core

    try:
        if case["kind"] == "text":
            sc = lasthop.Scenario(case["text"], "fuzz.toml", dict(case["overrides"]))
        else:
            sc = lasthop.Scenario(_core.bundled_scenario(case["name"]), f"<bundled:{case['name']}>", dict(case["overrides"]))
    except lasthop.ScenarioError as e:
        why = unclear(str(e), case)
        return ("rejected_unclear", f"{why}: {e}") if why else ("rejected_clear", "")
    except BaseException as e:  # noqa: BLE001 - the point is to see everything
        kind = "panic" if type(e).__name__ == "PanicException" else "traceback"
        return kind, f"{type(e).__name__}: {e}"[:2000]
    duration = _core_seconds(sc.resolved["simulation"]["duration"])
    if not run or duration is None or duration > MAX_SIM_S:
        return "accepted", ""
    from lasthop.errors import RunTimeout

    try:
        lasthop.run(sc, wall_limit_s=wall_limit_s)
    except RunTimeout as e:  # still advancing at the limit: valid, only heavy
        return "slow", str(e)
    except lasthop.SimulationError as e:
        return "simulation_error", str(e)[:2000]
    except lasthop.ScenarioError as e:
        why = unclear(str(e), case)
        return ("rejected_unclear", f"{why}: {e}") if why else ("rejected_clear", "")
    except BaseException as e:  # noqa: BLE001
        kind = "panic" if type(e).__name__ == "PanicException" else "traceback"
        return kind, f"{type(e).__name__}: {e}"[:2000]
    return "ran", ""


_DUR = re.compile(r"^([0-9.eE+-]+)\s*(ns|us|µs|ms|s|min|h)$")
_SCALE = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def _core_seconds(text) -> float | None:
    m = _DUR.match(str(text))
    return float(m.group(1)) * _SCALE[m.group(2)] if m else None


def reproducer(case: dict) -> str:
    if case["kind"] == "text":
        return f"(mutated TOML of bundled {case['name']}, 2 s) {json.dumps(case['text'])[:600]}"
    sets = " ".join(f"--set {json.dumps(f'{p}={v}')}" for p, v in case["overrides"])
    return f".venv/bin/lasthop run {case['name']} {sets}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-share", type=float, default=0.5, help="share of accepted cases also run (≤ 2 s simulated)")
    ap.add_argument("--case-timeout", type=float, default=5.0, help="wall-clock limit per case, seconds")
    ap.add_argument("--memory", default="2GB", help="address-space limit per worker")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "FUZZING.md")
    args = ap.parse_args()

    import lasthop
    from lasthop import _core
    from lasthop.pool import LocalPool, TaskFailed, parse_memory

    rng = random.Random(args.seed)
    names = list(_core.bundled_names())
    for n in names:
        FIELDS_OF(n)
    cases = [make_case(rng, names) for _ in range(args.cases)]
    runs = [rng.random() < args.run_share for _ in cases]
    counts: Counter[str] = Counter()
    failures: list[tuple[str, str, dict]] = []
    unclear_examples: list[tuple[str, dict]] = []
    t0 = time.perf_counter()
    with LocalPool(args.workers, timeout_s=args.case_timeout, memory=parse_memory(args.memory)) as pool:
        futures = [pool.submit(run_case, c, r, args.case_timeout) for c, r in zip(cases, runs)]
        for i, (case, fut) in enumerate(zip(cases, futures)):
            try:
                outcome, detail = fut.result()
            except TaskFailed as e:
                outcome = {"timeout": "hang", "memory": "memory"}.get(e.cause, "crash")
                if e.cause == "signal" and "panicked" in str(e):
                    outcome = "panic"
                detail = str(e)
            counts[outcome] += 1
            if outcome in ("hang", "memory", "panic", "crash", "traceback", "simulation_error", "slow"):
                failures.append((outcome, detail, case))
            elif outcome == "rejected_unclear":
                unclear_examples.append((detail, case))
            if (i + 1) % 1000 == 0:
                print(f"{i + 1} cases, {time.perf_counter() - t0:.0f} s: {dict(counts)}", file=sys.stderr)
    wall = time.perf_counter() - t0
    cmd = (f".venv/bin/python bench/fuzz_scenarios.py --cases {args.cases} --seed {args.seed} --run-share {args.run_share} "
           f"--case-timeout {args.case_timeout:g} --memory {args.memory} --workers {args.workers}")
    accepted = counts["accepted"] + counts["ran"]
    rows = [
        ("accepted", accepted, f"of which {counts['ran']} also ran (≤ {MAX_SIM_S:g} s simulated) without error"),
        ("rejected with a clear error", counts["rejected_clear"], "ScenarioError naming the source, the --set or line, the field"),
        ("rejected with an unclear error", counts["rejected_unclear"], "ScenarioError failing the rule of `unclear()`"),
        ("stopped by the engine", counts["simulation_error"], "SimulationError (watchdog or no progress)"),
        ("slow", counts["slow"], f"valid and still advancing at {args.case_timeout:g} s of wall clock (RunTimeout)"),
        ("hangs", counts["hang"], f"no answer within {args.case_timeout:g} s + 2 s (the worker was killed)"),
        ("memory blow-ups", counts["memory"], f"over {args.memory} of address space"),
        ("panics", counts["panic"], "a Rust panic (PanicException, or a worker aborting with 'panicked')"),
        ("crashes", counts["crash"], "a worker killed by a signal"),
        ("tracebacks", counts["traceback"], "any other Python exception"),
    ]
    lines = [
        "# Fuzzing lasthop's inputs",
        "",
        f"`{cmd}`",
        "",
        f"lasthop {lasthop.__version__}; {args.cases} cases in {wall:.0f} s on {args.workers} workers "
        f"(bundled scenarios: {', '.join(names)}). Generated by bench/fuzz_scenarios.py; see its docstring for what a case is.",
        "",
        "| outcome | cases | what |",
        "|---|---:|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in rows],
        "",
    ]
    if failures:
        lines += ["## Failures (one per kind of message; SimulationError and slow are clear answers, listed as range checks to consider)", ""]
        seen: set[str] = set()
        for outcome, detail, case in failures:
            key = outcome + re.sub(r"[0-9.]+", "N", detail)[:120]
            if key in seen:
                continue
            seen.add(key)
            lines += [f"- **{outcome}**: {detail[:500]}", f"  `{reproducer(case)}`"]
        lines.append("")
    if unclear_examples:
        lines += ["## Unclear errors (first 20)", ""]
        for detail, case in unclear_examples[:20]:
            lines += [f"- {detail[:400]}", f"  `{reproducer(case)}`"]
        lines.append("")
    # bench/fuzz_inputs.py's section (the other inputs) follows, kept as it is.
    kept = args.out.read_text().partition("\n## Files and peers other than scenarios")[1:] if args.out.exists() else ()
    args.out.write_text("\n".join(lines) + "".join(kept))
    print("\n".join(lines[:16 + len(rows)]))
    broken = sum(counts[k] for k in ("hang", "memory", "panic", "crash", "traceback", "rejected_unclear"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
