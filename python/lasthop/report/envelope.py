"""Min/max envelopes of long time series, so a figure costs what its pixels need, not what the
run recorded (a one-hour home run has 9.5 million queue changes at the AP and 2.4 million TCP
ACKs; a panel is some 650 pixels wide), and stays readable.

The time axis is cut into `bins` equal slices; each slice keeps the smallest and the largest
value in it (so the drawn band covers every sample, and the series' global minimum and maximum
survive) and the mean, weighted by how long each value held for step series such as queue
lengths. Slices without a valid sample are NaN, so gaps in the data stay gaps in the figure.
Plain numpy (tsdownsample, a Rust library on PyPI, finds the minimum and maximum per slice as
fast, but neither the mean nor a step series' time average): the same input gives the same
output bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

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


# Samples handled at once: a chunk's temporaries are 2 MB each, not a series long (on this VM a
# fresh 80 MB array costs a quarter of a second in page faults, and a one-hour run's queue trace
# has 9.5 million samples); 2^16 and 2^20 were slower on that trace, 2^17..2^18 alike.
CHUNK = 1 << 18


def envelope(t: np.ndarray, y: np.ndarray, t_start: float, t_end: float, bins: int = BINS,
             step: bool = False) -> Envelope:
    """The envelope of samples (t, y), t non-decreasing, over [t_start, t_end] in `bins` equal
    slices (samples outside count in the first or last). With `step`, y[i] holds from t[i]
    until t[i+1] (the last until t_end): a slice's range includes the value held into it, its
    mean is the time average, and a slice without a change holds the value before it
    throughout. NaN samples are ignored (as a step, an undefined stretch).

    Vectorised (numpy's reduceat over the slices' runs of samples) a chunk of slices at a time,
    each chunk at most CHUNK samples (or one slice): the home run's 23 series take ~10 ms where a
    loop over the slices took ~80 ms (a one-hour run's long traces cost the same either way)."""
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y)
    if t_end <= t_start:
        raise ValueError(f"envelope: empty time range [{t_start}, {t_end}]")
    width = (t_end - t_start) / bins
    bounds = t_start + np.arange(bins + 1) * width
    lo, hi, mean = np.full(bins, np.nan), np.full(bins, np.nan), np.full(bins, np.nan)
    # t is sorted: each slice is one run of samples, found by bisection.
    cut = np.r_[0, np.searchsorted(t, bounds[1:-1], side="left"), len(t)]
    k = 0
    while k < bins:
        k2 = max(k + 1, int(np.searchsorted(cut, cut[k] + CHUNK, side="right")) - 1)
        k2 = min(k2, bins)
        _chunk(t, y, bounds, cut, k, k2, step, lo, hi, mean)
        k = k2
    return Envelope(0.5 * (bounds[:-1] + bounds[1:]), lo, hi, mean)


def _chunk(t, y, bounds, cut, k, k2, step, lo, hi, mean) -> None:
    """Slices k..k2-1 of `envelope`, written into lo, hi and mean."""
    s, e = int(cut[k]), int(cut[k2])
    nb = k2 - k
    counts = np.diff(cut[k:k2 + 1])
    full = counts > 0
    idx = (cut[k:k2] - s)[full]  # where each non-empty slice's run starts (reduceat needs them < len)
    v = y[s:e].astype(np.float64, copy=False)
    ok = ~np.isnan(v)
    nan_free = bool(ok.all())
    vz = v if nan_free else np.where(ok, v, 0.0)
    vmin, vmax = np.full(nb, np.nan), np.full(nb, np.nan)
    n_ok, vsum = np.zeros(nb), np.zeros(nb)
    if len(idx):
        vmin[full] = (np.minimum if nan_free else np.fmin).reduceat(v, idx)  # fmin ignores NaN
        vmax[full] = (np.maximum if nan_free else np.fmax).reduceat(v, idx)
        n_ok[full] = counts[full] if nan_free else np.add.reduceat(ok.astype(np.float64), idx)
        vsum[full] = np.add.reduceat(vz, idx)
    none = n_ok == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        plain = np.where(none, np.nan, vsum / np.maximum(n_ok, 1.0))
    if not step:
        lo[k:k2], hi[k:k2], mean[k:k2] = vmin, vmax, plain
        return
    a_s, b_s = bounds[k:k2], bounds[k + 1:k2 + 1]
    # Samples lie in their slice's [a, b) except before t_start or past t_end: those count at the edges.
    ts = t[s:e]
    if len(ts) and (ts[0] < bounds[0] or ts[-1] > bounds[-1]):
        ts = np.clip(ts, bounds[0], bounds[-1])
    # A sample holds until the next one, the last of a slice until the slice's end.
    w = np.empty(e - s)
    np.subtract(ts[1:], ts[:-1], out=w[:-1])
    last = (cut[k + 1:k2 + 1] - s - 1)[full]
    w[last] = b_s[full] - ts[last]
    if not nan_free:
        w[~ok] = 0.0
    wsum, wv = np.zeros(nb), np.zeros(nb)
    if len(idx):
        wsum[full] = np.add.reduceat(w, idx)
        wv[full] = np.add.reduceat(np.multiply(w, vz, out=w), idx)
    # The value held into each slice: the last sample before it (NaN: an undefined stretch),
    # for the time from the slice's start to its first sample (all of it when it has none).
    before = cut[k:k2] - 1
    held = np.where(before >= 0, y[np.maximum(before, 0)].astype(np.float64), np.nan)
    held_w = b_s - a_s
    held_w[full] = ts[idx] - a_s[full]
    carried = ~np.isnan(held)
    held0 = np.where(carried, held, 0.0)
    total = wsum + np.where(carried, held_w, 0.0)
    weighted = wv + held_w * held0
    lo[k:k2] = np.fmin(vmin, held)
    hi[k:k2] = np.fmax(vmax, held)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(total > 0, weighted / np.where(total > 0, total, 1.0), plain)
    mean[k:k2] = np.where(none, np.where(carried, held, np.nan), m)


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


def envelopes(pieces: Iterable[tuple[np.ndarray, list[np.ndarray]]], t_start: float, t_end: float, columns: int,
              bins: int = BINS, step: bool = False) -> list[Envelope]:
    """:func:`envelope` of `columns` series sharing one time axis, handed over in pieces (t,
    [y per column]) in time order, as a long trace read from its file batch by batch: memory
    holds about CHUNK samples, not the series. Each slice is computed once all its samples are
    in, by the same code on the same samples, so the result is :func:`envelope`'s to the bit."""
    if t_end <= t_start:
        raise ValueError(f"envelope: empty time range [{t_start}, {t_end}]")
    width = (t_end - t_start) / bins
    bounds = t_start + np.arange(bins + 1) * width
    out = [(np.full(bins, np.nan), np.full(bins, np.nan), np.full(bins, np.nan)) for _ in range(columns)]
    t_buf, y_bufs = np.empty(0), [np.empty(0) for _ in range(columns)]
    k = 0  # the first slice not computed; the buffer starts with the sample before it, if any
    for piece in _with_end(pieces):
        if piece is not None:
            t_new, ys_new = piece
            t_buf = np.concatenate([t_buf, np.asarray(t_new, dtype=np.float64)])
            y_bufs = [np.concatenate([b, np.asarray(y, dtype=np.float64)]) for b, y in zip(y_bufs, ys_new)]
            if len(t_buf) < CHUNK:
                continue
            # Slices that end at or before the last sample are complete (later samples are later);
            # the last slice also takes the samples past t_end, so it waits for the end.
            ready = min(int(np.searchsorted(bounds[1:], t_buf[-1], side="right")), bins - 1)
            if ready <= k:
                continue
        else:
            ready = bins
        cut = np.zeros(bins + 1, dtype=np.int64)
        cut[k] = 0 if k == 0 else int(np.searchsorted(t_buf, bounds[k], side="left"))
        cut[k + 1:ready] = np.searchsorted(t_buf, bounds[k + 1:ready], side="left")
        cut[ready] = len(t_buf) if ready == bins else int(np.searchsorted(t_buf, bounds[ready], side="left"))
        j = k
        while j < ready:
            j2 = min(max(j + 1, k + int(np.searchsorted(cut[k:ready + 1], cut[j] + CHUNK, side="right")) - 1), ready)
            for y, (lo, hi, mean) in zip(y_bufs, out):
                _chunk(t_buf, y, bounds, cut, j, j2, step, lo, hi, mean)
            j = j2
        keep = max(int(cut[ready]) - 1, 0)  # the sample before the next slice: the value held into it
        t_buf, y_bufs = t_buf[keep:], [b[keep:] for b in y_bufs]
        k = ready
    mid = 0.5 * (bounds[:-1] + bounds[1:])
    return [Envelope(mid, lo, hi, mean) for lo, hi, mean in out]


def _with_end(pieces):
    yield from pieces
    yield None


def reduce_pieces(pieces: Callable[[], Iterable[tuple[np.ndarray, list[np.ndarray]]]], n: int, t_last: float,
                  t_end: float, columns: int, step: bool = False) -> list[Raw | Envelope]:
    """:func:`reduce` of `columns` series of `n` samples sharing one time axis whose last time is
    `t_last`, read through `pieces()` (called once)."""
    if not is_dense(n):  # few samples: drawn one by one, as reduce() draws them
        got = list(pieces())
        t = np.concatenate([p[0] for p in got]) if got else np.empty(0)
        return [reduce(t, np.concatenate([p[1][i] for p in got]) if got else np.empty(0), t_end, step) for i in range(columns)]
    return envelopes(pieces(), 0.0, max(t_end, t_last), columns, BINS, step=step)
