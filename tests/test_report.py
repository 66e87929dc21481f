"""Reports: report.html is one self-contained file whose figures its script draws from data in
the page (uPlot, vendored); that data equals the run's tables; the figures keep what issue 14
asks for (panels per rate group, MAC counters, queues worth drawing, aligned time axes, sweep
facets with the legend off the data, engineering notation); they render in a real browser
offline; --png draws the same figures with matplotlib as files; `lasthop report` regenerates
the same bytes."""

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, lasthop_cli, report_charts

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NODE = shutil.which("node")
# `make test` installs Debian's chromium when it runs as root on Debian (scripts/system-deps.sh);
# elsewhere these tests are skipped, and say so.
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make test installs it with apt-get as root)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--virtual-time-budget=5000"]
# The run report of the dumbbell: throughput, delay and jitter, delay CDF, TCP windows of bulk,
# queues (the bottleneck's forward queue; the ACK direction never holds a packet).
DUMBBELL_FIGURES = ["throughput", "delay", "delay_cdf", "tcp", "queues"]
TIME_FIGURES = ["throughput", "delay", "tcp", "queues"]
# Numbers in the page are rounded to 4 significant digits (lasthop.report.charts.DIGITS): at most
# half a unit of the 4th digit off; times to 7.
VALUE_RTOL = 5.001e-4
TIME_RTOL = 5.001e-7


def _browser(args, tmp_path):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def _floats(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _by_id(directory: Path) -> dict[str, dict]:
    return {c["id"]: c for c in report_charts(directory / "report.html")}


def _trace(directory: Path, name: str, columns: list[str]) -> dict[str, np.ndarray]:
    index = json.loads((directory / "traces" / "index.json").read_text())
    stem = next(s for s, n in index.items() if n == name)
    t = pq.read_table(directory / "traces" / f"{stem}.parquet", columns=columns)
    return {c: t.column(c).to_numpy().astype(float) for c in columns}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    r = lasthop_cli("run", "--set", "simulation.duration=5s", "--out", str(d), "-q")
    assert r.returncode == 0, r.stderr
    return d


@pytest.fixture(scope="module")
def home_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("home")
    r = lasthop_cli("run", "home", "--out", str(d), "-q")
    assert r.returncode == 0, r.stderr
    return d


def test_report_is_one_self_contained_file(run_dir):
    page = (run_dir / "report.html").read_text()
    # Works offline and mailed alone: no address of any kind (uPlot's header comment, its
    # repository, is replaced by its name and licence), nothing loaded from elsewhere.
    for pattern in [r"https?:", r"ftp:", r"\bsrc\s*=", r"<link", r"@import", r"url\(", r"\bfetch\(", r"XMLHttpRequest"]:
        assert not re.search(pattern, page), pattern
    assert "uPlot 1.6.32" in page and "MIT License" in page
    assert re.findall(r'<figure id="([^"]+)" class="chart"', page) == DUMBBELL_FIGURES
    for title in ["throughput at the receiver per flow", "one-way delay CDF", "TCP windows", "dumbbell (seed 1)"]:
        assert title in page, title
    # No figure files unless asked for (--png): the page is the report.
    assert not (run_dir / "figures").exists() or not list((run_dir / "figures").iterdir())


def test_embedded_series_equal_the_run_tables(run_dir):
    charts = _by_id(run_dir)
    iv = pq.read_table(run_dir / "intervals.parquet").to_pydict()
    flow = np.array(iv["flow"])
    # 5 s at 100 ms: 50 intervals per flow, drawn sample by sample (no envelope).
    for fid, column, scale, panel in [("throughput", "throughput_rx_bps", 1.0, None), ("delay", "delay_mean_ms", 1e-3, 0),
                                      ("delay", "jitter_mean_ms", 1e-3, 1)]:
        panels = charts[fid]["panels"] if panel is None else [charts[fid]["panels"][panel]]
        drawn = {s["name"]: s for p in panels for s in p["series"]}
        assert sorted(drawn) == ["bulk", "voice"], fid
        for name, s in drawn.items():
            m = flow == name
            np.testing.assert_allclose(_floats(s["t"]), np.array(iv["t_start_s"])[m], rtol=TIME_RTOL, atol=0)
            want = np.array(iv[column], dtype=float)[m] * scale
            np.testing.assert_allclose(_floats(s["y"]), want, rtol=VALUE_RTOL, atol=0, equal_nan=True, err_msg=f"{fid} {name}")


def test_embedded_envelopes_keep_the_traces_extremes(run_dir):
    charts = _by_id(run_dir)
    # The bottleneck queue changes thousands of times in 5 s: drawn as an envelope whose band
    # reaches the trace's own minimum and maximum (and the mean lies inside the band).
    (panel,) = charts["queues"]["panels"]
    name = panel["legend_title"]
    (s,) = panel["series"]
    tr = _trace(run_dir, name, ["time_s", "packets"])
    assert "hi" in s and len(s["t"]) == 300
    assert np.nanmax(_floats(s["hi"])) == tr["packets"].max() and np.nanmin(_floats(s["lo"])) == tr["packets"].min()
    lo, mean, hi = _floats(s["lo"]), _floats(s["mean"]), _floats(s["hi"])
    ok = ~np.isnan(mean)
    assert np.all(lo[ok] <= mean[ok] * (1 + VALUE_RTOL)) and np.all(mean[ok] <= hi[ok] * (1 + VALUE_RTOL))
    # TCP windows: the largest cwnd drawn is the trace's largest cwnd (to 4 digits).
    (tcp,) = charts["tcp"]["panels"]
    assert tcp["legend_title"] == "flow bulk"
    cwnd = next(s for s in tcp["series"] if s["name"] == "cwnd")
    top = np.nanmax(_floats(cwnd["hi"] if "hi" in cwnd else cwnd["y"]))
    want = _trace(run_dir, "tcp/bulk", ["time_s", "cwnd_bytes"])["cwnd_bytes"].max()
    np.testing.assert_allclose(top, want, rtol=VALUE_RTOL)


def test_embedded_cdf_passes_through_each_flows_quantiles(run_dir):
    cdf = _by_id(run_dir)["delay_cdf"]
    tr = pq.read_table(run_dir / "traces" / "delay_cdf.parquet").to_pydict()
    x = _floats(cdf["x"])
    assert np.all(np.diff(x) > 0)
    for s in cdf["series"]:
        m = np.array(tr["flow"]) == s["name"]
        d, q = np.array(tr["delay_ms"])[m] / 1e3, np.array(tr["quantile"])[m]
        y = _floats(s["y"])
        single = [i for i in range(len(d)) if np.sum(d == d[i]) == 1]  # a delay several quantiles share is a step
        at = np.searchsorted(x, d[single] * (1 - 1e-6))  # x is rounded to 7 digits
        np.testing.assert_allclose(x[at], d[single], rtol=TIME_RTOL)
        # At a flow's own delay its quantile (a tenth of the 0.01 quantile step: x's rounding
        # moves the point along a steep stretch of the curve by up to 5e-8 s).
        np.testing.assert_allclose(y[at], q[single], rtol=0, atol=1e-3)
        assert y[x < d.min() * (1 - 1e-6)].max(initial=0) == 0 and y[-1] == q[-1]


def test_png_on_request_draws_the_same_figures_as_files(run_dir, tmp_path):
    d = tmp_path / "png"
    shutil.copytree(run_dir, d)
    r = lasthop_cli("report", str(d), "--png")
    assert r.returncode == 0, r.stderr
    pngs = {p.stem: p.read_bytes() for p in (d / "figures").glob("*.png")}
    assert sorted(pngs) == sorted(DUMBBELL_FIGURES) == sorted(p.stem for p in (d / "figures").glob("*.svg"))
    assert all(b.startswith(b"\x89PNG") for b in pngs.values())
    # The page is the run's, with or without files beside it.
    assert (d / "report.html").read_bytes() == (run_dir / "report.html").read_bytes()
    # A report without --png removes files that would no longer match the page.
    r = lasthop_cli("report", str(d))
    assert r.returncode == 0 and not list((d / "figures").glob("*"))


def test_home_flows_of_different_rates_get_their_own_panels(home_dir):
    thr = _by_id(home_dir)["throughput"]
    # Peaks in summary.json's run (intervals of 100 ms): ftp ~20 Mb/s; video ~1.3 Mb/s, chat
    # ~0.3 Mb/s (within 10x of video); game-down ~55 kb/s, game-up ~11 kb/s (more than 10x
    # below video): three panels, each flow in one legend, each panel's axis from 0.
    assert [[s["name"] for s in p["series"]] for p in thr["panels"]] == [["ftp"], ["video", "chat-down", "chat-up"],
                                                                          ["game-down", "game-up"]]
    assert not any(p["log"] for p in thr["panels"]) and all(p["unit"] == "b/s" for p in thr["panels"])
    assert "separate panels" in thr["caption"]


def test_home_delay_on_log_axes(home_dir):
    delay = _by_id(home_dir)["delay"]
    # The video's delay is ~0.3-1 ms, the chat's ~20-60 ms, both under 100 ms at peak: more than
    # 100x apart, so the delay panel is a log axis and the caption says so.
    assert [p["log"] for p in delay["panels"]] == [True, True]
    assert "log axis for one-way delay and mean |IPDV|" in delay["caption"]


def test_wlan_mac_counters_are_drawn(home_dir):
    summary = json.loads((home_dir / "summary.json").read_text())
    wlan = summary["wlans"][0]
    mac = _by_id(home_dir)[f"mac_{wlan['name']}"]
    assert mac["kind"] == "bars" and mac["members"] == [m["node"] for m in wlan["members"]]
    counters = {c["name"]: c["values"] for c in mac["counters"]}
    assert list(counters) == ["attempts", "retries", "collisions", "frame errors", "drops (queue + retry limit)"]
    # Each member's counters as in summary.json; drops = queue + retry-limit drops.
    for i, m in enumerate(wlan["members"]):
        assert counters["attempts"][i] == m["attempts"] and counters["collisions"][i] == m["collisions"]
        assert counters["retries"][i] == m["retries"]
        assert counters["drops (queue + retry limit)"][i] == m["queue_drops"] + m["retry_drops"]
    assert f"{wlan['exchanges']:,}".replace(",", "\u2009") + " exchanges" in mac["caption"]


def test_queues_that_never_build_are_named_not_drawn(home_dir):
    queues = _by_id(home_dir)["queues"]
    summary = json.loads((home_dir / "summary.json").read_text())
    peaks = {m["node"]: m["max_queue_packets"] for m in summary["wlans"][0]["members"]}
    drawn = [f"wlan/home/{n}" for n, p in peaks.items() if p >= 4]
    assert [p["legend_title"] for p in queues["panels"]] == drawn and drawn, peaks  # the AP and N3 in the home run
    assert all(p["integer"] for p in queues["panels"])
    for node, peak in peaks.items():
        if peak < 4:
            assert f"wlan/home/{node} (at most {peak})" in queues["caption"]


def test_time_figures_share_one_time_axis(home_dir):
    charts = _by_id(home_dir)
    assert {charts[f]["t_end"] for f in TIME_FIGURES} == {180.0}
    assert all(c["kind"] == "time" for f, c in charts.items() if f in TIME_FIGURES)


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_the_pages_notation_is_the_tables(tmp_path):
    from lasthop.report.text import eng

    values = [1.217e7, 12.2e6, 361e3, 999.96e3, 0.0042, 4.2e-6, 0.0, 1.0, 150e-3, 2.5e6, 64e3, 5e-10, 999.4]
    script = (f"global.window = {{}}; global.document = {{readyState: 'loading', addEventListener() {{}}}};"
              f"require({json.dumps(str(ROOT / 'python/lasthop/report/charts.js'))});"
              f"const c = window.lasthopCharts;"
              f"console.log(JSON.stringify([{json.dumps(values)}.map(v => c.eng(v, 'b/s')), c.count(72690), c.count(999)]));")
    r = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    js, thousands, small = json.loads(r.stdout)
    assert js == [eng(v, "b/s") for v in values]
    assert js[:2] == ["12.2 Mb/s", "12.2 Mb/s"] and js[3] == "1 Mb/s"
    assert (thousands, small) == ("72\u2009690", "999")


def test_envelope_of_a_hand_checked_series():
    from lasthop.report.envelope import envelope

    t = np.array([0.0, 0.5, 1.0, 1.2, 3.5])
    y = np.array([1.0, 5.0, 2.0, np.nan, 0.0])
    # Four 1 s slices. Samples: slice 0 has 1 and 5, slice 1 has 2 (the NaN is ignored), slice 2
    # none, slice 3 has 0.
    e = envelope(t, y, 0.0, 4.0, bins=4)
    assert e.t.tolist() == [0.5, 1.5, 2.5, 3.5]
    np.testing.assert_array_equal(e.lo, [1, 2, np.nan, 0])
    np.testing.assert_array_equal(e.hi, [5, 2, np.nan, 0])
    np.testing.assert_array_equal(e.mean, [3, 2, np.nan, 0])
    # As steps: 5 holds from 0.5 s into slice 1 (so its maximum is 5); 2 holds 1.0-1.2 s, then
    # the NaN leaves the value undefined until 3.5 s; 0 then holds to the end. Time averages:
    # slice 0 (1 for 0.5 s, 5 for 0.5 s) = 3; slice 1 = 2 (only 2 is defined); slice 3 = 0.
    s = envelope(t, y, 0.0, 4.0, bins=4, step=True)
    np.testing.assert_array_equal(s.lo, [1, 2, np.nan, 0])
    np.testing.assert_array_equal(s.hi, [5, 5, np.nan, 0])
    np.testing.assert_array_equal(s.mean, [3, 2, np.nan, 0])


def test_step_envelope_carries_the_held_value():
    from lasthop.report.envelope import envelope

    # A queue of 4 packets from 0.5 s, drained to 0 at 2.5 s, over 4 one-second slices: slice 1
    # has no change but holds 4 throughout; slice 2 holds 4 for 0.5 s and 0 for 0.5 s (mean 2);
    # slice 3 holds 0.
    e = envelope(np.array([0.5, 2.5]), np.array([4, 0], dtype=np.uint64), 0.0, 4.0, bins=4, step=True)
    np.testing.assert_array_equal(e.lo, [4, 4, 0, 0])
    np.testing.assert_array_equal(e.hi, [4, 4, 4, 0])
    np.testing.assert_array_equal(e.mean, [4, 4, 2, 0])


@pytest.mark.parametrize("step", [False, True])
def test_a_series_read_in_pieces_has_the_envelope_of_the_whole_to_the_bit(step, monkeypatch):
    # A long trace is reduced as its file is read, row group by row group (envelopes()): each
    # slice is computed once its samples are all in, so however the series is cut — in slices,
    # on their boundaries, one sample per piece — the result is envelope()'s, bit for bit. A
    # small CHUNK makes the streaming path compute slices many times per series; NaN samples,
    # ties at slice boundaries and samples before 0 and past the end are in.
    from lasthop.report import envelope as env

    rng = np.random.default_rng(11)
    for trial in range(12):
        n = int(rng.integers(1, 4000))
        t = np.sort(rng.uniform(-1.0, 105.0, n))
        if trial % 3 == 1:
            t = np.round(t)  # many samples exactly on slice boundaries
        y = rng.integers(0, 50, n).astype(float)
        y[rng.random(n) < 0.05] = np.nan
        bins = int(rng.integers(1, 300))
        monkeypatch.setattr(env, "CHUNK", int(rng.choice([1, 7, 1 << 18])))
        want = env.envelope(t, y, 0.0, 100.0, bins, step=step)
        cuts = np.sort(rng.integers(0, n, int(rng.integers(0, 40))))
        pieces = [(a, [b, 2 * b]) for a, b in zip(np.split(t, cuts), np.split(y, cuts))]
        got, doubled = env.envelopes(iter(pieces), 0.0, 100.0, 2, bins, step=step)
        for field in ("t", "lo", "hi", "mean"):
            assert getattr(got, field).tobytes() == getattr(want, field).tobytes(), (trial, field)
        np.testing.assert_array_equal(doubled.hi, 2 * want.hi)


@pytest.mark.parametrize("step", [False, True])
def test_envelope_keeps_the_global_extremes(step):
    from lasthop.report.envelope import envelope

    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(0, 100, 200_000))
    y = rng.normal(size=len(t)).cumsum()
    e = envelope(t, y, 0.0, 100.0, bins=300, step=step)
    assert len(e.t) == 300
    assert np.nanmin(e.lo) == y.min() and np.nanmax(e.hi) == y.max()
    assert np.all(e.lo <= e.mean) and np.all(e.mean <= e.hi)


# The envelope as it was computed slice by slice in a Python loop (lasthop before the vectorised
# version): the vectorised one must give the same numbers on every kind of series.
def _reference_envelope(t, y, t_start, t_end, bins, step=False):
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y)
    if t_end <= t_start:
        raise ValueError(f"envelope: empty time range [{t_start}, {t_end}]")
    width = (t_end - t_start) / bins
    bounds = t_start + np.arange(bins + 1) * width
    lo, hi, mean = np.full(bins, np.nan), np.full(bins, np.nan), np.full(bins, np.nan)
    # t is sorted: each slice is one run of samples, found by bisection.
    cut = np.r_[0, np.searchsorted(t, bounds[1:-1], side="left"), len(t)]
    floats = y.dtype.kind == "f"
    held = math.nan  # the value a step series holds coming into the slice
    for k in range(bins):
        s, e = cut[k], cut[k + 1]
        v = y[s:e] if y.dtype == np.float64 else y[s:e].astype(np.float64)
        if step:
            a, b = bounds[k], bounds[k + 1]
            ts = np.clip(t[s:e], a, b)  # samples before t_start or past t_end count at the edges
            w = np.empty(e - s)
            np.subtract(ts[1:], ts[:-1], out=w[:-1])
            if e > s:
                w[-1] = b - ts[-1]
            held_w = (ts[0] if e > s else b) - a
        if floats and e > s and np.isnan(v).any():
            ok = ~np.isnan(v)
            v = v[ok]
            if step:
                w = w[ok]
        lo[k], hi[k], mean[k] = _reference_stats(v, w if step else None, held, held_w if step else 0.0)
        if step and e > s:
            held = y[e - 1]  # NaN: an undefined stretch follows
    return lo, hi, mean


def _reference_stats(v: np.ndarray, w: np.ndarray | None, held: float, held_w: float) -> tuple[float, float, float]:
    carried = w is not None and not math.isnan(held)
    if len(v) == 0:
        return (held, held, held) if carried else (math.nan, math.nan, math.nan)
    lo, hi = float(v.min()), float(v.max())
    if w is None:
        return lo, hi, float(v.mean())
    total = float(w.sum()) + (held_w if carried else 0.0)
    # Not np.dot: BLAS threads spin on a busy machine, ten times slower here.
    weighted = float(np.multiply(w, v, out=w).sum()) + (held_w * held if carried else 0.0)
    if carried:
        lo, hi = min(lo, held), max(hi, held)
    return lo, hi, (weighted / total if total > 0 else float(v.mean()))


@pytest.mark.parametrize("step", [False, True])
@pytest.mark.parametrize("case", ["random", "gaps", "outside", "few", "ints"])
def test_vectorised_envelope_equals_the_slice_by_slice_loop(step, case, monkeypatch):
    from lasthop.report import envelope as env

    rng = np.random.default_rng(11)
    n = {"few": 40, "random": 50_000}.get(case, 20_000)
    t = np.sort(rng.uniform(0, 100, n))
    y = rng.normal(size=n).cumsum()
    if case == "gaps":  # NaN stretches and a hole of 30 s without samples
        y[rng.random(n) < 0.05] = np.nan
        keep = (t < 20) | (t > 50)
        t, y = t[keep], y[keep]
    if case == "outside":  # samples before the start and after the end
        t = t * 1.2 - 10
    if case == "ints":
        y = rng.integers(0, 50, n).astype(np.uint64)
    monkeypatch.setattr(env, "CHUNK", 997)  # many chunks, each boundary inside a run of slices
    got = env.envelope(t, y, 0.0, 100.0, bins=300, step=step)
    want = _reference_envelope(t, y, 0.0, 100.0, 300, step=step)
    for g, w in zip((got.lo, got.hi, got.mean), want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_names_from_a_scenario_cannot_break_out_of_the_page():
    from lasthop.report.page import chart_data, page

    chart = {"id": "x\"><script>", "kind": "bars", "title": "a</script><script>alert(1)</script>", "caption": "<b>",
             "members": ["</script>"], "counters": [], "unit": ""}
    data = chart_data([chart])
    # "<" is escaped inside the JSON, which still reads back as the same text.
    assert "<" not in data and json.loads(data)[0]["title"] == chart["title"]
    html_page = page("t", "", [], "", charts=[chart])
    assert html_page.count("<script>") == 2 and "&lt;/script&gt;" in html_page  # uPlot's and charts.js; the title escaped


def test_chart_numbers_round_to_four_digits():
    from lasthop.report.charts import numbers

    assert numbers([12_345_678.0, 0.000123456, np.nan, 0.0, -2.5e-7, 1.0]) == [12_350_000.0, 0.0001235, None, 0.0, -2.5e-7, 1.0]


def test_long_runs_draw_envelopes(tmp_path):
    # 60 s at 10 ms intervals: 6000 samples per flow, more than the panel's 300 slices x 2, so
    # the throughput is embedded as an envelope (300 slices) and the caption says how to read it.
    r = lasthop_cli("run", "--set", "simulation.duration=60s", "--set", "simulation.interval=10ms", "--out", str(tmp_path / "r"),
                    "-q")
    assert r.returncode == 0, r.stderr
    thr = _by_id(tmp_path / "r")["throughput"]
    assert "the line is the mean of each of the figure" in thr["caption"]
    assert all(len(s["t"]) == 300 and "hi" in s for p in thr["panels"] for s in p["series"])


def test_rate_groups():
    from lasthop.report.run import rate_groups

    # The home run's peaks (b/s): a new group starts below 1/10 of the group's fastest flow.
    peaks = {"video": 1.27e6, "game-down": 54.7e3, "game-up": 11.2e3, "chat-down": 331e3, "chat-up": 308e3, "ftp": 20.0e6}
    assert rate_groups(peaks) == [["ftp"], ["video", "chat-down", "chat-up"], ["game-down", "game-up"]]
    # Exactly 10x below joins (it is not below 1/10); at most four panels, the slowest share the last.
    assert rate_groups({"a": 1.0, "b": 0.1}) == [["a", "b"]]
    assert rate_groups({f"f{i}": 100.0 ** -i for i in range(6)}) == [["f0"], ["f1"], ["f2"], ["f3", "f4", "f5"]]


def test_parameter_axes():
    from lasthop.report.sweep import parameter_axis

    # Positions are SI values from the core's unit parser: 10 Mb/s is 1e7 b/s.
    a = parameter_axis("links.bottleneck.rate", ["10Mbps", "20Mbps"])
    assert (a.numeric, a.integer, a.unit, a.positions) == (True, False, "b/s", {"10Mbps": 1e7, "20Mbps": 2e7})
    assert a.name == "links.bottleneck.rate (b/s)"
    # Mixed units are placed by value (500 kb/s below 1 Mb/s, not at 500 beyond 2).
    m = parameter_axis("links.bottleneck.rate", ["500kbps", "1Mbps", "2Mbps"])
    assert (m.numeric, m.positions) == (True, {"500kbps": 5e5, "1Mbps": 1e6, "2Mbps": 2e6})
    # Counts keep integer ticks; values that are no quantities stay categories in the grid's order.
    assert parameter_axis("q", ["20p", "200p"]).integer is True
    assert parameter_axis("x", ["0.5", "1.5"]).integer is False
    c = parameter_axis("flows.bulk.tcp.sack", ["false", "true"])
    assert (c.numeric, c.positions) == (False, {"false": 0.0, "true": 1.0})


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s"
    r = lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.rate=10Mbps,20Mbps", "--grid", "links.bottleneck.queue=20p,200p",
                    "--grid", "flows.bulk.tcp.sack=false,true", "--seeds", "2", "--workers", "2",
                    "--set", "simulation.duration=2s", "--set", "links.bottleneck.loss=0.01", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_sweep_report_facets_by_the_second_parameter(sweep_dir):
    g = _by_id(sweep_dir)["sweep_goodput_bps"]
    # One panel per queue value, titled with the parameter's name; the x axis names the first
    # parameter with its SI unit and is ticked at 10 and 20 Mb/s; lines per flow and per value of
    # the third parameter, named in the legend beside the panels (its title names the parameters).
    assert [f["title"] for f in g["facets"]] == ["links.bottleneck.queue = 20p", "links.bottleneck.queue = 200p"]
    assert g["x"]["label"] == "links.bottleneck.rate (b/s)" and g["x"]["labels"] == ["10 Mb/s", "20 Mb/s"]
    assert g["x"]["positions"] == [1e7, 2e7] and not g["x"]["integer"]
    assert g["legend"]["title"] == "flow,\nflows.bulk.tcp.sack"
    entries = {e["name"]: e for e in g["legend"]["entries"]}
    assert sorted(entries) == ["bulk, false", "bulk, true", "voice, false", "voice, true"]
    # A flow keeps its colour; the third parameter's values differ by line style.
    assert entries["bulk, false"]["color"] == entries["bulk, true"]["color"] != entries["voice, false"]["color"]
    assert entries["bulk, false"]["dash"] != entries["bulk, true"]["dash"]
    assert all(len(line["mean"]) == 2 for f in g["facets"] for line in f["lines"])


def test_sweep_report_means_and_intervals_are_the_runs(sweep_dir):
    g = _by_id(sweep_dir)["sweep_goodput_bps"]
    flows = pq.read_table(sweep_dir / "flows.parquet").to_pandas()
    sack = flows["flows.bulk.tcp.sack"].astype(str).str.lower()
    entries = [e["name"] for e in g["legend"]["entries"]]
    checked = 0
    for facet, queue in zip(g["facets"], ["20p", "200p"]):
        for line, entry in zip(facet["lines"], entries):
            name, sack_value = entry.split(", ")
            for i, rate in enumerate(["10Mbps", "20Mbps"]):
                m = ((flows["name"] == name) & (flows["links.bottleneck.rate"].astype(str) == rate)
                     & (flows["links.bottleneck.queue"].astype(str) == queue) & (sack == sack_value))
                v = flows.loc[m, "goodput_bps"].to_numpy(dtype=float)
                assert len(v) == 2  # two seeds
                np.testing.assert_allclose(line["mean"][i], v.mean(), rtol=VALUE_RTOL)
                # Half-width of the 95 % CI over 2 seeds: t(0.975, 1 degree of freedom) = 12.7062
                # (Student's t table) x the sample standard deviation / sqrt(2).
                np.testing.assert_allclose(line["ci"][i], 12.7062 * v.std(ddof=1) / np.sqrt(2), rtol=1e-4, atol=1e-6)
                checked += 1
    assert checked == 16


def test_sweep_report_integer_parameters_keep_integer_ticks(sweep_dir):
    from lasthop.report.sweep import METRICS, _aggregate, _metric_chart, parameter_axis
    from lasthop.sweep import SweepResults

    res = SweepResults.load(sweep_dir)
    meta = json.loads((sweep_dir / "sweep.json").read_text())
    x = parameter_axis("links.bottleneck.queue", ["20p", "200p"])
    column, what, unit, scale = METRICS[0]
    chart = _metric_chart(_aggregate(res, column), meta, column, what, unit, scale, x, None, [])
    assert chart["x"]["integer"] and chart["x"]["labels"] == ["20", "200"] and chart["x"]["label"] == "links.bottleneck.queue (packets)"


@needs_chromium
def test_report_renders_in_headless_chromium(home_dir, tmp_path):
    r = _browser(["--dump-dom", (home_dir / "report.html").as_uri()], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    charts = report_charts(home_dir / "report.html")
    assert f'data-charts-drawn="{len(charts)}"' in dom and "missing\">This figure could not" not in dom
    figures = {m.group(1): m.group(2) for m in re.finditer(r'<figure id="([^"]+)" class="chart".*?>(.*?)</figure>', dom, flags=re.S)}
    assert list(figures) == [c["id"] for c in charts]
    # Each time panel is a uPlot canvas; every plot area starts at the same x and has the same
    # width, so one moment is at one horizontal position in every time figure of the page.
    plots = []
    for fid in TIME_FIGURES:
        overs = re.findall(r'class="u-over" style="([^"]*)"', figures[fid])
        assert overs and figures[fid].count("<canvas") == len(overs), fid
        plots += [tuple(re.search(rf"{k}: ([\d.]+)px", s).group(1) for k in ("left", "width")) for s in overs]
    assert len(set(plots)) == 1, plots
    # The MAC counters: a bar per member and counter, the count written beside it.
    assert figures["mac_home"].count('class="bar"') == 5 * 5
    shot = tmp_path / "shot.png"
    _browser([f"--screenshot={shot}", "--window-size=1200,3000", (home_dir / "report.html").as_uri()], tmp_path)
    assert shot.exists() and shot.stat().st_size > 100_000, "a rendered page with plots, not a blank one"


@needs_chromium
def test_sweep_report_renders_with_the_legend_off_the_data(sweep_dir, tmp_path):
    r = _browser(["--dump-dom", (sweep_dir / "report.html").as_uri()], tmp_path)
    dom = r.stdout
    assert 'data-charts-drawn="4"' in dom and "missing\">This figure could not" not in dom
    for fig in re.findall(r'<figure id="sweep_[^"]+" class="chart".*?</figure>', dom, flags=re.S):
        # Two facets (a canvas each) in the grid; the legend a sibling of the grid, beside it.
        grid = re.search(r'<div class="facets".*?</div></div></div>(?=<div class="legend")', fig, flags=re.S)
        assert grid and grid.group(0).count("<canvas") == 2 and "legend" not in grid.group(0)
        assert "flows.bulk.tcp.sack" in fig.split('<div class="legend"', 1)[1]


def test_report_command_regenerates_the_same_bytes(run_dir):
    before = (run_dir / "report.html").read_bytes()
    (run_dir / "report.html").unlink()
    r = lasthop_cli("report", str(run_dir))
    assert r.returncode == 0, r.stderr
    # Deterministic: read back from disk, the report is byte for byte the one the run wrote.
    assert (run_dir / "report.html").read_bytes() == before


def test_report_command_rejects_other_directories(tmp_path):
    r = lasthop_cli("report", str(tmp_path))
    assert r.returncode == 2 and "neither summary.json" in r.stderr


def test_progress_covers_the_whole_command(monkeypatch):
    import io
    import time

    from rich.console import Console

    from lasthop import cli

    out = io.StringIO()
    monkeypatch.setattr(cli, "err", Console(file=out, force_terminal=True, width=120))
    p = cli._LazyProgress(time.perf_counter() - 5.0)  # a command running for 5 s: the bar shows
    p(1800.0, 3600.0)
    p.bar.refresh()
    assert "simulating" in out.getvalue() and "1800.0/3600.0 s simulated" in out.getvalue()
    p.writing()
    p.report(2, 6, "drawing the report")
    p.bar.refresh()
    p.close()
    assert "figure 2/6" in out.getvalue() and "writing results" in out.getvalue()


def test_figure_files_drawn_in_forked_children_are_the_bytes_drawn_here(run_dir, tmp_path, monkeypatch):
    from lasthop.report import draw, run_report

    forked, here = tmp_path / "forked", tmp_path / "here"
    shutil.copytree(run_dir, forked)
    shutil.copytree(run_dir, here)
    run_report(forked, png=True)
    monkeypatch.setattr(draw, "FORK", False)
    run_report(here, png=True)
    files = lambda d: {p.name: p.read_bytes() for p in [d / "report.html", *sorted((d / "figures").iterdir())]}  # noqa: E731
    assert files(here) == files(forked) and len(files(here)) == 1 + 2 * len(DUMBBELL_FIGURES)


def test_a_failing_figure_is_redone_here_and_raises_its_error(tmp_path):
    from lasthop.report import draw

    def fine() -> None:
        fig = draw.Figure(figsize=(2, 1))
        fig.add_subplot().plot([0, 1], [0, 1])
        figs.add(fig, "fine", "a line")

    def broken() -> None:
        raise ValueError("no column 'rtt' in trace tcp/bulk")

    # With two or more processes the second build runs in a forked child, where the error ends
    # the child; the build is run again here, so the user sees the error itself rather than a
    # missing figure. The first build's figure is drawn all the same.
    with pytest.raises(ValueError, match="no column 'rtt'"):
        with draw.Figures(tmp_path, png=True) as figs:
            figs.draw([fine, broken])
    assert (tmp_path / "figures" / "fine.svg").exists() and (tmp_path / "figures" / "fine.png").exists()


def test_matplotlib_figures_of_png_keep_the_rate_panels(home_dir, tmp_path):
    d = tmp_path / "home"
    shutil.copytree(home_dir, d)
    r = lasthop_cli("report", str(d), "--png")
    assert r.returncode == 0, r.stderr
    svg = (d / "figures" / "throughput.svg").read_text()
    # The same three rate panels as the page's figure, each flow in one legend.
    assert len(re.findall(r'<g id="axes_\d+"', svg)) == 3
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert [t for t in texts if t in {"ftp", "video", "chat-down", "chat-up", "game-down", "game-up"}] == \
        ["ftp", "video", "chat-down", "chat-up", "game-down", "game-up"]


def test_the_last_time_of_a_trace_is_found_past_empty_row_groups(tmp_path):
    # A spooled trace can end with a row group without rows; the report's time axis takes the
    # last sample's time (here 2.5 s), not an index into nothing.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lasthop.report.run import _last_time

    schema = pa.schema([("time_s", pa.float64()), ("packets", pa.uint64())])
    with pq.ParquetWriter(tmp_path / "t.parquet", schema) as w:
        w.write_table(pa.table({"time_s": [0.5, 2.5], "packets": [1, 0]}, schema=schema))
        w.write_table(schema.empty_table())
    f = pq.ParquetFile(tmp_path / "t.parquet")
    assert f.metadata.num_row_groups == 2 and f.metadata.row_group(1).num_rows == 0
    assert _last_time(f) == 2.5


MODERN_WLAN = """
[simulation]
duration = "3s"
[[nodes]]
name = "AP"
[[nodes]]
name = "S1"
[[nodes]]
name = "S2"
[[wlans]]
name = "bss"
standard = "802.11ac"
ap = "AP"
stations = ["S1", "S2"]
rate_control = "minstrel_ht"
positions = { AP = [0.0, 0.0], S1 = [5.0, 0.0], S2 = [40.0, 0.0] }
[[flows]]
name = "down"
src = "AP"
dst = "S1"
app = { type = "cbr", size = "1472B", interval = "100us" }
[[flows]]
name = "call"
src = "S2"
dst = "AP"
dscp = 46
app = { type = "cbr", size = "160B", interval = "20ms" }
[probes]
queues = ["bss"]
"""


def test_aggregating_wlans_get_ampdu_rate_and_access_category_panels(tmp_path):
    scenario = tmp_path / "modern.toml"
    scenario.write_text(MODERN_WLAN)
    d = tmp_path / "out"
    r = lasthop_cli("run", str(scenario), "--out", str(d), "-q")
    assert r.returncode == 0, r.stderr
    summary = json.loads((d / "summary.json").read_text())
    members = {m["node"]: m for m in summary["wlans"][0]["members"]}
    charts = _by_id(d)
    # A-MPDU sizes: per member, the histogram of summary.json's aggregation (bins with A-MPDUs).
    ampdu = charts["ampdu_bss"]
    # (S1 only receives: no bars of its own.)
    assert ampdu["kind"] == "bars" and ampdu["members"] == ["AP", "S2"]
    for i, node in enumerate(ampdu["members"]):
        assert sum(c["values"][i] for c in ampdu["counters"]) == members[node]["aggregation"]["ampdus"]
    assert f"AP {100 * members['AP']['aggregation']['airtime_share']:.1f} % of the time on the air" in ampdu["caption"]
    # PHY rates: one step series per link that sent, ending on the rate table's last row for it.
    rates = charts["rates_bss"]
    index = json.loads((d / "traces" / "index.json").read_text())
    stem = next(s for s, n in index.items() if n == "rates/bss")
    table = pq.read_table(d / "traces" / f"{stem}.parquet").to_pylist()
    names = [s["name"] for s in rates["panels"][0]["series"]]
    assert sorted(names) == ["AP→S1", "S2→AP"]
    for s in rates["panels"][0]["series"]:
        last = [row for row in table if f"{row['from']}→{row['to']}" == s["name"]][-1]
        assert s["y"][-1] == pytest.approx(last["rate_mbps"] * 1e6, rel=1e-3)
    # The call (EF) goes in AC_VO at S2, the download in AC_BE at the AP: both in the EDCA table.
    page_text = (d / "report.html").read_text()
    assert "bss: access categories (EDCA)" in page_text
    assert [a["ac"] for a in members["S2"]["aggregation"]["access_categories"]] == ["AC_VO"]
    assert [a["ac"] for a in members["AP"]["aggregation"]["access_categories"]] == ["AC_BE"]
    # `lasthop report` reads the directory back (its rate table checked as one) to the same page.
    before = (d / "report.html").read_bytes()
    r = lasthop_cli("report", str(d))
    assert r.returncode == 0, r.stderr
    assert (d / "report.html").read_bytes() == before
