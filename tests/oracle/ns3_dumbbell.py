"""ns-3 counterpart of lasthop's `dumbbell` scenario, aligned with it setting by setting.

    sender --(100 Mb/s, 1 ms)-- router --(10 Mb/s, 24 ms)-- receiver

- Point-to-point links, DropTail device queues in packets (access 100p, bottleneck `queue`p in
  both directions); the traffic-control layer that `Ipv4AddressHelper` installs by default
  (FQ-CoDel) is removed, so the device queue is the only queue, as in lasthop.
- Link loss: a packet-unit `RateErrorModel` on the receiver's bottleneck device, i.e. Bernoulli
  loss of router->receiver packets, lasthop's `links.bottleneck.loss_a_to_b`. ACKs are not lost.
- TCP: `ns3_common.align_tcp` (NewReno with classic RFC 6582 recovery, SACK on/off, no
  timestamps, MSS 1448, initial window 10, 1 MiB buffers, delayed ACK every 2nd segment or
  200 ms, RTO min and initial 1 s). ns-3's NewReno grows cwnd by MSS²/cwnd per ACK in congestion
  avoidance, lasthop's `tcp.ca_increase = "per_ack"`.
- The voice flow: lasthop's packet schedule (160 B payload every 20 ms from 0.5 s) replayed.
- Not alignable: ns-3's point-to-point device adds a 2-byte PPP header to every frame (1502 B
  on the wire for a 1500 B packet), 0.13 % less capacity than lasthop's IP-only link.

Run as `python tests/oracle/ns3_dumbbell.py '{"seed": 1, "loss": 0.01, "sack": true, ...}'`.
"""

from __future__ import annotations


from ns3_common import align_tcp, bulk_flow, main, ns, probe, udp_records, tcp_counters


def p2p(a, b, rate: str, delay: str, queue_p: int):
    h = ns.PointToPointHelper()
    h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    h.SetChannelAttribute("Delay", ns.StringValue(delay))
    h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{queue_p}p"))
    return h.Install(a, b)


def build(p: dict) -> dict:
    align_tcp(p["tcp"])
    nodes = ns.NodeContainer()
    nodes.Create(3)
    sender, router, receiver = nodes.Get(0), nodes.Get(1), nodes.Get(2)
    access = p2p(sender, router, p["access_rate"], p["access_delay"], 100)
    bottleneck = p2p(router, receiver, p["bottleneck_rate"], p["bottleneck_delay"], p["queue"])
    if p["loss"] > 0:
        em = ns.CreateObject["RateErrorModel"]()
        em.SetUnit(ns.RateErrorModel.ERROR_UNIT_PACKET)
        em.SetRate(p["loss"])
        bottleneck.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
    ns.InternetStackHelper().Install(nodes)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(access)
    addr.SetBase(ns.Ipv4Address("10.1.2.0"), ns.Ipv4Mask("255.255.255.0"))
    bif = addr.Assign(bottleneck)
    tc = ns.TrafficControlHelper()
    tc.Uninstall(access)
    tc.Uninstall(bottleneck)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    dst = bif.GetAddress(1)
    duration = float(p["duration"])
    sink = bulk_flow(sender, receiver, dst, 5001, 0.0, duration, int(p["tcp"]["mss"]), p.get("ssthresh", "ns3"))
    udp_names = []
    for i, u in enumerate(p.get("udp", [])):
        probe.AddReplayFlow(sender, receiver, dst, 6000 + i, u["schedule"])
        udp_names.append(u["name"])

    warmup = float(p["warmup"])
    ns.Simulator.Stop(ns.Seconds(warmup))
    ns.Simulator.Run()
    rx_warm = int(probe.SinkRx(sink))
    ns.Simulator.Stop(ns.Seconds(duration - warmup))
    ns.Simulator.Run()
    rx = int(probe.SinkRx(sink))
    udp = udp_records(udp_names)
    return {
        "goodput_bps": rx * 8 / duration,
        "goodput_after_warmup_bps": (rx - rx_warm) * 8 / (duration - warmup),
        **tcp_counters(),
        "udp": udp,
    }


if __name__ == "__main__":
    main(build)
