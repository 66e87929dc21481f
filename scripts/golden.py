#!/usr/bin/env python3
"""Golden outputs: the guard rail that keeps refactors byte-identical.

A *case* is one simulation exactly as lasthop ran it: the scenario text, its file label and the
``--set`` overrides. The cases are every bundled scenario at its own seed and every run that
``lasthop reproduce NAME --quick --seeds 1`` makes (recorded by intercepting the core's
``Simulation``). For each case the golden hash is SHA-256 over what the core returns — the
summary JSON (everything of ``summary.json`` but the wall clock) and every table, column by
column (what becomes the Parquet files); ``crates/lasthop-sim/tests/golden.rs`` recomputes it
in Rust, byte for byte. For each bundled scenario the files a run writes are hashed too
(``summary.json`` minus the wall clock, and the Parquet files' schema and values), checked by
``tests/test_golden.py``.

    scripts/golden.py --record    re-record tests/data/golden/ (a commit that changes results
                                  says so and why in its message)
    scripts/golden.py             check against tests/data/golden/, listing every difference
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden"
CASES = GOLDEN / "cases.json"
FILES = GOLDEN / "files.json"


def output_hash(summary_json: str, tables: list) -> str:
    """SHA-256 of a core output: the summary text, then per table its name and per column its
    name, kind, data and validity, each field followed by a 0 byte (golden.rs does the same)."""
    h = hashlib.sha256()

    def field(b: bytes) -> None:
        h.update(b)
        h.update(b"\0")

    field(summary_json.encode())
    for name, cols in tables:
        field(name.encode())
        for col, kind, data, valid in cols:
            field(col.encode())
            field(kind.encode())
            if kind == "str":
                field(struct.pack("<Q", len(data)))
                for s in data:
                    field(s.encode())
            else:
                field(bytes(data))
            field(b"" if valid is None else bytes(valid))
    return h.hexdigest()


def run_case(text: str, file: str, overrides: list[list[str]]) -> str:
    from lasthop import _core

    sim = _core.Simulation(text, file, [tuple(o) for o in overrides])
    sim.run_until(sim.end_s)
    return output_hash(*sim.output())


def collect_cases() -> list[dict]:
    """Every bundled scenario, then every run of every quick one-seed reproduction."""
    import lasthop.runner as runner
    from lasthop import _core
    from lasthop.reproduce import REGISTRY, reproduce

    cases = [{"label": f"bundled/{n}", "file": n, "text": _core.bundled_scenario(n), "overrides": []}
             for n in _core.bundled_names()]
    seen: list[dict] = []

    class Recording:
        """Stands in for the core module inside lasthop.runner, noting each Simulation made."""

        def __getattr__(self, name):
            return getattr(_core, name)

        @staticmethod
        def Simulation(text, file, overrides=()):  # noqa: N802 (mirrors the class name)
            seen.append({"text": text, "file": file, "overrides": [list(o) for o in overrides]})
            return _core.Simulation(text, file, list(overrides))

    runner._core = Recording()
    try:
        for name in sorted(REGISTRY):
            start = len(seen)
            with tempfile.TemporaryDirectory() as d:
                reproduce(name, d, quick=True, seeds=1, workers=1)
            for i, c in enumerate(seen[start:]):
                cases.append({"label": f"reproduce/{name}/{i}", **c})
    finally:
        runner._core = _core
    return cases


def table_digest(path: Path) -> str:
    """A Parquet file's schema and values (not its bytes, which carry the pyarrow version)."""
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    h = hashlib.sha256(str(t.schema).encode())
    for name in t.column_names:
        h.update(json.dumps([name, t.column(name).to_pylist()], allow_nan=True).encode())
    return h.hexdigest()


def run_files(name: str) -> dict[str, str]:
    """Digests of the files `lasthop.run(name, out=...)` writes that carry results."""
    import lasthop
    from lasthop.results import WALL_CLOCK_KEY

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run"
        lasthop.run(name, out=out)
        summary = json.loads((out / "summary.json").read_text())
        summary.pop(WALL_CLOCK_KEY, None)
        digests = {"summary.json": hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()}
        for p in sorted(out.rglob("*.parquet")):
            digests[str(p.relative_to(out))] = table_digest(p)
    return digests


def record() -> None:
    from lasthop import _core

    cases = collect_cases()
    texts: dict[str, str] = {}
    rows = []
    for c in cases:
        key = hashlib.sha256(c["text"].encode()).hexdigest()[:16]
        texts[key] = c["text"]
        rows.append({"label": c["label"], "file": c["file"], "text": key, "overrides": c["overrides"],
                     "output_sha256": run_case(c["text"], c["file"], c["overrides"])})
    GOLDEN.mkdir(parents=True, exist_ok=True)
    CASES.write_text(json.dumps({"about": __doc__.split("\n\n")[0] + " Recorded by scripts/golden.py --record.",
                                 "texts": texts, "cases": rows}, indent=1) + "\n")
    files = {n: run_files(n) for n in _core.bundled_names()}
    FILES.write_text(json.dumps(files, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(rows)} cases and the files of {len(files)} bundled runs in {GOLDEN.relative_to(ROOT)}")


def check() -> int:
    golden = json.loads(CASES.read_text())
    bad = [c["label"] for c in golden["cases"]
           if run_case(golden["texts"][c["text"]], c["file"], c["overrides"]) != c["output_sha256"]]
    files = json.loads(FILES.read_text())
    for name, want in files.items():
        got = run_files(name)
        bad += [f"{name}/{f}" for f in sorted(set(want) | set(got)) if want.get(f) != got.get(f)]
    for b in bad:
        print(f"differs: {b}")
    print(f"{len(golden['cases'])} cases, {sum(map(len, files.values()))} files: {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", action="store_true", help="re-record the golden hashes")
    sys.exit(record() if ap.parse_args().record else check())
