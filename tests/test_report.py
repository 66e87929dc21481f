"""Reports: what the figures show (panels, axes, notation, envelopes that keep every extreme),
that they render in a real browser offline, and that `lasthop report` regenerates them."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import lasthop_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# `make test` installs Debian's chromium when it runs as root on Debian (scripts/system-deps.sh);
# elsewhere these tests are skipped, and say so.
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make test installs it with apt-get as root)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
# The run report of the dumbbell: throughput, delay and jitter, delay CDF, TCP windows of bulk,
# queues (the bottleneck's forward queue; the ACK direction never holds a packet).
DUMBBELL_FIGURES = ["throughput", "delay", "delay_cdf", "tcp", "queues"]


def _browser(args, tmp_path):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def _texts(svg: str) -> list[str]:
    """The text of an SVG figure (matplotlib writes text as <text>, svg.fonttype none)."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _axes(svg: str) -> int:
    return len(re.findall(r'<g id="axes_\d+"', svg))


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


def test_report_is_self_contained(run_dir):
    page = (run_dir / "report.html").read_text()
    # Works offline: nothing is fetched (XML namespace URIs are names, not resources).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no external resources"
    assert "<script" not in page and "<link" not in page
    assert re.findall(r'<figure id="([^"]+)">', page) == DUMBBELL_FIGURES
    assert page.count("<svg") == len(DUMBBELL_FIGURES)
    for title in ["throughput at the receiver per flow", "one-way delay CDF", "TCP windows", "flow bulk", "dumbbell (seed 1)"]:
        assert title in page, title
    for unit in ["time (s)", "throughput at receiver", "one-way delay", "queue length (packets)"]:
        assert unit in page, unit
    # Each figure rendered once, as the SVG the page inlines; PNG only on request (--png).
    assert sorted(p.stem for p in (run_dir / "figures").glob("*.svg")) == sorted(DUMBBELL_FIGURES)
    assert not list((run_dir / "figures").glob("*.png"))


def test_png_on_request_draws_the_same_figures(run_dir, tmp_path):
    d = tmp_path / "png"
    shutil.copytree(run_dir, d)
    r = lasthop_cli("report", str(d), "--png")
    assert r.returncode == 0, r.stderr
    pngs = {p.stem: p.read_bytes() for p in (d / "figures").glob("*.png")}
    assert sorted(pngs) == sorted(DUMBBELL_FIGURES)
    assert all(b.startswith(b"\x89PNG") for b in pngs.values())
    # The SVGs and the page are those of the run, with or without PNGs beside them.
    for name in DUMBBELL_FIGURES:
        assert (d / "figures" / f"{name}.svg").read_bytes() == (run_dir / "figures" / f"{name}.svg").read_bytes()
    assert (d / "report.html").read_bytes() == (run_dir / "report.html").read_bytes()


def test_home_flows_of_different_rates_get_their_own_panels(home_dir):
    svg = (home_dir / "figures" / "throughput.svg").read_text()
    # Peaks in summary.json's run (intervals of 100 ms): ftp ~20 Mb/s; video ~1.3 Mb/s, chat
    # ~0.3 Mb/s (within 10x of video); game-down ~55 kb/s, game-up ~11 kb/s (more than 10x
    # below video): three panels, each flow in one legend.
    assert _axes(svg) == 3
    texts = _texts(svg)
    assert [t for t in texts if t in {"ftp", "video", "chat-down", "chat-up", "game-down", "game-up"}] == \
        ["ftp", "video", "chat-down", "chat-up", "game-down", "game-up"]
    # The games' panel is scaled to the games (ticks in kb/s up to tens of kb/s), not flat at 0
    # under a 20 Mb/s axis as when every flow shared one.
    game_ticks = texts[texts.index("chat-up") + 1:texts.index("game-down")]
    kbps = [float(t.split()[0]) for t in game_ticks if t.endswith(" kb/s")]
    assert kbps and max(kbps) >= 20, game_ticks


def test_numbers_in_engineering_notation(home_dir):
    page = (home_dir / "report.html").read_text()
    texts = [t for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S) for t in _texts(svg)]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert not [t for t in texts + cells if re.search(r"\de[+-]?\d", t)], "no 1.217e+07 style numbers"
    summary = json.loads((home_dir / "summary.json").read_text())
    ftp = next(f for f in summary["flows"] if f["name"] == "ftp")
    row = cells[cells.index("ftp"):cells.index("ftp") + 4]
    # goodput_bps of summary.json to 3 significant digits with its SI prefix, e.g. 3.49 Mb/s.
    exp3 = int(np.floor(np.log10(ftp["goodput_bps"]) / 3))
    assert row[2] == f"{ftp['goodput_bps'] / 1000 ** exp3:.3g} {' kMG'[exp3]}b/s".replace("  ", " "), row


def test_wlan_mac_counters_are_drawn(home_dir):
    summary = json.loads((home_dir / "summary.json").read_text())
    wlan = summary["wlans"][0]
    texts = _texts((home_dir / "figures" / f"mac_{wlan['name']}.svg").read_text())
    for label in ["attempts", "retries", "collisions", "drops (queue + retry limit)"]:
        assert label in texts
    # Each member's counters appear as written out numbers: the AP's attempts and collisions as
    # in summary.json, drops as queue + retry-limit drops.
    ap = next(m for m in wlan["members"] if m["node"] == "AP")
    for value in [ap["attempts"], ap["collisions"], ap["queue_drops"] + ap["retry_drops"]]:
        assert f"{value:,}".replace(",", "\u2009") in texts, value


def test_queues_that_never_build_are_named_not_drawn(home_dir):
    page = (home_dir / "report.html").read_text()
    svg = (home_dir / "figures" / "queues.svg").read_text()
    summary = json.loads((home_dir / "summary.json").read_text())
    peaks = {m["node"]: m["max_queue_packets"] for m in summary["wlans"][0]["members"]}
    drawn = [n for n, p in peaks.items() if p >= 4]
    assert _axes(svg) == len(drawn) and drawn, peaks  # the AP and N3 in the home run
    for node, peak in peaks.items():
        if peak < 4:
            assert f"wlan/home/{node} (at most {peak})" in page


def test_time_axes_are_aligned(home_dir):
    # Every time figure spans 0 to the simulated 180 s with the same plot area: the page stacks
    # them, so a moment is at one horizontal position in all of them. The time axis' tick
    # labels (centred numbers) are the same, at the same x, in every figure.
    ticks = {}
    for name in ["throughput", "delay", "tcp", "queues"]:
        svg = (home_dir / "figures" / f"{name}.svg").read_text()
        assert "time (s)" in _texts(svg), name
        ticks[name] = re.findall(r'<text[^>]*text-anchor: middle" x="([\d.]+)"[^>]*>(\d+)</text>', svg)
    assert ticks["throughput"][0][1] == "0" and ticks["throughput"][-1][1] == "175", ticks["throughput"]
    assert all(t == ticks["throughput"] for t in ticks.values()), ticks


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
def test_envelope_keeps_the_global_extremes(step):
    from lasthop.report.envelope import envelope

    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(0, 100, 200_000))
    y = rng.normal(size=len(t)).cumsum()
    e = envelope(t, y, 0.0, 100.0, bins=300, step=step)
    assert len(e.t) == 300
    assert np.nanmin(e.lo) == y.min() and np.nanmax(e.hi) == y.max()
    assert np.all(e.lo <= e.mean) and np.all(e.mean <= e.hi)


def test_long_runs_draw_envelopes(tmp_path):
    # 60 s at 10 ms intervals: 6000 samples per flow, more than the panel's 300 slices x 2, so
    # the throughput is drawn as an envelope and the caption says how to read it.
    r = lasthop_cli("run", "--set", "simulation.duration=60s", "--set", "simulation.interval=10ms", "--out", str(tmp_path / "r"),
                    "-q")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "r" / "report.html").read_text()
    caption = re.search(r'<figure id="throughput">.*?<figcaption>([^<]*)</figcaption>', page, flags=re.S).group(1)
    assert "the line is the mean of each of the figure" in caption


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
    svg = (sweep_dir / "figures" / "sweep_goodput_bps.svg").read_text()
    texts = _texts(svg)
    # One panel per queue value, titled with the parameter's name; the x axis names the first
    # parameter with its SI unit and is ticked at 10 and 20 Mb/s; lines per flow and per value of
    # the third parameter, named in the legend (its title names the parameter).
    assert _axes(svg) == 2
    for q in ["20p", "200p"]:
        assert f"links.bottleneck.queue = {q}" in texts
    assert "links.bottleneck.rate (b/s)" in texts and "10 Mb/s" in texts and "20 Mb/s" in texts
    assert "flows.bulk.tcp.sack" in texts and "bulk, true" in texts and "voice, false" in texts


def test_sweep_legend_is_off_the_data(sweep_dir):
    svg = (sweep_dir / "figures" / "sweep_goodput_bps.svg").read_text()
    # Legend entries start right of every panel's plot area (the rightmost x of a clip rectangle).
    clips = [float(x) + float(w) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]
    legend_x = [float(x) for x in re.findall(r'<text[^>]*x="([\d.]+)"[^>]*>(?:bulk|voice), (?:true|false)<', svg)]
    assert clips and legend_x and min(legend_x) > max(clips)


@needs_chromium
def test_report_renders_in_headless_chromium(run_dir, tmp_path):
    r = _browser(["--dump-dom", (run_dir / "report.html").as_uri()], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert re.findall(r"<figure id=\"([^\"]+)\">", dom) == DUMBBELL_FIGURES
    # Every figure holds an SVG with drawn paths (the plot lines), not an empty frame.
    for fig in re.findall(r"<figure.*?</figure>", dom, flags=re.S):
        assert "<svg" in fig and fig.count("<path") > 10
    shot = tmp_path / "shot.png"
    r = _browser([f"--screenshot={shot}", "--window-size=1200,3000", (run_dir / "report.html").as_uri()], tmp_path)
    assert shot.exists() and shot.stat().st_size > 50_000, "a rendered page with plots, not a blank one"


def test_report_command_regenerates_the_same_bytes(run_dir):
    before = {p.name: p.read_bytes() for p in [run_dir / "report.html", *sorted((run_dir / "figures").iterdir())]}
    (run_dir / "report.html").unlink()
    shutil.rmtree(run_dir / "figures")
    r = lasthop_cli("report", str(run_dir))
    assert r.returncode == 0, r.stderr
    after = {p.name: p.read_bytes() for p in [run_dir / "report.html", *sorted((run_dir / "figures").iterdir())]}
    # Deterministic: read back from disk, the report is byte for byte the one the run wrote.
    assert after == before


@needs_chromium
def test_sweep_report_renders(sweep_dir, tmp_path):
    r = _browser(["--dump-dom", (sweep_dir / "report.html").as_uri()], tmp_path)
    dom = r.stdout
    assert len(re.findall(r"<figure id=\"sweep_", dom)) == 4
    assert "mean ± 95 % CI over 2 seed(s)" in dom and "links.bottleneck.rate (b/s)" in dom


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


def test_figures_drawn_in_forked_children_are_the_bytes_drawn_here(run_dir, tmp_path, monkeypatch):
    from lasthop.report import draw, run_report

    forked = {p.name: p.read_bytes() for p in [run_dir / "report.html", *sorted((run_dir / "figures").iterdir())]}
    here = tmp_path / "here"
    shutil.copytree(run_dir, here)
    monkeypatch.setattr(draw, "FORK", False)
    run_report(here)
    assert {p.name: p.read_bytes() for p in [here / "report.html", *sorted((here / "figures").iterdir())]} == forked


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
