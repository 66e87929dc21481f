//! Building a simulation from a scenario: the hops (links, WLANs, W-CDMA directions), routes,
//! interface processors, hosts and flows, with the random streams each draws from.

use super::*;
use super::flows::awnd_cap_bytes;

impl Simulation {
    pub fn new(scenario: Scenario) -> Self {
        let rng = RngStreams::new(scenario.simulation.seed);
        let topo = Topology::new(&scenario);
        let n = topo.names.len();
        let node = |name: &str| topo.index(name).expect("validated") as u32;
        let mut hops = Vec::new();
        for l in &scenario.links {
            let name = l.display_name();
            // Hop 2·i is a -> b of link i, hop 2·i + 1 is b -> a (routes rely on it).
            for (from, to, loss, rate) in [
                (l.a.get_ref(), l.b.get_ref(), l.loss_a_to_b.unwrap_or(l.loss), l.rate_a_to_b()),
                (l.b.get_ref(), l.a.get_ref(), l.loss_b_to_a.unwrap_or(l.loss), l.rate_b_to_a()),
            ] {
                let cname = format!("{name}:{from}->{to}");
                let stream = rng.stream(&format!("link/{cname}/loss"));
                let qdisc = build_qdisc(l.aqm, l.queue(), l.mtu.0 as u32);
                let mut c = Channel::new(cname, rate, l.delay(), l.queue(), qdisc, loss, stream);
                c.trace = scenario.probes.queues.contains(&name).then(QueueTrace::default);
                hops.push(HopSlot { hop: Hop::Wired(c), nodes: vec![node(from), node(to)] });
            }
        }
        // A W-CDMA uplink modelled as a plain link is one more channel, after the links'.
        let mut uplink_hop = vec![None; scenario.wcdma.len()];
        for (ci, c) in scenario.wcdma.iter().enumerate() {
            if c.uplink == WcdmaUplink::Link {
                let cname = format!("{}:up", c.name);
                let limit = lasthop_core::QueueLimit::Packets(c.buffer);
                let stream = rng.stream(&format!("link/{cname}/loss"));
                let qdisc = build_qdisc(Aqm::Droptail, limit, c.mtu.0 as u32);
                let chan = Channel::new(cname, c.uplink_rate.unwrap_or(c.rate), c.delay, limit, qdisc, 0.0, stream);
                uplink_hop[ci] = Some(hops.len() as u32);
                hops.push(HopSlot { hop: Hop::Wired(chan), nodes: vec![node(c.ms.get_ref()), node(c.bs.get_ref())] });
            }
        }
        let first_wlan = hops.len();
        for w in &scenario.wlans {
            let dcf = build_dcf(w, &rng, scenario.probes.queues.contains(&w.name));
            let nodes = w.members().iter().map(|m| node(m)).collect();
            hops.push(HopSlot { hop: Hop::Wlan(WlanHop::new(w.name.clone(), dcf)), nodes });
        }
        // W-CDMA channels: the downlink's RLC entity, then the uplink's unless it is a link.
        let mut rlc_hop = vec![[None; 2]; scenario.wcdma.len()];
        let mut downlinks = Vec::new();
        for (ci, c) in scenario.wcdma.iter().enumerate() {
            for down in [true, false] {
                if !down && uplink_hop[ci].is_some() {
                    continue;
                }
                let (from, to, dir) = if down { (c.bs.get_ref(), c.ms.get_ref(), "down") } else { (c.ms.get_ref(), c.bs.get_ref(), "up") };
                rlc_hop[ci][usize::from(!down)] = Some(hops.len() as u32);
                if down {
                    downlinks.push(hops.len());
                }
                let hop = Hop::Rlc(RlcHop::new(format!("{}:{dir}", c.name), build_rlc(c, down, &rng)));
                hops.push(HopSlot { hop, nodes: vec![node(from), node(to)] });
            }
        }
        let mut routes = vec![Egress::None; n * n];
        let mut next_node = vec![u32::MAX; n * n];
        for dst in 0..n {
            for (node, hop) in topo.routes_to(dst).into_iter().enumerate() {
                if let Some((_, nx)) = hop {
                    next_node[node * n + dst] = nx as u32;
                }
                routes[node * n + dst] = match hop {
                    None => Egress::None,
                    Some((Edge::Link { link, a_to_b }, _)) => Egress::Hop { hop: (2 * link + usize::from(!a_to_b)) as u32, from: 0, to: 1 },
                    Some((Edge::Wlan { wlan, from, to }, _)) => Egress::Hop { hop: (first_wlan + wlan) as u32, from: from as u16, to: to as u16 },
                    Some((Edge::Cell { cell, down: false }, _)) if uplink_hop[cell].is_some() => {
                        Egress::Hop { hop: uplink_hop[cell].expect("checked"), from: 0, to: 1 }
                    }
                    Some((Edge::Cell { cell, down }, _)) => {
                        Egress::Hop { hop: rlc_hop[cell][usize::from(!down)].expect("built above"), from: 0, to: 1 }
                    }
                };
            }
        }
        let processors = attach_processors(&scenario, &topo, &rng);
        let chains = interface_chains(&processors, n);
        // Transmit events feed captures only; `add_capture` turns them on.
        for slot in &mut hops {
            slot.hop.report_transmits(false);
        }
        let end = Time(scenario.simulation.duration.0);
        let interval = scenario.simulation.interval;
        let net = Network {
            packets: PacketArena::default(),
            hops,
            hop_out: Vec::new(),
            routes,
            processors,
            chains,
            emitted: Vec::new(),
            captures: Vec::new(),
            next_node,
            n_nodes: n,
            node_names: topo.names.clone(),
        };
        let hosts = Hosts {
            devices: topo.names.iter().map(|name| crate::host::device_of(&scenario, name)).collect(),
            cpus: vec![Cpu::default(); n],
        };
        let mut sim = Simulation {
            now: Time::ZERO,
            end,
            interval,
            events: EventQueue::default(),
            net,
            hosts,
            live_awnd: Vec::new(),
            flows: Vec::new(),
            scratch: Vec::new(),
            next_uid: 0,
            run: RunState { events_processed: 0, watchdog: Watchdog::default(), stalled: None },
            scenario: scenario.clone(),
        };
        for (i, f) in scenario.flows.iter().enumerate() {
            let state = sim.build_flow(i, f, &topo, &rng);
            // A receiver-based awnd without a fixed retransmission count follows the W-CDMA
            // downlink that delivers to the receiver, if there is one.
            if let (Some(r), FlowKind::Tcp(t)) = (f.tcp.as_ref().and_then(|p| p.receiver_awnd.as_ref()), &state.kind) {
                if r.retransmissions.is_none() && r.segments.is_none() {
                    if let Some(&ri) = downlinks.iter().find(|&&h| sim.net.hops[h].nodes[1] == state.ends.dst) {
                        sim.live_awnd.push((i, ri, t.server.mss(), DEFAULT_AWND_RETRANSMISSIONS, 0));
                    }
                }
            }
            let start = state.period.start;
            sim.flows.push(state);
            sim.events.schedule(start, Event::FlowStart { flow: i as u32 });
            if let Some(stop) = f.stop {
                if stop.0 < end.0 {
                    sim.events.schedule(Time(stop.0), Event::FlowStop { flow: i as u32 });
                }
            }
        }
        sim
    }

    pub(super) fn build_flow(&self, i: usize, f: &lasthop_scenario::Flow, topo: &Topology, rng: &RngStreams) -> FlowState {
        let src = topo.index(f.src.get_ref()).expect("validated") as u32;
        let dst = topo.index(f.dst.get_ref()).expect("validated") as u32;
        let transport = f.transport();
        let FlowApp { messages, transfer } = lasthop_scenario::build::traffic::flow_app(&self.scenario, f, rng);
        let kind = match transport {
            Transport::Udp => FlowKind::Udp(Box::new(messages.expect("validated: UDP apps are sources"))),
            Transport::Tcp => {
                let p = f.tcp.clone().unwrap_or_default();
                let path_mtu = topo.path_mtu(f.src.get_ref(), f.dst.get_ref()).expect("validated");
                let cfg = TcpConfig {
                    mss: p.mss.map(|m| m.0).unwrap_or(path_mtu - 40) as u32,
                    sack: p.sack,
                    initial_cwnd_segments: p.initial_cwnd,
                    delayed_ack: p.delayed_ack_enabled.then_some(p.delayed_ack),
                    nagle: p.nagle,
                    send_buffer: p.send_buffer.0,
                    recv_buffer: p.receive_buffer.0,
                    window_scale: p.window_scale,
                    rto_initial: p.rto_initial,
                    rto_min: p.rto_min,
                    rto_max: p.rto_max,
                    dupack_threshold: p.dupack_threshold,
                    awnd_cap: None,
                    congestion_control: match p.variant {
                        CcVariant::Newreno => crate::tcp::CcKind::NewReno,
                        CcVariant::Cubic => crate::tcp::CcKind::Cubic,
                        CcVariant::Bbr => crate::tcp::CcKind::Bbr,
                    },
                    lazy_window_update: p.window_update == lasthop_scenario::WindowUpdate::Delayed,
                    ca_increase: match p.ca_increase {
                        lasthop_scenario::CaIncrease::Bytes => crate::tcp::newreno::CaIncrease::Bytes,
                        lasthop_scenario::CaIncrease::PerAck => crate::tcp::newreno::CaIncrease::PerAck,
                    },
                    limited_transmit: p.limited_transmit,
                    timer_granularity: p.timer_granularity,
                };
                let mut isn = rng.stream(&format!("flow/{}/isn", f.name));
                let mut client = TcpSocket::new(cfg.clone(), SeqNum(isn.next_u32()));
                // The receiver's interlayer window cap (Koga et al.), as a number of segments; with
                // live retransmission counts it starts from the default and follows the link.
                let awnd_cap = p.receiver_awnd.as_ref().map(|r| {
                    awnd_cap_bytes(r, r.retransmissions.unwrap_or(DEFAULT_AWND_RETRANSMISSIONS), cfg.mss)
                });
                let mut server = TcpSocket::new(TcpConfig { awnd_cap, ..cfg }, SeqNum(isn.next_u32()));
                server.listen();
                if self.scenario.probes.tcp.contains(&f.name) {
                    client.enable_trace();
                    server.enable_trace();
                }
                FlowKind::Tcp(Box::new(TcpFlow {
                    client,
                    server,
                    transfer: Writer::new(transfer.volume),
                    messages,
                    timer_at: [None, None],
                    paced_reads: match transfer.calls {
                        Calls::PacedReads(r) => Some(r),
                        _ => None,
                    },
                    read_total: 0,
                    completed_at: None,
                    server_closed: false,
                    file: match (transfer.calls, transfer.volume) {
                        (Calls::FileLoop(l), Volume::Bytes(bytes)) => Some(Box::new(FileLoop {
                            sender: FileSender::new(bytes, l.message.0, l.app_buffer.0, l.send_delay),
                            receiver: FileReceiver::new(l.app_buffer.0, l.receive_delay),
                        })),
                        _ => None,
                    },
                }))
            }
        };
        FlowState {
            name: f.name.clone(),
            transport,
            ends: FlowEnds { src, dst, sport: 10_000 + i as u16, dport: 5_000 + i as u16, dscp: f.dscp },
            period: ActivePeriod {
                start: Time(f.start_time(rng).0),
                stop: Time(f.stop.map(|s| s.0).unwrap_or(u64::MAX).min(self.end.0)),
            },
            meters: FlowMeters {
                forward: {
                    let mut m = FlowMeter::new(self.interval);
                    if let Some(d) = f.effective_deadline() {
                        m.set_deadline(d);
                    }
                    if f.discard_reordered {
                        m.set_discard_reordered();
                    }
                    m
                },
                reverse: FlowMeter::light(self.interval),
                next_seq: [0, 0],
                records: self.scenario.probes.packets.contains(&f.name).then(PacketRecords::default),
            },
            kind,
        }
    }
}

/// The packet processors of a scenario, in order of attachment: SAP-LAW at every access point
/// that runs it (on all its interfaces), Snoop agents, then packet error generators (one per
/// direction they act on, at the sending node towards its peer).
pub(super) fn attach_processors(scenario: &Scenario, topo: &Topology, rng: &RngStreams) -> Vec<Attached> {
    let node = |name: &str| topo.index(name).expect("validated") as u32;
    let attached = |node, peer, processor| Attached { node, peer, processor, scheduled: None };
    let mut out = Vec::new();
    for w in &scenario.wlans {
        if let (Some(sl), Some(ap)) = (&w.sap_law, &w.ap) {
            let cfg = SapLawConfig { capacity_bps: sl.capacity.0 as f64, period: sl.period, gain: sl.gain };
            out.push(attached(node(ap.get_ref()), None, Processor::SapLaw(SapLaw::new(cfg))));
        }
    }
    for sn in &scenario.snoop {
        let timer = if sn.rtt_timer { LocalTimer::Rtt { min: Duration(sn.local_timeout.0 / 10) } } else { LocalTimer::Fixed(sn.local_timeout) };
        let agent = SnoopAgent::new(SnoopConfig { timer, ..SnoopConfig::default() });
        out.push(attached(node(sn.node.get_ref()), Some(node(sn.peer.get_ref())), Processor::Snoop(agent)));
    }
    for (i, g) in scenario.error_generators.iter().enumerate() {
        let (a, b) = (node(g.node.get_ref()), node(g.peer.get_ref()));
        use lasthop_scenario::GeneratorDirection as D;
        for (from, to, applies) in [(a, b, g.direction != D::In), (b, a, g.direction != D::Out)] {
            if applies {
                let stream = rng.stream(&format!("error_generator/{i}/{from}->{to}"));
                let generator = PacketErrorGenerator::new(g.rate, g.spare_syn, g.spare_fin, stream);
                out.push(attached(from, Some(to), Processor::ErrorGenerator(generator)));
            }
        }
    }
    out
}

/// Per interface (node · n + peer), the processors on it in attachment order; empty if there
/// are no processors at all (the hot path then skips them with one check).
pub(super) fn interface_chains(processors: &[Attached], n: usize) -> Vec<Vec<u32>> {
    if processors.is_empty() {
        return Vec::new();
    }
    let mut chains = vec![Vec::new(); n * n];
    for (k, a) in processors.iter().enumerate() {
        for peer in 0..n as u32 {
            if a.peer.is_none_or(|p| p == peer) {
                chains[a.node as usize * n + peer as usize].push(k as u32);
            }
        }
    }
    chains
}
