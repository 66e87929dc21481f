"""Golden outputs (scripts/golden.py): the files a run writes and the set of runs the
reproductions make are exactly those recorded in tests/data/golden/. The per-run output hashes
of all 172 cases are checked in Rust (crates/lasthop-sim/tests/golden.rs); here, the Python side:
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
    assert len(got) == len(want) == 172
    assert [g for g, w in zip(got, want) if g != w] == []


def test_the_hash_sees_a_one_bit_change():
    # The guard is only as good as its hash: flipping one bit of one float changes it.
    cols = [("x", "f64", (1.0).hex().encode(), None)]
    a = golden.output_hash("{}", [("t", cols)])
    b = golden.output_hash("{}", [("t", [("x", "f64", (1.0000000000000002).hex().encode(), None)])])
    assert a != b and len(a) == 64


@pytest.mark.parametrize("name", ["home", "dumbbell"])
def test_a_run_spooled_to_files_as_it_goes_writes_the_golden_files(name, monkeypatch, tmp_path):
    # A long run hands its interval rows and traces to files beside the results directory as it
    # goes (lasthop.runner.SPOOL_ROWS); here after every 2,000 rows, so a bundled run of a few
    # seconds is spooled many times. Its files must be those recorded for a run written whole.
    import pyarrow.parquet as pq

    import lasthop.runner

    monkeypatch.setattr(lasthop.runner, "SPOOL_ROWS", 2000)
    monkeypatch.setattr(golden.tempfile, "TemporaryDirectory", lambda: _Kept(tmp_path))
    want = json.loads(golden.FILES.read_text())[name]
    got = golden.run_files(name)
    assert {f: got[f] for f in got if got.get(f) != want.get(f)} == {} and sorted(got) == sorted(want)
    out = tmp_path / "run"
    groups = {p.name: pq.ParquetFile(p).metadata.num_row_groups for p in [out / "intervals.parquet", *(out / "traces").glob("*.parquet")]}
    assert groups["intervals.parquet"] > 1, f"the intervals were spooled in pieces: {groups}"
    assert [p.name for p in tmp_path.iterdir()] == ["run"], "the spool directory beside the results is gone"


class _Kept:
    """A TemporaryDirectory that is the test's own (kept for the assertions after the run)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> str:
        return str(self.path)

    def __exit__(self, *exc) -> None:
        return None
