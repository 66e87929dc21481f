"""ns-3 as a standing oracle (issue 9): lasthop against ns-3 3.44 (the `ns3` PyPI package) in the
aligned dumbbell and home scenarios of FIDELITY.md.

Opt-in: `pytest -m ns3 tests/test_ns3_oracle.py` (after `make fidelity`, which installs ns3 and
fills the cache, this takes under a minute; from a cold cache about 45 min on 2 cores). The
expected values are ns-3's own results for the same settings and seeds, produced here by
tests/oracle/ (cached in results/ns3-oracle-cache/); the 10 % tolerance is issue 9's goal for
cases where the two models are aligned. Where they are known not to be (ns-3's ssthresh rule,
note A of FIDELITY.md), the test asserts the explanation instead: the gap closes when that one
rule is aligned in ns-3.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle import suite  # noqa: E402

pytestmark = pytest.mark.ns3

TOLERANCE = 0.10  # issue 9: "within 10 % where the models are aligned"


@pytest.fixture(scope="module")
def ns3_available():
    ok, why = suite.ns3_importable()
    if not ok:
        pytest.skip(f"ns-3 oracle unavailable: {why}")


@pytest.fixture(scope="module")
def dumbbell(ns3_available):
    return suite.collect_dumbbell(suite.SEEDS)


@pytest.fixture(scope="module")
def home(ns3_available):
    return suite.collect_home(suite.SEEDS)


def mean(runs: list[dict], key: str) -> float:
    return suite.mean_ci([r[key] for r in runs])[0]


def test_lossless_dumbbell_goodput_matches_ns3(dumbbell):
    # Both fill the 10 Mb/s bottleneck; only the PPP header (0.13 %) and the queue's sawtooth differ.
    # (Without SACK, ns-3's lossless run is in its duplicate-resending mode: see the no-SACK test.)
    rows = dumbbell[suite.DumbbellCase(0.0, True)]
    lh, n3 = mean(rows["lasthop"], "goodput_after_warmup_bps"), mean(rows["ns3"], "goodput_after_warmup_bps")
    assert abs(lh / n3 - 1) <= TOLERANCE, f"lossless goodput: lasthop {lh / 1e6:.3f} vs ns-3 {n3 / 1e6:.3f} Mb/s"


@pytest.mark.parametrize("loss", [l for l in suite.LOSSES if l > 0])
def test_lossy_sack_goodput_matches_ns3_with_rfc_ssthresh(dumbbell, loss):
    # With SACK the models differ in one rule only (note A): ns-3 halves its pipe, lasthop FlightSize.
    # Against the ns-3 run whose NewReno halves the window, lasthop must be within 10 %.
    rows = dumbbell[suite.DumbbellCase(loss, True)]
    lh = mean(rows["lasthop"], "goodput_after_warmup_bps")
    hw = mean(rows["half_window"], "goodput_after_warmup_bps")
    assert abs(lh / hw - 1) <= TOLERANCE, (
        f"loss {loss:.1%} SACK: lasthop {lh / 1e6:.3f} vs ns-3 with ssthresh = W/2 {hw / 1e6:.3f} Mb/s")


@pytest.mark.parametrize("loss", [l for l in suite.LOSSES if l > 0])
def test_ns3_ssthresh_rule_explains_its_lower_goodput(dumbbell, loss):
    # Note A as a falsifiable claim: ns-3's ssthresh after fast retransmit is well below FlightSize/2
    # (three SACKed segments and the lost one are out of its pipe), lasthop's is not, and ns-3 as
    # shipped delivers less than the same ns-3 with ssthresh = W/2.
    rows = dumbbell[suite.DumbbellCase(loss, True)]
    n3_ratio = mean(rows["ns3"], "ssthresh_over_half_flight")
    lh_ratio = mean(rows["lasthop"], "ssthresh_over_half_flight")
    assert n3_ratio < 0.8 < lh_ratio, f"ssthresh / (FlightSize/2): ns-3 {n3_ratio:.2f}, lasthop {lh_ratio:.2f}"
    assert mean(rows["ns3"], "goodput_after_warmup_bps") < mean(rows["half_window"], "goodput_after_warmup_bps")


@pytest.mark.parametrize("loss", suite.LOSSES)
def test_nosack_goodput_matches_ns3_normal_mode_seeds(dumbbell, loss):
    # Against the ns-3 seeds outside its duplicate-resending mode (suite.DUP_MODE_SHARE, note B); what remains is ns-3's ssthresh rule (note A), which
    # without SACK costs it only (FlightSize - 2 MSS)/2 instead of FlightSize/2.
    rows = dumbbell[suite.DumbbellCase(loss, False)]
    normal = [r for r in rows["ns3"] if suite.retx_share(r) <= suite.DUP_MODE_SHARE]
    if len(normal) < 2:
        pytest.skip(f"only {len(normal)} ns-3 seeds outside the duplicate-resending mode at {loss:.1%}")
    lh, n3 = mean(rows["lasthop"], "goodput_after_warmup_bps"), mean(normal, "goodput_after_warmup_bps")
    assert abs(lh / n3 - 1) <= TOLERANCE, (
        f"loss {loss:.1%} no SACK: lasthop {lh / 1e6:.3f} vs ns-3 normal-mode seeds {n3 / 1e6:.3f} Mb/s")


@pytest.mark.parametrize("flow", [n for n, _, _ in suite.HOME_UDP])
def test_home_udp_throughput_matches_ns3(home, flow):
    # The same packet schedule replayed in ns-3; what arrives differs only by MAC-level losses.
    def tput(v):
        return suite.mean_ci([suite.udp_metrics(r["udp"][flow], suite.HOME_METRIC_FROM_S, suite.HOME_DURATION_S)
                              ["throughput_rx_bps"] for r in home[v]])[0]

    lh, n3 = tput("lasthop"), tput("ns3")
    assert abs(lh / n3 - 1) <= TOLERANCE, f"{flow}: lasthop {lh / 1e3:.1f} vs ns-3 {n3 / 1e3:.1f} kb/s"


def test_home_ftp_goodput_matches_ns3(home):
    # 54 Mb/s DCF without RTS/CTS and without errors: the saturated TCP download over the shared WLAN.
    lh = suite.mean_ci([r["ftp"]["goodput_bps"] for r in home["lasthop"]])[0]
    n3 = suite.mean_ci([r["ftp"]["goodput_bps"] for r in home["ns3"]])[0]
    assert abs(lh / n3 - 1) <= TOLERANCE, f"home FTP goodput: lasthop {lh / 1e6:.2f} vs ns-3 {n3 / 1e6:.2f} Mb/s"
