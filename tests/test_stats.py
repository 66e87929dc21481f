"""lasthop.stats: Student's t quantiles without scipy, checked against published tables, closed
forms derived independently of the module's code, and numerical integration of the density."""

import math
import subprocess
import sys

import numpy as np
import pytest

from lasthop import stats
from lasthop.stats import t975, t_cdf, t_pdf, t_quantile

# NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2, "Critical values of the
# Student's t distribution", column 0.975 (two-sided 95 %), three decimals.
NIST_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060,
    26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 100: 1.984,
}


@pytest.mark.parametrize("df, expected", sorted(NIST_T975.items()))
def test_t975_matches_the_nist_table(df, expected):
    assert round(t975(df), 3) == expected


def test_t975_to_six_digits():
    # The values the issue names, 6 decimals: df = 1 is the Cauchy quantile tan(0.475 π) =
    # 12.7062047…; df = 4 is W. Shaw's closed form (below); df = 30: R's qt(0.975, 30) prints
    # 2.042272.
    assert round(t975(1), 6) == 12.706205
    assert round(t975(4), 6) == 2.776445
    assert round(t975(30), 6) == 2.042272


def shaw_quantile_df4(u: float) -> float:
    """W. T. Shaw, "Sampling Student's T distribution — use of the inverse cumulative distribution
    function", Journal of Computational Finance 9(4), 2006, eq. for n = 4:
    α = 4u(1−u), q = cos(arccos(√α)/3)/√α, t = sign(u − ½)·2·√(q − 1)."""
    a = 4 * u * (1 - u)
    q = math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a)
    return math.copysign(2 * math.sqrt(q - 1), u - 0.5)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.95, 0.975, 0.99, 0.999, 0.01, 0.3])
def test_quantile_df4_equals_shaws_closed_form(p):
    # df = 4 goes through the Newton iteration on the A&S series, not through a closed form.
    assert t_quantile(p, 4) == pytest.approx(shaw_quantile_df4(p), rel=1e-14)


@pytest.mark.parametrize("p", [0.6, 0.975, 0.999])
def test_quantile_df2_equals_the_inverted_cdf(p):
    # df = 2: F(t) = ½ + t / (2√(2 + t²)) (A&S 26.7.4), so F(t_p) must give back p.
    t = t_quantile(p, 2)
    assert 0.5 + t / (2 * math.sqrt(2 + t * t)) == pytest.approx(p, abs=1e-15)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 8, 13, 30, 101, 500])
def test_cdf_is_the_integral_of_the_density(df):
    # Composite Simpson on [0, x] with 4 000 intervals (error far below 1e-10 for these smooth
    # densities), against the closed form: P(T ≤ x) = ½ + ∫₀ˣ f.
    x = 2.5
    grid = np.linspace(0.0, x, 4_001)
    f = np.array([t_pdf(v, df) for v in grid])
    h = grid[1] - grid[0]
    integral = h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
    assert t_cdf(x, df) == pytest.approx(0.5 + integral, abs=1e-10)
    assert t_cdf(-x, df) == pytest.approx(0.5 - integral, abs=1e-10)


@pytest.mark.parametrize("df", [3, 7, 10, 29, 64, 250, 999, 1000])
@pytest.mark.parametrize("p", [0.51, 0.8, 0.975, 0.9995])
def test_quantile_inverts_the_cdf(df, p):
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=2e-15)


def test_the_large_df_expansion_meets_the_series():
    # Beyond 1000 degrees of freedom the quantile is the Cornish-Fisher expansion; at the
    # switch both methods must agree to far better than anything a CI prints.
    series = stats._upper_quantile(0.975, stats._SERIES_MAX_DF)
    expansion = stats._cornish_fisher(0.975, stats._SERIES_MAX_DF)
    assert expansion == pytest.approx(series, rel=1e-14)
    # ... keep decreasing past the switch, and tend to the standard normal 0.975 quantile,
    # 1.959964 to six decimals, from above (t975(df) − z ≈ (z³ + z)/(4 df), A&S 26.7.5).
    assert t975(stats._SERIES_MAX_DF + 1) < t975(stats._SERIES_MAX_DF)
    assert t975(1_000_000) - 1.959964 == pytest.approx((1.959964**3 + 1.959964) / 4e6, abs=1e-6)


def test_quantiles_are_symmetric_and_monotone():
    assert t_quantile(0.5, 7) == 0.0
    assert t_quantile(0.025, 7) == -t_quantile(0.975, 7)
    values = [t975(df) for df in range(1, 200)]
    assert all(a > b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("df", [0, -3, 2.5, True, "4", None])
def test_bad_degrees_of_freedom_are_refused_by_name(df):
    with pytest.raises(ValueError, match="degrees of freedom: .* a whole number of at least 1"):
        t975(df)


@pytest.mark.parametrize("p", [0.0, 1.0, -0.2, float("nan")])
def test_bad_probabilities_are_refused_by_name(p):
    with pytest.raises(ValueError, match="probability: .* strictly between 0 and 1"):
        t_quantile(p, 5)


def test_numpy_integers_are_degrees_of_freedom():
    # SweepResults.aggregate passes counts from a pandas column (numpy.int64).
    assert t975(np.int64(4)) == t975(4)


def test_one_definition_and_no_scipy():
    # Sweeps and reproductions share lasthop.stats.t975, and importing them loads no scipy.
    code = ("import importlib, sys\n"
            "t975s = {importlib.import_module(m).t975 for m in ('lasthop.sweep', 'lasthop.reproduce', 'lasthop.stats')}\n"
            "assert len(t975s) == 1, t975s\n"
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
