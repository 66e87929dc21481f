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
import warnings
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator, NullFormatter, NullLocator

from lasthop.files import safe_name
from lasthop.report.envelope import BINS, envelope, is_dense

# Deterministic files: no random ids, no timestamps; text stays text in the SVG.
matplotlib.rcParams["svg.hashsalt"] = "lasthop"
matplotlib.rcParams["svg.fonttype"] = "none"
METADATA_SVG = {"Date": None}
METADATA_PNG = {"Software": None}
PNG_DPI = 100

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
    """Ticks in engineering notation with the unit: 10 Mb/s, 20 ms (no minor ticks: each
    costs as much to draw as a labelled one)."""
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


def series(ax, t: np.ndarray, y: np.ndarray, t_end: float, color, name: str, step: bool = False,
           log: bool = False) -> bool:
    """Draws one series: as it is when the panel can show its samples, else its envelope (a
    light band from minimum to maximum with the mean as a line). On a log axis (`log`) the band
    leaves out slices whose minimum is 0. Returns whether it drew an envelope."""
    if len(t) == 0:
        return False
    if not is_dense(len(t)):
        if step:
            ax.step(t, y, where="post", color=color, label=label(name), linewidth=1)
        else:
            ax.plot(t, y, color=color, label=label(name), linewidth=1)
        return False
    e = envelope(t, y, 0.0, max(t_end, float(t[-1])), BINS, step=step)
    lo = np.where(e.lo > 0, e.lo, np.nan) if log else e.lo
    ax.fill_between(e.t, lo, e.hi, color=color, alpha=0.25, linewidth=0)
    ax.plot(e.t, e.mean, color=color, label=label(name), linewidth=1)
    return True


class Figures:
    """The figures of one report: each saved as figures/<name>.svg and .png, and kept for the
    page as (name, caption, inline svg)."""

    def __init__(self, directory: Path, progress=None, total: int = 0):
        self.dir = directory / "figures"
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in [*self.dir.glob("*.svg"), *self.dir.glob("*.png")]:  # an earlier report's figures
            old.unlink()
        self.items: list[tuple[str, str, str]] = []
        self.progress = progress
        self.total = total

    def add(self, fig: Figure, name: str, caption: str) -> None:
        name = safe_name(name)  # flow and link names: the files stay inside figures/
        buf = io.BytesIO()
        with warnings.catch_warnings():
            # Missing glyphs in a scenario's names: the figure is still right.
            warnings.simplefilter("ignore", UserWarning)
            fig.savefig(buf, format="svg", metadata=METADATA_SVG)
            fig.savefig(self.dir / f"{name}.png", dpi=PNG_DPI, metadata=METADATA_PNG)
        svg = buf.getvalue()
        (self.dir / f"{name}.svg").write_bytes(svg)
        text = svg.decode("utf-8")
        self.items.append((name, caption, text[text.index("<svg"):]))
        if self.progress is not None:
            self.progress(len(self.items), max(self.total, len(self.items)), "drawing the report")
