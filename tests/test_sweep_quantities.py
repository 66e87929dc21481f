"""Swept values in SI units: the core's unit parser (through lasthop._core.parse_quantity) types
every swept value, the sweep dataset carries them as <param>__si columns, and the sweep report and
lasthop compare place them by value (issue 14: "500kbps,1Mbps,2Mbps,5Mbps" was drawn at 500, 1, 2,
5 on an axis labelled kbps)."""

import json

import pandas as pd
import pytest

import lasthop
from lasthop.quantities import parse_quantity, swept_parameter

from conftest import lasthop_cli, report_charts

MIXED = ["500kbps", "1Mbps", "2Mbps", "5Mbps"]
# Hand values: k = 1000 and M = 1 000 000 (SI prefixes, units.rs; ns-3's DataRate agrees).
MIXED_BPS = [5e5, 1e6, 2e6, 5e6]
SHORT = {"simulation.duration": "1s"}


@pytest.mark.parametrize("text, value, kind", [
    ("500kbps", 5e5, "rate"), ("5Mbps", 5e6, "rate"), ("20Mbit", 2e7, "rate"),
    ("500us", 5e-4, "duration"), ("2ms", 2e-3, "duration"), ("1.5s", 1.5, "duration"),
    ("64KiB", 65536.0, "bytes"),          # 64 × 1024
    ("1500B", 1500.0, "bytes"), ("100p", 100.0, "packets"), ("0.01", 0.01, "number"), ("3", 3.0, "number"),
])
def test_quantities_in_si_units(text, value, kind):
    q = parse_quantity(text)
    assert (q.value, q.kind) == (value, kind)


def test_a_bad_value_names_itself_and_what_is_valid():
    with pytest.raises(ValueError) as e:
        parse_quantity("5Mbs")
    msg = str(e.value)
    assert 'invalid quantity "5Mbs"' in msg and 'did you mean "Mbps"?' in msg
    assert "expected a duration (ns, us, ms, s, min, h), a rate (bps, kbps, Mbps, Gbps)" in msg
    # A unit the core knows with a value it refuses: the parser of that unit says why.
    with pytest.raises(ValueError, match=r'invalid rate "-5Mbps": negative values are not allowed; expected'):
        parse_quantity("-5Mbps")
    with pytest.raises(ValueError, match=r'invalid quantity "true": neither a number nor a number with a unit'):
        parse_quantity("true")


def test_a_bad_swept_value_is_one_error_line_before_any_run(tmp_path):
    r = lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.rate=500kbps,1Mbs", "--out", str(tmp_path / "s"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    assert 'invalid rate "1Mbs": unknown unit "Mbs", did you mean "Mbps"?' in r.stderr
    assert not (tmp_path / "s" / "runs").exists()


def test_values_of_no_single_kind_are_text():
    # Categories, and a queue limit given once in packets and once in bytes (no axis places both).
    for values in (["false", "true"], ["newreno", "cubic"], ["100p", "64KiB"]):
        p = swept_parameter("x", values)
        assert p.kind == "text" and all(v != v for v in p.si.values()), values  # NaN


@pytest.mark.parametrize("values, ticks", [
    (MIXED, ["500 kb/s", "1 Mb/s", "2 Mb/s", "5 Mb/s"]),
    (["500us", "2ms", "4ms"], ["500 µs", "2 ms", "4 ms"]),
    (["1", "2", "3", "4"], ["1", "2", "3", "4"]),          # integer parameters keep integer ticks
    (["20p", "200p"], ["20", "200"]),
    (["0.01", "0.02"], ["0.01", "0.02"]),                   # a loss ratio as written, not "10 m"
    (["false", "true"], ["false", "true"]),
])
def test_x_ticks_at_the_swept_values(values, ticks):
    from lasthop.report import draw
    from lasthop.report.sweep import parameter_axis, x_ticks

    ax = draw.Figure(figsize=(draw.WIDTH, 3)).add_axes((0.12, 0.2, 0.66, 0.7))  # one panel's width
    x_ticks(ax, parameter_axis("p", values))
    assert [t.get_text() for t in ax.get_xticklabels()] == ticks


def _drawn_x(ax) -> list[list[float]]:
    """The x data of each error-bar line drawn on `ax` (not of its caps)."""
    return [[float(x) for x in c.lines[0].get_xdata()] for c in ax.containers]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed") / "s"
    res = lasthop.sweep("dumbbell", {"links.bottleneck.rate": MIXED}, seeds=1, out=out, workers=2, **SHORT)
    return out, res


def test_mixed_units_are_si_values_in_the_dataset(mixed):
    out, res = mixed
    for flows in (res.flows, pd.read_parquet(out / "flows.parquet")):
        by_text = flows.drop_duplicates("links.bottleneck.rate").set_index("links.bottleneck.rate")["links.bottleneck.rate__si"]
        assert by_text.to_dict() == dict(zip(MIXED, MIXED_BPS))
        assert flows["links.bottleneck.rate__si"].dtype == "float64"
    intervals = pd.read_parquet(out / "intervals.parquet")
    assert sorted(set(intervals["links.bottleneck.rate__si"])) == MIXED_BPS
    grid = json.loads((out / "sweep.json").read_text())["grids"][0]
    assert (grid["values"], grid["kind"], grid["unit"]) == (MIXED, "rate", "b/s")


def test_mixed_units_are_placed_by_value_in_the_sweep_report(mixed):
    out, res = mixed
    from lasthop.report.render import chart_figure
    from lasthop.report.sweep import METRICS, _aggregate, _metric_chart, parameter_axis

    x = parameter_axis("links.bottleneck.rate", MIXED)
    column, what, unit, scale = METRICS[0]
    meta = json.loads((out / "sweep.json").read_text())
    fig = chart_figure(_metric_chart(_aggregate(res, column), meta, column, what, unit, scale, x, None, []))  # as --png draws it
    ax = fig.axes[0]
    assert _drawn_x(ax) == [MIXED_BPS, MIXED_BPS]  # bulk and voice, each at the hand values
    assert [t.get_text() for t in ax.get_xticklabels()] == ["500 kb/s", "1 Mb/s", "2 Mb/s", "5 Mb/s"]
    assert ax.get_xlabel() == "links.bottleneck.rate (b/s)"
    # The page's figure (drawn by the browser) is placed and ticked the same.
    r = lasthop_cli("report", str(out))
    assert r.returncode == 0, r.stderr
    chart = next(c for c in report_charts(out / "report.html") if c["id"] == "sweep_goodput_bps")
    assert chart["x"]["positions"] == MIXED_BPS and chart["x"]["labels"] == ["500 kb/s", "1 Mb/s", "2 Mb/s", "5 Mb/s"]


def test_mixed_units_are_placed_by_value_in_compare(mixed):
    out, _ = mixed
    from lasthop.compare import CompareError, _by_parameter_figure, metric_table, open_sources

    sources = open_sources([out])
    table = metric_table(sources, ["goodput_bps"])
    fig = _by_parameter_figure(table, "goodput_bps", ["bulk", "voice"], "links.bottleneck.rate", "compare")
    for ax in fig.axes:
        assert _drawn_x(ax) == [MIXED_BPS]  # one sweep, one line per flow panel
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["500 kb/s", "1 Mb/s", "2 Mb/s", "5 Mb/s"]
    # The SI column is a key of the grid point, not a flow metric to compare.
    with pytest.raises(CompareError, match="not a numeric flow metric"):
        metric_table(sources, ["links.bottleneck.rate__si"])


def test_a_duration_sweep_in_seconds_beside_a_category(tmp_path):
    res = lasthop.sweep("dumbbell", {"links.bottleneck.delay": ["500us", "2ms"], "flows.bulk.tcp.sack": [False, True]},
                        seeds=1, out=tmp_path, workers=2, **SHORT)
    si = res.flows.drop_duplicates("links.bottleneck.delay").set_index("links.bottleneck.delay")["links.bottleneck.delay__si"]
    assert si.to_dict() == {"500us": 5e-4, "2ms": 2e-3}  # 500 µs and 2 ms in seconds
    assert res.flows["flows.bulk.tcp.sack__si"].isna().all()
    grids = json.loads((tmp_path / "sweep.json").read_text())["grids"]
    assert [(g["kind"], g["unit"]) for g in grids] == [("duration", "s"), ("text", "")]
    assert {p: q.kind for p, q in res.parameters.items()} == {"links.bottleneck.delay": "duration", "flows.bulk.tcp.sack": "text"}
