"""Golden outputs (scripts/golden.py): the files a run writes and the set of runs the
reproductions make are exactly those recorded in tests/data/golden/. The per-run output hashes
of all 157 cases are checked in Rust (crates/lasthop-sim/tests/golden.rs); here, the Python side:
summary.json (minus the wall clock) and the Parquet files' schema and values of every bundled
scenario, and that the reproductions still run the recorded cases (so the Rust check covers
what `lasthop reproduce` really runs)."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("golden", ROOT / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)


@pytest.mark.parametrize("name", sorted(json.loads(golden.FILES.read_text())))
def test_bundled_run_writes_the_golden_files(name):
    want = json.loads(golden.FILES.read_text())[name]
    got = golden.run_files(name)
    assert sorted(got) == sorted(want), "the same files are written"
    assert {f: got[f] for f in got if got[f] != want[f]} == {}, "every file's content is unchanged"


def test_reproductions_run_the_recorded_cases():
    recorded = json.loads(golden.CASES.read_text())
    want = [(c["label"], recorded["texts"][c["text"]], c["file"], c["overrides"]) for c in recorded["cases"]]
    got = [(c["label"], c["text"], c["file"], c["overrides"]) for c in golden.collect_cases()]
    assert len(got) == len(want) == 157
    assert [g for g, w in zip(got, want) if g != w] == []


def test_the_hash_sees_a_one_bit_change():
    # The guard is only as good as its hash: flipping one bit of one float changes it.
    cols = [("x", "f64", (1.0).hex().encode(), None)]
    a = golden.output_hash("{}", [("t", cols)])
    b = golden.output_hash("{}", [("t", [("x", "f64", (1.0000000000000002).hex().encode(), None)])])
    assert a != b and len(a) == 64
