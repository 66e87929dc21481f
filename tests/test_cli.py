"""The command line and the results directory, including byte-for-byte determinism."""

import json
from pathlib import Path

from conftest import lasthop_cli


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _summary_without_wall_clock(d: Path) -> dict:
    s = json.loads((d / "summary.json").read_text())
    s.pop("wall_clock")
    return s


def test_run_prints_a_summary_and_writes_the_results_directory(tmp_path):
    r = lasthop_cli("run", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "bulk" in r.stdout and "voice" in r.stdout and "goodput" in r.stdout
    files = _files(tmp_path / "out")
    assert {"summary.json", "flows.parquet", "intervals.parquet", "traces/tcp__bulk.parquet"} <= set(files)


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path):
    args = ["run", "scenarios/dumbbell.toml", "--set", "links.bottleneck.loss=0.01", "--set", "simulation.duration=5s", "-q"]
    for name, seed in [("a", "7"), ("b", "7"), ("c", "8")]:
        r = lasthop_cli(*args, "--seed", seed, "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    a, b, c = (tmp_path / n for n in "abc")
    assert _summary_without_wall_clock(a) == _summary_without_wall_clock(b)
    fa, fb = _files(a), _files(b)
    for name in fa:
        if name != "summary.json":
            assert fa[name] == fb[name], f"{name} differs between two runs with the same seed"
    assert _summary_without_wall_clock(a)["flows"] != _summary_without_wall_clock(c)["flows"]


def test_bad_input_exits_2_with_the_file_field_and_valid_values(tmp_path):
    r = lasthop_cli("run", "--set", "links.bottleneck.rate=fast", "--out", str(tmp_path))
    assert r.returncode == 2
    assert 'invalid rate "fast"' in r.stderr and "Mbps" in r.stderr
    r = lasthop_cli("run", "--set", "nonsense", "--out", str(tmp_path))
    assert r.returncode == 2 and "dotted.path=value" in r.stderr


def test_schema_command_prints_json_schema():
    r = lasthop_cli("schema")
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    assert schema["title"] == "Scenario"
    assert "flows" in schema["properties"]
