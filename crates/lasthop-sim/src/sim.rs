//! The simulation: composes core parts into a network and runs the event loop. One run is
//! single-threaded and deterministic: same scenario and seed, same output.
//!
//! Packet path: an endpoint emits a packet at its node -> the node's interface towards the next
//! node runs its processors top-down ([`network`]) -> the hop accepts it and answers with hop
//! events (`lasthop_core::hop`): wakes become `HopWake` engine events, arrivals `NodeArrive` ->
//! at the next node the interface's processors run bottom-up -> forwarded again, or delivered to
//! the flow's endpoint ([`flows`]), through the host's CPU if it has a device ([`hosts`]).
//! Built from the scenario by [`build`]; results assembled by [`output`] into the typed
//! `RunReport`. Flows are demultiplexed by the flow id carried in the packet.

use lasthop_scenario::build::traffic::FlowApp;
use crate::host::{Cpu, DeviceModel, FileReceiver, FileSender, Work};
use lasthop_scenario::build::tcp::ReceiverWindow;
use crate::engine::{End, Event, EventQueue, Watchdog};
use crate::net::PacketArena;
use lasthop_scenario::build::network::{Attached, Egress, HopSlot};
use lasthop_core::hop::{Hop, HopEvent, Offer, TrafficClass};
use lasthop_core::wired::flow_key;
use lasthop_core::cellular::hop::RlcHop;
use lasthop_scenario::DEFAULT_AWND_RETRANSMISSIONS;
use crate::results::RunOutput;
use lasthop_scenario::{Scenario, Topology, Transport};
use crate::tcp::{Segment, TcpConfig, TcpSocket};
use lasthop_core::mechanisms::processor::Verdict;
use lasthop_core::metrics::{DropCause, FlowMeter};
use lasthop_core::packet::{ecn, Packet, Protocol, SeqNum, TcpHeader};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{fragments, Calls, PacedReads, Schedule, Volume, Writer};
use lasthop_core::units::Bytes;
use lasthop_core::{Duration, Time};
use rand_core::RngCore;

mod build;
pub use lasthop_scenario::build::tcp::tcp_config;
mod flows;
mod hosts;
mod network;
mod output;

/// A pcap capture on the interfaces of `node` (towards `peer` only, if given): packets leaving
/// the node are recorded when handed to the interface, arriving ones when they arrive.
struct Capture {
    node: u32,
    peer: Option<u32>,
    pcap: lasthop_core::pcap::PcapWriter,
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
    /// Boxed like `Tcp`: a schedule is ~430 bytes, which every flow would otherwise carry.
    Udp(Box<Schedule>),
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

/// One flow at run time: its addresses, active period and measurement, and its applications
/// and endpoints (`kind`).
struct FlowState {
    name: String,
    transport: Transport,
    ends: FlowEnds,
    period: ActivePeriod,
    meters: FlowMeters,
    kind: FlowKind,
    /// UDP: the receiver echoes each datagram (`echo = true`); the reverse meter measures
    /// round trips.
    echo: bool,
}

/// The header fields a flow's packets carry: its two nodes, their ports and the DSCP. Data goes
/// src -> dst (from the client), ACKs back.
#[derive(Clone, Copy, Debug)]
struct FlowEnds {
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    dscp: u8,
}

impl FlowEnds {
    /// (from node, to node, from port, to port) of the packets `end` sends.
    fn sent_by(&self, end: End) -> (u32, u32, u16, u16) {
        match end {
            End::Client => (self.src, self.dst, self.sport, self.dport),
            End::Server => (self.dst, self.src, self.dport, self.sport),
        }
    }
}

/// When a flow's applications run: from `start` until `stop` (the run's end if it has none).
#[derive(Clone, Copy, Debug)]
struct ActivePeriod {
    start: Time,
    stop: Time,
}

/// A flow's measurement: a meter per direction, the per-direction packet numbers the meters
/// count loss and reordering by, and the per-packet records of the data direction if probed.
struct FlowMeters {
    /// Data direction src -> dst.
    forward: FlowMeter,
    /// Reverse direction (TCP ACKs; a UDP echo flow's echoes, stamped with their request's
    /// send time, so its delays are round trips).
    reverse: FlowMeter,
    next_seq: [u32; 2],
    records: Option<PacketRecords>,
}

impl FlowMeters {
    /// The next packet number in direction `dir` (0 = data, 1 = reverse).
    fn number(&mut self, dir: usize) -> u32 {
        let seq = self.next_seq[dir];
        self.next_seq[dir] += 1;
        seq
    }

    /// The meter of direction `dir` (0 = data, 1 = reverse).
    fn direction(&mut self, dir: usize) -> &mut FlowMeter {
        if dir == 0 { &mut self.forward } else { &mut self.reverse }
    }
}

/// A receiver whose advertised window follows the retransmissions an RLC downlink needed
/// (Koga et al.'s interlayer collaboration, eq. 1-3).
#[derive(Clone, Debug)]
struct LiveAwnd {
    flow: usize,
    /// The RLC hop delivering to the receiver.
    rlc_hop: usize,
    window: ReceiverWindow,
}

pub struct Simulation {
    /// The scenario as resolved (written into the report).
    scenario: Scenario,
    now: Time,
    end: Time,
    /// Width of the per-interval time series.
    interval: Duration,
    events: EventQueue,
    net: Network,
    hosts: Hosts,
    flows: Vec<FlowState>,
    /// Receivers whose awnd follows the retransmissions observed on an RLC downlink.
    live_awnd: Vec<LiveAwnd>,
    /// Reused for the segments a TCP endpoint emits.
    scratch: Vec<Segment>,
    /// The next packet's run-wide unique id.
    next_uid: u64,
    run: RunState,
}

/// The network: packets in flight, the hops, the routes and the interfaces' processors and
/// captures.
struct Network {
    packets: PacketArena,
    /// Every link model: wired channels (links in order, a -> b then b -> a, then W-CDMA
    /// uplinks modelled as links), then WLANs, then W-CDMA RLC directions.
    hops: Vec<HopSlot>,
    /// The hops' events, a stack shared by all of them: a hop appends its events, the
    /// simulator carries them out and removes them (a hop's events can make another hop act
    /// at once, whose events go above them). One buffer, reused: no allocation per packet.
    hop_out: Vec<HopEvent>,
    /// routes[node * n + dst] = where node sends packets for dst.
    routes: Vec<Egress>,
    /// Packet processors (SAP-LAW, Snoop, error generators, in that order of attachment).
    processors: Vec<Attached>,
    /// chains[node * n + peer]: the processors on that interface, top-down (empty: none at all).
    chains: Vec<Vec<u32>>,
    /// Reused for the packets a processor emits.
    emitted: Vec<Packet>,
    captures: Vec<Capture>,
    /// next_node[node * n + dst]: the neighbour a packet for dst goes to.
    next_node: Vec<u32>,
    n_nodes: usize,
    node_names: Vec<String>,
}

/// Per node: what its own work costs, and its CPU (used only by nodes with a device).
struct Hosts {
    devices: Vec<DeviceModel>,
    cpus: Vec<Cpu>,
}

/// The engine's bookkeeping of a run.
struct RunState {
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

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn events_processed(&self) -> u64 {
        self.run.events_processed
    }
    /// Packets inside the network right now (queues, serializers, propagating).
    pub fn packets_in_network(&self) -> usize {
        self.net.packets.live()
    }
    pub fn is_finished(&self) -> bool {
        self.now >= self.end
    }

    /// Runs every event up to and including `until` (bounded by the scenario's end), unless the
    /// watchdog finds simulated time standing still.
    pub fn run_until(&mut self, until: Time) -> Result<(), Stalled> {
        if let Some(e) = &self.run.stalled {
            return Err(e.clone());
        }
        let limit = until.min(self.end);
        while let Some((t, ev)) = self.events.pop_until(limit) {
            self.now = t;
            self.run.events_processed += 1;
            if self.run.watchdog.stalled(t) {
                let e = self.stall_report(ev);
                self.run.stalled = Some(e.clone());
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
        let node = |n: u32| format!("{:?}", self.net.node_names[n as usize]);
        match ev {
            Event::HopWake { hop, .. } => self.net.hops[hop as usize].hop.describe(),
            Event::FlowStart { flow: f } | Event::FlowStop { flow: f } => format!("{} (start/stop)", flow(f)),
            Event::AppSend { flow: f } => format!("{} (its application's sends)", flow(f)),
            Event::AppRead { flow: f } => format!("{} (its receiver's reads)", flow(f)),
            Event::TcpTimer { flow: f, end } => format!("{} (TCP timer of the {end:?})", flow(f)),
            Event::NodeArrive { node: n, .. } => format!("arrivals at node {}", node(n)),
            Event::ProcessorTimer { processor } => {
                let a = &self.net.processors[processor as usize];
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
                let p = self.net.packets.take(pkt);
                self.deliver(p);
            }
        }
    }

    fn meter(&mut self, p: &Packet) -> &mut FlowMeter {
        let f = &mut self.flows[p.flow as usize];
        f.meters.direction(usize::from(p.dst != f.ends.dst))
    }

    // ------------------------------------------------------------------ host CPUs and the file loop

    // ------------------------------------------------------------------ TCP glue

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
