"""ns-3 counterpart of lasthop's `home` scenario (Palazzi et al., ACE 2006; paper 001) with
ns-3's own 802.11g parameters, which lasthop is set to by overrides (see `oracle.suite`).

    W1 -(10 ms)-\
    W2 -(20 ms)-- W0 -(10 ms)- AP ~~~ 802.11g ~~~ N0 N1 N2 N3
    W3 -(30 ms)-/

- Wired: 100 Mb/s point-to-point links with 140-packet DropTail device queues and no
  traffic-control queue disc (ns-3 installs FQ-CoDel by default; lasthop has plain DropTail).
- WLAN: 802.11g (ERP-OFDM, short slot), non-QoS DCF (CWmin 15, CWmax 1023, AIFSN 2 = DIFS),
  `ConstantRateWifiManager` 54 Mb/s data / 24 Mb/s control, no RTS/CTS, 7 transmission
  attempts per frame (`WifiMac::FrameRetryLimit`), AP queue 100 packets and station queues 50
  (`WifiMacQueue`, its 500 ms sojourn limit lifted: lasthop's queues have none), Yans channel
  with ns-3's default log-distance loss at 10 m (about -61 dBm received, error-free at 54 Mb/s): lasthop's `errors = ideal`. The
  paper's shadowing is replaced by this fixed, error-free channel in both simulators.
- ARP caches are filled before the run (lasthop has no ARP). Beacons (every 102.4 ms at
  1 Mb/s DSSS, about 1 % of the air time) and the stations' association stay: lasthop has
  neither, and both are part of what ns-3 is.
- UDP flows replay lasthop's packet schedules (same send times and IP sizes per seed); the FTP is
  a greedy NewReno+SACK sender from W3 to N3 from 135 s, MSS 1460, initial window 10, 1 MiB
  buffers (`ns3_common.align_tcp`); `"ssthresh": "half_window"` selects the diagnostic NewReno.

Run as `python tests/oracle/ns3_home.py '{"seed": 1, "udp": [...], ...}'`.
"""

from __future__ import annotations


import cppyy
from ns3_common import align_tcp, bulk_flow, main, ns, probe, udp_records, tcp_counters

cppyy.cppdef(r"""
namespace lasthop_oracle {
void SetWifiQueue(ns3::Ptr<ns3::NetDevice> d, std::string size) {
    auto mac = ns3::DynamicCast<ns3::WifiNetDevice>(d)->GetMac();
    mac->GetTxop()->GetWifiMacQueue()->SetMaxSize(ns3::QueueSize(size));
}
}
""")

WIRED = [("W1", "W0", "10ms"), ("W2", "W0", "20ms"), ("W3", "W0", "30ms"), ("W0", "AP", "10ms")]
NAMES = ["W0", "W1", "W2", "W3", "AP", "N0", "N1", "N2", "N3"]
POSITIONS = {"AP": (0.0, 0.0), "N0": (10.0, 0.0), "N1": (0.0, 10.0), "N2": (-10.0, 0.0), "N3": (0.0, -10.0)}


def build(p: dict) -> dict:
    align_tcp(p["tcp"])
    ns.Config.SetDefault("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Seconds(1000)))
    nodes = ns.NodeContainer()
    nodes.Create(len(NAMES))
    node = {n: nodes.Get(i) for i, n in enumerate(NAMES)}
    ns.InternetStackHelper().Install(nodes)
    addr = ns.Ipv4AddressHelper()
    tc = ns.TrafficControlHelper()
    for i, (a, b, delay) in enumerate(WIRED):
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(p["wired_rate"]))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{p['wired_queue']}p"))
        devs = h.Install(node[a], node[b])
        addr.SetBase(ns.Ipv4Address(f"10.0.{i + 1}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(devs)
        tc.Uninstall(devs)

    channel = ns.YansWifiChannelHelper.Default()
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211g)
    wifi.SetRemoteStationManager(
        "ns3::ConstantRateWifiManager",
        "DataMode", ns.StringValue(p["data_mode"]),
        "ControlMode", ns.StringValue(p["control_mode"]),
        "RtsCtsThreshold", ns.UintegerValue(65535),
    )
    # 7 transmission attempts per frame, lasthop's retry_short (without RTS the long limit is unused).
    ns.Config.SetDefault("ns3::WifiMac::FrameRetryLimit", ns.UintegerValue(7))
    mac = ns.WifiMacHelper()
    ssid = ns.Ssid("home")
    stations = ns.NodeContainer()
    for n in ("N0", "N1", "N2", "N3"):
        stations.Add(node[n])
    mac.SetType("ns3::StaWifiMac", "Ssid", ns.SsidValue(ssid), "ActiveProbing", ns.BooleanValue(False))
    sta_devs = wifi.Install(phy, mac, stations)
    mac.SetType("ns3::ApWifiMac", "Ssid", ns.SsidValue(ssid))
    ap_devs = wifi.Install(phy, mac, node["AP"])
    probe.SetWifiQueue(ap_devs.Get(0), f"{p['ap_queue']}p")
    for i in range(sta_devs.GetN()):
        probe.SetWifiQueue(sta_devs.Get(i), f"{p['sta_queue']}p")
    wifi.AssignStreams(ap_devs, 100)
    wifi.AssignStreams(sta_devs, 200)

    pos = ns.ListPositionAllocator()
    for n in ("AP", "N0", "N1", "N2", "N3"):
        x, y = POSITIONS[n]
        pos.Add(ns.Vector(x, y, 0.0))
    mob = ns.MobilityHelper()
    mob.SetPositionAllocator(pos)
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    wnodes = ns.NodeContainer()
    for n in ("AP", "N0", "N1", "N2", "N3"):
        wnodes.Add(node[n])
    mob.Install(wnodes)

    wdevs = ns.NetDeviceContainer()
    wdevs.Add(ap_devs)
    wdevs.Add(sta_devs)
    addr.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(wdevs)
    tc.Uninstall(wdevs)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    ns.NeighborCacheHelper().PopulateNeighborCache()

    def ip(n: str):
        return node[n].GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()

    udp_names = []
    for i, u in enumerate(p["udp"]):
        probe.AddReplayFlow(node[u["src"]], node[u["dst"]], ip(u["dst"]), 6000 + i, u["schedule"])
        udp_names.append(u["name"])
    ftp = p["ftp"]
    duration = float(p["duration"])
    sink = bulk_flow(node[ftp["src"]], node[ftp["dst"]], ip(ftp["dst"]), 5001, ftp["start_s"], duration,
                     int(p["tcp"]["mss"]), p.get("ssthresh", "ns3"))

    ns.Simulator.Stop(ns.Seconds(duration))
    ns.Simulator.Run()
    rx = int(probe.SinkRx(sink))
    udp = udp_records(udp_names)
    return {"ftp": {"goodput_bps": rx * 8 / (duration - ftp["start_s"]), **tcp_counters()}, "udp": udp}


if __name__ == "__main__":
    main(build)
