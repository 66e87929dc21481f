"""TCP throughput models (``shared/reference/models.md`` §7)."""

from __future__ import annotations

import math


def mathis(mss_bytes: float, rtt_s: float, p: float, b: float = 1.0) -> float:
    """Mathis et al. (CCR 1997): MSS/RTT · sqrt(3/(2b)) / sqrt(p), in bit/s."""
    return mss_bytes * 8.0 / rtt_s * math.sqrt(3.0 / (2.0 * b)) / math.sqrt(p)


def padhye(mss_bytes: float, rtt_s: float, p: float, t0_s: float, b: float = 1.0, wmax: float = math.inf) -> float:
    """Padhye et al. (ToN 2000), full model, in bit/s; `wmax` is the receiver window in packets."""
    ew = (2 + b) / (3 * b) + math.sqrt(8 * (1 - p) / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)

    def q(w: float) -> float:
        num = (1 - (1 - p) ** 3) * (1 + (1 - p) ** 3 * (1 - (1 - p) ** (w - 3)))
        return min(1.0, num / (1 - (1 - p) ** w))

    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    if ew < wmax:
        pkts = ((1 - p) / p + ew + q(ew) / (1 - p)) / (rtt_s * (b * ew / 2 + 1) + q(ew) * t0_s * f / (1 - p))
    else:
        pkts = ((1 - p) / p + wmax + q(wmax) / (1 - p)) / (
            rtt_s * (b * wmax / 8 + (1 - p) / (p * wmax) + 2) + q(wmax) * t0_s * f / (1 - p))
    return pkts * mss_bytes * 8.0
