"""Reproductions of the papers' results: ``lasthop reproduce NAME --seeds N`` runs the scenario
variants a paper reports over seeds 1..N, puts every number the paper states beside ours, writes
figures, and says where and why they differ. Each reproduction is a function returning a
:class:`Reproduction`.

Every reproduction's table has one shape, built here by :func:`claims_table` from rows made by
:func:`value`, :func:`bound` and :func:`compare`: the paper's case (which of its configurations,
with the table or figure), the metric with its unit, the paper's number or statement, our mean
over the seeds with its 95 % interval (Student t, n − 1 degrees of freedom; none for one seed),
the ratio ours / paper and a verdict on direction and magnitude.

Runs over seeds go to at most two worker processes (:func:`run_jobs`); results come back in job
order, so the same seeds give the same table, byte for byte."""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from lasthop.files import replace_file
from lasthop.stats import t975

COLUMNS = ["case", "metric", "paper", "paper_value", "ours", "ci95_low", "ci95_high", "n", "ratio", "verdict"]

#: Worker processes for the runs of a reproduction: the project's machines have two cores.
MAX_WORKERS = 2

#: ns-2 (papers 001 and 004) and OPNET (paper 003) grow cwnd by MSS²/cwnd per ACK in congestion
#: avoidance, not by bytes acknowledged (RFC 5681's byte counting, Linux's). Those reproductions
#: ask for it through `tcp.ca_increase`; set this to None to run them with byte counting.
PAPER_CA_INCREASE: str | None = "per_ack"


@dataclass
class Reproduction:
    name: str
    title: str
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    data: dict = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Entry:
    title: str
    fn: Callable[..., Reproduction]
    seeds: int        # default number of seeds
    quick_seeds: int  # with --quick
    #: Other worlds than the simulator's this reproduction runs in ("measure": real sockets).
    worlds: dict[str, Callable[..., Reproduction]] = field(default_factory=dict)


REGISTRY: dict[str, Entry] = {}


def register(name: str, title: str, seeds: int = 5, quick_seeds: int = 2):
    def wrap(fn):
        REGISTRY[name] = Entry(title, fn, seeds, quick_seeds)
        return fn

    return wrap


def world_problem(name: str, world: str) -> str | None:
    """Why reproduction `name` cannot run in `world`, or None if it can."""
    if world == "sim" or world in REGISTRY[name].worlds:
        return None
    if world not in ("measure", "emulate"):
        return f"--world {world!r}: expected sim, measure or emulate"
    has = sorted(n for n, e in REGISTRY.items() if world in e.worlds)
    return f"reproduction {name!r} runs only in the simulator (--world sim); --world {world}: {', '.join(has) if has else 'none yet'}"


def register_world(name: str, world: str):
    """Registers a function that runs reproduction `name` in `world` ("measure")."""
    def wrap(fn):
        REGISTRY[name].worlds[world] = fn
        return fn

    return wrap


def reproduce(name: str, out: str | Path, quick: bool = False, seeds: int | None = None,
              workers: int | None = None, world: str = "sim") -> Reproduction:
    """Runs reproduction `name` over seeds 1..`seeds` (default: the reproduction's own, fewer
    with `quick`), writing its figures to `out`; in `world` "sim" (the simulator) or another
    world the reproduction has (``"measure"``: real sockets, hur-hong2006)."""
    if name not in REGISTRY:
        raise KeyError(f"no reproduction {name!r}; available: {', '.join(sorted(REGISTRY))}")
    entry = REGISTRY[name]
    problem = world_problem(name, world)
    if problem:
        raise ValueError(problem)
    fn = entry.fn if world == "sim" else entry.worlds[world]
    n = seeds if seeds is not None else (entry.quick_seeds if quick else entry.seeds)
    if n < 1:
        raise ValueError(f"seeds must be at least 1, got {n}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = fn(out, quick=quick, seeds=list(range(1, n + 1)), workers=workers)
    rep.seeds = list(range(1, n + 1))
    return rep


# ---------------------------------------------------------------- runs


def run_jobs(fn: Callable, jobs: Sequence[tuple], workers: int | None = None) -> list:
    """``fn(*job)`` for every job, in job order, on up to :data:`MAX_WORKERS` local processes
    (the sweep's executor). `fn` must be a module-level function returning plain data."""
    from lasthop.sweep import local_executor

    w = min(MAX_WORKERS, os.cpu_count() or 1) if workers is None else workers
    w = min(w, len(jobs))
    if w <= 1:
        return [fn(*job) for job in jobs]
    with local_executor(w) as ex:
        return list(ex.map(fn, *zip(*jobs), chunksize=max(1, len(jobs) // (8 * w))))


@functools.lru_cache(maxsize=None)
def tcp_fields() -> frozenset[str]:
    """The fields this build's scenario `tcp` table accepts."""
    from lasthop import _core

    schema = json.loads(_core.json_schema())
    defs = schema.get("definitions") or schema.get("$defs") or {}
    return frozenset(defs.get("TcpParams", {}).get("properties", {}))


def paper_ca_increase() -> dict[str, str]:
    """``{"ca_increase": "per_ack"}`` for the ns-2/OPNET papers' TCP when this build has the
    field (and :data:`PAPER_CA_INCREASE` asks for it), else nothing."""
    if PAPER_CA_INCREASE and "ca_increase" in tcp_fields():
        return {"ca_increase": PAPER_CA_INCREASE}
    return {}


def ca_increase_note(simulator: str) -> str:
    if paper_ca_increase():
        return (f"TCP grows cwnd by MSS²/cwnd per ACK in congestion avoidance (tcp.ca_increase = "
                f"\"{PAPER_CA_INCREASE}\"), as {simulator} does, not by bytes acknowledged.")
    if PAPER_CA_INCREASE is None:
        return f"TCP uses byte counting in congestion avoidance (PAPER_CA_INCREASE is None); {simulator} increases per ACK."
    return (f"NOT APPLIED: {simulator} grows cwnd by MSS²/cwnd per ACK, but this build's TCP has no "
            "tcp.ca_increase, so these runs use byte counting (lasthop.reproduce.PAPER_CA_INCREASE takes "
            "effect as soon as the field exists).")


# ---------------------------------------------------------------- statistics


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95 % interval (Student t with n − 1 degrees of freedom); NaN bounds for n = 1."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    m = sum(xs) / n
    if n == 1:
        return m, math.nan, math.nan
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    h = t975(n - 1) * s / math.sqrt(n)
    return m, m - h, m + h


def ratio_ci(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Ratio of means x̄ / ȳ of samples paired by seed, with a 95 % interval from the delta
    method: var(R) ≈ (s_x² − 2R·s_xy + R²·s_y²) / (n·ȳ²), Student t with n − 1 degrees of freedom."""
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    n = len(xs)
    assert n == len(ys) and n > 0, "paired samples"
    mx, my = sum(xs) / n, sum(ys) / n
    if my == 0:
        return math.nan, math.nan, math.nan
    r = mx / my
    if n == 1:
        return r, math.nan, math.nan
    sxx = sum((a - mx) ** 2 for a in xs) / (n - 1)
    syy = sum((b - my) ** 2 for b in ys) / (n - 1)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / (n - 1)
    var = max(0.0, (sxx - 2 * r * sxy + r * r * syy) / (n * my * my))
    h = t975(n - 1) * math.sqrt(var)
    return r, r - h, r + h


def magnitude(r: float) -> str:
    """"within 10 %" or the factor ours / paper."""
    if r != r:
        return ""
    if abs(r - 1) <= 0.10:
        return "within 10 %"
    return f"{r:.0f}x" if r >= 10 else f"{r:.2g}x"


# ---------------------------------------------------------------- rows


def _row(case, metric, paper, paper_value, ours, lo, hi, n, ratio, verdict) -> dict:
    return dict(zip(COLUMNS, [case, metric, paper, paper_value, ours, lo, hi, n, ratio, verdict]))


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def value(case: str, metric: str, ours: Sequence[float], paper: float | None = None,
          paper_text: str | None = None) -> dict:
    """A number the paper gives for `case` (or none: a modern comparator), beside our mean."""
    m, lo, hi = mean_ci(ours)
    if paper is None:
        return _row(case, metric, paper_text or "—", math.nan, m, lo, hi, len(ours), math.nan,
                    "no paper value")
    if paper == 0:
        verdict = "equal (both 0)" if m == 0 else "paper 0, ours above"
        return _row(case, metric, paper_text or "0", 0.0, m, lo, hi, len(ours), math.nan, verdict)
    r = m / paper
    return _row(case, metric, paper_text or _fmt(paper), float(paper), m, lo, hi, len(ours), r, magnitude(r))


def bound(case: str, metric: str, ours: Sequence[float], op: str, limit: float, paper_text: str | None = None) -> dict:
    """The paper states ``metric op limit`` (op "<" or ">") for `case`."""
    assert op in ("<", ">")
    m, lo, hi = mean_ci(ours)
    r = m / limit
    inside = m < limit if op == "<" else m > limit
    verdict = f"{'meets' if inside else 'misses'} the bound ({magnitude(r) or '–'} of it)"
    return _row(case, metric, paper_text or f"{op} {_fmt(limit)}", float(limit), m, lo, hi, len(ours), r, verdict)


def compare(case: str, metric: str, x: Sequence[float], y: Sequence[float], expect: str,
            paper: float | None = None, paper_text: str | None = None) -> dict:
    """The paper states X `expect` Y ("<" or ">"), optionally with the ratio X / Y = `paper`.
    Ours is x̄ / ȳ over seeds paired with each other; the direction checks our means."""
    assert expect in ("<", ">")
    r, lo, hi = ratio_ci(x, y)
    mx, my = sum(x) / len(x), sum(y) / len(y)
    ours_dir = ">" if mx > my else "<" if mx < my else "="
    if ours_dir == "=":
        verdict = "no difference"
    elif ours_dir == expect:
        verdict = "same direction"
        if paper is not None:
            verdict += ", " + magnitude(r / paper)
    else:
        verdict = "opposite direction"
    if len(x) > 1 and lo == lo and lo <= 1 <= hi and ours_dir != "=":
        verdict += " (95 % interval includes 1)"
    text = paper_text or (f"{_fmt(paper)} ({expect} 1)" if paper is not None else f"{expect} 1")
    ratio = r / paper if paper is not None else math.nan
    return _row(case, metric, text, float(paper) if paper is not None else math.nan, r, lo, hi, len(x), ratio, verdict)


def claims_table(rows: list[dict]) -> pd.DataFrame:
    """The uniform table of a reproduction (columns :data:`COLUMNS`)."""
    t = pd.DataFrame(rows, columns=COLUMNS)
    t["n"] = t["n"].astype(int)
    return t


def display_rows(t: pd.DataFrame) -> list[list[str]]:
    """The table as text cells for printing: case, metric, paper, ours, 95 % interval, ratio, verdict."""
    out = []
    for r in t.itertuples(index=False):
        ci = "none (n = 1)" if r.n == 1 else ("–" if r.ci95_low != r.ci95_low else f"{_fmt(r.ci95_low)} – {_fmt(r.ci95_high)}")
        ratio = "–" if r.ratio != r.ratio else f"{r.ratio:.3g}"
        out.append([r.case, r.metric, r.paper, _fmt(r.ours) if r.ours == r.ours else "–", ci, ratio, r.verdict])
    return out


# ---------------------------------------------------------------- figures


def finish_figure(fig, ax, path: Path, xlabel: str, ylabel: str, title: str, logy: bool = False,
                  legend_size: int | None = None) -> Path:
    """Labels, grid and legend for a reproduction's figure; saves it as PNG and closes it."""
    import matplotlib.pyplot as plt

    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    replace_file(path, lambda f: fig.savefig(f, format=Path(path).suffix[1:], dpi=110))
    plt.close(fig)
    return path


def seeds_label(seeds: Sequence[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]} (mean, 95 % CI)"


from lasthop.reproduce import botta_hetperf, ending_anomaly, hur_hong2006, koga2005, ng_snoop, palazzi2006  # noqa: E402,F401  (they register themselves)
