"""What the ns-3 scenario builders share: the C++ probes, the TCP settings aligned with lasthop's,
UDP flows replayed from lasthop's own packet schedules, and the JSON-in/JSON-out entry point.

Only the builders' subprocesses import this module (it imports ns-3, about 12-20 s). Everything
that costs per packet is C++ compiled by cppyy (cling) at import, not Python callbacks:

- TCP counters on the sender's sockets: data segments sent, retransmitted segments (the socket's
  `Retransmission` trace), retransmission timeouts (ns-3 doubles `m_rto` exactly once per
  timeout, RFC 6298 §5.5, so an `RTO` trace change to twice the old value is one timeout) and fast
  recoveries (entries into `CA_RECOVERY`).
- UDP replay: each packet of a lasthop flow (its send time and IP size, from lasthop's per-packet
  trace) is sent at the same time with the same size from a plain UDP socket; the receiver records
  the arrival of each packet by the packet's uid, which ns-3 keeps end to end. Both simulators'
  per-packet records then go through one Python metric function (`oracle.metrics`), so delay and
  jitter are defined once for both.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from ns import ns  # noqa: F401  (the heavy import; loads every ns-3 module)

import cppyy

cppyy.cppdef(r"""
#include <fstream>
#include <map>
#include <vector>
namespace lasthop_oracle {
using namespace ns3;

struct TcpCounters {
    uint64_t dataSegments = 0;
    uint64_t retransmissions = 0;
    uint64_t timeouts = 0;
    uint64_t recoveries = 0;
    // ssthresh set on each fast retransmit against FlightSize/2 then (RFC 5681 eq. 4's value).
    uint64_t reductions = 0;
    double ssthreshOverHalfFlight = 0;
    uint32_t highTx = 0, highAck = 0, ssthresh = 0, flightAtRecovery = 0;
    bool pending = false;
};
TcpCounters g_tcp;

// The diagnostic variant: ns-3's NewReno with RFC 5681 eq. 4's ssthresh. ns-3 passes
// GetSsThresh the pipe (FlightSize less SACKed and presumed-lost bytes; without SACK less the
// duplicate ACKs), so its ssthresh after fast retransmit is (FlightSize - ~4 MSS) / 2. Here
// it is half the window in use when the loss was detected, as RFC 5681/6675 (FlightSize) and
// Linux (cwnd) have it.
class NewRenoHalfWindow : public TcpNewReno {
  public:
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        return std::max(2 * tcb->m_segmentSize, std::max(tcb->m_cWnd.Get(), bytesInFlight) / 2);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NewRenoHalfWindow>(this); }
    std::string GetName() const override { return "NewRenoHalfWindow"; }
};
void UseHalfWindowSsthresh(Ptr<Application> app) {
    auto s = DynamicCast<TcpSocketBase>(DynamicCast<BulkSendApplication>(app)->GetSocket());
    NS_ABORT_MSG_IF(!s, "the bulk sender has no TCP socket yet");
    s->SetCongestionControlAlgorithm(CreateObject<NewRenoHalfWindow>());
}
void ScheduleHalfWindowSsthresh(Ptr<Application> app, double at_s) {
    Simulator::Schedule(Seconds(at_s), &UseHalfWindowSsthresh, app);
}
void OnHighTx(SequenceNumber32, SequenceNumber32 n) { g_tcp.highTx = n.GetValue(); }
void OnHighAck(SequenceNumber32, SequenceNumber32 n) { g_tcp.highAck = n.GetValue(); }
void OnSsthresh(uint32_t, uint32_t n) { g_tcp.ssthresh = n; }

void OnTcpTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
    if (p->GetSize() > 0) g_tcp.dataSegments++;
    // EnterRecovery: state -> CA_RECOVERY, then ssthresh, then the retransmission (this trace).
    if (g_tcp.pending && g_tcp.flightAtRecovery > 0) {
        g_tcp.reductions++;
        g_tcp.ssthreshOverHalfFlight += g_tcp.ssthresh / (g_tcp.flightAtRecovery / 2.0);
    }
    g_tcp.pending = false;
}
void OnTcpRetx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
               Ptr<const TcpSocketBase>) {
    g_tcp.retransmissions++;
}
void OnTcpRto(Time o, Time n) {
    // TcpSocketBase::ReTxTimeout: m_rto = Min(2 * m_rto, 60 s); nothing else doubles it.
    if (n == o + o || (n == Seconds(60) && o >= Seconds(30) && o < n)) g_tcp.timeouts++;
}
void OnTcpCongState(TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n) {
    if (n == TcpSocketState::CA_RECOVERY && o != n) {
        g_tcp.recoveries++;
        g_tcp.pending = true;
        g_tcp.flightAtRecovery = g_tcp.highTx - g_tcp.highAck;
    }
}
void ConnectTcpProbes(uint32_t node) {
    std::string base = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/*/";
    bool ok = Config::ConnectWithoutContextFailSafe(base + "Tx", MakeCallback(&OnTcpTx));
    ok &= Config::ConnectWithoutContextFailSafe(base + "Retransmission", MakeCallback(&OnTcpRetx));
    ok &= Config::ConnectWithoutContextFailSafe(base + "RTO", MakeCallback(&OnTcpRto));
    ok &= Config::ConnectWithoutContextFailSafe(base + "CongState", MakeCallback(&OnTcpCongState));
    ok &= Config::ConnectWithoutContextFailSafe(base + "HighestSequence", MakeCallback(&OnHighTx));
    ok &= Config::ConnectWithoutContextFailSafe(base + "HighestRxAck", MakeCallback(&OnHighAck));
    ok &= Config::ConnectWithoutContextFailSafe(base + "SlowStartThreshold", MakeCallback(&OnSsthresh));
    NS_ABORT_MSG_IF(!ok, "no TCP socket to probe on node " << node);
}
// The bulk sender's socket exists once its application has started.
void ScheduleTcpProbes(uint32_t node, double at_s) {
    Simulator::Schedule(Seconds(at_s), &ConnectTcpProbes, node);
}
uint64_t TcpCount(int which) {
    switch (which) {
        case 0: return g_tcp.dataSegments;
        case 1: return g_tcp.retransmissions;
        case 2: return g_tcp.timeouts;
        case 3: return g_tcp.recoveries;
        default: return g_tcp.reductions;
    }
}
double SsthreshOverHalfFlight() {
    return g_tcp.reductions ? g_tcp.ssthreshOverHalfFlight / g_tcp.reductions : -1;
}
uint64_t SinkRx(Ptr<Application> a) { return DynamicCast<PacketSink>(a)->GetTotalRx(); }

struct UdpFlow {
    Ptr<Socket> tx;
    std::vector<int64_t> sendNs;
    std::vector<uint32_t> payload;
    std::vector<int64_t> recvNs;
};
std::vector<UdpFlow> g_udp;
std::map<uint64_t, std::pair<uint32_t, uint32_t>> g_uid;  // packet uid -> (flow, seq)

void SendOne(uint32_t f, uint32_t seq) {
    Ptr<Packet> p = Create<Packet>(g_udp[f].payload[seq]);
    g_uid[p->GetUid()] = {f, seq};
    g_udp[f].sendNs[seq] = Simulator::Now().GetNanoSeconds();
    g_udp[f].tx->Send(p);
}
void OnUdpRecv(Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv())) {
        auto it = g_uid.find(p->GetUid());
        if (it == g_uid.end()) continue;
        auto& r = g_udp[it->second.first].recvNs[it->second.second];
        if (r < 0) r = Simulator::Now().GetNanoSeconds();
    }
}
// schedule: text lines "send_ns ip_bytes"; every packet is sent at send_ns with ip_bytes - 28
// bytes of UDP payload (IPv4 20 + UDP 8), as lasthop counts IP bytes.
int AddReplayFlow(Ptr<Node> src, Ptr<Node> dst, Ipv4Address dstAddr, uint16_t port,
                  std::string schedule) {
    UdpFlow fl;
    std::ifstream in(schedule);
    int64_t t;
    uint32_t bytes;
    std::vector<int64_t> times;
    while (in >> t >> bytes) {
        times.push_back(t);
        fl.payload.push_back(bytes > 28 ? bytes - 28 : 0);
    }
    fl.sendNs.assign(times.size(), -1);
    fl.recvNs.assign(times.size(), -1);
    fl.tx = Socket::CreateSocket(src, UdpSocketFactory::GetTypeId());
    fl.tx->Bind();
    fl.tx->Connect(InetSocketAddress(dstAddr, port));
    Ptr<Socket> rx = Socket::CreateSocket(dst, UdpSocketFactory::GetTypeId());
    rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    rx->SetRecvCallback(MakeCallback(&OnUdpRecv));
    uint32_t f = g_udp.size();
    g_udp.push_back(fl);
    for (uint32_t i = 0; i < times.size(); ++i) {
        Simulator::Schedule(NanoSeconds(times[i]), &SendOne, f, i);
    }
    return f;
}
// One line per packet: flow seq send_ns recv_ns ip_bytes (recv_ns -1: not received).
void DumpUdp(std::string path) {
    std::ofstream out(path);
    for (uint32_t f = 0; f < g_udp.size(); ++f)
        for (uint32_t i = 0; i < g_udp[f].sendNs.size(); ++i)
            out << f << ' ' << i << ' ' << g_udp[f].sendNs[i] << ' ' << g_udp[f].recvNs[i] << ' '
                << g_udp[f].payload[i] + 28 << '\n';
}
}  // namespace lasthop_oracle
""")

probe = cppyy.gbl.lasthop_oracle


def align_tcp(tcp: dict) -> None:
    """ns-3 TCP defaults set to lasthop's model (every value explicit, none left to ns-3 3.44's
    defaults, which differ: CUBIC, PRR, timestamps, a 536 B segment, 128 KiB buffers, 3 s SYN
    timeout, Nagle off)."""
    d = ns.Config.SetDefault
    variant = {"newreno": "ns3::TcpNewReno"}[tcp.get("variant", "newreno")]
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(variant)))
    # RFC 6582 NewReno window arithmetic during recovery (lasthop has no PRR).
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp["sack"])))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))  # lasthop has no RFC 7323 timestamps
    d("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(bool(tcp.get("limited_transmit", True))))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(tcp.get("rto_min_s", 1.0))))
    d("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    d("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(3))
    d("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(tcp.get("rto_initial_s", 1.0))))
    d("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(tcp.get("rto_initial_s", 1.0))))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(int(tcp["mss"])))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(tcp["initial_cwnd"])))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(int(tcp["buffer"])))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(int(tcp["buffer"])))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(False))  # lasthop's nagle = true
    d("ns3::TcpSocket::DataRetries", ns.UintegerValue(100))


def bulk_flow(src, dst, dst_addr, port: int, start_s: float, stop_s: float, mss: int, ssthresh: str = "ns3"):
    """A greedy TCP sender (full-sized writes, so Nagle never holds a segment) and its sink.
    `ssthresh = "half_window"` swaps in the diagnostic NewReno whose ssthresh is half the window
    (RFC 5681 eq. 4) instead of ns-3's half the pipe, before the first data segment."""
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sink_apps = sink.Install(dst)
    sink_apps.Start(ns.Seconds(0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst_addr, port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(mss))
    apps = bulk.Install(src)
    apps.Start(ns.Seconds(start_s))
    apps.Stop(ns.Seconds(stop_s + 1))
    probe.ScheduleTcpProbes(src.GetId(), start_s + 1e-6)
    if ssthresh == "half_window":
        probe.ScheduleHalfWindowSsthresh(apps.Get(0), start_s + 1e-6)
    elif ssthresh != "ns3":
        raise ValueError(f"ssthresh {ssthresh!r}: valid are 'ns3' and 'half_window'")
    return sink_apps.Get(0)


def tcp_counters() -> dict:
    return {"segments_sent": int(probe.TcpCount(0)), "retransmitted_segments": int(probe.TcpCount(1)),
            "timeouts": int(probe.TcpCount(2)), "fast_recoveries": int(probe.TcpCount(3)),
            "ssthresh_reductions": int(probe.TcpCount(4)),
            "ssthresh_over_half_flight": float(probe.SsthreshOverHalfFlight())}


def udp_records(names: list[str]) -> dict:
    """The probe's UDP packet records, per flow name: lists of (seq, send_ns, recv_ns or -1,
    ip_bytes), through a temporary dump file."""
    fd, dump = tempfile.mkstemp(suffix=".udp")
    os.close(fd)
    try:
        probe.DumpUdp(dump)
        out: dict[str, list] = {n: [] for n in names}
        for line in Path(dump).read_text().splitlines():
            f, seq, s, r, b = (int(x) for x in line.split())
            out[names[f]].append((seq, s, r, b))
        return out
    finally:
        os.unlink(dump)


def main(build) -> None:
    """`python <builder>.py '<json params>'`: one ns-3 run, its JSON result on the last stdout line."""
    params = json.loads(sys.argv[1])
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(params["seed"]))
    result = build(params)
    ns.Simulator.Destroy()
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
