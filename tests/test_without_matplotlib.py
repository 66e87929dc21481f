"""matplotlib is optional (the `plot` extra): without it `lasthop run` still writes its results
and a whole report.html (its figures are drawn by the browser, not by matplotlib), `--png` says
in one line and in the page which figure files it could not draw and how to get them, and
`lasthop plot` says the same in one line. matplotlib is made unimportable in a child process by
a finder in front of sys.meta_path, as if it were not installed."""

import html
import subprocess
import sys

import pytest

from conftest import ROOT, report_charts

# A finder that answers every matplotlib import as a missing module does.
WITHOUT_MATPLOTLIB = """
import importlib.abc, sys
class NoMatplotlib(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NoMatplotlib())
sys.argv = ["lasthop", *sys.argv[1:]]
from lasthop.cli import main
try:
    main()
finally:
    assert not [m for m in sys.modules if m.split(".")[0] == "matplotlib"], "matplotlib was imported"
"""
HINT = "pip install 'lasthop[plot]'"
# What the dumbbell's report draws (tests/test_report.py's DUMBBELL_FIGURES, as the page names them).
DUMBBELL_FIGURES = ["throughput at the receiver per flow", "one-way delay and jitter over time", "one-way delay CDF",
                    "TCP windows", "queue lengths"]


def lasthop_without_matplotlib(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_MATPLOTLIB, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    r = lasthop_without_matplotlib("run", "--set", "simulation.duration=5s", "--out", str(d), "-q")
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == ""  # nothing is missing from the report
    return d


def test_a_run_writes_its_results_and_a_whole_report(run_dir):
    assert {"summary.json", "flows.parquet", "intervals.parquet", "report.html"} <= {p.name for p in run_dir.iterdir()}
    page = html.unescape((run_dir / "report.html").read_text())
    assert "<table>" in page and "bulk" in page and "voice" in page
    assert [c["title"].split("\n")[0].split(" — ")[1] for c in report_charts(run_dir / "report.html")] == DUMBBELL_FIGURES
    assert 'class="missing"' not in page.split("<script", 1)[0]


def test_png_names_each_missing_figure_file_and_how_to_get_it(run_dir):
    r = lasthop_without_matplotlib("report", str(run_dir), "--png")
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines()[-1] == f"warning: no figure files (--png): matplotlib is not installed: {HINT} adds it"
    page = html.unescape((run_dir / "report.html").read_text())
    note = page[page.index('<p class="missing">'):]
    note = note[:note.index("</p>")]
    assert "Figure files (--png) not drawn" in note and HINT in note and "lasthop report --png <this directory>" in note
    assert [f for f in DUMBBELL_FIGURES if f in note] == DUMBBELL_FIGURES
    assert not list((run_dir / "figures").glob("*.svg")) and not list((run_dir / "figures").glob("*.png"))
    # The page still has its figures.
    assert len(report_charts(run_dir / "report.html")) == len(DUMBBELL_FIGURES)


def test_lasthop_plot_says_so_in_one_line(run_dir):
    r = lasthop_without_matplotlib("plot", str(run_dir), "--metric", "goodput_bps", "--out", str(run_dir / "g.png"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: lasthop plot draws with matplotlib, and matplotlib is not installed: {HINT} adds it"]
    assert not (run_dir / "g.png").exists()
