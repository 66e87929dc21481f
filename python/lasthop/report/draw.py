"""matplotlib drawing for the figure files of ``--png`` (report.html draws its own figures in the
browser, charts.js), ``lasthop plot`` and ``lasthop compare``: matplotlib without pyplot (no
global figure state), one layout for every figure, engineering notation on axes, and long
series drawn as min/max envelopes.

Every figure is the same width with the same left and right margins, so the time axes of a
run's figures line up when the page shows them one above the other; legends sit in the right
margin, off the data. Each figure is rendered once as SVG (``lasthop compare`` inlines it in its
page) and, for a report's --png, as PNG too (twice the SVG's cost: Agg rasterises every glyph
and line). The figures of a report are split over one process per core (Figures).
"""

from __future__ import annotations

import io
import json
import os
import select
import sys
import warnings
from pathlib import Path
from typing import Callable

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator, NullFormatter, NullLocator

from lasthop.errors import OutputError
from lasthop.files import replace_file, safe_name, subdirectory
from lasthop.report import charts
from lasthop.report.envelope import Envelope, Raw, is_dense, reduce, values, wide  # noqa: F401 (for the figures' code)
from lasthop.report.text import eng, label, title_lines  # noqa: F401

# Deterministic files: no random ids, no timestamps; text stays text in the SVG.
matplotlib.rcParams["svg.hashsalt"] = "lasthop"
matplotlib.rcParams["svg.fonttype"] = "none"
METADATA_SVG = {"Date": None}
METADATA_PNG = {"Software": None}
PNG_DPI = 100
# Figures rendered by forked children (see Figures); Linux only: fork is safe there with the
# threads an Arrow or rich process has, as the children only draw with matplotlib and exit.
FORK = sys.platform == "linux"
# Processes drawing a report's figures (this one included): one per core, at most four;
# LASTHOP_REPORT_PROCESSES=1 draws everything in the calling process.
def _processes() -> int:
    text = os.environ.get("LASTHOP_REPORT_PROCESSES", "").strip()
    if not text:
        return max(1, min(os.cpu_count() or 1, 4))
    if not text.isdigit() or int(text) < 1:
        raise OutputError(f"LASTHOP_REPORT_PROCESSES={text!r}: expected a whole number of processes, 1 or more")
    return int(text)


PROCESSES = _processes()

# Layout, in inches: the same for every figure so that time axes align on the page.
WIDTH = 9.5
LEFT = 1.15
RIGHT = 2.1          # the legend column
TOP_ONE_LINE = 0.45  # a one-line title
TOP_LINE = 0.2       # each further title line
BOTTOM = 0.5
PANEL = 1.55         # height of one time-series panel
GAP = 0.3            # between panels sharing an x axis
LEGEND_ROW = 0.17    # height of one legend entry at font size 8

def flow_colors(names: list[str]) -> dict[str, str]:
    """One colour per flow, the same in every figure of a report and in the page's (charts.PALETTE:
    matplotlib's tab10, then the light half of tab20)."""
    return charts.colors(names)


class Panels:
    """A figure of panels stacked in one column (sharing the x axis if asked), laid out in
    inches from the constants above."""

    def __init__(self, heights: list[float], title: str, title_lines_: int = 1, sharex: bool = True):
        top = TOP_ONE_LINE + TOP_LINE * (title_lines_ - 1)
        total = top + BOTTOM + sum(heights) + GAP * (len(heights) - 1)
        self.fig = Figure(figsize=(WIDTH, total))
        self.axes = []
        y = total - top
        for i, h in enumerate(heights):
            y -= h
            ax = self.fig.add_axes((LEFT / WIDTH, y / total, (WIDTH - LEFT - RIGHT) / WIDTH, h / total),
                                   sharex=self.axes[0] if (sharex and self.axes) else None)
            ax.grid(alpha=0.3)
            self.axes.append(ax)
            y -= GAP
        if sharex:
            for ax in self.axes[:-1]:
                ax.tick_params(labelbottom=False)
        self.fig.suptitle(title, x=(LEFT + (WIDTH - LEFT - RIGHT) / 2) / WIDTH, y=1 - 0.08 / total, va="top", fontsize=11)


def panel_height(legend_entries: int) -> float:
    """A panel tall enough for its legend beside it."""
    return max(PANEL, LEGEND_ROW * legend_entries + 0.25)


def legend_outside(ax, title: str | None = None) -> None:
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, title=title,
                  title_fontsize=8, alignment="left")


def eng_axis(axis, unit: str) -> None:
    """Ticks in engineering notation with the unit: 10 Mb/s, 20 ms; a handful of them and no
    minor ticks (a tick costs matplotlib some milliseconds, the largest part of a figure)."""
    if axis.get_scale() == "linear":
        axis.set_major_locator(MaxNLocator(nbins=4))
    axis.set_major_formatter(EngFormatter(unit=unit))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def integer_axis(axis) -> None:
    axis.set_major_locator(MaxNLocator(nbins=4, integer=True))


def plot(ax, series: Raw | Envelope, color, name: str, log: bool = False) -> bool:
    """Draws a reduced series: samples as a line (or steps), an envelope as a light band from
    minimum to maximum with the mean as a line; on a log axis (`log`) the band leaves out
    slices whose minimum is 0. Returns whether it drew an envelope."""
    if isinstance(series, Raw):
        if len(series.t):
            draw = ax.step if series.step else ax.plot
            kw = {"where": "post"} if series.step else {}
            draw(series.t, series.y, color=color, label=label(name), linewidth=1, **kw)
        return False
    lo = np.where(series.lo > 0, series.lo, np.nan) if log else series.lo
    ax.fill_between(series.t, lo, series.hi, color=color, alpha=0.25, linewidth=0)
    ax.plot(series.t, series.mean, color=color, label=label(name), linewidth=1)
    return True


class Figures:
    """The figures of one report: each saved as figures/<name>.svg (and .png with `png`), and
    kept for the page as (name, caption, inline svg) in the order they were asked for. Use as a
    context manager: leaving it waits for every figure.

    `draw(builds)` runs functions that each draw figures and `add` them. On Linux they are
    split over one process per core, this one and forked children (build i in process i mod n):
    a child inherits the data prepared here and the warm font caches, renders and writes its
    files, sends back names and captions, and exits, so a report takes about half the time on
    two cores. A figure `add`ed directly has its PNG rendered by a forked child while this
    process renders the SVG. The bytes are those rendering here gives; what a failing child
    did not finish is redone here, where its error is raised. Without fork everything is
    rendered in turn."""

    def __init__(self, directory: Path, progress=None, total: int = 0, png: bool = False):
        self.dir = subdirectory(directory, "figures")
        for old in [*self.dir.glob("*.svg"), *self.dir.glob("*.png")]:  # an earlier report's figures
            old.unlink()
        self.progress = progress
        self.total = total
        self.png = png
        self._fork = FORK and hasattr(os, "fork") and PROCESSES > 1
        self._results: dict[int, list[tuple[str, str, str]]] = {}  # build number -> its figures
        self._done = 0
        self._current = -1  # the build whose figures add() receives (-1: figures added directly)
        self._children: dict[int, tuple[int, list[int]]] = {}  # pid -> (pipe, its builds)
        self._finished_builds: set[int] = set()
        self._received: dict[int, bytearray] = {}  # pipe -> what its child wrote so far
        self._png_children: dict[int, tuple[Figure, Path, int]] = {}  # pid -> (figure, file, pipe)
        self._to_parent: int | None = None  # in a child: where its figures are reported

    @property
    def items(self) -> list[tuple[str, str, str]]:
        return [item for build in sorted(self._results) for item in self._results[build]]

    def __enter__(self) -> "Figures":
        return self

    def __exit__(self, *exc) -> None:
        self.wait()

    def draw(self, builds: list[Callable[[], object]]) -> None:
        self.total = max(self.total, len(builds))
        processes = min(PROCESSES, len(builds)) if self._fork else 1
        if processes > 1:
            _warm_caches(self.png)
        for k in range(1, processes):
            mine = list(range(k, len(builds), processes))
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # a child: draw its share, report each, leave without the parent's exit handlers
                code = 1
                try:
                    os.close(read)
                    self._to_parent = write
                    for i in mine:
                        self._current = i
                        builds[i]()
                        os.write(write, (json.dumps(["done", i]) + "\n").encode("utf-8"))
                    code = 0
                finally:
                    os._exit(code)
            os.close(write)
            self._children[pid] = (read, mine)
        for i in range(0, len(builds), processes):
            self._run_here(i, builds[i])
            self._poll(block=False)
        while self._children:
            self._poll(block=True)
        for i in range(len(builds)):  # what a failed child left undone (normally nothing)
            if i not in self._finished_builds:
                self._run_here(i, builds[i])

    def _run_here(self, number: int, build: Callable[[], object]) -> None:
        self._current = number
        self._results[number] = []
        try:
            build()
        finally:
            self._current = -1
        self._build_done(number)

    def _build_done(self, number: int) -> None:
        self._finished_builds.add(number)
        self._done += 1
        if self.progress is not None:
            self.progress(self._done, max(self.total, self._done), "drawing the report")

    def _poll(self, block: bool) -> None:
        """Takes in what the children reported; on a child's end (its pipe closes; os.wait
        would also reap children that are not ours) reaps it."""
        pipes = {fd: pid for pid, (fd, _) in self._children.items()}
        pipes.update({fd: pid for pid, (_, _, fd) in self._png_children.items()})
        if not pipes:
            return
        for fd in select.select(list(pipes), [], [], None if block else 0)[0]:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                buf = self._received.setdefault(fd, bytearray())
                buf.extend(chunk)
                *lines, rest = buf.split(b"\n")
                self._received[fd] = bytearray(rest)
                for line in lines:
                    self._reported(json.loads(line))
                continue
            os.close(fd)
            pid = pipes[fd]
            status = os.waitpid(pid, 0)[1]
            ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            if pid in self._png_children:
                fig, path, _ = self._png_children.pop(pid)
                if not ok:
                    _save_png(fig, path)
            else:
                self._children.pop(pid)

    def _reported(self, message: list) -> None:
        if message[0] == "done":
            self._build_done(message[1])
            return
        number, name, caption = message
        self._results.setdefault(number, []).append((name, caption, _inline((self.dir / f"{name}.svg").read_bytes())))

    def add(self, fig: Figure, name: str, caption: str) -> None:
        name = safe_name(name)  # flow and link names: the files stay inside figures/
        if self.png and (self._current >= 0 or not self._fork):  # in a build: this process renders both
            _save_png(fig, self.dir / f"{name}.png")
        elif self.png:
            self._png(fig, self.dir / f"{name}.png")
        buf = io.BytesIO()
        with warnings.catch_warnings():
            # Missing glyphs in a scenario's names: the figure is still right.
            warnings.simplefilter("ignore", UserWarning)
            fig.savefig(buf, format="svg", metadata=METADATA_SVG)
        svg = buf.getvalue()
        replace_file(self.dir / f"{name}.svg", svg)
        if self._to_parent is not None:
            os.write(self._to_parent, (json.dumps([self._current, name, caption]) + "\n").encode("utf-8"))
            return
        self._results.setdefault(self._current, []).append((name, caption, _inline(svg)))
        if self._current < 0:  # added directly, not by a build
            self._build_done(-1)

    def _png(self, fig: Figure, path: Path) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(read)
                _save_png(fig, path)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._png_children[pid] = (fig, path, read)

    def wait(self) -> None:
        """Waits for every child; redoes here what one failed to."""
        while self._children or self._png_children:
            self._poll(block=True)


def _warm_caches(png: bool) -> None:
    """Draws a small figure with the reports' kinds of text once here, so forked children
    inherit loaded fonts and layout caches instead of each building its own (0.3 s of CPU
    saved on a six-figure report for 0.1 s spent)."""
    fig = Figure(figsize=(2, 1))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="x")
    ax.legend(title="t", fontsize=8)
    ax.set_title("t", fontsize=9)
    fig.suptitle("t", fontsize=11)
    eng_axis(ax.yaxis, "b/s")
    fig.savefig(io.BytesIO(), format="svg", metadata=METADATA_SVG)
    if png:
        fig.savefig(io.BytesIO(), format="png", dpi=PNG_DPI, metadata=METADATA_PNG)


def _inline(svg: bytes) -> str:
    text = svg.decode("utf-8")
    return text[text.index("<svg"):]


def _save_png(fig: Figure, path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # zlib level 1: a fifth of the PNG's cost saved for files 9 % larger.
        replace_file(path, lambda f: fig.savefig(f, format="png", dpi=PNG_DPI, metadata=METADATA_PNG,
                                                 pil_kwargs={"compress_level": 1}))
