"""Min/max envelopes of long time series, so a figure costs what its pixels need, not what the
run recorded (a one-hour home run has 9.5 million queue changes at the AP and 2.4 million TCP
ACKs; a panel is some 650 pixels wide), and stays readable.

The time axis is cut into `bins` equal slices; each slice keeps the smallest and the largest
value in it (so the drawn band covers every sample, and the series' global minimum and maximum
survive) and the mean, weighted by how long each value held for step series such as queue
lengths. Slices without a valid sample are NaN, so gaps in the data stay gaps in the figure.
Plain numpy: the same input gives the same output bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Slices across a figure's time axis: one per two of the ~650 pixel columns of a panel at
# 100 dpi. A series with more samples than the panel has columns draws as a solid block (a
# 10 kb/s flow at 100 ms intervals jumps between one and two packets per interval); its slices'
# means show the trend and the band the spread.
BINS = 300
# Series with up to this many samples per slice are drawn as they are.
DENSE_FACTOR = 2


@dataclass
class Envelope:
    """Per slice: its middle time, the minimum, maximum and mean of the samples in it."""

    t: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mean: np.ndarray


def is_dense(n_samples: int, bins: int = BINS) -> bool:
    """Whether a series of `n_samples` has more samples than a figure can show one by one."""
    return n_samples > DENSE_FACTOR * bins


def envelope(t: np.ndarray, y: np.ndarray, t_start: float, t_end: float, bins: int = BINS,
             step: bool = False) -> Envelope:
    """The envelope of samples (t, y), t non-decreasing, over [t_start, t_end] in `bins` equal
    slices (samples outside count in the first or last). With `step`, y[i] holds from t[i]
    until t[i+1] (the last until t_end): a slice's range includes the value held into it, its
    mean is the time average, and a slice without a change holds the value before it
    throughout. NaN samples are ignored (as a step, an undefined stretch).

    One slice at a time: the temporaries are a slice long, not a series long (on this VM a
    fresh 80 MB array costs a quarter of a second in page faults)."""
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
        lo[k], hi[k], mean[k] = _stats(v, w if step else None, held, held_w if step else 0.0)
        if step and e > s:
            held = y[e - 1]  # NaN: an undefined stretch follows
    return Envelope(0.5 * (bounds[:-1] + bounds[1:]), lo, hi, mean)


def _stats(v: np.ndarray, w: np.ndarray | None, held: float, held_w: float) -> tuple[float, float, float]:
    """Minimum, maximum and mean of one slice's values `v`; for a step series (`w` their
    durations) with the value `held` into the slice for `held_w`."""
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


def wide(values: np.ndarray, ratio: float = 100.0) -> bool:
    """Whether the positive values span more than `ratio` (flows at very different scales):
    then a log axis shows them all."""
    v = values[np.isfinite(values) & (values > 0)]
    return bool(len(v)) and bool(v.max() / v.min() > ratio)


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


def values(series: Raw | Envelope) -> np.ndarray:
    """The values a reduced series draws (to choose its axis)."""
    return series.y if isinstance(series, Raw) else np.concatenate([series.lo, series.hi])
