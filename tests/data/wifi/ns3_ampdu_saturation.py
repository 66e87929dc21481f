"""Writes ns3_ampdu_saturation.csv: ns-3's saturation throughput of n 802.11n/ac/ax stations
sending UDP to their AP in A-MPDUs, the oracle of tests/test_models.py's aggregated Bianchi
check (and, later, of the simulator's aggregated WLAN).

    .venv/bin/pip install 'ns3==3.44.post0'   # the `oracle` extra (make fidelity installs it)
    .venv/bin/python tests/data/wifi/ns3_ampdu_saturation.py

Each configuration: stations 1 m from the AP (error-free at every MCS), ConstantRateWifiManager
at the MCS with 24 Mb/s OFDM control responses, one spatial stream, 800 ns GI, AC_BE (EDCA),
A-MPDUs of at most 65 535 B, no A-MSDU, no RTS/CTS, 1472 B UDP payloads (1500 B IP packets)
offered at twice what the channel carries, counted at the AP from 1 s to 11 s. The throughput
column counts IP bytes (1500 per packet), as lasthop.models.bianchi_ampdu does. ns-3's MAC queue
drops packets older than 500 ms by default (WifiMacQueue::MaxDelay), which with ten saturated
stations discards MPDUs queued or awaiting retransmission and makes ns-3 send BlockAckRequests to
move the window; lasthop's queues expire nothing, so MaxDelay is set to 100 s here.
"""

import csv
import sys
from pathlib import Path

from ns import ns

OUT = Path(__file__).with_name("ns3_ampdu_saturation.csv")
CONFIGS = [  # (standard, width MHz, data mode, stations)
    ("802.11n", 20, "HtMcs7", 1), ("802.11n", 20, "HtMcs7", 10),
    ("802.11ac", 80, "VhtMcs9", 1), ("802.11ac", 80, "VhtMcs9", 10),
    ("802.11ax", 80, "HeMcs11", 1), ("802.11ax", 80, "HeMcs11", 10),
]
STANDARD = {"802.11n": ns.WIFI_STANDARD_80211n, "802.11ac": ns.WIFI_STANDARD_80211ac, "802.11ax": ns.WIFI_STANDARD_80211ax}
PAYLOAD = 1472
START_S, STOP_S = 1.0, 11.0


def throughput_mbps(standard: str, width: int, mode: str, n: int) -> float:
    ns.Config.SetDefault("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Seconds(100)))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    nodes = ns.NodeContainer()
    nodes.Create(n + 1)
    ap, stas = nodes.Get(0), ns.NodeContainer()
    for i in range(1, n + 1):
        stas.Add(nodes.Get(i))
    channel = ns.YansWifiChannelHelper.Default()
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("ChannelSettings", ns.StringValue(f"{{0, {width}, BAND_5GHZ, 0}}"))
    wifi = ns.WifiHelper()
    wifi.SetStandard(STANDARD[standard])
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", ns.StringValue(mode),
                                 "ControlMode", ns.StringValue("OfdmRate24Mbps"))
    mac = ns.WifiMacHelper()
    ssid = ns.Ssid("lasthop")
    mac.SetType("ns3::StaWifiMac", "Ssid", ns.SsidValue(ssid))
    sta_devs = wifi.Install(phy, mac, stas)
    mac.SetType("ns3::ApWifiMac", "Ssid", ns.SsidValue(ssid))
    ap_devs = wifi.Install(phy, mac, ap)
    ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/BE_MaxAmpduSize", ns.UintegerValue(65535))
    if standard == "802.11ax":  # ns-3's HE default is a 3.2 us GI
        ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/HeConfiguration/GuardInterval", ns.TimeValue(ns.NanoSeconds(800)))
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
    addr.Assign(sta_devs)
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9).ConvertTo())
    sink_app = sink.Install(ap)
    sink_app.Start(ns.Seconds(0.0))
    rate_bps = 2 * {"HtMcs7": 65e6, "VhtMcs9": 390e6, "HeMcs11": 600.5e6}[mode] / n
    onoff = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(ap_if.GetAddress(0), 9).ConvertTo())
    onoff.SetConstantRate(ns.DataRate(int(rate_bps)), PAYLOAD)
    apps = onoff.Install(stas)
    apps.Start(ns.Seconds(0.5))
    received = ns.DynamicCast[ns.PacketSink](sink_app.Get(0))
    ns.Simulator.Stop(ns.Seconds(START_S))  # Run returns at each Stop; the next Run goes on
    ns.Simulator.Run()
    start = received.GetTotalRx()
    ns.Simulator.Stop(ns.Seconds(STOP_S - START_S))
    ns.Simulator.Run()
    stop = received.GetTotalRx()
    ns.Simulator.Destroy()
    packets = (stop - start) / PAYLOAD
    return packets * 1500 * 8 / (STOP_S - START_S) / 1e6


def main() -> int:
    rows = []
    for standard, width, mode, n in CONFIGS:
        mbps = throughput_mbps(standard, width, mode, n)
        print(standard, width, mode, n, f"{mbps:.3f}", flush=True)
        rows.append((standard, width, mode, n, f"{mbps:.3f}"))
    with OUT.open("w", newline="") as f:
        f.write("# ns-3 3.44 (PyPI ns3==3.44.post0) UDP saturation, IP-byte throughput; made by ns3_ampdu_saturation.py\n")
        w = csv.writer(f)
        w.writerow(["standard", "width_mhz", "data_mode", "stations", "ns3_mbps"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
