//! The simulation: builds the network from a [`Scenario`], runs the event loop and collects
//! results. One run is single-threaded and deterministic: same scenario and seed, same output.
//!
//! Packet path: an endpoint emits a packet at its node -> the route gives the outgoing channel ->
//! DropTail admission -> serialization (`TxEnd`) -> link loss draw -> propagation (`Arrive`) ->
//! forwarded again, or delivered to the flow's endpoint at the destination node. Flows are
//! demultiplexed by the flow id carried in the packet (addresses and ports are still set, for
//! mechanisms and captures that read them).

use crate::apps::FlowApp;
use crate::host::{Cpu, DeviceModel, FileReceiver, FileSender, Work};
use crate::engine::{End, Event, EventQueue, Watchdog};
use crate::net::PacketArena;
use lasthop_scenario::build::build_qdisc;
use lasthop_scenario::CcVariant;
use lasthop_core::hop::{Hop, HopEvent, Offer, TrafficClass};
use lasthop_core::wired::{flow_key, Channel, QueueTrace};
use lasthop_core::wifi::hop::WlanHop;
use lasthop_core::cellular::hop::RlcHop;
use lasthop_scenario::{Aqm, DEFAULT_AWND_RETRANSMISSIONS};
use crate::results::RunOutput;
use lasthop_scenario::{Edge, Scenario, Topology, Transport, WcdmaUplink};
use lasthop_scenario::build::cellular::build_rlc;
use lasthop_scenario::build::wifi::build_dcf;
use crate::tcp::{Segment, TcpConfig, TcpSocket};
use lasthop_core::mechanisms::error_generator::PacketErrorGenerator;
use lasthop_core::mechanisms::processor::{Processor, Verdict};
use lasthop_core::mechanisms::receiver_awnd::ReceiverAwnd;
use lasthop_core::mechanisms::sap_law::{SapLaw, SapLawConfig};
use lasthop_core::mechanisms::snoop::{LocalTimer, SnoopAgent, SnoopConfig};
use lasthop_core::metrics::{DropCause, FlowMeter};
use lasthop_core::packet::{Packet, Protocol, SeqNum, TcpHeader};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{fragments, Calls, PacedReads, Schedule, Volume, Writer};
use lasthop_core::units::Bytes;
use lasthop_core::{Duration, Time};
use rand_core::RngCore;

mod output;

/// Where a node sends a packet towards a destination: a hop and the member indexes of the
/// sender and the receiver on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Egress {
    None,
    Hop { hop: u32, from: u16, to: u16 },
}

/// A link model and the node behind each of its members (a channel's two ends, a WLAN's
/// stations in member order, an RLC direction's sender and receiver).
struct HopSlot {
    hop: Hop,
    nodes: Vec<u32>,
}

/// A pcap capture on the interfaces of `node` (towards `peer` only, if given): packets leaving
/// the node are recorded when handed to the interface, arriving ones when they arrive.
struct Capture {
    node: u32,
    peer: Option<u32>,
    pcap: crate::pcap::PcapWriter,
}

/// A packet processor on the interface of `node` towards `peer` (every interface of the node
/// when `peer` is None), with its pending timer event.
struct Attached {
    node: u32,
    peer: Option<u32>,
    processor: Processor,
    scheduled: Option<Time>,
}


struct TcpFlow {
    client: TcpSocket,
    server: TcpSocket,
    transfer: Writer,
    /// A message source writing into the socket (CBR over TCP).
    messages: Option<Schedule>,
    timer_at: [Option<Time>; 2],
    /// The receiving application's reads at a set rate, if paced.
    paced_reads: Option<PacedReads>,
    read_total: u64,
    completed_at: Option<Time>,
    server_closed: bool,
    /// Hur & Hong's file loop on the two hosts, for file transfers that use it.
    file: Option<Box<FileLoop>>,
}

/// The two applications of a host-driven file transfer (see `host.rs`).
struct FileLoop {
    sender: FileSender,
    receiver: FileReceiver,
}

enum FlowKind {
    Udp(Schedule),
    Tcp(Box<TcpFlow>),
}

/// One received or lost packet, when per-packet records are on.
#[derive(Default)]
struct PacketRecords {
    pkt_seq: Vec<u64>,
    sent_ns: Vec<u64>,
    received_ns: Vec<Option<f64>>,
    bytes: Vec<u64>,
    outcome: Vec<String>,
}

struct FlowState {
    name: String,
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    dscp: u8,
    start: Time,
    stop: Time,
    transport: Transport,
    /// Data direction src -> dst.
    forward: FlowMeter,
    /// Reverse direction (TCP ACKs).
    reverse: FlowMeter,
    next_seq: [u32; 2],
    kind: FlowKind,
    records: Option<PacketRecords>,
}

pub struct Simulation {
    scenario: Scenario,
    now: Time,
    end: Time,
    interval: Duration,
    events: EventQueue,
    packets: PacketArena,
    /// Every link model: wired channels (links in order, a -> b then b -> a, then W-CDMA
    /// uplinks modelled as links), then WLANs, then W-CDMA RLC directions.
    hops: Vec<HopSlot>,
    /// Event buffers for hops, reused (a hop's events can make another hop act at once).
    hop_bufs: Vec<Vec<HopEvent>>,
    /// routes[node * n + dst] = where node sends packets for dst.
    routes: Vec<Egress>,
    /// Packet processors (SAP-LAW, Snoop, error generators, in that order of attachment).
    processors: Vec<Attached>,
    /// chains[node * n + peer]: the processors on that interface, top-down (empty: none at all).
    chains: Vec<Vec<u32>>,
    /// Reused for the packets a processor emits.
    emitted: Vec<Packet>,
    /// Receivers whose awnd follows the retransmissions observed on an RLC downlink:
    /// (flow, RLC hop, MSS, last retransmission count used, most used).
    live_awnd: Vec<(usize, usize, u32, u32, u32)>,
    captures: Vec<Capture>,
    /// next_node[node * n + dst]: the neighbour a packet for dst goes to.
    next_node: Vec<u32>,
    n_nodes: usize,
    node_names: Vec<String>,
    /// Per node: what its own work costs, and its CPU (used only by nodes with a device).
    devices: Vec<DeviceModel>,
    cpus: Vec<Cpu>,
    flows: Vec<FlowState>,
    scratch: Vec<Segment>,
    next_uid: u64,
    events_processed: u64,
    watchdog: Watchdog,
    /// Set once the watchdog stopped the run; every later call reports it again.
    stalled: Option<Stalled>,
}

/// A run the watchdog stopped: simulated time no longer advanced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stalled {
    pub message: String,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for Stalled {}

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
        let end = Time(scenario.simulation.duration.0);
        let interval = scenario.simulation.interval;
        let mut sim = Simulation {
            now: Time::ZERO,
            end,
            interval,
            events: EventQueue::default(),
            packets: PacketArena::default(),
            hops,
            hop_bufs: Vec::new(),
            routes,
            processors,
            chains,
            emitted: Vec::new(),
            live_awnd: Vec::new(),
            next_node,
            captures: Vec::new(),
            n_nodes: n,
            node_names: topo.names.clone(),
            devices: topo.names.iter().map(|name| crate::host::device_of(&scenario, name)).collect(),
            cpus: vec![Cpu::default(); n],
            flows: Vec::new(),
            scratch: Vec::new(),
            next_uid: 0,
            events_processed: 0,
            watchdog: Watchdog::default(),
            stalled: None,
            scenario: scenario.clone(),
        };
        for (i, f) in scenario.flows.iter().enumerate() {
            let state = sim.build_flow(i, f, &topo, &rng);
            // A receiver-based awnd without a fixed retransmission count follows the W-CDMA
            // downlink that delivers to the receiver, if there is one.
            if let (Some(r), FlowKind::Tcp(t)) = (f.tcp.as_ref().and_then(|p| p.receiver_awnd.as_ref()), &state.kind) {
                if r.retransmissions.is_none() && r.segments.is_none() {
                    if let Some(&ri) = downlinks.iter().find(|&&h| sim.hops[h].nodes[1] == state.dst) {
                        sim.live_awnd.push((i, ri, t.server.mss(), DEFAULT_AWND_RETRANSMISSIONS, 0));
                    }
                }
            }
            sim.flows.push(state);
            sim.events.schedule(Time(f.start.0), Event::FlowStart { flow: i as u32 });
            if let Some(stop) = f.stop {
                if stop.0 < end.0 {
                    sim.events.schedule(Time(stop.0), Event::FlowStop { flow: i as u32 });
                }
            }
        }
        sim
    }

    fn build_flow(&self, i: usize, f: &lasthop_scenario::Flow, topo: &Topology, rng: &RngStreams) -> FlowState {
        let src = topo.index(f.src.get_ref()).expect("validated") as u32;
        let dst = topo.index(f.dst.get_ref()).expect("validated") as u32;
        let transport = f.transport();
        let FlowApp { messages, transfer } = crate::apps::flow_app(&self.scenario, f, rng);
        let kind = match transport {
            Transport::Udp => FlowKind::Udp(messages.expect("validated: UDP apps are sources")),
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
                    cubic: p.variant == CcVariant::Cubic,
                    bbr: p.variant == CcVariant::Bbr,
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
            src,
            dst,
            sport: 10_000 + i as u16,
            dport: 5_000 + i as u16,
            dscp: f.dscp,
            start: Time(f.start.0),
            stop: Time(f.stop.map(|s| s.0).unwrap_or(u64::MAX).min(self.end.0)),
            transport,
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
            kind,
            records: self.scenario.probes.packets.contains(&f.name).then(PacketRecords::default),
        }
    }

    /// Captures what crosses `node` (all its interfaces, or only the one towards `peer`) into an
    /// in-memory pcap; returns the capture's index for [`Simulation::capture_pcap`].
    pub fn add_capture(&mut self, node: &str, peer: Option<&str>) -> Result<usize, String> {
        let idx = |n: &str| self.node_names.iter().position(|x| x == n).map(|i| i as u32);
        let known = || self.node_names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        let node_id = idx(node).ok_or_else(|| format!("--pcap {node:?}: no such node; nodes: {}", known()))?;
        let peer_id = match peer {
            None => None,
            Some(p) => {
                let id = idx(p).ok_or_else(|| format!("--pcap {node}:{p}: no such node {p:?}; nodes: {}", known()))?;
                let n = self.n_nodes;
                let adjacent = (0..n).any(|d| self.next_node[node_id as usize * n + d] == id || self.next_node[id as usize * n + d] == node_id);
                if !adjacent {
                    return Err(format!("--pcap {node}:{p}: {p:?} is not a neighbour of {node:?}"));
                }
                Some(id)
            }
        };
        self.captures.push(Capture { node: node_id, peer: peer_id, pcap: crate::pcap::PcapWriter::new() });
        Ok(self.captures.len() - 1)
    }

    /// The bytes of a pcap capture (a complete file).
    pub fn capture_pcap(&self, i: usize) -> Vec<u8> {
        self.captures[i].pcap.file()
    }

    /// A packet reaching `node` from `from` runs the processors of that interface bottom-up: a
    /// Snoop agent may retransmit locally and absorb a duplicate ACK. True if it goes no further.
    fn ingress_absorbs(&mut self, node: u32, from: u32, p: &mut Packet) -> bool {
        let iface = node as usize * self.n_nodes + from as usize;
        for pos in (0..self.chains[iface].len()).rev() {
            let k = self.chains[iface][pos] as usize;
            let mut emit = std::mem::take(&mut self.emitted);
            let verdict = self.processors[k].processor.ingress(self.now, p, &mut emit);
            self.send_emitted(k, &mut emit);
            self.emitted = emit;
            self.arm_processor(k);
            if let Verdict::Drop(cause) = verdict {
                self.drop_packet(p, cause);
                return true;
            }
        }
        false
    }

    /// Packets processor `k` emits leave its node as new transmissions of their flow (new
    /// per-flow sequence, the original send time), entering the interface's chain just below `k`.
    fn send_emitted(&mut self, k: usize, emit: &mut Vec<Packet>) {
        let node = self.processors[k].node;
        for mut q in emit.drain(..) {
            let f = &mut self.flows[q.flow as usize];
            let dir = usize::from(q.dst != f.dst);
            q.pkt_seq = f.next_seq[dir];
            f.next_seq[dir] += 1;
            q.uid = self.next_uid;
            self.next_uid += 1;
            let meter = if dir == 0 { &mut f.forward } else { &mut f.reverse };
            meter.on_sent(self.now, q.wire_len());
            let next = self.next_node[node as usize * self.n_nodes + q.dst as usize];
            let chain = &self.chains[node as usize * self.n_nodes + next as usize];
            let below = chain.iter().position(|&x| x as usize == k).map_or(0, |i| i + 1);
            self.pass_down(node, next, below, q);
        }
    }

    /// Schedules processor `k`'s timer if its deadline is earlier than the pending one.
    fn arm_processor(&mut self, k: usize) {
        if let Some(d) = self.processors[k].processor.next_deadline() {
            if self.processors[k].scheduled.is_none_or(|s| d < s) {
                self.processors[k].scheduled = Some(d);
                self.events.schedule(d.max(self.now), Event::ProcessorTimer { processor: k as u32 });
            }
        }
    }

    fn on_processor_timer(&mut self, k: usize) {
        if self.processors[k].scheduled == Some(self.now) {
            self.processors[k].scheduled = None;
        }
        let mut emit = std::mem::take(&mut self.emitted);
        self.processors[k].processor.on_timer(self.now, &mut emit);
        self.send_emitted(k, &mut emit);
        self.emitted = emit;
        self.arm_processor(k);
    }

    /// Records `p` at time `t` in the captures of node `at` (on its interface towards `other`).
    fn capture(&mut self, t: Time, at: u32, other: u32, p: &Packet) {
        for c in &mut self.captures {
            if c.node == at && c.peer.is_none_or(|x| x == other) {
                c.pcap.record(t, p);
            }
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }
    /// Packets inside the network right now (queues, serializers, propagating).
    pub fn packets_in_network(&self) -> usize {
        self.packets.live()
    }
    pub fn is_finished(&self) -> bool {
        self.now >= self.end
    }

    /// Runs every event up to and including `until` (bounded by the scenario's end), unless the
    /// watchdog finds simulated time standing still.
    pub fn run_until(&mut self, until: Time) -> Result<(), Stalled> {
        if let Some(e) = &self.stalled {
            return Err(e.clone());
        }
        let limit = until.min(self.end);
        while let Some((t, ev)) = self.events.pop_until(limit) {
            self.now = t;
            self.events_processed += 1;
            if self.watchdog.stalled(t) {
                let e = self.stall_report(ev);
                self.stalled = Some(e.clone());
                return Err(e);
            }
            self.dispatch(ev);
        }
        self.now = limit;
        Ok(())
    }

    pub fn run(&mut self) -> Result<(), Stalled> {
        self.run_until(self.end)
    }

    /// Names the entity behind a stall: the one most of the next events at this instant
    /// belong to (dispatching them changes nothing: the run is over).
    fn stall_report(&mut self, first: Event) -> Stalled {
        let at = self.now;
        let mut tally: Vec<(String, u32)> = Vec::new();
        let mut ev = Some(first);
        for _ in 0..4096 {
            let Some(e) = ev else { break };
            let who = self.describe(e);
            match tally.iter_mut().find(|(w, _)| *w == who) {
                Some((_, n)) => *n += 1,
                None => tally.push((who, 1)),
            }
            self.dispatch(e);
            ev = self.events.pop_until(at).map(|(_, e)| e);
        }
        let who = tally.into_iter().max_by_key(|(_, n)| *n).map(|(w, _)| w).unwrap_or_default();
        Stalled {
            message: format!(
                "simulated time stopped advancing at {:.9} s: more than {} events at that instant, most of them from {who}; \
                 one of its durations, rates or sizes is probably zero or below the engine's 1 ns resolution",
                at.as_secs_f64(),
                Watchdog::DEFAULT_LIMIT
            ),
        }
    }

    /// The scenario entity an event belongs to, as a user would name it.
    fn describe(&self, ev: Event) -> String {
        let flow = |f: u32| format!("flow {:?}", self.flows[f as usize].name);
        let node = |n: u32| format!("{:?}", self.node_names[n as usize]);
        match ev {
            Event::HopWake { hop, .. } => self.hops[hop as usize].hop.describe(),
            Event::FlowStart { flow: f } | Event::FlowStop { flow: f } => format!("{} (start/stop)", flow(f)),
            Event::AppSend { flow: f } => format!("{} (its application's sends)", flow(f)),
            Event::AppRead { flow: f } => format!("{} (its receiver's reads)", flow(f)),
            Event::TcpTimer { flow: f, end } => format!("{} (TCP timer of the {end:?})", flow(f)),
            Event::NodeArrive { node: n, .. } => format!("arrivals at node {}", node(n)),
            Event::ProcessorTimer { processor } => {
                let a = &self.processors[processor as usize];
                let towards = a.peer.map(|p| format!(" towards {}", node(p))).unwrap_or_default();
                format!("the {} at {}{towards}", a.processor.kind(), node(a.node))
            }
            Event::CpuDone { node: n, .. } => format!("the CPU of host {}", node(n)),
            Event::HostDeliver { .. } => "deliveries of processed packets".into(),
        }
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::HopWake { hop, token } => self.on_hop_wake(hop as usize, token),
            Event::FlowStart { flow } => self.on_flow_start(flow),
            Event::FlowStop { flow } => self.on_flow_stop(flow),
            Event::AppSend { flow } => self.on_app_send(flow),
            Event::AppRead { flow } => self.on_app_read(flow),
            Event::TcpTimer { flow, end } => self.on_tcp_timer(flow, end),
            Event::NodeArrive { node, from, pkt } => self.on_node_arrive(node, from, pkt),
            Event::ProcessorTimer { processor } => self.on_processor_timer(processor as usize),
            Event::CpuDone { node, generation } => self.on_cpu_done(node, generation),
            Event::HostDeliver { pkt } => {
                let p = self.packets.take(pkt);
                self.deliver(p);
            }
        }
    }

    // ------------------------------------------------------------------ network

    fn meter(&mut self, p: &Packet) -> &mut FlowMeter {
        let f = &mut self.flows[p.flow as usize];
        if p.dst == f.dst { &mut f.forward } else { &mut f.reverse }
    }

    /// Hands a packet to the network at `node`, through its interface towards the next node.
    fn send_from(&mut self, node: u32, p: Packet) {
        let next = self.next_node[node as usize * self.n_nodes + p.dst as usize];
        self.pass_down(node, next, 0, p);
    }

    /// The interface of `node` towards `next`: its processors from chain position `pos` down
    /// (top-down as in paper 003's Fig. 3: SAP-LAW, then Snoop, which caches what it sees, then
    /// the packet error generator, so Snoop can repair its drops), then the hop (a capture on
    /// the interface records the packet when the hop puts it on the medium).
    fn pass_down(&mut self, node: u32, next: u32, pos: usize, mut p: Packet) {
        if !self.chains.is_empty() {
            let iface = node as usize * self.n_nodes + next as usize;
            for i in pos..self.chains[iface].len() {
                let k = self.chains[iface][i] as usize;
                let verdict = self.processors[k].processor.egress(self.now, &mut p);
                self.arm_processor(k);
                if let Verdict::Drop(cause) = verdict {
                    self.drop_packet(&p, cause);
                    return;
                }
            }
        }
        self.route(node as usize * self.n_nodes + p.dst as usize, p);
    }

    fn route(&mut self, key: usize, p: Packet) {
        let Egress::Hop { hop, from, to } = self.routes[key] else { unreachable!("validated: every flow has a route") };
        let h = hop as usize;
        let flow = if self.hops[h].hop.is_fair(from) { flow_key(&p) } else { 0 };
        let class = match p.proto {
            Protocol::Tcp => TrafficClass::Tcp,
            Protocol::Udp => TrafficClass::Udp,
        };
        let offer = Offer { pkt: 0, bytes: p.wire_len(), class, flow, uid: p.uid, from, to };
        let pkt = self.packets.insert(p);
        let mut out = self.hop_bufs.pop().unwrap_or_default();
        self.hops[h].hop.accept(self.now, Offer { pkt, ..offer }, &mut out);
        self.on_hop_events(h, &mut out);
        self.hop_bufs.push(out);
    }

    /// A hop's wake with `token` is due.
    fn on_hop_wake(&mut self, h: usize, token: u64) {
        let mut out = self.hop_bufs.pop().unwrap_or_default();
        self.hops[h].hop.poll(self.now, token, &mut out);
        if !self.live_awnd.is_empty() && matches!(self.hops[h].hop, Hop::Rlc(_)) && RlcHop::is_arrival(token) {
            self.update_live_awnd(h);
        }
        self.on_hop_events(h, &mut out);
        self.hop_bufs.push(out);
    }

    /// Carries out what hop `h` asked for, in its order.
    fn on_hop_events(&mut self, h: usize, out: &mut Vec<HopEvent>) {
        for ev in out.drain(..) {
            match ev {
                HopEvent::Wake { at, token } => self.events.schedule(at, Event::HopWake { hop: h as u32, token }),
                HopEvent::Arrive { pkt, from, to, at } => {
                    let (node, from) = (self.hops[h].nodes[to as usize], self.hops[h].nodes[from as usize]);
                    self.events.schedule(at, Event::NodeArrive { node, from, pkt });
                }
                HopEvent::Deliver { pkt, from, to } => {
                    let (node, from) = (self.hops[h].nodes[to as usize], self.hops[h].nodes[from as usize]);
                    self.on_node_arrive(node, from, pkt);
                }
                HopEvent::Drop { pkt, cause } => self.discard(pkt, cause),
                HopEvent::Transmit { pkt, from, to, at } => {
                    if !self.captures.is_empty() {
                        let (node, peer) = (self.hops[h].nodes[from as usize], self.hops[h].nodes[to as usize]);
                        let p = *self.packets.get(pkt);
                        self.capture(at, node, peer, &p);
                    }
                }
            }
        }
    }

    /// Interlayer collaboration (Koga et al.): receivers behind RLC hop `h` recompute their
    /// window from the retransmissions the link needed in the last second.
    fn update_live_awnd(&mut self, h: usize) {
        let Hop::Rlc(r) = &mut self.hops[h].hop else { return };
        let observed = r.rlc.observed_retransmissions(self.now, Duration::from_secs(1)).max(1);
        for k in 0..self.live_awnd.len() {
            let (fi, ri, mss, last, _) = self.live_awnd[k];
            if ri != h || observed == last {
                continue;
            }
            self.live_awnd[k].3 = observed;
            self.live_awnd[k].4 = self.live_awnd[k].4.max(observed);
            let params = self.scenario.flows[fi].tcp.as_ref().and_then(|p| p.receiver_awnd.clone()).expect("registered with params");
            if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
                t.server.set_awnd_cap(Some(awnd_cap_bytes(&params, observed, mss)));
            }
        }
    }

    /// Packet `id` reaches `node` from its neighbour `from` (over any kind of hop): captured,
    /// shown to a Snoop agent on that interface, then delivered or forwarded.
    fn on_node_arrive(&mut self, node: u32, from: u32, id: u32) {
        let mut p = self.packets.take(id);
        if !self.captures.is_empty() {
            self.capture(self.now, node, from, &p);
        }
        if !self.chains.is_empty() && self.ingress_absorbs(node, from, &mut p) {
            return;
        }
        let packet_cost = self.devices[node as usize].packet_cost;
        if p.dst == node && packet_cost.0 > 0 {
            // The host's stack takes the packet when its CPU gets to it (interrupt level).
            let id = self.packets.insert(p);
            let cpu = &mut self.cpus[node as usize];
            let (done, stretched) = cpu.packet(self.now, packet_cost);
            if stretched {
                let (at, generation) = (cpu.current_done_at(), cpu.generation);
                self.events.schedule(at, Event::CpuDone { node, generation });
            }
            self.events.schedule(done, Event::HostDeliver { pkt: id });
        } else if p.dst == node {
            self.deliver(p);
        } else {
            self.send_from(node, p);
        }
    }

    /// Takes packet `id` out of the network as lost for `cause`.
    fn discard(&mut self, id: u32, cause: DropCause) {
        let p = self.packets.take(id);
        self.drop_packet(&p, cause);
    }

    fn drop_packet(&mut self, p: &Packet, cause: DropCause) {
        let now = self.now;
        self.meter(p).on_dropped(now, cause);
        let f = &mut self.flows[p.flow as usize];
        if p.dst == f.dst {
            if let Some(r) = f.records.as_mut() {
                r.pkt_seq.push(p.pkt_seq as u64);
                r.sent_ns.push(p.sent_at.0);
                r.received_ns.push(None);
                r.bytes.push(p.wire_len() as u64);
                r.outcome.push(match cause {
                    DropCause::Queue => "queue_drop".into(),
                    DropCause::Link => "link_loss".into(),
                    DropCause::RetryLimit => "retry_limit".into(),
                    DropCause::OutOfOrder => "out_of_order".into(),
                    DropCause::Suppressed => "suppressed".into(),
                });
            }
        }
    }

    fn deliver(&mut self, p: Packet) {
        let now = self.now;
        let bytes = p.wire_len();
        self.meter(&p).on_received(now, p.sent_at, p.pkt_seq, bytes);
        let fi = p.flow as usize;
        let forward = p.dst == self.flows[fi].dst;
        if forward {
            if let Some(r) = self.flows[fi].records.as_mut() {
                r.pkt_seq.push(p.pkt_seq as u64);
                r.sent_ns.push(p.sent_at.0);
                r.received_ns.push(Some(now.0 as f64 / 1e9));
                r.bytes.push(bytes as u64);
                r.outcome.push("received".into());
            }
        }
        match p.proto {
            Protocol::Udp => {
                self.flows[fi].forward.on_delivered(now, p.payload_len as u64);
            }
            Protocol::Tcp => {
                let seg = Segment { hdr: p.tcp, payload_len: p.payload_len };
                let end = if forward { End::Server } else { End::Client };
                self.tcp_input(fi, end, &seg);
            }
        }
    }

    // ------------------------------------------------------------------ flows and applications

    fn on_flow_start(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        let start = self.flows[fi].start;
        match &mut self.flows[fi].kind {
            FlowKind::Udp(src) => {
                self.events.schedule(start + src.due().at, Event::AppSend { flow });
            }
            FlowKind::Tcp(t) => {
                let mut out = std::mem::take(&mut self.scratch);
                t.client.connect(now, &mut out);
                let first_message = t.messages.as_ref().map(|m| start + m.due().at);
                let read_paced = t.paced_reads.is_some();
                let file_loop = t.file.is_some();
                self.emit_segments(fi, End::Client, &mut out);
                self.scratch = out;
                self.arm_tcp_timer(fi, End::Client);
                if let Some(first) = first_message {
                    self.events.schedule(first, Event::AppSend { flow });
                }
                if read_paced {
                    self.events.schedule(now, Event::AppRead { flow });
                }
                if file_loop {
                    let src = self.flows[fi].src;
                    self.cpu_push(src, Work::Send(flow));
                }
            }
        }
    }

    fn on_flow_stop(&mut self, flow: u32) {
        let fi = flow as usize;
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            t.transfer.stop();
            self.pump_writer(fi);
        }
        // UDP sources check the stop time before each send.
    }

    fn on_app_send(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        if now >= self.flows[fi].stop {
            return;
        }
        if let FlowKind::Tcp(t) = &self.flows[fi].kind {
            if t.file.is_some() {
                // The sender's inter-packet sleep is over: its next send() queues for the CPU.
                let src = self.flows[fi].src;
                self.cpu_push(src, Work::Send(flow));
                return;
            }
        }
        let start = self.flows[fi].start;
        match &mut self.flows[fi].kind {
            FlowKind::Udp(src) => {
                let message = src.pop();
                let max = src.max_packet();
                let next = start + src.due().at;
                // A message longer than a packet (a video frame) leaves as back-to-back packets.
                for size in fragments(message.bytes, max) {
                    self.send_udp(fi, size);
                }
                if next < self.flows[fi].stop {
                    self.events.schedule(next, Event::AppSend { flow });
                }
            }
            FlowKind::Tcp(t) => {
                // A message source over TCP (CBR): each message joins the socket's backlog.
                if let Some(m) = t.messages.as_mut() {
                    t.transfer.queue(m.pop().bytes as u64);
                    let next = start + m.due().at;
                    self.pump_writer(fi);
                    if next < self.flows[fi].stop {
                        self.events.schedule(next, Event::AppSend { flow });
                    }
                }
            }
        }
    }

    fn send_udp(&mut self, fi: usize, size: u32) {
        let f = &mut self.flows[fi];
        let seq = f.next_seq[0];
        f.next_seq[0] += 1;
        let p = Packet {
            uid: self.next_uid,
            flow: fi as u32,
            pkt_seq: seq,
            src: f.src,
            dst: f.dst,
            sport: f.sport,
            dport: f.dport,
            dscp: f.dscp,
            proto: Protocol::Udp,
            tcp: TcpHeader::default(),
            payload_len: size,
            sent_at: self.now,
        };
        self.next_uid += 1;
        f.forward.on_sent(self.now, p.wire_len());
        let src = f.src;
        self.send_from(src, p);
    }

    /// Lets the sending application write what it wants and the socket accepts.
    fn pump_writer(&mut self, fi: usize) {
        if matches!(&self.flows[fi].kind, FlowKind::Tcp(t) if t.file.is_some()) {
            self.file_send_unblock(fi);
            return;
        }
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            let wants = t.transfer.wants();
            if wants > 0 {
                let n = t.client.write(now, wants, &mut out);
                t.transfer.wrote(n);
            }
            if t.transfer.finished() {
                t.client.close(now, &mut out);
            }
        }
        self.emit_segments(fi, End::Client, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Client);
    }

    fn on_app_read(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        if t.file.is_some() {
            // The receiver's inter-packet sleep is over: its next recv() queues for the CPU.
            let dst = self.flows[fi].dst;
            self.cpu_push(dst, Work::Recv(flow));
            return;
        }
        let Some(PacedReads { rate, size: Bytes(size) }) = t.paced_reads else { return };
        let _ = self.read_server(fi, size);
        let done = matches!(&self.flows[fi].kind, FlowKind::Tcp(t) if t.server_closed);
        if !done && now < self.end {
            self.events.schedule(now + rate.tx_time(size), Event::AppRead { flow });
        }
    }

    /// The receiving application reads up to `max` bytes; closes its side once the peer's FIN
    /// has arrived and everything is read.
    fn read_server(&mut self, fi: usize, max: u64) -> u64 {
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        let f = &mut self.flows[fi];
        let mut read = 0;
        if let FlowKind::Tcp(t) = &mut f.kind {
            let n = t.server.read(now, max, &mut out);
            read = n;
            if n > 0 {
                t.read_total += n;
                f.forward.on_delivered(now, n);
                if t.completed_at.is_none() && t.transfer.target().is_some_and(|tot| t.read_total >= tot) {
                    t.completed_at = Some(now);
                }
            }
            if t.server.fin_received() && t.server.readable() == 0 && !t.server_closed {
                t.server_closed = true;
                t.server.close(now, &mut out);
            }
        }
        self.emit_segments(fi, End::Server, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Server);
        read
    }

    // ------------------------------------------------------------------ host CPUs and the file loop

    /// Queues work on `node`'s CPU, starting it if the CPU was idle.
    fn cpu_push(&mut self, node: u32, work: Work) {
        if self.cpus[node as usize].push(work) {
            self.cpu_start(node);
        }
    }

    /// Starts the next application items on `node`'s CPU until one takes time.
    fn cpu_start(&mut self, node: u32) {
        let n = node as usize;
        while let Some(work) = self.cpus[n].start_next() {
            let d = self.work_started(node, work);
            if d.0 > 0 {
                let done = self.cpus[n].run_current(self.now, d);
                let generation = self.cpus[n].generation;
                self.events.schedule(done, Event::CpuDone { node, generation });
                return;
            }
            self.cpus[n].finish();
            self.work_done(work);
        }
    }

    fn on_cpu_done(&mut self, node: u32, generation: u32) {
        if self.cpus[node as usize].generation != generation {
            return; // packets stretched the item; a later completion is scheduled
        }
        if let Some(work) = self.cpus[node as usize].finish() {
            self.work_done(work);
        }
        self.cpu_start(node);
    }

    /// What starting `work` does at once, and how long it occupies the CPU.
    fn work_started(&mut self, node: u32, work: Work) -> Duration {
        let dev = self.devices[node as usize];
        match work {
            Work::Send(flow) => {
                let fi = flow as usize;
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!("file loop on a TCP flow") };
                let fl = t.file.as_mut().expect("file loop");
                match fl.sender.next_message() {
                    Some(n) => dev.send_cost(n, fl.sender.app_buffer),
                    None => Duration::ZERO,
                }
            }
            Work::Recv(flow) => {
                let fi = flow as usize;
                let (before, max) = match &self.flows[fi].kind {
                    FlowKind::Tcp(t) => (t.completed_at, t.file.as_ref().expect("file loop").receiver.app_buffer),
                    _ => unreachable!("file loop on a TCP flow"),
                };
                let n = self.read_server(fi, max);
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if n == 0 {
                    fl.receiver.waiting = true;
                    return Duration::ZERO;
                }
                let d = dev.receive_cost(fl.receiver.written, n, fl.receiver.app_buffer);
                fl.receiver.written += n;
                // The transfer is complete when the last byte is stored, not when it is read.
                if before.is_none() && t.completed_at.is_some() {
                    t.completed_at = None;
                    fl.receiver.storing_last = true;
                }
                d
            }
        }
    }

    /// What finishing `work` does.
    fn work_done(&mut self, work: Work) {
        match work {
            Work::Send(flow) => {
                let fi = flow as usize;
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if fl.sender.pending == 0 {
                    // Nothing left to send: the application closes its socket.
                    let mut out = std::mem::take(&mut self.scratch);
                    t.client.close(self.now, &mut out);
                    self.emit_segments(fi, End::Client, &mut out);
                    self.scratch = out;
                    self.arm_tcp_timer(fi, End::Client);
                } else {
                    fl.sender.blocked = true;
                    self.file_send_unblock(fi);
                }
            }
            Work::Recv(flow) => {
                let fi = flow as usize;
                let (dst, dev) = (self.flows[fi].dst, self.devices[self.flows[fi].dst as usize]);
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if fl.receiver.storing_last {
                    fl.receiver.storing_last = false;
                    t.completed_at = Some(self.now);
                }
                if fl.receiver.waiting {
                    return; // blocked in recv(); data or the FIN wakes it (file_recv_wake)
                }
                let sleep = dev.sleep(fl.receiver.delay);
                if sleep.0 == 0 {
                    self.cpu_push(dst, Work::Recv(flow));
                } else {
                    self.events.schedule(self.now + sleep, Event::AppRead { flow });
                }
            }
        }
    }

    /// A blocked `send()` hands the socket what fits; once the whole message is in, the
    /// application sleeps its inter-packet delay and sends the next one.
    fn file_send_unblock(&mut self, fi: usize) {
        let now = self.now;
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let Some(fl) = t.file.as_mut() else { return };
        if !fl.sender.blocked {
            return;
        }
        let mut out = std::mem::take(&mut self.scratch);
        let n = t.client.write(now, fl.sender.pending, &mut out);
        fl.sender.pending -= n;
        let done = fl.sender.pending == 0;
        if done {
            fl.sender.blocked = false;
        }
        let delay = fl.sender.delay;
        self.emit_segments(fi, End::Client, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Client);
        if done {
            let src = self.flows[fi].src;
            let sleep = self.devices[src as usize].sleep(delay);
            let flow = fi as u32;
            if sleep.0 == 0 {
                self.cpu_push(src, Work::Send(flow));
            } else {
                self.events.schedule(now + sleep, Event::AppSend { flow });
            }
        }
    }

    /// Data or a FIN reached a file receiver blocked in `recv()`: its call resumes.
    fn file_recv_wake(&mut self, fi: usize) {
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let Some(fl) = t.file.as_mut() else { return };
        if fl.receiver.waiting && (t.server.readable() > 0 || (t.server.fin_received() && !t.server_closed)) {
            fl.receiver.waiting = false;
            let dst = self.flows[fi].dst;
            self.cpu_push(dst, Work::Recv(fi as u32));
        }
    }

    // ------------------------------------------------------------------ TCP glue

    fn tcp_input(&mut self, fi: usize, end: End, seg: &Segment) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        let unpaced_reader = {
            let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!("TCP packet on a UDP flow") };
            match end {
                End::Client => t.client.on_segment(now, seg, &mut out),
                End::Server => t.server.on_segment(now, seg, &mut out),
            }
            t.paced_reads.is_none() && t.file.is_none()
        };
        self.emit_segments(fi, end, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, end);
        match end {
            End::Client => self.pump_writer(fi),
            End::Server if unpaced_reader => {
                let _ = self.read_server(fi, u64::MAX);
            }
            End::Server => self.file_recv_wake(fi),
        }
    }

    fn on_tcp_timer(&mut self, flow: u32, end: End) {
        let fi = flow as usize;
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            let slot = end as usize;
            if t.timer_at[slot] == Some(now) {
                t.timer_at[slot] = None;
            }
            match end {
                End::Client => t.client.on_timer(now, &mut out),
                End::Server => t.server.on_timer(now, &mut out),
            }
        }
        self.emit_segments(fi, end, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, end);
    }

    /// Schedules a timer event if the socket's deadline is earlier than the one pending. Later
    /// deadlines need no new event: the pending one fires, finds nothing due, and re-arms.
    fn arm_tcp_timer(&mut self, fi: usize, end: End) {
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let deadline = match end {
            End::Client => t.client.poll_deadline(),
            End::Server => t.server.poll_deadline(),
        };
        let slot = end as usize;
        if let Some(d) = deadline {
            if t.timer_at[slot].is_none_or(|pending| d < pending) {
                t.timer_at[slot] = Some(d);
                self.events.schedule(d.max(self.now), Event::TcpTimer { flow: fi as u32, end });
            }
        }
    }

    fn emit_segments(&mut self, fi: usize, end: End, out: &mut Vec<Segment>) {
        for seg in out.drain(..) {
            let f = &mut self.flows[fi];
            let (src, dst, sport, dport, dir) = match end {
                End::Client => (f.src, f.dst, f.sport, f.dport, 0),
                End::Server => (f.dst, f.src, f.dport, f.sport, 1),
            };
            let seq = f.next_seq[dir];
            f.next_seq[dir] += 1;
            let p = Packet {
                uid: self.next_uid,
                flow: fi as u32,
                pkt_seq: seq,
                src,
                dst,
                sport,
                dport,
                dscp: f.dscp,
                proto: Protocol::Tcp,
                tcp: seg.hdr,
                payload_len: seg.payload_len,
                sent_at: self.now,
            };
            self.next_uid += 1;
            let meter = if dir == 0 { &mut f.forward } else { &mut f.reverse };
            meter.on_sent(self.now, p.wire_len());
            self.send_from(src, p);
        }
    }
}

/// The packet processors of a scenario, in order of attachment: SAP-LAW at every access point
/// that runs it (on all its interfaces), Snoop agents, then packet error generators (one per
/// direction they act on, at the sending node towards its peer).
fn attach_processors(scenario: &Scenario, topo: &Topology, rng: &RngStreams) -> Vec<Attached> {
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
fn interface_chains(processors: &[Attached], n: usize) -> Vec<Vec<u32>> {
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


/// Koga et al.'s eq. 3 as a window in bytes: round(awnd) full segments, or the segments given.
fn awnd_cap_bytes(r: &lasthop_scenario::ReceiverAwndParams, retransmissions: u32, mss: u32) -> u64 {
    if let Some(n) = r.segments {
        return n as u64 * mss as u64;
    }
    let a = ReceiverAwnd {
        link_bps: r.link_rate.0 as f64,
        udp_bps: r.udp_rate.0 as f64,
        propagation: r.propagation,
        retransmissions: retransmissions.max(1),
        packet_bytes: r.packet_size.0 as u32,
    };
    (a.awnd_packets().round().max(1.0) as u64) * mss as u64
}

/// Loads, builds and runs a scenario to its end, or says why it stalled.
pub fn try_run_scenario(s: Scenario) -> Result<RunOutput, Stalled> {
    let mut sim = Simulation::new(s);
    sim.run()?;
    Ok(sim.output())
}

/// [`try_run_scenario`] for tests and benchmarks, which treat a stall as a failure (panics).
pub fn run_scenario(s: Scenario) -> RunOutput {
    try_run_scenario(s).unwrap_or_else(|e| panic!("{e}"))
}
