"""Reproductions run from the command line and keep the papers' directions."""

import pytest

from lasthop.reproduce import REGISTRY, reproduce

from conftest import lasthop_cli


def test_list_names_the_reproductions():
    r = lasthop_cli("reproduce", "--list")
    assert r.returncode == 0
    for name in REGISTRY:
        assert name in r.stdout


def test_palazzi2006_directions(tmp_path):
    rep = reproduce("palazzi2006", tmp_path, quick=True)
    d = rep.data
    regular, sap18 = d["regular"], d["sap"][18]
    # Paper 001: regular TCP 55 371 packets, SAP-LAW (C = 18 Mb/s) 58 677, and the game's max
    # jitter under 10 ms with SAP-LAW, tens of ms without (Figs. 4, 8, 10).
    assert sap18["ftp_packets"] >= regular["ftp_packets"]
    assert regular["game_jitter_max_ms"] > 2 * sap18["game_jitter_max_ms"]
    # Over seeds 1-5 the median maximum jitter is under 10 ms (one run's maximum is set by one
    # slow-start burst, 6.6-13 ms here).
    assert sorted(d["sap18_seeds"])[2] < 10.0, d["sap18_seeds"]
    # Jitter statistics grow with C (Fig. 8).
    assert d["sap"][14]["game_jitter_max_ms"] <= sap18["game_jitter_max_ms"] <= d["sap"][22]["game_jitter_max_ms"]
    # Fewer MAC transmissions cut the queueing jitter and the FTP throughput (Figs. 5-7).
    assert d["mac"][(1, 50)]["ftp_packets"] < d["mac"][(4, 50)]["ftp_packets"]
    assert d["mac"][(1, 50)]["game_jitter_max_ms"] < d["mac"][(4, 50)]["game_jitter_max_ms"]
    # A larger AP queue helps TCP (Fig. 5) and hurts jitter.
    assert d["mac"][(4, 100)]["ftp_packets"] > d["mac"][(4, 50)]["ftp_packets"]
    # FQ-CoDel beside them.
    assert d["fq_codel"]["game_jitter_max_ms"] < 10.0
    # A different sender does not protect the game: CUBIC's and BBR's maximum jitter stay above
    # SAP-LAW's median, while BBR moves more FTP data than NewReno.
    for v in ("cubic", "bbr"):
        assert d["senders"][v]["game_jitter_max_ms"] > sorted(d["sap18_seeds"])[2], v
    assert d["senders"]["bbr"]["ftp_packets"] > regular["ftp_packets"]
    assert all(f.exists() for f in rep.figures)


def test_unknown_reproduction_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="available"):
        reproduce("nope", tmp_path)
    r = lasthop_cli("reproduce", "nope")
    assert r.returncode == 2


def test_koga2005_directions(tmp_path):
    rep = reproduce("koga2005", tmp_path, quick=True)
    m = rep.data["measured"]
    for rate in (32, 64, 128):
        none, prio, awnd = m[("no QoS (Table 2)", rate)], m[("priority scheduling (Table 4)", rate)], m[("receiver-based awnd (Table 5)", rate)]
        # Table 2: without QoS most UDP packets are lost, almost all of them late (application loss).
        assert none[2] > 50.0 and none[1] > none[0]
        # Table 4: priority scheduling brings UDP loss below 1 % with TCP barely reduced.
        assert prio[2] < 1.0, (rate, prio)
        assert prio[3] > 0.9 * none[3]
        # Table 5: the receiver-based awnd cuts UDP loss by more than an order of magnitude
        # (paper: below 1 %; ours 2-3 %, see the reproduction's notes) at a TCP cost.
        assert awnd[2] < 5.0 and awnd[2] < none[2] / 10, (rate, awnd)
    # Table 2's TCP throughput at 32 kb/s of UDP: 293.29 kb/s (±10 %).
    assert abs(m[("no QoS (Table 2)", 32)][3] / 293.29 - 1) < 0.10
    # Eq. 3: 5.52, 5.20, 4.56 packets.
    assert [round(rep.data["awnd"][r], 2) for r in (32, 64, 128)] == [5.52, 5.2, 4.56]
    # Figs. 3/5: layer-2 ARQ helps UDP: no retransmission loses far more than one or two.
    retx, curves = rep.data["retx"]
    for label, ys in curves.items():
        assert ys[retx.index(0)] > 2 * ys[retx.index(1)], (label, ys)


def test_ng_snoop_directions(tmp_path):
    rep = reproduce("ng-snoop", tmp_path, quick=True)
    t = rep.table
    row = lambda transfer, per: t[(t.transfer == transfer) & (t.packet_error_rate == per)].iloc[0]
    # No errors: Snoop changes nothing.
    assert row("MH download", 0.0).response_s_plain == row("MH download", 0.0).response_s_snoop
    # 30 % packet errors: the paper's ~68x; we hold ≥ 5x for downloads, ≥ 2x for uploads.
    assert row("MH download", 0.3).speed_up >= 5
    assert row("MH upload", 0.3).speed_up >= 2
    # Two mobiles both benefit; a Snoop mobile and a plain one coexist.
    assert row("two downloads at 30 %, MH1", 0.3).speed_up > 1.3 and row("two downloads at 30 %, MH2", 0.3).speed_up > 1.3
    assert row("Snoop for MH1 only, MH1", 0.3).speed_up > 1.3
    assert row("Snoop for MH1 only, MH2", 0.3).speed_up > 0.67, "the plain mobile is not penalized"


def test_botta_hetperf_directions(tmp_path):
    t = reproduce("botta-hetperf", tmp_path, quick=True).table
    high = t[t.load == "high"]
    for config in ["wireless2wired (AP)", "wireless2wireless (ad hoc)"]:
        sub = high[high.configuration == config]
        # Saturated by one sender: Bianchi's n = 1 throughput is the ceiling (paper: an upper bound
        # for UDP), reached within the run's sampling noise.
        ratio = sub.rx_mbps / sub.bianchi_n1_mbps
        assert (ratio < 1.01).all() and (ratio > 0.95).all(), ratio.tolist()
    # Through the AP a wireless-to-wireless packet uses the channel twice: about half the ad hoc rate.
    ap = high[high.configuration == "wireless2wireless (AP)"].rx_mbps.to_numpy()
    adhoc = high[high.configuration == "wireless2wireless (ad hoc)"].rx_mbps.to_numpy()
    assert ((ap / adhoc > 0.45) & (ap / adhoc < 0.6)).all(), (ap / adhoc).tolist()
    # Loss grows with load on the WLAN; Ethernet carries everything up to its 100 Mb/s.
    w = t[t.configuration == "wireless2wired (AP)"].groupby("load").loss.mean()
    assert w["low"] < w["medium"] < w["high"]
    eth = t[t.configuration == "wired2wired"]
    assert (eth[eth.tx_mbps < 100].loss == 0).all()


def test_hur_hong2006_directions(tmp_path):
    rep = reproduce("hur-hong2006", tmp_path, quick=True)
    d = rep.data
    sizes = sorted(d["ratio"])
    pda = [d["ratio"][k][0] for k in sizes]
    # Table 3: the PDA's receive/send ratio is at least 1.5 (paper 1.53 at 235 KB) and grows with
    # the file (paper 1.70 at 4688 KB); the PC client's is 1.0 (paper 0.99-1.0).
    assert pda[0] >= 1.5 and all(b > a for a, b in zip(pda, pda[1:])), pda
    assert pda[-1] - pda[0] > 0.08, pda
    assert all(abs(d["ratio"][k][1] - 1.0) < 0.03 for k in sizes)
    # Table 4: the PDA's window collapses from 32 581 B to a few hundred bytes (paper: 686 B);
    # the PC's, as receiver, stays near its 17 520 B.
    assert d["windows"]["pda_down"] < 1460 and d["windows"]["pc_up"] > 14_600
    # Sect. 4.1: a larger PDA receive buffer shortens the receive time (8 KiB -> 32 581 B: by
    # more than a third here); a larger PC send buffer never hurts.
    b = d["buffers"]
    assert b[(32_581, 8192)] < 0.66 * b[(8192, 8192)] and b[(16384, 8192)] < b[(8192, 8192)]
    assert all(b[(r, 65535)] <= b[(r, 8192)] * 1.001 for r in (8192, 16384, 32_581))
    # Sect. 4.2: the 8 KiB application buffer beats the small ones (paper: fastest at 8 KiB).
    app = d["app_buffer"]
    assert app[8192] < app[3072] < app[512]
    # Table 6: downstream fastest without an inter-packet delay (4 622 ms vs 12 559+ ms).
    ipd = d["ipd"]
    assert ipd[None][1] < min(ipd[1][1], ipd[10][1], ipd[100][1])
    # Table 7: the three remedies cut the receive time by about 61 %; we hold more than 40 %.
    without, with_ = d["method"]
    assert with_ < 0.6 * without
    assert all(f.exists() for f in rep.figures)
