"""Reproductions run from the command line and from Python, share one table shape, compute their
intervals and verdicts correctly, and keep the papers' directions (quick paths, few seeds)."""

import math

import pytest

from lasthop.reproduce import (
    COLUMNS, REGISTRY, bound, claims_table, compare, mean_ci, ratio_ci, reproduce, tcp_fields, value,
)
from lasthop.reproduce import ng_snoop

from conftest import lasthop_cli


def row(t, case_part: str, metric_part: str = ""):
    """The single row whose case and metric contain the given text."""
    hit = t[t.case.str.contains(case_part, regex=False) & t.metric.str.contains(metric_part, regex=False)]
    assert len(hit) == 1, (case_part, metric_part, hit.case.tolist())
    return hit.iloc[0]


def assert_uniform(rep, n_seeds: int):
    """The shared table shape: every column, every row with a case, a metric and a verdict."""
    t = rep.table
    assert list(t.columns) == COLUMNS
    assert (t.n == n_seeds).sum() > 0 and rep.seeds == list(range(1, n_seeds + 1))
    assert t.case.str.len().min() > 0 and t.metric.str.len().min() > 0 and t.verdict.str.len().min() > 0
    # With n > 1 every sampled row has an interval around its mean.
    many = t[t.n > 1]
    assert ((many.ci95_low <= many.ours + 1e-12) & (many.ours <= many.ci95_high + 1e-12)).all()
    assert all(f.exists() for f in rep.figures)


# ---------------------------------------------------------------- the shared helpers


def test_student_t_interval_of_a_small_known_sample():
    # 1..5: mean 3, s = sqrt(2.5); t(0.975, 4 df) = 2.776445 (any t table), so the half-width is
    # 2.776445 * sqrt(2.5) / sqrt(5) = 1.963243.
    m, lo, hi = mean_ci([1, 2, 3, 4, 5])
    assert m == 3.0
    assert lo == pytest.approx(3 - 1.963243, abs=1e-6) and hi == pytest.approx(3 + 1.963243, abs=1e-6)


def test_one_seed_has_no_interval():
    m, lo, hi = mean_ci([7.0])
    assert m == 7.0 and math.isnan(lo) and math.isnan(hi)
    r = value("case", "metric", [7.0], 7.0)
    assert r["n"] == 1 and math.isnan(r["ci95_low"]) and r["verdict"] == "within 10 %"


def test_ratio_interval_by_the_delta_method():
    # Proportional pairs (x = 2y) have ratio 2 and no spread at all.
    assert ratio_ci([2, 4], [1, 2]) == (2.0, 2.0, 2.0)
    # x = (1, 3), y = (1, 1): R = 2, s_x² = 2, s_y² = s_xy = 0, var(R) = 2 / (2 · 1²) = 1; with
    # t(0.975, 1 df) = 12.706205 the interval is 2 ± 12.706205.
    r, lo, hi = ratio_ci([1, 3], [1, 1])
    assert r == 2.0 and lo == pytest.approx(2 - 12.706205, abs=1e-5) and hi == pytest.approx(2 + 12.706205, abs=1e-5)


def test_verdicts_on_direction_and_magnitude():
    assert value("c", "m", [10.5], 10.0)["verdict"] == "within 10 %"
    assert value("c", "m", [5.0], 10.0)["verdict"] == "0.5x"
    assert value("c", "m", [250.0], 10.0)["verdict"] == "25x"
    assert value("c", "m", [1.0])["verdict"] == "no paper value"
    # The paper says X is 68x Y; ours is 34x: same direction, half the paper's factor.
    v = compare("c", "m", [34.0, 34.0], [1.0, 1.0], ">", 68.0)
    assert v["ours"] == 34.0 and v["ratio"] == 0.5 and v["verdict"] == "same direction, 0.5x"
    assert compare("c", "m", [1.0], [2.0], ">")["verdict"] == "opposite direction"
    # The direction is that of the means even when one seed disagrees; the interval says so.
    v = compare("c", "m", [3.0, 0.5], [1.0, 1.0], ">")
    assert v["verdict"] == "same direction (95 % interval includes 1)"
    assert bound("c", "m", [8.0], "<", 10.0)["verdict"].startswith("meets the bound")
    assert bound("c", "m", [12.0], "<", 10.0)["verdict"].startswith("misses the bound")
    assert list(claims_table([v]).columns) == COLUMNS


# ---------------------------------------------------------------- command line


def test_list_names_the_reproductions():
    r = lasthop_cli("reproduce", "--list")
    assert r.returncode == 0
    for name in REGISTRY:
        assert name in r.stdout


def test_unknown_reproduction_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="available"):
        reproduce("nope", tmp_path)
    r = lasthop_cli("reproduce", "nope")
    assert r.returncode == 2


def test_seeds_give_the_same_table_bytes_from_the_cli_and_python(tmp_path):
    # Two worker processes on the command line, one in Python: the same seeds, the same CSV.
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        r = lasthop_cli("reproduce", "koga2005", "--quick", "--seeds", "2", "--out", str(d))
        assert r.returncode == 0, r.stderr
        assert "seeds 1-2 (n = 2)" in r.stdout and "verdict" in r.stdout
    assert (a / "koga2005.csv").read_bytes() == (b / "koga2005.csv").read_bytes()
    rep = reproduce("koga2005", tmp_path / "c", quick=True, seeds=2, workers=1)
    rep.table.to_csv(tmp_path / "c.csv", index=False)
    assert (tmp_path / "c.csv").read_bytes() == (a / "koga2005.csv").read_bytes()


# ---------------------------------------------------------------- the reproductions


def test_palazzi2006_cases_and_directions(tmp_path):
    rep = reproduce("palazzi2006", tmp_path, quick=True)
    assert_uniform(rep, 2)
    t = rep.table
    # Paper 001, Sect. 5.2: 55,371 packets are the MAC-Setting's (3 transmissions, 50-packet
    # queue), never Regular TCP's; 58,677 are SAP-LAW's with C = 18 Mb/s (Sect. 5.3).
    mac = t[t.paper_value == 55_371]
    assert len(mac) == 2 and mac.case.str.contains("3 MAC data transmissions, 50-packet AP queue").all()
    assert not t[t.paper_value.isin([55_371, 58_677])].case.str.contains("Regular").any()
    assert row(t, "SAP-LAW, C = 18 Mb/s (Sect. 5.3", "FTP packets").paper_value == 58_677
    # Fig. 8: jitter grows with C, and throughput falls when C is too low.
    assert row(t, "C = 22 against 14", "mean game jitter").verdict.startswith("same direction")
    assert row(t, "C = 14 against 18", "FTP packets").verdict.startswith("same direction")
    # Fig. 5: a larger AP queue helps TCP; 2 transmissions cost FTP throughput against 3.
    assert row(t, "queue 100 against 50", "FTP").verdict.startswith("same direction")
    assert row(t, "2 against 3 MAC data transmissions", "FTP").verdict.startswith("same direction")
    # Figs. 4 and 10: Regular's largest jitter is well above SAP-LAW's (ours ~2.7x on seeds 1-2).
    assert row(t, "Regular against SAP-LAW", "largest game jitter").ours > 1.5
    # FQ-CoDel (a comparator) keeps the game's jitter under the paper's 10 ms target.
    assert row(t, "FQ-CoDel", "jitter").ours < 10.0


def test_koga2005_tables_and_directions(tmp_path):
    rep = reproduce("koga2005", tmp_path, quick=True)
    assert_uniform(rep, 2)
    t = rep.table
    # Every number of Tables 2-5 is a row (4 tables x 3 rates x 4 metrics).
    assert t.case.str.startswith("Table ").sum() >= 48
    for rate in (32, 64, 128):
        # Table 2: without QoS most UDP packets are lost (paper 88-94 %), almost all late.
        assert row(t, f"Table 2 (no QoS, tuned for TCP: 5 RLC retransmissions for UDP, WT 500 ms, 50-SDU buffer); UDP {rate} kb/s",
                   "total loss").ours > 50.0
        # Tables 4 and 5: priority scheduling and the receiver awnd cut UDP loss against Table 2.
        for tab in ("Table 4", "Table 5"):
            assert row(t, f"{tab} against Table 2; UDP {rate} kb/s (Sects.", "UDP total loss").verdict.startswith("same direction")
        # Table 4: UDP loss below 1 % (paper 0.10-0.23 %).
        assert row(t, f"Table 4 (priority scheduling (Table 1): 2 RLC retransmissions for UDP, WT 150 ms); UDP {rate} kb/s",
                   "total loss").ours < 1.0
    # Tables 3 and 5 (issue 9): TCP within 10 % of the paper at every UDP rate (ours on seeds 1-2:
    # 0.95-1.00x), and Table 3's UDP loss falls as the UDP rate grows, as the paper's 17.86 /
    # 6.73 / 5.74 % do (ours 20.7 / 9.0 / 5.3 %): a slower UDP stream has more TCP SDUs ahead of it
    # in the 10-SDU buffer.
    for tab in ("Table 3 (no QoS", "Table 5 (receiver"):
        for rate in (32, 64, 128):
            r = t[t.case.str.startswith(tab) & t.case.str.endswith(f"UDP {rate} kb/s") & t.metric.str.startswith("TCP")]
            assert len(r) == 1 and r.iloc[0].verdict == "within 10 %", (tab, rate, r.ours.tolist())
    t3 = [t[t.case.str.startswith("Table 3 (") & t.case.str.endswith(f"UDP {rate} kb/s") & t.metric.str.startswith("UDP total")].ours.item()
          for rate in (32, 64, 128)]
    assert t3[0] > t3[1] > t3[2], t3
    # Table 2's TCP throughput at 32 kb/s of UDP: 293.29 kb/s (within 10 %).
    assert row(t, "Table 2 (no QoS, tuned for TCP: 5 RLC retransmissions for UDP, WT 500 ms, 50-SDU buffer); UDP 32 kb/s",
               "TCP throughput").verdict == "within 10 %"
    # Eq. 3: 5.52, 5.20, 4.56 packets.
    assert [round(rep.data["awnd"][r], 2) for r in (32, 64, 128)] == [5.52, 5.2, 4.56]
    # Figs. 3/5: no layer-2 retransmission loses more UDP than one or two.
    assert row(t, "Fig. 3", "UDP total loss").verdict.startswith("same direction")
    assert row(t, "Fig. 5", "UDP total loss").verdict.startswith("same direction")


def test_ng_snoop_scenarios_follow_the_papers_tables():
    s1 = ng_snoop.scenario1(0.3, True)
    # Table 3: PEG and Snoop in mobile 1, dropping data and ACKs; an ad hoc cell (no AP, Sect. 3).
    assert 'node = "MH1"\npeer = "server"\ndirection = "both"\nrate = 0.3' in s1
    assert '[[snoop]]\nnode = "MH1"\npeer = "server"\nlocal_timeout = "1s"' in s1
    assert "ap =" not in s1 and 'src = "MH1"\ndst = "server"' in s1
    # The PEG is the only source of loss: no 802.11 frame errors (the old "below the agent"
    # diagnostic is gone now that the generator itself sits below the agent, Fig. 3).
    assert "errors =" not in s1
    # Table 1's TCP: MSS 2264, receive buffer 8760, RTO 1 / 0.5 / 64 s, Nagle off.
    for field in ('mss = "2264B"', 'receive_buffer = "8760B"', 'rto_initial = "1s"', 'rto_min = "500ms"', 'rto_max = "64s"', "nagle = false"):
        assert field in s1
    # The 0.5 s timer granularity and OPNET's per-ACK increase, when this build's TCP has them.
    assert ('timer_granularity = "500ms"' in s1) == ("timer_granularity" in tcp_fields())
    assert ('ca_increase = "per_ack"' in s1) == ("ca_increase" in tcp_fields())
    # Table 4: both downloads, PEG and Snoop in the server for each connection.
    s2 = ng_snoop.scenario2(0.3, True)
    assert s2.count('[[error_generators]]\nnode = "server"') == 2 and s2.count('[[snoop]]\nnode = "server"') == 2
    assert 'src = "server"\ndst = "MH2"' in s2
    # Table 5: both upload, PEG in the server, Snoop in mobile 2 only.
    s3 = ng_snoop.scenario3(0.3, True)
    assert s3.count('[[error_generators]]\nnode = "server"') == 2 and s3.count("[[snoop]]") == 1
    assert '[[snoop]]\nnode = "MH2"' in s3 and 'src = "MH1"\ndst = "server"' in s3


def test_ng_snoop_gap_variants_change_one_thing_each():
    v = {g.key: g for g in ng_snoop.GAP_VARIANTS}
    paper = ng_snoop.scenario1(0.3, True)
    # The paper's own case is the reproduction's Scenario 1, byte for byte.
    assert ng_snoop.scenario1(0.3, True, snoop_timeout=v["paper"].snoop_timeout, tcp=v["paper"].tcp) == paper
    t03 = ng_snoop.scenario1(0.3, True, snoop_timeout=v["timer-0.3s"].snoop_timeout, tcp=v["timer-0.3s"].tcp)
    assert t03 == paper.replace('local_timeout = "1s"', 'local_timeout = "300ms"')
    slow = ng_snoop.scenario1(0.3, True, tcp=v["slow"].tcp)
    assert 'receive_buffer = "2264B"' in slow and ', window_update = "delayed" }' in slow
    assert slow.replace(', window_update = "delayed"', "").replace('receive_buffer = "2264B"', 'receive_buffer = "8760B"') == paper
    if "timer_granularity" in tcp_fields():
        exact = ng_snoop.scenario1(0.3, True, tcp=v["exact-clock"].tcp)
        assert exact == paper.replace(', timer_granularity = "500ms"', "")


@pytest.fixture(scope="module")
def ng_snoop_quick(tmp_path_factory):
    """One quick ng-snoop run (seeds 1-4) shared by the tests that read it."""
    return reproduce("ng-snoop", tmp_path_factory.mktemp("ng-snoop"), quick=True)


def test_ng_snoop_directions(ng_snoop_quick):
    rep = ng_snoop_quick
    assert_uniform(rep, 4)
    t = rep.table
    res = rep.data["results"]
    seeds = rep.seeds
    # No packet errors: Snoop changes nothing, in every scenario.
    for sc, flows in [("s1", ["MH1"]), ("s2", ["MH1", "MH2"]), ("s3", ["MH1", "MH2"])]:
        for s in seeds:
            assert res[(sc, 0.0, False, s)]["response_s"] == res[(sc, 0.0, True, s)]["response_s"], (sc, s)
    # Scenario 1 at 30 % PER (the paper's ~68x). With the generator below the agent (Fig. 3) the
    # gain is ours 14.1x on seeds 1-4 and 22.3x on 1-30 (the default); with the generator above
    # the agent (before 5c128c2) it was ~3.6x on seeds 1-4. The bound proves the agent now
    # repairs what the generator drops, not just that Snoop helps at all.
    gain = row(t, "PER 30 % (Sect. 4.1.1", "Snoop off / on")
    assert gain.paper_value == 68.0 and gain.ours > 8.0 and gain.verdict.startswith("same direction")
    # Every seed gains more than the old mean (ours 4.2x at the least).
    for s in seeds:
        off, on = res[("s1", 0.30, False, s)]["response_s"]["MH1"], res[("s1", 0.30, True, s)]["response_s"]["MH1"]
        assert off / on > 3.6, (s, off, on)
    assert not t.case.str.contains("below the agent").any()
    # Sect. 4.2.1: two mobiles sharing the cell take about twice as long (paper 17 s against 9.4 s).
    assert 1.5 < row(t, "against Scenario 1; PER 0 %").ours < 2.5
    # Fig. 15: with Snoop TCP's RTO grows less.
    assert row(t, "Fig. 15: Snoop keeps", "largest TCP RTO").ours < 1.0
    # Fig. 17 at 30 %: Snoop speeds the downloads up (ours 16.9x on seeds 1-4, 18.4x on 1-30; a
    # single download gained ~3x when the generator sat above the agent, 5c128c2's measurement).
    assert row(t, "Scenario 2", "Snoop off / on").ours > 5.0
    # Fig. 19 at 30 %: the Snoop mobile beats the plain one (ours 11.2x on seeds 1-4, 20.3x on 1-30).
    assert row(t, "Fig. 19", "mobile 1 (no Snoop) / mobile 2 (Snoop)").ours > 3.0
    assert any("NOT APPLIED" not in n for n in rep.notes)


def test_ng_snoop_gap_attribution(ng_snoop_quick):
    # The notes' table of what separates our Scenario 1 gain from the paper's ~68x, one change at
    # a time over the quick seeds (1-4); the numbers in the comments are ours on seeds 1-4 / 1-30.
    rep = ng_snoop_quick
    gap = rep.data["gap"].set_index("variant")
    assert len(gap) == len(ng_snoop.gap_variants()) and any("one change at a time" in n for n in rep.notes)
    paper = gap.loc["paper"]
    # Its first row is the table's own case, not a re-run that could drift from it.
    assert paper.gain == pytest.approx(row(rep.table, "PER 30 % (Sect. 4.1.1", "Snoop off / on").ours, rel=1e-12)
    # (a) A 0.9 s timer fires before TCP's 1 s RTO: fewer TCP timeouts with Snoop (3.2 against
    # 5.8; 2.9 against 6.7), yet about the same gain (15.9x against 14.1x; 22.2x against 22.3x):
    # the tie is not the gap.
    t09 = gap.loc["timer-0.9s"]
    assert t09.tcp_timeouts_on < paper.tcp_timeouts_on
    assert 0.8 < t09.gain / paper.gain < 1.3
    # A 0.3 s timer is the lever: the Snoop-off runs are shared, so this is the Snoop-on time
    # falling (2.6x; 2.4x, to 54.5x on 1-30).
    assert gap.loc["timer-0.3s"].gain / paper.gain > 1.5
    assert gap.loc["timer-0.3s"].off_s == paper.off_s
    # (b) One segment in flight leaves few duplicate ACKs: the timer does the repairs (1.8 against
    # 7.8 duplicate-ACK repairs).
    assert gap.loc["window-1"].dupack_repairs < paper.dupack_repairs
    assert gap.loc["window-1"].timer_repairs > paper.timer_repairs
    # (c) One segment acknowledged 200 ms after it arrives: 45 segments x 0.2 s plus the
    # handshake and airtime match the paper's 9.4 s loss-free upload (ours 9.71 s) ...
    assert gap.loc["slow"].loss_free_s == pytest.approx(ng_snoop.PAPER_S1_ZERO_S, rel=0.1)
    # ... and do not raise the gain (10.7x against 14.1x; 15.2x against 22.3x).
    assert gap.loc["slow"].gain < paper.gain


def test_botta_hetperf_directions(tmp_path):
    rep = reproduce("botta-hetperf", tmp_path, quick=True)
    assert_uniform(rep, 2)
    t = rep.table
    # Sect. 2.1.5: Bianchi's n = 1 saturation throughput bounds UDP over 802.11b, and one
    # saturated sender reaches it within the run's sampling noise.
    for load in ("Medium", "High"):
        b = row(t, f"{load} load, every 802.11b configuration", "Bianchi")
        assert 0.95 < b.ours < 1.01, b.ours
    # Through the AP a wireless-to-wireless packet uses the channel twice: about half the ad hoc rate.
    res, loads = rep.data["results"], rep.data["loads"]
    for size in loads["high"][1]:
        ap = res[("wireless2wireless (AP)", "high", size)][0]["rx_mbps"]
        adhoc = res[("wireless2wireless (ad hoc)", "high", size)][0]["rx_mbps"]
        assert 0.45 < ap / adhoc < 0.6, (size, ap / adhoc)
    # Figs. 4-5: at low load every laptop configuration receives what was sent (paper: equal).
    assert (t[t.case.str.startswith("Low load (IDT 1/100 s, PS")].verdict == "within 10 %").all()
    # Fig. 18: at high load the AP configurations lose up to 95 % (paper), ours within 10 % of it.
    assert row(t, "High load (IDT 1/10000 s, PS 64-128 B)", "UDP loss").verdict == "within 10 %"


def test_hur_hong2006_directions(tmp_path):
    rep = reproduce("hur-hong2006", tmp_path, quick=True)
    assert_uniform(rep, 2)
    t = rep.table
    # Table 3: the PDA's receive/send ratio within 10 % of the paper's at every size (1.53-1.70),
    # growing with the file; the PC client's 1.0.
    assert (t[t.case.str.startswith("Table 3:") & t.case.str.endswith("client")].verdict == "within 10 %").all()
    assert row(t, "Table 3: PDA client,", "ratio").verdict.startswith("same direction")
    # Table 4: the PDA's window collapses from 32,581 B to a few hundred bytes (paper 686 B).
    assert row(t, "Table 4: 469 KB, PDA, downstream").ours < 1460
    assert row(t, "Table 4: 469 KB, PC, upstream").ours > 14_600
    # Sect. 4.1: a larger PDA receive buffer shortens the receive time by more than a third.
    assert row(t, "PDA receive buffer 32,581 against 8,192").ours < 0.66
    # Sect. 4.2: 8 KiB application buffers beat 512 B ones.
    assert row(t, "application buffer 8,192 against 512").verdict.startswith("same direction")
    # Table 6: the downstream is fastest without an inter-packet delay (4,622 ms, within 10 %).
    assert row(t, "Table 6: 469 KB downstream, no Sleep", "transmission time (ms)").verdict == "within 10 %"
    assert row(t, "no Sleep against Sleep(1)").verdict.startswith("same direction")


def test_ending_anomaly_directions(tmp_path):
    # One seed: its runs (rrul_be's on 802.11ax above all) are the suite's dearest; the
    # directions below hold on each seed (3-station rows: within 10 % / same direction).
    rep = reproduce("ending-anomaly", tmp_path, quick=True, seeds=1)
    assert_uniform(rep, 1)
    t = rep.table
    three = "3 stations, TCP downloads"
    # ath9k commit 63fefa050477: fairness off, 41.58 Mb/s in all; ours (stations in turn) within
    # 10 % of it, and airtime fairness raises the total and lowers the slow station's share.
    assert row(t, f"{three} (ath9k commit 63fefa050477: 2 at the highest HT20 rate, 1 at the lowest), fairness off",
               "total goodput").verdict == "within 10 %"
    assert row(t, f"{three}", "total goodput, on / off").verdict.startswith("same direction")
    assert row(t, f"{three}", "slow station's goodput, on / off").verdict.startswith("same direction")
    assert row(t, f"{three}", "Jain's index").ours > 0.98
    # One FIFO: the anomaly (the slow station's equal share of packets costs most of the air).
    assert row(t, f"{three} (ath9k commit 63fefa050477: 2 at the highest HT20 rate, 1 at the lowest), one FIFO").ours < 25
    # AQL: a firmware queue adds over a second; AQL keeps the ping under the published 60 ms.
    assert row(t, "driver queue of 1424 packets (ath10k), a CUBIC download and a ping: with AQL").verdict.startswith("meets")
    assert row(t, "driver queue of 1424 packets (ath10k), a CUBIC download and a ping: without AQL").ours > 1000
    # rrul_be on an 802.11ax AP: mac80211's queues cut the working latency (published 10x).
    assert row(t, "the FIFO against airtime", "mean round trip").verdict.startswith("same direction")
