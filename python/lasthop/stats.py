"""Student's t distribution for lasthop's confidence intervals, without scipy: the distribution
function for whole degrees of freedom in closed form (Abramowitz & Stegun 26.7.3 and 26.7.4),
its quantile by safeguarded Newton iteration on that closed form, and `t975`, the two-sided 95 %
critical value that sweeps and reproductions multiply a standard error by.

Accuracy (measured against scipy.stats.t, which lasthop does not depend on): for 1 ≤ df ≤ 1000
the quantile has a relative error below 5e-14 (rounding in the closed form's sum of up to df/2
terms); beyond `_SERIES_MAX_DF` it is the Cornish-Fisher expansion about the normal quantile
(A&S 26.7.5), below 1e-15 there for p = 0.975 and below 1e-12 out to p = 0.9999.
tests/test_stats.py checks published table values. Also the responsiveness draft's RPM categories
(`rpm_category`), which the console and the report name.
"""

from __future__ import annotations

import math
import operator
from functools import lru_cache
from statistics import NormalDist

# Above this many degrees of freedom the quantile comes from the Cornish-Fisher expansion (its
# first omitted term is O(df^-5)) instead of the closed form, whose sum has df/2 terms.
_SERIES_MAX_DF = 1000
_MAX_NEWTON_STEPS = 200


def _whole_df(df: int) -> int:
    """`df` as an int (numpy integers too), or ValueError naming what is valid."""
    try:
        n = -1 if isinstance(df, bool) else operator.index(df)
    except TypeError:
        n = -1
    if n < 1:
        raise ValueError(f"degrees of freedom: {df!r} is not valid; a whole number of at least 1")
    return n


def _abs_below(t: float, df: int) -> float:
    """P(|T| < t) for t ≥ 0: A(t | df) of Abramowitz & Stegun 26.7.3 (odd df) and 26.7.4 (even)."""
    theta = math.atan2(t, math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    if df % 2 == 0:
        # sin θ · (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … + 1·3…(df−3)/(2·4…(df−2)) cos^(df−2)θ)
        terms, term = [1.0], 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            terms.append(term)
        return s * math.fsum(terms)
    if df == 1:
        return 2.0 * theta / math.pi
    # 2/π · (θ + sin θ cos θ · (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + … + 2·4…(df−3)/(3·5…(df−2)) cos^(df−3)θ))
    terms, term = [1.0], 1.0
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        terms.append(term)
    return 2.0 / math.pi * (theta + s * c * math.fsum(terms))


def t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with `df` (whole) degrees of freedom."""
    df = _whole_df(df)
    a = _abs_below(abs(t), df)
    return 0.5 + 0.5 * a if t >= 0 else 0.5 - 0.5 * a


def t_pdf(t: float, df: int) -> float:
    """Density of Student's t with `df` degrees of freedom at `t`."""
    df = _whole_df(df)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _cornish_fisher(p: float, df: int) -> float:
    """The quantile as the normal quantile z plus g1(z)/df + … + g4(z)/df⁴ (A&S 26.7.5)."""
    z = NormalDist().inv_cdf(p)
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + ((((g4 / df) + g3) / df + g2) / df + g1) / df


def _upper_quantile(p: float, df: int) -> float:
    """The t with P(T ≤ t) = p for 1/2 < p < 1, by Newton steps kept inside a bracket."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))          # Cauchy: exact
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))  # A&S 26.7.4 with df = 2, inverted
    lo, hi = 0.0, 2.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2 * hi
    x = min(max(_cornish_fisher(p, df), lo), hi)
    for _ in range(_MAX_NEWTON_STEPS):
        excess = t_cdf(x, df) - p
        if excess == 0:
            return x
        if excess > 0:
            hi = x
        else:
            lo = x
        step = excess / t_pdf(x, df)
        nxt = x - step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if nxt == x or abs(nxt - x) <= 2 * math.ulp(x):
            return nxt
        x = nxt
    return x


def t_quantile(p: float, df: int) -> float:
    """The t with P(T ≤ t) = p for Student's t with `df` (whole) degrees of freedom."""
    df = _whole_df(df)
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability: {p!r} is not valid; a number strictly between 0 and 1")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df > _SERIES_MAX_DF:
        return _cornish_fisher(p, df)
    return _upper_quantile(p, df)


@lru_cache(maxsize=None)
def t975(df: int) -> float:
    """The 0.975 quantile of Student's t: the half-width of a two-sided 95 % confidence interval
    for a mean of df + 1 samples is t975(df) · s / √(df + 1)."""
    return t_quantile(0.975, _whole_df(df))


def rpm_category(rpm: float) -> str:
    """The responsiveness draft's category of an RPM (draft-ietf-ippm-responsiveness-08): Poor
    below 300, Fair to 1000, Good to 6000, Excellent above."""
    return "Poor" if rpm < 300 else "Fair" if rpm < 1000 else "Good" if rpm < 6000 else "Excellent"
