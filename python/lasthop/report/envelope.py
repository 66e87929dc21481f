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
    """The envelope of samples (t, y), t non-decreasing, over [t_start, t_end] in `bins` slices.
    With `step`, y[i] holds from t[i] until t[i+1] (the last until t_end): the mean is weighted
    by those durations, and a slice with no change of its own carries the value held into it.
    NaN samples are ignored."""
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if t_end <= t_start:
        raise ValueError(f"envelope: empty time range [{t_start}, {t_end}]")
    width = (t_end - t_start) / bins
    edges_mid = t_start + (np.arange(bins) + 0.5) * width
    lo = np.full(bins, np.nan)
    hi = np.full(bins, np.nan)
    mean = np.full(bins, np.nan)
    if step:
        hold = np.diff(t, append=max(t_end, t[-1] if len(t) else t_end))
    valid = ~np.isnan(y)
    t, y = t[valid], y[valid]
    if step:
        hold = hold[valid]
    if len(t) == 0:
        return Envelope(edges_mid, lo, hi, mean)
    b = np.clip(((t - t_start) / width).astype(np.int64), 0, bins - 1)
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    occupied = b[starts]
    lo[occupied] = np.minimum.reduceat(y, starts)
    hi[occupied] = np.maximum.reduceat(y, starts)
    if step:
        w = np.add.reduceat(hold, starts)
        wy = np.add.reduceat(hold * y, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean[occupied] = np.where(w > 0, wy / np.where(w > 0, w, 1.0), y[starts])
        _carry(lo, hi, mean, y, starts, occupied, bins)
    else:
        counts = np.diff(np.r_[starts, len(y)])
        mean[occupied] = np.add.reduceat(y, starts) / counts
    return Envelope(edges_mid, lo, hi, mean)


def _carry(lo: np.ndarray, hi: np.ndarray, mean: np.ndarray, y: np.ndarray, starts: np.ndarray,
           occupied: np.ndarray, bins: int) -> None:
    """For a step series: a slice's range also includes the value held into it from the slice
    before, and a slice with no change holds that value throughout."""
    last_value = y[np.r_[starts[1:], len(y)] - 1]  # the value each occupied slice ends with
    held = np.full(bins, np.nan)
    held[occupied] = last_value
    # The value held at the end of each slice, carried forward over slices without changes.
    idx = np.where(~np.isnan(held), np.arange(bins), 0)
    np.maximum.accumulate(idx, out=idx)
    ends = held[idx]
    ends[: occupied[0]] = np.nan  # nothing is held before the first sample
    carried_in = np.r_[np.nan, ends[:-1]]
    has_in = ~np.isnan(carried_in)
    lo[has_in] = np.fmin(lo[has_in], carried_in[has_in])
    hi[has_in] = np.fmax(hi[has_in], carried_in[has_in])
    empty = np.isnan(mean) & has_in
    mean[empty] = carried_in[empty]
