"""lasthop compare and lasthop plot: runs and sweeps side by side, one metric over time or as a
distribution."""

import csv
import math

import numpy as np
import pytest

import lasthop
from lasthop.plot import PlotError, Series, _distribution, collect, _Run

from conftest import lasthop_cli

SHORT = {"simulation.duration": "4s"}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    lasthop.run("dumbbell", out=base / "fast", **SHORT, **{"probes.packets": ["voice"]})
    lasthop.run("dumbbell", out=base / "slow", **SHORT, **{"links.bottleneck.rate": "5Mbps"})
    lasthop.sweep("dumbbell", {"links.bottleneck.loss": [0.01, 0.02]}, seeds=3, out=base / "sweep", workers=2, **SHORT)
    return base


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_compare_tables_runs_beside_a_sweeps_mean_and_interval(dirs, tmp_path):
    r = lasthop_cli("compare", str(dirs / "fast"), str(dirs / "slow"), str(dirs / "sweep"), "-m", "goodput_bps",
                    "-m", "loss_ratio", "--out", str(tmp_path / "cmp"), "--csv", str(tmp_path / "t.csv"))
    assert r.returncode == 0, r.stderr
    rows = _rows(tmp_path / "t.csv")
    fast = lasthop.Results.load(dirs / "fast").flow("bulk")
    got = {(x["source"], x["point"], x["flow"], x["metric"]): x for x in rows}
    # A run's value is its summary's, one sample, no interval.
    assert float(got[("fast", "", "bulk", "goodput_bps")]["mean"]) == fast["goodput_bps"]
    assert got[("fast", "", "bulk", "goodput_bps")]["n"] == "1" and got[("fast", "", "bulk", "goodput_bps")]["ci95"] == ""
    # A sweep's grid point: the mean of its three seeds and Student's t interval (t(0.975, 2) = 4.302653, tables).
    from lasthop.sweep import SweepResults

    flows = SweepResults.load(dirs / "sweep").flows
    xs = flows[(flows["links.bottleneck.loss"] == "0.01") & (flows.name == "bulk")].goodput_bps.tolist()
    mean = sum(xs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / 2)
    point = got[("sweep", "links.bottleneck.loss=0.01", "bulk", "goodput_bps")]
    assert float(point["mean"]) == pytest.approx(mean) and float(point["ci95"]) == pytest.approx(4.302653 * sd / math.sqrt(3))
    # The printed table shows the interval for the sweep only; shares as percentages.
    lines = r.stdout.splitlines()
    assert any("links.bottleneck.loss=0.01" in line and " ± " in line for line in lines)
    assert not any(line.lstrip("│ ").startswith("fast") and " ± " in line for line in lines)
    loss = lasthop.Results.load(dirs / "slow").flow("bulk")["loss_ratio"]
    assert f"{loss * 100:.3g} %" in r.stdout
    figures = {p.name for p in (tmp_path / "cmp" / "figures").iterdir()}
    assert {"compare-goodput_bps.svg", "compare-loss_ratio.svg", "time-goodput_bps.svg"} <= figures
    assert "compare fast vs slow vs sweep" in (tmp_path / "cmp" / "compare.html").read_text()


def test_a_sweep_compared_draws_every_metric_against_its_parameter(dirs, tmp_path):
    # Only sweeps over one first parameter: each metric is drawn against it (this failed from the
    # second metric on while the parameter was popped from a set once per metric).
    r = lasthop_cli("compare", str(dirs / "sweep"), "-m", "goodput_bps", "-m", "loss_ratio", "--out", str(tmp_path / "cmp"))
    assert r.returncode == 0, r.stderr
    for metric in ["goodput_bps", "loss_ratio"]:
        svg = (tmp_path / "cmp" / "figures" / f"compare-{metric}.svg").read_text()
        assert "links.bottleneck.loss" in svg, metric


def test_compare_names_what_is_wrong(dirs, tmp_path):
    r = lasthop_cli("compare", str(dirs / "fats"))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {dirs / 'fats'}: no such directory; did you mean {dirs / 'fast'}?")
    r = lasthop_cli("compare", str(dirs / "fast"), "-m", "godput_bps")
    assert r.returncode == 2 and 'did you mean "goodput_bps"?' in r.stderr
    r = lasthop_cli("compare", str(dirs / "fast"), "--flow", "vocie")
    assert r.returncode == 2 and 'did you mean "voice"?' in r.stderr
    # The table and the figures at one path: refused before anything is written (issue 24).
    same = tmp_path / "same"
    r = lasthop_cli("compare", str(dirs / "fast"), "--out", str(same), "--csv", str(same))
    assert r.returncode == 2 and "writes there" in r.stderr and not same.exists(), r.stderr


def test_plot_series_are_the_runs_values(dirs):
    run = _Run(dirs / "fast", "fast")
    (bulk,) = collect([run], "goodput_bps", ["bulk"], distribution=False)
    iv = lasthop.Results.load(dirs / "fast").intervals
    assert bulk.y.tolist() == iv[iv.flow == "bulk"].goodput_bps.tolist() and bulk.step
    # Per-packet delays from the packet trace: their mean is the summary's mean one-way delay.
    (voice,) = collect([run], "delay_ms", ["voice"], distribution=True)
    summary_voice = lasthop.Results.load(dirs / "fast").flow("voice")
    assert len(voice.y) == summary_voice["received_packets"]
    assert voice.y.mean() == pytest.approx(summary_voice["delay_ms"]["mean"], rel=1e-9)
    # Without a packet trace, a distribution comes from the run's delay quantiles.
    (q,) = collect([_Run(dirs / "slow", "slow")], "delay_ms", ["voice"], distribution=True)
    assert q.quantiles[0] == 0.0 and q.quantiles[-1] == 1.0


def test_the_empirical_cdf_counts_each_value_once():
    # Hand count: of 3, 1, 2 one third is at or below 1, two thirds at or below 2, all at or below 3.
    x, p = _distribution(Series("s", None, np.array([3.0, 1.0, float("nan"), 2.0])))
    assert x.tolist() == [1.0, 2.0, 3.0] and p.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])


def test_plot_writes_the_figure_and_explains_what_it_cannot_draw(dirs, tmp_path):
    r = lasthop_cli("plot", str(dirs / "fast"), str(dirs / "slow"), "--metric", "delay_ms", "--ccdf", "--log",
                    "-o", str(tmp_path / "d.svg"))
    assert r.returncode == 0, r.stderr
    svg = (tmp_path / "d.svg").read_text()
    assert "delay_ms CCDF" in svg and "fraction above" in svg and "fast voice" in svg and "slow bulk" in svg
    r = lasthop_cli("plot", str(dirs / "slow"), "--metric", "delay_ms", "-o", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "need a packet trace: add probes.packets" in r.stderr
    # A name without a figure suffix is refused, not written as "<name>.png" beside it (issue 24).
    r = lasthop_cli("plot", str(dirs / "fast"), "--metric", "goodput_bps", "-o", str(tmp_path / "noext"))
    assert r.returncode == 2 and "ends in .png, .svg, .pdf" in r.stderr and not list(tmp_path.glob("noext*")), r.stderr
    r = lasthop_cli("plot", str(dirs / "sweep"), "--metric", "goodput_bps")
    assert r.returncode == 2 and "a sweep; lasthop plot draws runs" in r.stderr
    with pytest.raises(PlotError, match='did you mean "cwnd_bytes"'):
        from lasthop.plot import plot

        plot([dirs / "fast"], "cwnd_byte", tmp_path / "y.png")
