"""Sweeps: grids, caching, resuming after SIGKILL, Dask distributed, aggregation."""

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import lasthop
from lasthop.sweep import SweepError, parse_grid

from conftest import ROOT

GRID = {"links.bottleneck.rate": ["10Mbps", "20Mbps"], "flows.bulk.tcp.sack": [False, True]}
COMMON = {"simulation.duration": "3s", "links.bottleneck.loss": 0.01}


def test_grid_syntax():
    assert parse_grid("links.bottleneck.rate=14Mbps..22Mbps:2Mbps") == (
        "links.bottleneck.rate", ["14Mbps", "16Mbps", "18Mbps", "20Mbps", "22Mbps"])
    assert parse_grid("wcdma.radio.max_retx_udp=0..3")[1] == ["0", "1", "2", "3"]
    assert parse_grid("links.bottleneck.loss=0.01..0.03:0.01")[1] == ["0.01", "0.02", "0.03"]
    assert parse_grid("flows.voice.app.interval=10ms,20ms")[1] == ["10ms", "20ms"]
    # Ends and step are read by the core's unit parser, so prefixes may differ; the values are
    # written in the start's unit (hand count: 0.5 to 2 Mb/s in 500 kb/s steps is 4 values).
    assert parse_grid("r=500kbps..2Mbps:500kbps")[1] == ["500kbps", "1000kbps", "1500kbps", "2000kbps"]
    assert parse_grid("d=1s..3000ms:500ms")[1] == ["1s", "1.5s", "2s", "2.5s", "3s"]
    assert parse_grid("d=0ms..10ms:5ms")[1] == ["0ms", "5ms", "10ms"]
    assert parse_grid("d=1ms..3ms")[1] == ["1ms", "2ms", "3ms"]
    for bad, msg in [("rate", "expected dotted.path=values"), ("a=1Mbps..2kbps:1kbps", "upwards"),
                     ("a=1Mbps..2Mbps:1", "the step is a number; valid: a rate"),
                     ("a=1Mbps..10ms:1ms", "start is a rate and stop a duration"),
                     ("a=1Mbs..2Mbps:1Mbps", "range's start: .*did you mean \"Mbps\""),
                     ("a=abc..3", "is not a number with an optional unit"),
                     ("a=0.5..1", "give a step"), ("a=5..1", "upwards")]:
        with pytest.raises(SweepError, match=msg):
            parse_grid(bad)


def test_a_bad_grid_value_is_reported_as_the_grids_before_any_run(tmp_path):
    with pytest.raises(SweepError, match=r"--grid links.bottleneck.rate=10Mbs: .*did you mean") as e:
        lasthop.sweep("dumbbell", ["links.bottleneck.rate=10Mbs,20Mbps"], out=tmp_path / "s")
    assert "--set" not in str(e.value)
    assert not (tmp_path / "s").exists()


def _sweep(out, **kw):
    return lasthop.sweep("dumbbell", GRID, seeds=3, out=out, workers=2, **COMMON, **kw)


def test_two_by_two_by_three_seeds_then_nothing_to_do(tmp_path):
    res = _sweep(tmp_path)
    # 2 rates × 2 SACK settings × 3 seeds × 2 flows (bulk, voice).
    assert len(res.flows) == 24
    assert set(res.flows.seed) == {1, 2, 3}
    assert {"links.bottleneck.rate", "flows.bulk.tcp.sack", "seed", "run_id", "goodput_bps"} <= set(res.flows.columns)
    assert (tmp_path / "flows.parquet").exists() and (tmp_path / "intervals.parquet").exists()
    # 3 s at 100 ms: 30 intervals per flow and run.
    assert len(res.intervals) == 24 * 30
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    assert len(mtimes) == 12
    events = []
    again = lasthop.sweep("dumbbell", GRID, seeds=3, out=tmp_path, workers=2, **COMMON)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")} == mtimes, "nothing re-ran"
    pd.testing.assert_frame_equal(again.flows, res.flows)


def test_aggregate_is_mean_and_student_t_interval(tmp_path):
    res = _sweep(tmp_path)
    agg = res.aggregate("goodput_bps")
    row = agg[(agg["links.bottleneck.rate"] == "10Mbps") & (agg["flows.bulk.tcp.sack"] == "false") & (agg.name == "bulk")].iloc[0]
    xs = res.flows[(res.flows["links.bottleneck.rate"] == "10Mbps") & (res.flows["flows.bulk.tcp.sack"] == "false")
                   & (res.flows.name == "bulk")].goodput_bps
    n = len(xs)
    assert n == 3
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    # Student t, 2 degrees of freedom, 97.5 %: 4.302653 (tables).
    assert row["mean"] == pytest.approx(mean)
    assert row["ci95"] == pytest.approx(4.302653 * sd / math.sqrt(3), rel=1e-6)


def test_sigkill_midway_resumes_to_the_same_dataset(tmp_path):
    full = lasthop.sweep("dumbbell", {"links.bottleneck.rate": ["5Mbps", "10Mbps", "15Mbps", "20Mbps"]}, seeds=3,
                         out=tmp_path / "full", workers=1, **{**COMMON, "simulation.duration": "6s"})
    cmd = [str(Path(sys.executable).with_name("lasthop")), "sweep", "dumbbell", "--grid",
           "links.bottleneck.rate=5Mbps..20Mbps:5Mbps", "--seeds", "3", "--workers", "1", "--no-report",
           "--set", "simulation.duration=6s", "--set", "links.bottleneck.loss=0.01", "--out", str(tmp_path / "killed")]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    runs = tmp_path / "killed" / "runs"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(runs.glob("*/summary.json"))) < 3:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker processes
    proc.wait()
    finished = len(list(runs.glob("*/summary.json")))
    assert 3 <= finished < 12, f"the kill must land midway ({finished} of 12 finished)"
    resumed = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "killed" / "flows.parquet"), full.flows)
    assert (tmp_path / "killed" / "flows.parquet").read_bytes() == (tmp_path / "full" / "flows.parquet").read_bytes()


class _FlakyExecutor:
    """Runs in-process, but the run of seed 2 raises — a worker that crashed, say."""

    def submit(self, fn, text, file, overrides):
        import concurrent.futures as cf

        fut = cf.Future()
        if overrides["simulation.seed"] == "2":
            fut.set_exception(RuntimeError("worker lost"))
        else:
            fut.set_result(fn(text, file, overrides))
        return fut


def test_failed_runs_are_recorded_with_their_error_and_retried(tmp_path):
    from lasthop.sweep import run_sweep
    from lasthop.runner import as_scenario

    sc = as_scenario("dumbbell", **COMMON)
    grids = [("links.bottleneck.rate", ["10Mbps", "20Mbps"])]
    res = run_sweep(sc, grids, 3, tmp_path, executor=_FlakyExecutor())
    assert len(res.failed) == 2 and set(res.failed.seed) == {2}
    assert set(res.failed.error) == {"RuntimeError: worker lost"}
    assert len(list((tmp_path / "failed").glob("*.json"))) == 2
    assert set(res.flows.seed) == {1, 3}, "the other runs are kept"
    # The next invocation retries only the failed runs.
    again = run_sweep(sc, grids, 3, tmp_path, workers=1)
    assert len(again.failed) == 0 and len(again.flows) == 12
    assert not list((tmp_path / "failed").glob("*.json"))


def test_bad_grid_values_are_rejected_before_anything_runs(tmp_path):
    r = subprocess.run([str(Path(sys.executable).with_name("lasthop")), "sweep", "dumbbell", "--grid",
                        "links.bottleneck.rate=fast,10Mbps", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and 'invalid rate "fast"' in r.stderr
    assert not (tmp_path / "runs").exists(), "nothing written: every value is checked first"


def test_dask_local_cluster_gives_the_local_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = _sweep(tmp_path / "local")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = lasthop.sweep("dumbbell", GRID, seeds=3, out=tmp_path / "dask", scheduler=cluster.scheduler_address, **COMMON)
    pd.testing.assert_frame_equal(remote.flows, local.flows)
    pd.testing.assert_frame_equal(remote.intervals, local.intervals)
