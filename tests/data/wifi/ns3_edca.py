"""Writes ns3_edca.csv: ns-3's share of an 802.11ac channel between stations sending in AC_VO and
stations sending in AC_BE (EDCA's prioritisation), and the one-way delay of a light AC_VO flow
beside saturated AC_BE stations: the oracle of crates/lasthop-sim/tests/model/wlan_edca.rs.

    .venv/bin/pip install 'ns3==3.44.post0'   # the `oracle` extra (make fidelity installs it)
    .venv/bin/python tests/data/wifi/ns3_edca.py                         # every run (~30 min)
    .venv/bin/python tests/data/wifi/ns3_edca.py vo2_be2:one_exchange:1  # one (config:variant:seed),
                                                                         # printed, no CSV written
    python3 tests/data/wifi/ns3_edca.py --slot-model                     # no ns-3: see slot_model()

Each configuration: one 802.11ac AP and stations 1 m from it (error-free), all sending UDP to the
AP; ConstantRateWifiManager at VhtMcs7, 80 MHz (292.5 Mb/s), one spatial stream, 800 ns GI,
24 Mb/s OFDM control responses (Block Acks, BlockAckRequests), no RTS/CTS, no A-MSDU, A-MPDUs in
both AC_BE and AC_VO. Configurations (flows named as in the test; station i sends flow i):

- vo1_be1: one station saturating in AC_VO, one saturating in AC_BE;
- vo2_be2: two saturating in AC_VO, two in AC_BE;
- call_be3: one AC_VO station sending 200 B UDP payloads every 800 us (2 Mb/s, 228 B IP
  packets), three saturating in AC_BE.

A saturating station offers 1472 B UDP payloads (1500 B IP) at 300 Mb/s, more than one station
carries (264 Mb/s). Throughput counts IP bytes received at the AP (FlowMonitor's rxBytes, which
include the IP header) from 1 s to 21 s (FlowMonitor's counters read at both instants and
subtracted); the mean one-way delay (FlowMonitor's delaySum / rxPackets over the same window, IP
send at the station to IP receive at the AP) is written only for the unsaturated flow: a
saturated flow's delay is its 500-packet queue. Per flow the script also counts, over the same
window, the station's QoS data PSDUs (A-MPDUs; a lone VHT MPDU counts as one), their MPDUs, the
longest A-MPDU's MPDUs and airtime, the BlockAckRequests it sent; per run the AP's Block Acks.
It prints, for every two or more PSDUs that started at the same instant (a collision), who sent
the next PSDU and how long after the collided PPDUs' end (the gaps behind the README's account).
Runs (RUNS): vo1_be1 one_exchange with seeds 1-16 (its AC_BE share varies by ±15 % between
runs), vo2_be2 and call_be3 one_exchange with seeds 1-3, the TXOP variants with seed 1; each
run's random streams are fixed (WifiHelper::AssignStreams), so a run depends on its seed only.

Settings that differ from ns-3's defaults, and why:

- The access category is set by the socket's TOS (SourceApplication's `Tos` attribute).
  ns-3 3.44's WifiNetDevice classifies packets with SelectQueueByDSField (qos-utils.h): the
  user priority is the TOS byte's three high bits, then QosUtilsMapTidToAc (UP 1, 2: AC_BK;
  0, 3: AC_BE; 4, 5: AC_VI; 6, 7: AC_VO). EF (DSCP 46, TOS 0xb8) is UP 5 there, AC_VI, not
  AC_VO; so AC_VO flows here use TOS 0xc0 (CS6, UP 6). lasthop classifies as Linux does
  (RFC 8325: EF to UP 6, AC_VO), so its flows use `dscp = 46`; both land in AC_VO. The script
  checks every data MPDU of a flow carries its category's TID (6 or 0).
- `VO_MaxAmpduSize`: ns-3 does not aggregate in AC_VO by default (its default is 0; AC_BE and
  AC_VI default to 65 535). Linux's mac80211 aggregates in every category, and so does lasthop;
  here AC_VO aggregates too (the size per variant below). `BE_MaxAmpduSize` = 65 535 (42 MPDUs).
- `WifiMacQueue::MaxDelay` = 100 s: ns-3 drops MPDUs queued for more than 500 ms by default;
  lasthop's queues expire nothing. The MAC queue keeps ns-3's 500 packets per category
  (lasthop: `queue = "500p"`), tail drop. No traffic-control queue disc (ns-3 installs
  FqCoDel in front of the MAC queue by default; lasthop has none, and a saturated flow's
  excess is better dropped at once than by CoDel: same results, 15 % less CPU); the neighbour
  caches are filled beforehand (no ARP, which lasthop does not have either).
- ns-3 sends a BlockAckRequest after each missed Block Ack (QosTxop's
  UseExplicitBarAfterMissedBlockAck, true by default): lasthop's `bar_after_missed_block_ack`.

EDCA parameters: the AP advertises ns-3's defaults for an 802.11ac station, which the stations
adopt (the script prints them as read back from a station's QosTxops): AC_BE AIFSN 3, CW 15-1023,
no TXOP limit; AC_VO AIFSN 2, CW 3-7, TXOP limit 2.080 ms (802.11-2020 table 9-155; WMM,
hostapd and lasthop use 1.504 ms). Only the stations send data; the AP answers. AC_VO's TXOP
handling differs by variant (the AP's `TxopLimitsForSta` and VO_MaxAmpduSize):

- one_exchange: no TXOP limit, so one exchange per access whose Duration/ID covers the Block Ack
  only (lasthop's model of a saturated AC_VO), VO A-MPDUs of at most 33 MPDUs (51 000 B; 33
  subframes of 1544 B are 50 950 B): what fits AC_VO's 1.504 ms TXOP with its SIFS and Block Ack
  (1432 + 16 + 32 us), which ns-3 itself composes under that limit (txop_1504 below) and so
  does lasthop. The runs the test compares with.
- ns3_txop: ns-3's default AC_VO (2.080 ms; 65 535 B A-MPDUs).
- txop_1504: the WMM limit lasthop uses, 1.504 ms, with ns-3's TXOP handling.

With a TXOP limit ns-3 sends further A-MPDUs SIFS after a Block Ack while they fit (TXOP bursts)
and sets every frame's Duration/ID to the end of the TXOP limit (the whole TXOP is protected); a
CF-End resets the others' NAVs only when what is left of the TXOP holds one (52 us at 6 Mb/s +
SIFS). A saturated AC_VO station leaves 24-32 us of its TXOP unused: the others wait that, then
their AIFS, while the holder counts its AIFS from its last Block Ack (see the README).
"""

import csv
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path


def slot_model(config: str, rule: str, seed: int, contentions: int = 200_000) -> float:
    """AC_VO MPDUs per AC_BE MPDU delivered by saturated stations in an idealised, slot-exact
    EDCA contention (no ns-3): the mechanism behind the README's account of vo2_be2. Stations:
    AC_VO AIFSN 2, CW 3-7, 33-MPDU A-MPDUs of 1432 us; AC_BE AIFSN 3, CW 15-1023, 42 MPDUs in
    1812 us; a BlockAckRequest (32 us) after each collision until one is answered; a counter
    frozen by another's transmission loses the slots it counted plus the one at its AIFS
    boundary (ns-3's ChannelAccessManager, lasthop's Hcf). After a success everyone counts from
    the Block Ack's end; after a collision, by `rule`:
    L: everyone from the longest PPDU's end + SIFS + Block Ack (lasthop's Hcf::decide);
    N: the colliders from their own PPDU's end + 45 us (their Block Ack timeout, SIFS + slot +
       PHY-RXSTART delay) or the medium's end if later, the others from the medium's end (ns-3:
       equal-power PPDUs starting together are not detected, no PHY error, no EIFS);
    E: as N, but the others from the medium's end + 60 us (EIFS - DIFS, 802.11-2016 10.3.2.3.7,
       for stations that decoded the collided PPDU with an error)."""
    sifs, slot, ba = 16, 9, 32
    rng = random.Random(seed)
    # [aifsn, cwmin, cwmax, A-MPDU us, MPDUs, counter, failures, owes a BAR, MPDUs delivered, idle from]
    vo = lambda: [2, 3, 7, 1432, 33, rng.randint(0, 3), 0, False, 0, 0.0]
    be = lambda: [3, 15, 1023, 1812, 42, rng.randint(0, 15), 0, False, 0, 0.0]
    stas = {"vo1_be1": [vo(), be()], "vo2_be2": [vo(), vo(), be(), be()]}[config]
    start = lambda s: s[9] + sifs + slot * s[0]
    for _ in range(contentions):
        fire = [start(s) + slot * s[5] for s in stas]
        t = min(fire)
        tx = [i for i, f in enumerate(fire) if f == t]
        for i, s in enumerate(stas):
            if i not in tx and t >= start(s):
                s[5] = max(0, s[5] - (int((t - start(s)) // slot) + 1))
        end = {i: t + (32 if stas[i][7] else stas[i][3]) for i in tx}
        medium_end = max(end.values())
        if len(tx) == 1:
            s = stas[tx[0]]
            s[8] += 0 if s[7] else s[4]
            s[6], s[7] = 0, False
            for o in stas:
                o[9] = medium_end + sifs + ba
        else:
            for i in tx:
                stas[i][6] += 1
                stas[i][7] = True
            for i, o in enumerate(stas):
                if rule == "L":
                    o[9] = medium_end + sifs + ba
                elif i in tx:
                    o[9] = max(end[i] + 45, medium_end)
                else:
                    o[9] = medium_end + (60 if rule == "E" else 0)
        for i in tx:
            s = stas[i]
            s[5] = rng.randint(0, min((s[1] + 1) * 2 ** s[6] - 1, s[2]))
    return sum(s[8] for s in stas if s[0] == 2) / sum(s[8] for s in stas if s[0] == 3)


if __name__ == "__main__" and sys.argv[1:] == ["--slot-model"]:
    for config, rules in (("vo1_be1", "LN"), ("vo2_be2", "LNE")):
        for rule in rules:
            ratios = [slot_model(config, rule, seed) for seed in (1, 2, 3)]
            print(config, rule, "AC_VO / AC_BE:", " ".join(f"{r:.1f}" for r in ratios), flush=True)
    sys.exit(0)

from ns import ns  # noqa: E402 (the slot model runs without ns-3)
import cppyy  # noqa: E402

cppyy.cppdef(r"""
#include "ns3/wifi-psdu.h"
#include "ns3/wifi-tx-vector.h"
#include "ns3/wifi-phy.h"
namespace lh_edca {
  const int N = 16;
  double t0 = 1.0, t1 = 21.0;
  long psdus[N], mpdus[N], max_mpdus[N], bars[N], bas[N], tid_mpdus[N][8];
  double max_dur_us[N];
  // Every PSDU in the window: start (s), sender, kind (0 BAR, 1 BA, 2 QoS data, 3 other), airtime.
  std::vector<double> ev_t, ev_dur;
  std::vector<int> ev_node, ev_kind;
  void Reset(double a, double b) {
    t0 = a; t1 = b;
    ev_t.clear(); ev_dur.clear(); ev_node.clear(); ev_kind.clear();
    for (int i = 0; i < N; i++) {
      psdus[i] = mpdus[i] = max_mpdus[i] = bars[i] = bas[i] = 0; max_dur_us[i] = 0;
      for (int t = 0; t < 8; t++) tid_mpdus[i][t] = 0;
    }
  }
  int NodeOf(const std::string& ctx) {
    auto p = ctx.find("/NodeList/") + 10;
    return std::stoi(ctx.substr(p, ctx.find('/', p) - p));
  }
  void PsduBegin(std::string ctx, ns3::WifiConstPsduMap psduMap, ns3::WifiTxVector tx, double w) {
    double now = ns3::Simulator::Now().GetSeconds();
    if (now < t0 || now >= t1) return;
    int n = NodeOf(ctx);
    if (n >= N) return;
    auto psdu = psduMap.begin()->second;
    const auto& h = psdu->GetHeader(0);
    double d = ns3::WifiPhy::CalculateTxDuration(psdu, tx, ns3::WIFI_PHY_BAND_5GHZ).GetSeconds();
    int kind = h.IsBlockAckReq() ? 0 : h.IsBlockAck() ? 1 : h.IsQosData() ? 2 : 3;
    ev_t.push_back(now); ev_dur.push_back(d); ev_node.push_back(n); ev_kind.push_back(kind);
    if (kind == 0) { bars[n]++; return; }
    if (kind == 1) { bas[n]++; return; }
    if (kind != 2) return;
    long k = psdu->GetNMpdus();
    psdus[n]++; mpdus[n] += k;
    if (k > max_mpdus[n]) max_mpdus[n] = k;
    for (size_t j = 0; j < psdu->GetNMpdus(); j++)
      if (psdu->GetPayload(j)->GetSize() > 100) tid_mpdus[n][h.GetQosTid()]++;
    if (d * 1e6 > max_dur_us[n]) max_dur_us[n] = d * 1e6;
  }
  void Connect() {
    ns3::Config::Connect("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxPsduBegin", ns3::MakeCallback(&PsduBegin));
  }
}
""")
lh = cppyy.gbl.lh_edca

OUT = Path(__file__).with_name("ns3_edca.csv")
TOS = {"AC_VO": 0xC0, "AC_BE": 0x00}  # ns-3: UP = TOS >> 5 (see the docstring)
TID = {"AC_VO": 6, "AC_BE": 0}
SAT = (1472, 300e6)  # UDP payload, offered b/s: saturating
CALL = (200, 2e6)    # 200 B every 800 us
# configuration -> [(flow name, access category, (payload B, offered b/s), saturated)]
CONFIGS = {
    "vo1_be1": [("vo1", "AC_VO", SAT, True), ("be1", "AC_BE", SAT, True)],
    "vo2_be2": [("vo1", "AC_VO", SAT, True), ("vo2", "AC_VO", SAT, True),
                ("be1", "AC_BE", SAT, True), ("be2", "AC_BE", SAT, True)],
    "call_be3": [("call", "AC_VO", CALL, False), ("be1", "AC_BE", SAT, True),
                 ("be2", "AC_BE", SAT, True), ("be3", "AC_BE", SAT, True)],
}
# variant -> (AC_VO TXOP limit the AP advertises, us; VO_MaxAmpduSize, B): the docstring.
VARIANTS = {"one_exchange": (0, 51000), "ns3_txop": (2080, 65535), "txop_1504": (1504, 65535)}
# (configuration, variant, seed). vo1_be1's AC_BE wins rarely and in bursts (its CW climbs to
# 1023 after collisions of its BlockAckRequests), so its share needs more seeds.
RUNS = ([("vo1_be1", "one_exchange", s) for s in range(1, 17)]
        + [(c, "one_exchange", s) for c in ("vo2_be2", "call_be3") for s in (1, 2, 3)]
        + [(c, v, 1) for v in ("ns3_txop", "txop_1504") for c in CONFIGS])
MODE, WIDTH = "VhtMcs7", 80
START_S, STOP_S = 1.0, 21.0


def flow_stats(monitor, classifier):
    """{source address: (rxBytes, rxPackets, delaySum s)} of the flows FlowMonitor has seen."""
    monitor.CheckForLostPackets()
    out = {}
    for item in monitor.GetFlowStats():
        t = classifier.FindFlow(item.first)
        s = item.second
        out[str(t.sourceAddress)] = (s.rxBytes, s.rxPackets, s.delaySum.GetSeconds())
    return out


def after_collisions(flows):
    """Who sends the next PSDU after PSDUs that started together, and the gap (us) from their end."""
    name = {0: "AP"} | {i + 1: ac[3:] for i, (_, ac, _, _) in enumerate(flows)}
    ev = sorted(zip(lh.ev_t, lh.ev_node, lh.ev_kind, lh.ev_dur))
    groups = []
    for t, node, kind, dur in ev:
        if groups and abs(groups[-1][0] - t) < 1e-10:
            groups[-1][1].append((node, kind, dur))
        else:
            groups.append((t, [(node, kind, dur)]))
    gaps = defaultdict(Counter)
    for (t, txs), (nt, ntxs) in zip(groups, groups[1:]):
        if len(txs) < 2:
            continue
        end = t + max(d for _, _, d in txs)
        collided = "+".join(sorted(name[n] for n, _, _ in txs))
        nxt = "+".join(sorted(name[n] + ("(BAR)" if k == 0 else "") for n, k, _ in ntxs))
        gaps[f"{collided} -> {nxt}"][round((nt - end) * 1e6)] += 1
    for key, g in sorted(gaps.items(), key=lambda x: -sum(x[1].values()))[:8]:
        print(f"    after {key}: {sum(g.values())}, gap us: {dict(sorted(g.items())[:12])}")


def run(name: str, variant: str, seed: int):
    flows = CONFIGS[name]
    txop_us, vo_ampdu = VARIANTS[variant]
    n = len(flows)
    ns.Config.SetDefault("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Seconds(100)))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    nodes = ns.NodeContainer()
    nodes.Create(n + 1)
    ap, stas = nodes.Get(0), ns.NodeContainer()
    for i in range(1, n + 1):
        stas.Add(nodes.Get(i))
    channel = ns.YansWifiChannelHelper.Default()
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("ChannelSettings", ns.StringValue(f"{{0, {WIDTH}, BAND_5GHZ, 0}}"))
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211ac)
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", ns.StringValue(MODE),
                                 "ControlMode", ns.StringValue("OfdmRate24Mbps"))
    mac = ns.WifiMacHelper()
    ssid = ns.Ssid("lasthop")
    mac.SetType("ns3::StaWifiMac", "Ssid", ns.SsidValue(ssid))
    sta_devs = wifi.Install(phy, mac, stas)
    mac.SetType("ns3::ApWifiMac", "Ssid", ns.SsidValue(ssid),
                "TxopLimitsForSta", ns.StringValue(f"VO {txop_us}us"))
    ap_devs = wifi.Install(phy, mac, ap)
    # Fixed random streams: a run depends on its seed only, not on the runs before it in this process.
    wifi.AssignStreams(ns.NetDeviceContainer(sta_devs, ap_devs), 0)
    ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/BE_MaxAmpduSize", ns.UintegerValue(65535))
    ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/VO_MaxAmpduSize", ns.UintegerValue(vo_ampdu))
    mobility = ns.MobilityHelper()
    positions = ns.ListPositionAllocator()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    for i in range(n):
        positions.Add(ns.Vector(1.0, 0.0, 0.0))
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.0.0"))
    ap_if = addr.Assign(ap_devs)
    sta_if = addr.Assign(sta_devs)
    # (Assign installs the default queue discs; removed after it.)
    ns.TrafficControlHelper().Uninstall(ns.NetDeviceContainer(sta_devs, ap_devs))
    ns.NeighborCacheHelper().PopulateNeighborCache()
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9).ConvertTo())
    sink.Install(ap).Start(ns.Seconds(0.0))
    for i, (_, ac, (payload, rate), _) in enumerate(flows):
        onoff = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(ap_if.GetAddress(0), 9).ConvertTo())
        onoff.SetConstantRate(ns.DataRate(int(rate)), payload)
        onoff.SetAttribute("Tos", ns.UintegerValue(TOS[ac]))
        onoff.Install(stas.Get(i)).Start(ns.Seconds(0.5))
    fmh = ns.FlowMonitorHelper()
    monitor = fmh.InstallAll()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](fmh.GetClassifier())
    lh.Reset(START_S, STOP_S)
    lh.Connect()
    ns.Simulator.Stop(ns.Seconds(START_S))  # Run returns at each Stop; the next Run goes on
    ns.Simulator.Run()
    before = flow_stats(monitor, classifier)
    # The EDCA parameters the first station took from the AP's EDCA Parameter Set.
    sta_mac = ns.DynamicCast[ns.WifiNetDevice](sta_devs.Get(0)).GetMac()
    edca = []
    for ac, tid in (("AC_BE", 0), ("AC_VO", 6)):  # GetQosTxop(uint8_t tid): TID 0 is AC_BE's, 6 AC_VO's
        q = sta_mac.GetQosTxop(tid)
        edca.append(f"{ac} AIFSN {int(q.GetAifsn(0))} CW {q.GetMinCw(0)}-{q.GetMaxCw(0)} "
                    f"TXOP {q.GetTxopLimit(0).GetMicroSeconds()} us")
        if ac == "AC_VO":
            assert q.GetTxopLimit(0).GetMicroSeconds() == txop_us, "the stations took the AP's TXOP limit"
    print(f"{name} {variant} seed {seed}: station EDCA {'; '.join(edca)}", flush=True)
    ns.Simulator.Stop(ns.Seconds(STOP_S - START_S))
    ns.Simulator.Run()
    after = flow_stats(monitor, classifier)
    rows = []
    secs = STOP_S - START_S
    for i, (flow, ac, (payload, rate), saturated) in enumerate(flows):
        src = str(sta_if.GetAddress(i))
        b0, p0, d0 = before.get(src, (0, 0, 0.0))
        b1, p1, d1 = after[src]
        mbps = (b1 - b0) * 8 / secs / 1e6
        delay = "" if saturated else f"{(d1 - d0) / (p1 - p0) * 1e3:.4f}"
        node = i + 1
        tids = [int(lh.tid_mpdus[node][t]) for t in range(8)]
        assert tids[TID[ac]] == sum(tids), f"{flow}: data MPDUs by TID {tids}, expected all in TID {TID[ac]}"
        k, m = int(lh.psdus[node]), int(lh.mpdus[node])
        rows.append({
            "config": name, "variant": variant, "seed": seed, "vo_txop_limit_us": txop_us,
            "vo_max_ampdu_bytes": vo_ampdu, "flow": flow, "ac": ac, "tos": f"0x{TOS[ac]:02x}",
            "payload_bytes": payload, "offered_mbps": f"{rate / 1e6:g}", "ns3_mbps": f"{mbps:.3f}",
            "ns3_delay_ms": delay, "ampdus": k, "mpdus": m, "max_mpdus": int(lh.max_mpdus[node]),
            "max_ampdu_us": f"{lh.max_dur_us[node]:.0f}", "bars": int(lh.bars[node]),
            "ap_block_acks": int(lh.bas[0]),
        })
        print(f"  {flow} {ac}: {mbps:.2f} Mb/s, delay {delay or '-'} ms, {k} A-MPDUs of {m / max(1, k):.1f} "
              f"MPDUs (at most {int(lh.max_mpdus[node])}, {lh.max_dur_us[node]:.0f} us), {int(lh.bars[node])} BARs",
              flush=True)
    print(f"  AP Block Acks {int(lh.bas[0])}", flush=True)
    after_collisions(flows)
    ns.Simulator.Destroy()
    return rows


def main() -> int:
    runs = [(c, v, int(s)) for c, v, s in (a.split(":") for a in sys.argv[1:])] or RUNS
    rows = [r for name, variant, seed in runs for r in run(name, variant, seed)]
    if sys.argv[1:]:
        return 0
    with OUT.open("w", newline="") as f:
        f.write("# ns-3 3.44 (PyPI ns3==3.44.post0) EDCA, AC_VO against AC_BE, 802.11ac VhtMcs7 80 MHz, "
                "IP-byte throughput at the AP from 1 s to 21 s; made by ns3_edca.py\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
