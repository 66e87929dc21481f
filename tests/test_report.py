"""Reports render in a real browser, offline; `lasthop report` regenerates them."""

import re
import shutil
import subprocess

import pytest

from conftest import lasthop_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# `make test` installs Debian's chromium when it runs as root on Debian (scripts/system-deps.sh);
# elsewhere these tests are skipped, and say so.
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (make test installs it with apt-get as root)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def _browser(args, tmp_path):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    r = lasthop_cli("run", "--set", "simulation.duration=5s", "--out", str(d), "-q")
    assert r.returncode == 0, r.stderr
    return d


def test_report_is_self_contained(run_dir):
    page = (run_dir / "report.html").read_text()
    # Works offline: nothing is fetched (XML namespace URIs are names, not resources).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no external resources"
    assert "<script" not in page and "<link" not in page
    # throughput, delay, jitter, delay CDF, cwnd (bulk is traced), two queue directions.
    assert page.count("<svg") == 7
    for title in ["throughput per flow over time", "one-way delay CDF", "TCP windows of bulk", "dumbbell (seed 1)"]:
        assert title in page
    for unit in ["time (s)", "throughput at receiver (Mb/s)", "one-way delay (ms)", "queue length (packets)"]:
        assert unit in page, unit
    assert len(list((run_dir / "figures").glob("*.png"))) == 7 and len(list((run_dir / "figures").glob("*.svg"))) == 7


@needs_chromium
def test_report_renders_in_headless_chromium(run_dir, tmp_path):
    r = _browser(["--dump-dom", (run_dir / "report.html").as_uri()], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    figures = re.findall(r"<figure id=\"([^\"]+)\">", dom)
    assert len(figures) == 7, figures
    # Every figure holds an SVG with drawn paths (the plot lines), not an empty frame.
    for fig in re.findall(r"<figure.*?</figure>", dom, flags=re.S):
        assert "<svg" in fig and fig.count("<path") > 10
    shot = tmp_path / "shot.png"
    r = _browser([f"--screenshot={shot}", "--window-size=1200,3000", (run_dir / "report.html").as_uri()], tmp_path)
    assert shot.exists() and shot.stat().st_size > 50_000, "a rendered page with plots, not a blank one"


def test_report_command_regenerates(run_dir):
    (run_dir / "report.html").unlink()
    shutil.rmtree(run_dir / "figures")
    r = lasthop_cli("report", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert (run_dir / "report.html").read_text().count("<svg") == 7


@needs_chromium
def test_sweep_report_renders(tmp_path):
    out = tmp_path / "sweep"
    r = lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.rate=10Mbps,20Mbps", "--seeds", "2", "--workers", "2",
                    "--set", "simulation.duration=3s", "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = _browser(["--dump-dom", (out / "report.html").as_uri()], tmp_path)
    dom = r.stdout
    assert len(re.findall(r"<figure id=\"sweep_", dom)) == 4
    assert "mean ± 95 % CI over 2 seed(s)" in dom and "links.bottleneck.rate (Mbps)" in dom


def test_report_command_rejects_other_directories(tmp_path):
    r = lasthop_cli("report", str(tmp_path))
    assert r.returncode == 2 and "neither summary.json" in r.stderr
