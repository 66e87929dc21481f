"""Drawing for the reports: matplotlib without pyplot (no global figure state), one layout for
every figure, engineering notation on axes and in tables, and long series drawn as min/max
envelopes.

Every figure is the same width with the same left and right margins, so the time axes of a
run's figures line up when the page shows them one above the other; legends sit in the right
margin, off the data. Each figure is rendered once per format: the SVG once (written to
figures/ and inlined in report.html from the same bytes), the PNG once.
"""

from __future__ import annotations

import io
import math
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator, NullFormatter, NullLocator

from lasthop.files import safe_name
from lasthop.report.envelope import BINS, Envelope, envelope, is_dense

# Deterministic files: no random ids, no timestamps; text stays text in the SVG.
matplotlib.rcParams["svg.hashsalt"] = "lasthop"
matplotlib.rcParams["svg.fonttype"] = "none"
METADATA_SVG = {"Date": None}
METADATA_PNG = {"Software": None}
PNG_DPI = 100
# PNGs rendered by forked children (see Figures); Linux only: fork is safe there with the
# threads an Arrow or rich process has, as the children only render and exit.
FORK_PNG = sys.platform == "linux"

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

# One colour per flow, the same in every figure of a report.
_PALETTE = [matplotlib.colormaps["tab10"](i) for i in range(10)] + [matplotlib.colormaps["tab20"](i) for i in range(1, 20, 2)]


def flow_colors(names: list[str]) -> dict[str, tuple]:
    return {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(names)}


def label(text: object) -> str:
    """A name from a scenario as matplotlib text: literal (``$`` is not mathtext), printable,
    and shown in legends even when it starts with ``_``."""
    t = "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in str(text)).replace("$", r"\$")
    return f" {t}" if t.startswith("_") else t


_PREFIXES = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T"}


def eng(value: float | None, unit: str = "", digits: int = 3) -> str:
    """`value` in engineering notation with `digits` significant digits: 12.2 Mb/s, 361 kb/s,
    4.2 ms (for a value in seconds), "–" for a missing one."""
    if value is None or math.isnan(value):
        return "–"
    if value == 0:
        return f"0 {unit}".strip()
    exp3 = max(-4, min(4, math.floor(math.log10(abs(value)) / 3)))
    if abs(float(f"{value / 1000.0 ** exp3:.{digits}g}")) >= 1000 and exp3 < 4:  # 999.96 k -> 1.00 M
        exp3 += 1
    return f"{value / 1000.0 ** exp3:.{digits}g} {_PREFIXES[exp3]}{unit}".strip()


def title_lines(what: str, context: str, params: str = "") -> tuple[str, int]:
    text = f"{context} — {what}" + (f"\n{params}" if params else "")
    return label(text), text.count("\n") + 1


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


def wide(values: np.ndarray, ratio: float = 100.0) -> bool:
    """Whether the positive values span more than `ratio` (flows at very different scales):
    then a log axis shows them all."""
    v = values[np.isfinite(values) & (values > 0)]
    return bool(len(v)) and v.max() / v.min() > ratio


@dataclass
class Raw:
    """A series few enough samples to draw one by one."""

    t: np.ndarray
    y: np.ndarray
    step: bool


def reduce(t: np.ndarray, y: np.ndarray, t_end: float, step: bool = False) -> Raw | Envelope:
    """What a panel draws of the series (t, y): itself when the panel can show its samples,
    else its envelope over [0, t_end] (so the raw arrays of a long trace can be dropped)."""
    if not is_dense(len(t)):
        return Raw(np.asarray(t), np.asarray(y, dtype=np.float64), step)
    return envelope(t, y, 0.0, max(t_end, float(t[-1])), BINS, step=step)


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


def values(series: Raw | Envelope) -> np.ndarray:
    """The values a reduced series draws (to choose its axis)."""
    return series.y if isinstance(series, Raw) else np.concatenate([series.lo, series.hi])


class Figures:
    """The figures of one report: each saved as figures/<name>.svg and .png, and kept for the
    page as (name, caption, inline svg). Use as a context manager: leaving it waits for the
    PNGs.

    On Linux each PNG is rendered by a forked child while this process renders the SVG and
    builds the next figure: the two renderings cost about the same, so a report takes about
    half the time on two cores. The child inherits the figure as it is, renders it with Agg
    and exits; the bytes are those a render here would give. A child that fails is redone
    here. Elsewhere (no fork) the PNGs are rendered in turn."""

    def __init__(self, directory: Path, progress=None, total: int = 0):
        self.dir = directory / "figures"
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in [*self.dir.glob("*.svg"), *self.dir.glob("*.png")]:  # an earlier report's figures
            old.unlink()
        self.items: list[tuple[str, str, str]] = []
        self.progress = progress
        self.total = total
        self._children: dict[int, tuple[Figure, Path]] = {}

    def __enter__(self) -> "Figures":
        return self

    def __exit__(self, *exc) -> None:
        self.wait()

    def add(self, fig: Figure, name: str, caption: str) -> None:
        name = safe_name(name)  # flow and link names: the files stay inside figures/
        self._png(fig, self.dir / f"{name}.png")
        buf = io.BytesIO()
        with warnings.catch_warnings():
            # Missing glyphs in a scenario's names: the figure is still right.
            warnings.simplefilter("ignore", UserWarning)
            fig.savefig(buf, format="svg", metadata=METADATA_SVG)
        svg = buf.getvalue()
        (self.dir / f"{name}.svg").write_bytes(svg)
        text = svg.decode("utf-8")
        self.items.append((name, caption, text[text.index("<svg"):]))
        if self.progress is not None:
            self.progress(len(self.items), max(self.total, len(self.items)), "drawing the report")

    def _png(self, fig: Figure, path: Path) -> None:
        if FORK_PNG and hasattr(os, "fork"):
            pid = os.fork()
            if pid == 0:  # the child: render, and leave without running the parent's exit handlers
                code = 1
                try:
                    _save_png(fig, path)
                    code = 0
                finally:
                    os._exit(code)
            self._children[pid] = (fig, path)
        else:
            _save_png(fig, path)

    def wait(self) -> None:
        """Waits for the PNG children; renders here what one failed to."""
        while self._children:
            pid, status = os.waitpid(next(iter(self._children)), 0)
            fig, path = self._children.pop(pid)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                _save_png(fig, path)


def _save_png(fig: Figure, path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fig.savefig(path, dpi=PNG_DPI, metadata=METADATA_PNG)
