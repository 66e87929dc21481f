"""802.11: the analytic model against the reference tables, and the simulator against the model."""

import csv
import importlib.util
from pathlib import Path

import pytest

import lasthop
from lasthop.models import bianchi, phy_timing
from lasthop.saturation import saturation_toml

from conftest import ROOT, lasthop_cli

# Copies of shared/reference/tables (see tests/data/bianchi/README.md).
TABLES = ROOT / "tests" / "data" / "bianchi"
SIZES = [64, 128, 256, 512, 1024, 1500]


def _reference(name: str):
    path = TABLES / name
    rows = [r for r in csv.reader(l for l in path.open() if not l.startswith("#"))]
    return [dict(zip(rows[0], map(float, r))) for r in rows[1:]]


@pytest.mark.parametrize(
    "table, phy, kwargs",
    [
        ("bianchi_11b_basic_long.csv", phy_timing("802.11b"), {}),
        ("bianchi_11b_basic_long_eifs.csv", phy_timing("802.11b"), {"tc": "eifs"}),
        ("bianchi_11b_basic_short.csv", phy_timing("802.11b", preamble="short"), {}),
        ("bianchi_11b_rts_long.csv", phy_timing("802.11b"), {"rts": True}),
        ("bianchi_11g_basic_short_slot.csv", phy_timing("802.11g"), {}),
        ("bianchi_11g_basic_long_slot.csv", phy_timing("802.11g", slot="long"), {}),
    ],
)
def test_model_reproduces_the_reference_tables(table, phy, kwargs):
    # tests/data/bianchi (from shared/reference/tables), computed independently by bianchi.py for n = 1..50 × 6 sizes.
    for row in _reference(table):
        n = int(row["n"])
        r = bianchi(n, 1500, phy, **kwargs)
        assert r.tau == pytest.approx(row["tau"], abs=1e-6)
        assert r.p == pytest.approx(row["p"], abs=1e-6)
        for size in SIZES:
            s = bianchi(n, size, phy, **kwargs).throughput_bps / 1e6
            assert s == pytest.approx(row[f"S_{size}B"], abs=6e-5), (table, n, size)


def _simulate(n: int, size: int, phy: str, duration_s: float, retry: int = 1_000_000):
    text = saturation_toml(n, size, phy, f"{duration_s:.3f}s", retry_short=retry)
    res = lasthop.run(lasthop.Scenario.from_str(text))
    iv = res.intervals
    warm = iv[iv.t_start_s >= 1.0]
    throughput = warm.groupby("t_start_s").throughput_rx_bps.sum().mean()
    members = res.summary["wlans"][0]["members"]
    attempts = sum(m["attempts"] for m in members)
    collisions = sum(m["collisions"] for m in members)
    return throughput, collisions / attempts if attempts else 0.0


@pytest.mark.parametrize("phy", ["802.11b", "802.11g"])
@pytest.mark.parametrize("size", [1500, 512])
def test_saturation_throughput_and_collisions_match_bianchi(phy, size):
    """n = 1..50 saturated stations, basic access, ideal channel, unlimited retries (Bianchi's
    assumptions; the standard's limit of 7 attempts is checked separately below). lasthop's DCF
    waits EIFS after a collision, so the model is taken with Tc = DATA + EIFS (models.md §1.5)."""
    failures = []
    for n in range(1, 51):
        model = bianchi(n, size, phy, tc="eifs")
        frame_rate = model.throughput_bps / (8 * size)
        # Long enough for ≥ 30 000 frames, and for ≥ 4 000 collisions so that the collision
        # probability has a relative standard error below 1.6 %.
        duration = 1.0 + max(30_000 / frame_rate, (4_000 / model.p if model.p else 0) / frame_rate / (1 - model.p + 1e-9))
        s, p = _simulate(n, size, phy, duration)
        if abs(s / model.throughput_bps - 1) > 0.03:
            failures.append(f"n={n}: S {s / 1e6:.3f} vs {model.throughput_bps / 1e6:.3f} Mb/s")
        # Bianchi's decoupling assumption is worst for two stations: the reference's own slotted
        # Monte Carlo of his assumptions (bianchi_simcheck.py) finds p 7 % above the fixed
        # point at n = 2 (0.061 vs 0.057), so n = 2 gets 10 %, every larger n 5 %.
        tolerance = 0.10 if n == 2 else 0.05
        if n > 1 and abs(p / model.p - 1) > tolerance:
            failures.append(f"n={n}: p {p:.4f} vs {model.p:.4f}")
    assert not failures, "\n".join(failures)


def test_retry_limit_of_seven_costs_what_p_to_the_seventh_predicts():
    # With the standard's 7 attempts a frame is dropped with probability ≈ p^7 (models.md §1.5):
    # 802.11g, n = 50, p ≈ 0.6 -> 2.8 % of frames; throughput falls below the unlimited case.
    s7, p7 = _simulate(50, 1500, "802.11g", 20.0, retry=7)
    s_inf, _ = _simulate(50, 1500, "802.11g", 20.0)
    assert s7 < s_inf
    assert 0.57 < p7 < 0.66


# tables/max_throughput.md: one saturated station, 1500-byte IP packets + 8 B LLC/SNAP.
MAX_UDP = {"802.11b": 5.94, "802.11g": 29.93}
MAX_TCP = {("802.11b", 1): 4.02, ("802.11b", 2): 4.78, ("802.11g", 1): 20.46, ("802.11g", 2): 24.22}


def _cycle_us(phy: str, msdu: int, backoff: bool = True) -> float:
    """One DCF cycle (max_throughput.md): DIFS + CWmin/2 slots + DATA + SIFS + ACK."""
    t = phy_timing(phy)
    return t.difs + (t.cw_min / 2 * t.slot if backoff else 0.0) + t.data(msdu) + t.sifs + t.ack


def _single_station(phy: str, flow: str) -> str:
    return f"""
[simulation]
duration = "20s"
[[nodes]]
name = "ap"
[[nodes]]
name = "sta"
[[wlans]]
name = "bss"
standard = "{phy}"
ap = "ap"
stations = ["sta"]
queue = "100p"
[[flows]]
name = "f"
src = "sta"
dst = "ap"
{flow}
"""


@pytest.mark.parametrize("phy", ["802.11b", "802.11g"])
def test_single_station_udp_maximum(phy):
    # The cycle formula reproduces the table (1472 B of UDP payload per 1508-byte MSDU) ...
    assert 8 * 1472 / _cycle_us(phy, 1508) == pytest.approx(MAX_UDP[phy], abs=0.005)
    rate = MAX_UDP[phy] * 1e6
    res = lasthop.run(lasthop.Scenario.from_str(_single_station(
        phy, f'app = {{ type = "cbr", size = "1472B", interval = "{1472 * 8 / (1.2 * rate) * 1e6:.1f}us" }}')))
    iv = res.intervals
    g = iv[iv.t_start_s >= 1.0].goodput_bps.mean()
    # ... and the simulator reproduces the table.
    assert g / 1e6 == pytest.approx(MAX_UDP[phy], rel=0.01)


@pytest.mark.parametrize("phy", ["802.11b", "802.11g"])
@pytest.mark.parametrize("b", [1, 2])
def test_single_station_tcp_maximum(phy, b):
    """b = segments per TCP ACK (2 with delayed ACKs). The table's formula serializes the ACK's
    DCF cycle after the data cycles, backoff included; in a real DCF the AP's backoff for the
    ACK runs down in parallel with the station's. So the table is the lower bound and the same
    formula with no backoff for the ACK is the upper bound; the simulator must land between."""
    data, ack, ack_nobo = _cycle_us(phy, 1508), _cycle_us(phy, 48), _cycle_us(phy, 48, backoff=False)
    lower = b * 8 * 1460 / (b * data + ack)
    upper = b * 8 * 1460 / (b * data + ack_nobo)
    assert lower == pytest.approx(MAX_TCP[(phy, b)], abs=0.005), "the cycle formula reproduces the table"
    tcp = f'tcp = {{ delayed_ack_enabled = {"true" if b == 2 else "false"}, receive_buffer = "256KiB" }}'
    res = lasthop.run(lasthop.Scenario.from_str(_single_station(phy, f'app = {{ type = "bulk" }}\n{tcp}')))
    iv = res.intervals
    g = iv[iv.t_start_s >= 2.0].goodput_bps.mean() / 1e6
    assert lower <= g <= upper, f"{g:.3f} Mb/s outside [{lower:.3f}, {upper:.3f}]"


def test_bianchi_command_prints_the_model():
    r = lasthop_cli("bianchi", "--phy", "802.11b", "--stations", "10", "--size", "1500")
    assert r.returncode == 0, r.stderr
    # models.md §1.3: n = 10 -> p = 0.2898, S = 6.058 Mb/s.
    assert "0.2898" in r.stdout and "6.058" in r.stdout
    r = lasthop_cli("bianchi", "--phy", "802.11n")
    assert r.returncode == 2 and "802.11b" in r.stderr


def test_aggregated_bianchi_by_hand_for_one_802_11n_station():
    # One station (p = 0, tau = 2/17): S = k · 8 · MSDU / (7.5 slots + Ts). 1500 B MSDUs in
    # MPDUs of 1538 B (+ 8 LLC/SNAP, 30 QoS header and FCS), 4 B delimiters, padded to 1544 B.
    # HT MCS 7 at 20 MHz: an HT-mixed PPDU lasts at most 5.484 ms (its L-SIG, 802.11-2016
    # 19.3.9.3.5), so 28 go (27 · 1544 + 1542 = 43 230 B): 36 µs of preamble + 4 µs ·
    # ⌈(16 + 8 · 43 230 + 6) / 260⌉ = 1331 symbols = 5360 µs (29 would take 5548 µs); Ts = 5360
    # + SIFS 16 + compressed Block Ack (32 B at 24 Mb/s: 32 µs) + AIFS (16 + 3 · 9 = 43) = 5451 µs;
    # S = 28 · 12 000 / (67.5 + 5451) = 60.886 Mb/s (ns-3 3.44: 60.74 with 28-MPDU A-MPDUs).
    from lasthop.models import bianchi_ampdu

    r = bianchi_ampdu(1, "802.11n", mcs=7, width=20)
    assert (r.mpdus, r.psdu, r.ts_us) == (28, 43_230, 5451.0)
    assert r.throughput_bps == pytest.approx(28 * 12_000 / (67.5 + 5451) * 1e6, rel=1e-12)
    # The Block Ack window bounds an HE A-MPDU of small MSDUs (256), the length limit 802.11n's.
    assert bianchi_ampdu(1, "802.11ax", mcs=11, width=80, size=100, max_ampdu=6_500_631).mpdus == 256
    with pytest.raises(ValueError, match="MCS 11 on 802.11n: valid: 0 to 7"):
        bianchi_ampdu(1, "802.11n", mcs=11)


def test_aggregated_bianchi_against_ns3_for_a_single_station():
    # ns-3 3.44's UDP saturation throughput (tests/data/wifi/ns3_ampdu_saturation.csv, made by
    # the script beside it) of one station in A-MPDUs: the airtime of an exchange — PPDU, SIFS,
    # Block Ack, AIFS and the mean backoff — is the whole story there, and the model is within
    # 2 % for 802.11n, ac and ax. With 10 stations ns-3 sends a BlockAckRequest after each
    # collision, which the chain leaves out (tests/data/wifi/README.md; the simulator with
    # bar_after_missed_block_ack is checked against those rows).
    from lasthop.models import bianchi_ampdu

    mcs = {"HtMcs7": 7, "VhtMcs9": 9, "HeMcs11": 11}
    rows = list(csv.DictReader(line for line in (ROOT / "tests/data/wifi/ns3_ampdu_saturation.csv").open() if not line.startswith("#")))
    singles = [r for r in rows if r["stations"] == "1"]
    assert len(singles) == 3
    for r in singles:
        model = bianchi_ampdu(1, r["standard"], mcs=mcs[r["data_mode"]], width=int(r["width_mhz"])).throughput_bps / 1e6
        assert model == pytest.approx(float(r["ns3_mbps"]), rel=0.02), r


@pytest.mark.parametrize("standard,mcs,width,n", [("802.11ac", 5, 40, 3), ("802.11ac", 8, 80, 8), ("802.11ax", 9, 40, 6),
                                                  ("802.11n", 4, 40, 15)])
def test_the_simulated_aggregating_mac_follows_the_aggregated_bianchi_chain(standard, mcs, width, n, monkeypatch):
    # Configurations no test or parameter was fitted to: the simulator's EDCA MAC (no
    # BlockAckRequests, its default) against Bianchi's chain with A-MPDU airtime
    # (lasthop.models.bianchi_ampdu, Ts = Tc = PPDU + SIFS + Block Ack + AIFS) within 3 % (measured:
    # 0.996, 1.006, 0.998, 1.015).
    # Queues of 500 packets keep every A-MPDU full (with fewer, a station that wins twice in a
    # row sends a short one: tests/data/wifi/README.md).
    import lasthop
    from lasthop.models import bianchi_ampdu

    monkeypatch.syspath_prepend(str(ROOT / "bench"))  # its sibling md_sections
    spec = importlib.util.spec_from_file_location("fidelity_wifi", ROOT / "bench" / "fidelity_wifi.py")
    fw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fw)
    text = fw.saturation_scenario(standard, width, mcs, n).replace("bar_after_missed_block_ack = true\n", "")
    res = lasthop.run(lasthop.Scenario.from_str(text))
    sim = sum(f["goodput_bps"] for f in res.summary["flows"]) * 1500 / 1472
    chain = bianchi_ampdu(n, standard, mcs=mcs, width=width).throughput_bps
    assert sim == pytest.approx(chain, rel=0.03), (sim / 1e6, chain / 1e6)
