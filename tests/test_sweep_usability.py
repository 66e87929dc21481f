"""Sweeps as scripts and shells meet them: spawn-start platforms, failed runs, unreachable Dask
schedulers, and seeds that change nothing."""

import os
import subprocess
import sys
import textwrap

import pytest

import lasthop
from lasthop.sweep import RunsFailed, SeedsWithoutEffect, SweepError, SweepFailed

from conftest import lasthop_cli

SWEEP_MODULE = sys.modules["lasthop.sweep"]  # `lasthop.sweep` is also the function's name
LOSSY = {"links.bottleneck.loss": [0.01]}


def _script(tmp_path, body: str, start_method: str) -> subprocess.CompletedProcess:
    path = tmp_path / "my_sweep.py"
    path.write_text(textwrap.dedent(body))
    env = {**os.environ, "LASTHOP_START_METHOD": start_method}
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_script_sweeps_with_spawned_workers_and_gets_the_forked_results(tmp_path):
    forked = lasthop.sweep("dumbbell", LOSSY, seeds=2, out=tmp_path / "fork", workers=2, duration="1s")
    r = _script(tmp_path, """
        import lasthop
        if __name__ == "__main__":
            res = lasthop.sweep("dumbbell", {"links.bottleneck.loss": [0.01]}, seeds=2, out="spawn", workers=2, duration="1s")
            print(res.flows.goodput_bps.tolist())
        """, "spawn")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(forked.flows.goodput_bps.tolist())


def test_a_script_without_a_main_guard_is_told_what_to_do_under_spawn(tmp_path):
    r = _script(tmp_path, """
        import lasthop
        lasthop.sweep("dumbbell", seeds=2, out="spawn", workers=2, duration="1s")
        """, "spawn")
    assert r.returncode != 0
    # Each worker that imported the script says why it stopped, and so does the sweep itself.
    assert 'worker processes are started with "spawn", which imports your script again' in r.stderr
    assert 'under `if __name__ == "__main__":`' in r.stderr
    assert "SweepError: a worker process died" in r.stderr


def test_an_unknown_start_method_is_one_clear_error(tmp_path):
    r = _script(tmp_path, """
        import lasthop
        lasthop.sweep("dumbbell", out="x", duration="1s")
        """, "threads")
    assert "LASTHOP_START_METHOD='threads': not a start method of this platform; valid: fork" in r.stderr


def test_an_unreachable_dask_scheduler_is_one_line_and_runs_nothing(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(SWEEP_MODULE, "DASK_CONNECT_TIMEOUT_S", 1.0)
    # Port 1 on this host: nothing listens there (tcpmux is long dead), so the connection is refused.
    with pytest.raises(SweepError) as e:
        lasthop.sweep("dumbbell", out=tmp_path / "d", scheduler="tcp://127.0.0.1:1", duration="1s")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("--scheduler tcp://127.0.0.1:1: no Dask scheduler answered (")
    assert message.endswith("start one there (dask scheduler) or check the address and port")
    assert not list((tmp_path / "d" / "runs").glob("*")), "nothing ran"
    r = lasthop_cli("sweep", "dumbbell", "--scheduler", "nonsense://x", "--out", str(tmp_path / "e"), "--no-report")
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler nonsense://x: not a Dask scheduler address"), lines


def test_seeds_that_change_nothing_are_reported_once(tmp_path):
    # The default dumbbell has no loss and no random element: every seed gives the same run.
    r = lasthop_cli("sweep", "dumbbell", "--seeds", "3", "--grid", "links.bottleneck.loss=0,0.01",
                    "--set", "simulation.duration=1s", "--out", str(tmp_path / "s"), "--no-report")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: seeds 1..3 gave identical results at 1 of 2 grid points (links.bottleneck.loss=0): "
                        "nothing random is active (no loss, no random errors or start times), so the 95 % intervals "
                        "have zero width and a single seed gives the same answer; a flow's start_jitter (e.g. --set "
                        "flows.NAME.start_jitter=1s) randomizes its start per seed"]
    res = lasthop.sweep("dumbbell", LOSSY, seeds=3, out=tmp_path / "s2", duration="1s")
    # 1 % loss draws differ per seed: the bulk flow's goodput is not the same three times.
    assert res.flows[res.flows.name == "bulk"].goodput_bps.nunique() == 3
    assert res.seeds_without_effect() == []
    with pytest.warns(SeedsWithoutEffect, match="seeds 1..2 gave identical results:"):
        same = lasthop.sweep("dumbbell", seeds=2, out=tmp_path / "s3", duration="1s")
    assert same.seeds_without_effect() == [{}]
    # The remedy the warning names: jittered starts make each seed's run its own.
    jittered = lasthop.sweep("dumbbell", seeds=2, out=tmp_path / "s4", duration="1s",
                             **{"flows.bulk.start_jitter": "200ms", "flows.voice.start_jitter": "200ms"})
    assert jittered.seeds_without_effect() == []
    voice = jittered.flows[jittered.flows.name == "voice"].sort_values("seed")
    assert voice.seed.tolist() == [1, 2]
    assert voice.start_s.between(0.5, 0.7, inclusive="left").all() and voice.start_s.nunique() == 2, voice.start_s



_REAL_EXECUTE = SWEEP_MODULE._execute


def _execute_failing_on_seed_2(text, file, overrides, wall_limit_s=None):
    if overrides["simulation.seed"] == "2":
        raise RuntimeError("boom")
    return _REAL_EXECUTE(text, file, overrides, wall_limit_s)


def test_failed_runs_warn_and_raise_if_failed_makes_a_script_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(SWEEP_MODULE, "_execute", _execute_failing_on_seed_2)
    with pytest.warns(RunsFailed, match=r"^1 of 3 runs failed"):
        res = lasthop.sweep("dumbbell", LOSSY, seeds=3, out=tmp_path, workers=1, duration="1s")
    assert list(res.failed.error) == ["RuntimeError: boom"]
    with pytest.raises(SweepFailed, match="1 of 3 runs failed"):
        res.raise_if_failed()


def test_a_sweep_ends_with_each_grid_points_means_over_its_seeds(tmp_path):
    # 2 queue sizes x 2 seeds (the bulk flow's start jittered per seed): the table's goodput is
    # the two seeds' mean with the 95 % interval's half-width (Student t, 1 degree of freedom:
    # 12.706 · s / √2), as SweepResults.aggregate gives them, per grid point and flow.
    from conftest import lasthop_cli
    from rich.console import Console

    import lasthop
    from lasthop.cli import _bps, sweep_table

    r = lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.queue=20p,100p", "--seeds", "2", "--set", "simulation.duration=5s",
                    "--set", "flows.bulk.start_jitter=1s", "--out", str(tmp_path / "s"), "--no-report")
    assert r.returncode == 0, r.stderr
    res = lasthop.SweepResults.load(tmp_path / "s")
    agg = res.aggregate("goodput_bps")
    bulk = agg[(agg["links.bottleneck.queue"] == "100p") & (agg["name"] == "bulk")].iloc[0]
    assert bulk["ci95"] > 0, "the seeds differ"
    line = next(l for l in r.stdout.splitlines() if "100p" in l and "bulk" in l)
    assert f"{_bps(bulk['mean'])} ± {_bps(bulk['ci95'])}" in line, line
    assert "mean over seeds per grid point" in r.stdout
    # At 50 columns the least wanted columns go, and the caption names them.
    narrow = Console(width=50, record=True)
    narrow.print(sweep_table(res, 50))
    text = " ".join(narrow.export_text().split())  # the caption wraps at 50 columns
    assert "left out at 50 columns: loss, delay, delay p99 (flows.parquet has them)" in text, text
