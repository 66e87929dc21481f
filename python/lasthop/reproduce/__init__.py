"""Reproductions of the papers' results: ``lasthop reproduce NAME`` runs the scenario variants a
paper reports, prints our numbers beside the paper's, writes figures, and says where and why they
differ. Each is a function returning a :class:`Reproduction`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd


@dataclass
class Reproduction:
    name: str
    title: str
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    data: dict = field(default_factory=dict)


REGISTRY: dict[str, tuple[str, Callable[..., Reproduction]]] = {}


def finish_figure(fig, ax, path: Path, xlabel: str, ylabel: str, title: str, logy: bool = False,
                  legend_size: int | None = None) -> Path:
    """Labels, grid and legend for a reproduction's figure; saves it as PNG and closes it."""
    import matplotlib.pyplot as plt

    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def register(name: str, title: str):
    def wrap(fn):
        REGISTRY[name] = (title, fn)
        return fn

    return wrap


def reproduce(name: str, out: str | Path, quick: bool = False) -> Reproduction:
    if name not in REGISTRY:
        raise KeyError(f"no reproduction {name!r}; available: {', '.join(sorted(REGISTRY))}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return REGISTRY[name][1](out, quick=quick)


from lasthop.reproduce import botta_hetperf, hur_hong2006, koga2005, ng_snoop, palazzi2006  # noqa: E402,F401  (they register themselves)
