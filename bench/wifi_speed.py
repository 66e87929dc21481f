"""Speed against ns-3 on an 802.11ax home (issue 27): one network built in lasthop and in ns-3
3.44 (the PyPI build, `from ns import ns`), both run in this one invocation on the same machine,
each timed and its work counted.

    .venv/bin/python bench/wifi_speed.py [--md FILE] [--stations 8] [--scaling 2,8,16] [--duration 60] [--repeats 3]
                                         [--ns3-repeats 1] [--ns3-tos 0xc0] [--no-ns3]

It takes about 8 minutes on 2 cores, nearly all of it ns-3's 60 s run.

The network: a server behind the AP on a 1 Gb/s, 10 ms wire (ns-3: PointToPoint, DropTail
1000 packets, no queue disc), an 802.11ax AP (5 GHz, 80 MHz, one spatial stream, 800 ns GI, HE
MCS 7 for every frame of every member: lasthop `mcs = 7`, ns-3 ConstantRateWifiManager `HeMcs7`
with 24 Mb/s control responses, so neither runs rate control; A-MPDUs up to 65 535 B, no
A-MSDU, no RTS/CTS; 1000-packet queues per access category; ns-3's WifiMacQueue MaxDelay 100 s)
and N stations 5 m from it (error-free at MCS 7 in both). Traffic, all from 1 s: CUBIC downloads
from the server to the first N/2 stations (bulk, SACK, MSS 1460, initial window 10, 4 MiB
buffers, delayed ACKs every 2nd segment or 200 ms, minimum RTO 1 s; ns-3: TcpCubic without
HyStart, which lasthop's CUBIC does not have, classic recovery, no timestamps), a game to station
N/2 (200 B every 50 ms down, 42 B every 60 ms up) and an EF call to station N/2 + 1 (160 B every
20 ms each way, DSCP 46 -> AC_VO). Stations wrap around for N < 4 (N = 2: the call shares the
downloading station). lasthop sends a BlockAckRequest after a missed Block Ack as ns-3 does
(`bar_after_missed_block_ack = true`); ns-3 also has beacons and association, which lasthop
does not model.

The call's access category: lasthop maps DSCP 46 to user priority 6 (AC_VO) as Linux's
cfg80211 does (RFC 8325); ns-3 3.44 takes the user priority from the top three bits of the DS
field (WifiHelper::SelectQueueByDSField), so TOS 0xb8 (DSCP 46) is UP 5, AC_VI there. The
call's ns-3 sockets therefore use TOS 0xc0 (UP 6, AC_VO), the same category as lasthop's;
`--ns3-tos 0xb8` shows ns-3's own mapping (the output counts ns-3's data MPDUs per category).

What is timed: lasthop's `lasthop.run(Scenario)` without `out` (building the simulation,
running it, collecting its tables; no files, no report) in a fresh process after its imports,
as a user's run starts (a second run in the same process is faster, its memory already
mapped), median of --repeats processes, and a whole `lasthop run FILE --no-report -q` process
timed from outside (wait4); ns-3's `Simulator.Run()` alone (wall and CPU), its import and
setup reported apart, in a child process of this script (--ns3-repeats runs; one by default: a
60 s run takes minutes). CPU is user + system time of the process: on a shared machine it moves
less than wall time with the other load, so the ratio is taken in CPU time first.

Work counted after each run, without Python callbacks: lasthop's `events_processed` and its
WLAN's `exchanges` (channel accesses: one A-MPDU or MPDU and its Block Ack or ACK, collisions
included); ns-3's `Simulator::GetEventCount()` and the data PPDUs its PHYs sent (counted by a
C++ sink, compiled by cppyy, on every PHY's PhyTxPsduBegin: a few integer increments per PPDU),
ns-3's equivalent of an exchange. The scaling table runs lasthop alone for each N of --scaling:
its CPU per exchange should stay flat as N grows, beyond the contention itself (one pass over
the contending stations per access).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RADIUS_M = 5.0
WIRE = ("1Gbps", "10ms")
QUEUE_P = 1000
MSS = 1460
BUFFER = 4 * 1024 * 1024
START_S = 1.0
UDP = [  # name, to the station (down) or from it (up), payload bytes, interval ms, dscp
    ("game-down", "game", "down", 200, 50, 0),
    ("game-up", "game", "up", 42, 60, 0),
    ("call-down", "call", "down", 160, 20, 46),
    ("call-up", "call", "up", 160, 20, 46),
]


def layout(n: int) -> dict:
    """Stations' names and positions (a circle around the AP), and who gets which flow."""
    stas = [f"sta{i}" for i in range(n)]
    pos = {s: (round(RADIUS_M * math.cos(2 * math.pi * i / n), 6), round(RADIUS_M * math.sin(2 * math.pi * i / n), 6))
           for i, s in enumerate(stas)}
    half = max(1, n // 2)
    return {"stations": stas, "positions": pos, "downloads": stas[:half],
            "game": stas[half % n], "call": stas[(half + 1) % n]}


def flows(n: int) -> list[dict]:
    """Every flow: name, src, dst, kind ('tcp' or 'udp'), and for UDP size, interval, dscp."""
    lay = layout(n)
    out = [{"name": f"dl-{s}", "src": "server", "dst": s, "kind": "tcp"} for s in lay["downloads"]]
    for name, who, way, size, ms, dscp in UDP:
        sta = lay[who]
        src, dst = ("server", sta) if way == "down" else (sta, "server")
        out.append({"name": name, "src": src, "dst": dst, "kind": "udp", "size": size, "interval_ms": ms, "dscp": dscp})
    return out


def scenario_toml(n: int, duration: float) -> str:
    lay = layout(n)
    lines = ["[simulation]", f'name = "wifi-speed-{n}"', f'duration = "{duration:g}s"', "seed = 1", ""]
    for node in ["server", "AP", *lay["stations"]]:
        lines += ["[[nodes]]", f'name = "{node}"']
    lines += ["", "[[links]]", 'a = "server"', 'b = "AP"', f'rate = "{WIRE[0]}"', f'delay = "{WIRE[1]}"', f'queue = "{QUEUE_P}p"', ""]
    positions = ", ".join([f"AP = [0.0, 0.0]", *(f"{s} = [{x}, {y}]" for s, (x, y) in lay["positions"].items())])
    lines += ["[[wlans]]", 'name = "home-ax"', 'standard = "802.11ax"', 'ap = "AP"',
              f"stations = {json.dumps(lay['stations'])}",
              "width = 80", "streams = 1", 'guard_interval = "800ns"', 'band = "5GHz"', "mcs = 7", 'rate_control = "constant"',
              'max_ampdu = "65535B"', f'queue = "{QUEUE_P}p"', "bar_after_missed_block_ack = true", f"positions = {{ {positions} }}", ""]
    tcp = (f'tcp = {{ variant = "cubic", sack = true, initial_cwnd = 10, receive_buffer = "{BUFFER // 1024 // 1024}MiB", '
           f'send_buffer = "{BUFFER // 1024 // 1024}MiB" }}')
    for f in flows(n):
        lines += ["[[flows]]", f'name = "{f["name"]}"', f'src = "{f["src"]}"', f'dst = "{f["dst"]}"', f'start = "{START_S:g}s"']
        if f["kind"] == "tcp":
            lines += ['app = { type = "bulk" }', tcp]
        else:
            if f["dscp"]:
                lines.append(f"dscp = {f['dscp']}")
            lines.append(f'app = {{ type = "cbr", size = "{f["size"]}B", interval = "{f["interval_ms"]}ms" }}')
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# lasthop


def lasthop_child(toml: str) -> dict:
    """In a fresh process (as a user's run is): import lasthop, then time `lasthop.run` alone."""
    import lasthop
    from lasthop import Scenario

    sc = Scenario.from_toml(toml)
    w0, c0 = time.perf_counter(), time.process_time()
    res = lasthop.run(sc)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    s = res.summary
    wl = s["wlans"][0]
    return {"wall": wall, "cpu": cpu, "step_wall": s["wall_clock"]["wall_time_s"], "events": s["events_processed"],
            "exchanges": wl["exchanges"], "collisions": wl["collisions"],
            "mpdus": sum(m["aggregation"]["mpdus"] for m in wl["members"]),
            "bars": sum(m["aggregation"]["block_ack_requests"] for m in wl["members"]),
            "down_ppdus": sum(m["aggregation"]["ampdus"] for m in wl["members"] if m["node"] == "AP"),
            "down_mpdus": sum(m["aggregation"]["mpdus"] for m in wl["members"] if m["node"] == "AP"),
            "up_ppdus": sum(m["aggregation"]["ampdus"] for m in wl["members"] if m["node"] != "AP"),
            "up_mpdus": sum(m["aggregation"]["mpdus"] for m in wl["members"] if m["node"] != "AP"),
            "goodput": {f["name"]: f["goodput_bps"] for f in s["flows"]}}


def lasthop_once(toml: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--lasthop-child", str(toml)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"lasthop child failed ({out.returncode}): {out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def lasthop_cli_once(toml: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole `lasthop run TOML --no-report -q` process."""
    exe = Path(sys.executable).with_name("lasthop")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "lasthop"]
    t = time.perf_counter()
    p = subprocess.Popen([*cmd, "run", str(toml), "--no-report", "-q", "--force", "--out", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"lasthop run {toml} failed: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def lasthop_measure(n: int, duration: float, repeats: int, cli: bool, work: Path) -> dict:
    toml = work / f"wifi-speed-{n}.toml"
    toml.write_text(scenario_toml(n, duration))
    runs = [lasthop_once(toml) for _ in range(repeats)]
    for k in ("events", "exchanges"):
        if len({r[k] for r in runs}) != 1:
            raise SystemExit(f"lasthop is not deterministic here: {k} {[r[k] for r in runs]}")
    m = dict(runs[0])
    for k in ("wall", "cpu", "step_wall"):
        m[k] = statistics.median(r[k] for r in runs)
        m[k + "_all"] = [r[k] for r in runs]
    if cli:
        cl = [lasthop_cli_once(toml, work / f"out-{n}") for _ in range(repeats)]
        m["cli_wall"] = statistics.median(c[0] for c in cl)
        m["cli_cpu"] = statistics.median(c[1] for c in cl)
    return m


# ---------------------------------------------------------------------------------------------
# ns-3 (a child process: `wifi_speed.py --ns3-child JSON`, its result on the last stdout line)

PROBE = r"""
#include "ns3/wifi-psdu.h"
#include "ns3/wifi-tx-vector.h"
#include "ns3/wifi-mac-header.h"
#include "ns3/qos-utils.h"
namespace wifi_speed {
using namespace ns3;
// PPDUs sent by kind: 0 data (an A-MPDU or a single MPDU), 1 Block Ack, 2 ACK, 3 BlockAckRequest,
// 4 beacon, 5 other (management, ADDBA action frames, ...); data MPDUs in all and per AC.
uint64_t ppdus[6] = {0, 0, 0, 0, 0, 0};
uint64_t dataMpdus = 0;
uint64_t acMpdus[4] = {0, 0, 0, 0};
uint64_t down[2] = {0, 0};  // data PPDUs and MPDUs from the AP (FromDS)
void OnPsdu(WifiConstPsduMap psdus, WifiTxVector, double) {
    for (const auto& kv : psdus) {
        const WifiMacHeader& h = kv.second->GetHeader(0);
        if (h.IsData()) {
            ppdus[0]++;
            dataMpdus += kv.second->GetNMpdus();
            if (h.IsFromDs()) { down[0]++; down[1] += kv.second->GetNMpdus(); }
            if (h.IsQosData()) acMpdus[QosUtilsMapTidToAc(h.GetQosTid())] += kv.second->GetNMpdus();
        } else if (h.IsBlockAck()) ppdus[1]++;
        else if (h.IsAck()) ppdus[2]++;
        else if (h.IsBlockAckReq()) ppdus[3]++;
        else if (h.IsBeacon()) ppdus[4]++;
        else ppdus[5]++;
    }
}
void Connect() {
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxPsduBegin",
                                  MakeCallback(&OnPsdu));
}
uint64_t Ppdus(int k) { return ppdus[k]; }
uint64_t AcMpdus(int k) { return acMpdus[k]; }
uint64_t DataMpdus() { return dataMpdus; }
uint64_t Down(int k) { return down[k]; }
uint64_t SinkRx(Ptr<Application> a) { return DynamicCast<PacketSink>(a)->GetTotalRx(); }
}
"""


def ns3_child(params: dict) -> dict:
    t0 = time.perf_counter()
    from ns import ns  # ~12 s: loads every ns-3 module
    import cppyy

    cppyy.cppdef(PROBE)
    probe = cppyy.gbl.wifi_speed
    t_import = time.perf_counter() - t0
    n, duration, tos = int(params["n"]), float(params["duration"]), int(params["tos"])
    t1 = time.perf_counter()
    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpCubic")))
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    d("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1)))
    d("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    d("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(1)))
    d("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1)))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(BUFFER))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(BUFFER))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::WifiMacQueue::MaxDelay", ns.TimeValue(ns.Seconds(100)))
    d("ns3::WifiMacQueue::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{QUEUE_P}p")))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)

    lay = layout(n)
    names = ["server", "AP", *lay["stations"]]
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    node = {nm: nodes.Get(i) for i, nm in enumerate(names)}
    ns.InternetStackHelper().Install(nodes)
    tc = ns.TrafficControlHelper()
    addr = ns.Ipv4AddressHelper()

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(WIRE[0]))
    p2p.SetChannelAttribute("Delay", ns.StringValue(WIRE[1]))
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{QUEUE_P}p"))
    wired = p2p.Install(node["server"], node["AP"])
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(wired)
    tc.Uninstall(wired)

    channel = ns.YansWifiChannelHelper.Default()  # log-distance, exponent 3: lasthop's positions model
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("ChannelSettings", ns.StringValue("{0, 80, BAND_5GHZ, 0}"))
    phy.Set("TxPowerStart", ns.DoubleValue(20.0))  # lasthop's tx_power_dbm default
    phy.Set("TxPowerEnd", ns.DoubleValue(20.0))
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211ax)
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", ns.StringValue("HeMcs7"),
                                 "ControlMode", ns.StringValue("OfdmRate24Mbps"))
    mac = ns.WifiMacHelper()
    ssid = ns.Ssid("home-ax")
    stas = ns.NodeContainer()
    for s in lay["stations"]:
        stas.Add(node[s])
    mac.SetType("ns3::StaWifiMac", "Ssid", ns.SsidValue(ssid))
    sta_devs = wifi.Install(phy, mac, stas)
    mac.SetType("ns3::ApWifiMac", "Ssid", ns.SsidValue(ssid))
    ap_devs = wifi.Install(phy, mac, node["AP"])
    for ac in ("BE", "BK", "VI", "VO"):
        ns.Config.Set(f"/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/{ac}_MaxAmpduSize", ns.UintegerValue(65535))
    ns.Config.Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/HeConfiguration/GuardInterval",
                  ns.TimeValue(ns.NanoSeconds(800)))  # ns-3's HE default is 3.2 us
    wifi.AssignStreams(ap_devs, 100)
    wifi.AssignStreams(sta_devs, 200)

    pos = ns.ListPositionAllocator()
    pos.Add(ns.Vector(0.0, 0.0, 0.0))
    wnodes = ns.NodeContainer()
    wnodes.Add(node["AP"])
    for s in lay["stations"]:
        x, y = lay["positions"][s]
        pos.Add(ns.Vector(x, y, 0.0))
        wnodes.Add(node[s])
    mob = ns.MobilityHelper()
    mob.SetPositionAllocator(pos)
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mob.Install(wnodes)
    wdevs = ns.NetDeviceContainer()
    wdevs.Add(ap_devs)
    wdevs.Add(sta_devs)
    addr.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.0.0"))
    addr.Assign(wdevs)
    tc.Uninstall(wdevs)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    ns.NeighborCacheHelper().PopulateNeighborCache()

    def ip(nm: str):
        return node[nm].GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()

    sinks = {}
    for port, f in enumerate(flows(n), start=5000):
        factory = "ns3::TcpSocketFactory" if f["kind"] == "tcp" else "ns3::UdpSocketFactory"
        sink = ns.PacketSinkHelper(factory, ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink.Install(node[f["dst"]])
        sink_apps.Start(ns.Seconds(0))
        sinks[f["name"]] = sink_apps.Get(0)
        remote = ns.InetSocketAddress(ip(f["dst"]), port).ConvertTo()
        if f["kind"] == "tcp":
            h = ns.BulkSendHelper("ns3::TcpSocketFactory", remote)
            h.SetAttribute("MaxBytes", ns.UintegerValue(0))
            h.SetAttribute("SendSize", ns.UintegerValue(MSS))
        else:
            h = ns.UdpClientHelper(remote)
            h.SetAttribute("MaxPackets", ns.UintegerValue(0))  # no limit
            h.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(f["interval_ms"])))
            h.SetAttribute("PacketSize", ns.UintegerValue(f["size"]))  # the payload (its 12 B SeqTs header within)
            if f["dscp"]:
                h.SetAttribute("Tos", ns.UintegerValue(tos))
        apps = h.Install(node[f["src"]])
        apps.Start(ns.Seconds(START_S))
        apps.Stop(ns.Seconds(duration + 1))
    probe.Connect()
    ns.Simulator.Stop(ns.Seconds(duration))
    t_setup = time.perf_counter() - t1

    w0, c0 = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0

    events = int(ns.Simulator.GetEventCount())
    active = duration - START_S
    goodput = {name: int(probe.SinkRx(a)) * 8 / active for name, a in sinks.items()}
    out = {"import": t_import, "setup": t_setup, "wall": wall, "cpu": cpu, "events": events,
           "exchanges": int(probe.Ppdus(0)), "mpdus": int(probe.DataMpdus()),
           "down_ppdus": int(probe.Down(0)), "down_mpdus": int(probe.Down(1)),
           "up_ppdus": int(probe.Ppdus(0) - probe.Down(0)), "up_mpdus": int(probe.DataMpdus() - probe.Down(1)),
           "ppdus": {k: int(probe.Ppdus(i)) for i, k in enumerate(["data", "block_ack", "ack", "bar", "beacon", "other"])},
           "ac_mpdus": {k: int(probe.AcMpdus(i)) for i, k in enumerate(["AC_BE", "AC_BK", "AC_VI", "AC_VO"])},
           "goodput": goodput}
    ns.Simulator.Destroy()
    return out


def ns3_measure(n: int, duration: float, tos: int) -> dict:
    """One ns-3 run in a child process; its whole-process wall and CPU seconds from outside."""
    params = json.dumps({"n": n, "duration": duration, "tos": tos})
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, __file__, "--ns3-child", params], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()  # reaps the child, so wait4 below cannot; take rusage of children instead
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"ns-3 child failed ({p.returncode}): {err.decode()[-3000:]}")
    r = json.loads(out.decode().strip().splitlines()[-1])
    r["process_wall"] = wall
    return r


# ---------------------------------------------------------------------------------------------


def pct(a: float, b: float) -> str:
    return "–" if b == 0 else f"{100 * (a - b) / b:+.1f} %"


def fmt_bps(x: float) -> str:
    return f"{x / 1e6:.2f}" if x >= 1e6 else f"{x / 1e6:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--md", type=Path, help="Write the tables (Markdown) to this file.")
    ap.add_argument("--stations", type=int, default=8, help="N of the side-by-side run.")
    ap.add_argument("--scaling", default="2,8,16", help="N of lasthop's per-exchange scaling table.")
    ap.add_argument("--duration", type=float, default=60.0, help="Simulated seconds.")
    ap.add_argument("--repeats", type=int, default=3, help="lasthop repetitions (median).")
    ap.add_argument("--ns3-repeats", type=int, default=1, help="ns-3 repetitions (median).")
    ap.add_argument("--ns3-tos", type=lambda s: int(s, 0), default=0xC0,
                    help="TOS byte of the call's ns-3 sockets (default 0xc0, see the docstring).")
    ap.add_argument("--no-ns3", action="store_true", help="lasthop only (the scaling table and lasthop's row).")
    ap.add_argument("--ns3-child", help=argparse.SUPPRESS)
    ap.add_argument("--lasthop-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.lasthop_child:
        sys.stdout.write("\n" + json.dumps(lasthop_child(args.lasthop_child)) + "\n")
        return
    if args.ns3_child:
        res = ns3_child(json.loads(args.ns3_child))
        sys.stdout.write("\n" + json.dumps(res) + "\n")
        sys.stdout.flush()
        return

    n, dur = args.stations, args.duration
    sizes = [int(x) for x in args.scaling.split(",") if x]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        lh = lasthop_measure(n, dur, args.repeats, True, work)
        print(f"lasthop N={n}: {json.dumps({k: v for k, v in lh.items() if k != 'goodput'})}", flush=True)
        scaling = {}
        for k in sizes:
            scaling[k] = lh if k == n else lasthop_measure(k, dur, args.repeats, False, work)
            print(f"lasthop N={k}: cpu {scaling[k]['cpu']:.3f} s, exchanges {scaling[k]['exchanges']}", flush=True)
        ns3 = None
        if not args.no_ns3:
            runs = []
            for _ in range(args.ns3_repeats):
                runs.append(ns3_measure(n, dur, args.ns3_tos))
                print(f"ns-3 N={n}: {json.dumps({k: v for k, v in runs[-1].items() if k != 'goodput'})}", flush=True)
            ns3 = dict(runs[0])
            for k in ("wall", "cpu", "import", "setup", "process_wall"):
                ns3[k] = statistics.median(r[k] for r in runs)
    load_after = os.getloadavg()

    def us_per_exchange(m: dict) -> float:
        return 1e6 * m["cpu"] / m["exchanges"]

    lines = [f"Same network in both: 802.11ax AP (5 GHz, 80 MHz, 1 stream, 800 ns GI, HE MCS 7 fixed, A-MPDU ≤ 65 535 B), "
             f"{n} stations 5 m away, a server on 1 Gb/s 10 ms; {len(layout(n)['downloads'])} CUBIC downloads, "
             f"a game, an EF call; {dur:g} s simulated. {os.cpu_count()} cores, load average "
             f"{load_before[0]:.2f} (1 min) / {load_before[1]:.2f} (5 min) before, {load_after[0]:.2f} / {load_after[1]:.2f} after.",
             "",
             "| simulator | what is timed | runs | wall s | CPU s | events | events/s (CPU) | exchanges (data PPDUs) "
             "| MPDUs | CPU µs / exchange | set-up s (import + build) |",
             "|---|---|---|---|---|---|---|---|---|---|---|",
             f"| lasthop | `lasthop.run(Scenario)` in a fresh process (build, run, collect; no files) | {args.repeats} (median) "
             f"| {lh['wall']:.2f} | {lh['cpu']:.2f} | {lh['events']:,} | {lh['events'] / lh['cpu'] / 1e6:.2f} M "
             f"| {lh['exchanges']:,} | {lh['mpdus']:,} | {us_per_exchange(lh):.1f} | – |",
             f"| lasthop | whole `lasthop run FILE --no-report -q` process (+ interpreter, imports, Parquet) "
             f"| {args.repeats} (median) | {lh['cli_wall']:.2f} | {lh['cli_cpu']:.2f} | | | | | | |"]
    if ns3:
        lines.append(f"| ns-3 3.44 (pip) | `Simulator.Run()` alone | {args.ns3_repeats} | {ns3['wall']:.1f} | {ns3['cpu']:.1f} "
                     f"| {ns3['events']:,} | {ns3['events'] / ns3['cpu'] / 1e6:.2f} M | {ns3['exchanges']:,} | {ns3['mpdus']:,} "
                     f"| {us_per_exchange(ns3):.1f} | {ns3['import']:.1f} + {ns3['setup']:.2f} |")
        lines.append(f"| ns-3 3.44 (pip) | whole child process (import, set-up, run) | {args.ns3_repeats} | {ns3['process_wall']:.1f} "
                     "| | | | | | | |")
        r_wall, r_cpu = ns3["wall"] / lh["wall"], ns3["cpu"] / lh["cpu"]
        r_ex = us_per_exchange(ns3) / us_per_exchange(lh)
        r_proc = ns3["process_wall"] / lh["cli_wall"]
        lines += ["", f"**ns-3 / lasthop: {r_cpu:.0f}× in CPU time, {r_wall:.0f}× in wall time, {r_ex:.0f}× in CPU per "
                      f"exchange; {r_proc:.0f}× process against process (wall)** (target ≥ 100×).", ""]
        lines += ["| on the air | lasthop | ns-3 |", "|---|---|---|"]
        for label, key in (("AP's data PPDUs (downlink)", "down"), ("stations' data PPDUs (uplink, mostly TCP ACKs)", "up")):
            lines.append(f"| {label}: PPDUs, MPDUs per PPDU | {lh[key + '_ppdus']:,}, {lh[key + '_mpdus'] / max(1, lh[key + '_ppdus']):.1f} "
                         f"| {ns3[key + '_ppdus']:,}, {ns3[key + '_mpdus'] / max(1, ns3[key + '_ppdus']):.1f} |")
        p = ns3["ppdus"]
        lines += [f"| BlockAckRequests | {lh['bars']:,} | {p['bar']:,} |",
                  f"| collisions (exchanges with two senders) | {lh['collisions']:,} | (not counted) |",
                  f"| Block Acks, ACKs, beacons, other (management, ADDBA) | – | {p['block_ack']:,}, {p['ack']:,}, {p['beacon']:,}, {p['other']:,} |",
                  f"| the call's access category (data MPDUs per AC in ns-3) | AC_VO (DSCP 46) | "
                  f"{', '.join(f'{k} {v:,}' for k, v in ns3['ac_mpdus'].items() if v)} (TOS 0x{args.ns3_tos:02x}) |"]
        lines += ["", "| flow | lasthop goodput Mb/s | ns-3 goodput Mb/s | ns-3 against lasthop |", "|---|---|---|---|"]
        tot_l = tot_n = 0.0
        for f in flows(n):
            a, b = lh["goodput"][f["name"]], ns3["goodput"][f["name"]]
            if f["kind"] == "tcp":
                tot_l, tot_n = tot_l + a, tot_n + b
            flag = " **(> 15 %)**" if abs(a - b) > 0.15 * max(a, 1) else ""
            lines.append(f"| {f['name']} ({f['src']} → {f['dst']}) | {fmt_bps(a)} | {fmt_bps(b)} | {pct(b, a)}{flag} |")
        flag = " **(> 15 %)**" if abs(tot_l - tot_n) > 0.15 * tot_l else ""
        lines.append(f"| all downloads | {fmt_bps(tot_l)} | {fmt_bps(tot_n)} | {pct(tot_n, tot_l)}{flag} |")
    lines += ["", f"lasthop alone, {dur:g} s, median of {args.repeats} processes each:", "",
              "| stations N | downloads | events | exchanges | MPDUs per exchange | events per exchange "
              "| CPU s | CPU µs / exchange | CPU ns / event | CPU µs / MPDU |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for k, m in scaling.items():
        lines.append(f"| {k} | {len(layout(k)['downloads'])} | {m['events']:,} | {m['exchanges']:,} | {m['mpdus'] / m['exchanges']:.1f} "
                     f"| {m['events'] / m['exchanges']:.0f} | {m['cpu']:.2f} | {us_per_exchange(m):.1f} "
                     f"| {1e9 * m['cpu'] / m['events']:.0f} | {1e6 * m['cpu'] / m['mpdus']:.2f} |")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.md:
        args.md.write_text(text)


if __name__ == "__main__":
    main()
