//! A scenario's network as the core's runtime parts, built once for every world: the hops
//! (wired channels, WLANs with their DCF, W-CDMA RLC directions), the route of every
//! (node, destination) pair onto one of them, and the packet processors (SAP-LAW, Snoop, the
//! packet error generator) with the chain of processors on each interface. The simulator drives
//! these from its event engine, the emulator from its real-time loop; both get the same hops,
//! the same random stream names (a hop draws its losses from `link/<name>/loss` in either
//! world) and the same hop order.
//!
//! Hop order: the links' channels (link i gives hop 2·i for a → b and 2·i + 1 for b → a), then
//! W-CDMA uplinks modelled as plain links, then the WLANs, then the W-CDMA RLC directions
//! (downlink, then the uplink unless it is a link). Processor order: SAP-LAW at every access
//! point that runs it, the Snoop agents, then the error generators (one per direction each acts
//! on) — paper 003's Fig. 3 order when they share an interface (SAP-LAW on top, the generator
//! at the bottom, so Snoop can repair the generator's drops).
//!
//! World-neutral: no event engine, no I/O, no clock; the queue disciplines (drop-tail, CoDel,
//! FQ-CoDel) live inside the hops. What a world adds — packet storage, event scheduling,
//! captures — stays in the world.

use super::{build_marking_qdisc, build_qdisc, cellular::build_rlc, wifi::build_wlan_mac};
use crate::{Aqm, Edge, GeneratorDirection, Scenario, Topology, WcdmaUplink};
use lasthop_core::cellular::hop::RlcHop;
use lasthop_core::hop::Hop;
use lasthop_core::mechanisms::aqm::Qdisc;
use lasthop_core::mechanisms::error_generator::PacketErrorGenerator;
use lasthop_core::mechanisms::pie::PieParams;
use lasthop_core::mechanisms::processor::Processor;
use lasthop_core::mechanisms::sap_law::{SapLaw, SapLawConfig};
use lasthop_core::mechanisms::snoop::{LocalTimer, SnoopAgent, SnoopConfig};
use lasthop_core::report::{
    busy_share, Column, ErrorGeneratorReport, HopReports, ProcessorReports, RlcReport, SapLawReport, SnoopReport, Table, WlanMemberReport,
    WlanReport,
};
use lasthop_core::rng::RngStreams;
use lasthop_core::wifi::hop::WlanHop;
use lasthop_core::wired::{Channel, QueueTrace};
use lasthop_core::{Duration, QueueLimit, Time};

/// A link model and the node behind each of its members (a channel's two ends, a WLAN's
/// stations in member order, an RLC direction's sender and receiver).
#[derive(Debug)]
pub struct HopSlot {
    pub hop: Hop,
    pub nodes: Vec<u32>,
}

/// Where a node sends a packet towards a destination: a hop and the member indexes of the
/// sender and the receiver on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Egress {
    /// No route (the node itself, or unreachable).
    None,
    Hop { hop: u32, from: u16, to: u16 },
}

/// A packet processor on the interface of `node` towards `peer` (every interface of the node
/// when `peer` is None), with the deadline a world has scheduled its timer for.
#[derive(Debug)]
pub struct Attached {
    pub node: u32,
    pub peer: Option<u32>,
    pub processor: Processor,
    pub scheduled: Option<Time>,
}

/// Every hop, route and processor of a scenario.
#[derive(Debug)]
pub struct Network {
    pub hops: Vec<HopSlot>,
    /// `routes[node · n + dst]`: where `node` sends packets for `dst`.
    pub routes: Vec<Egress>,
    /// `next_node[node · n + dst]`: the neighbour a packet for `dst` goes to (`u32::MAX`: none).
    pub next_node: Vec<u32>,
    /// The W-CDMA downlinks' RLC hops (their receiver is `hops[h].nodes[1]`).
    pub downlinks: Vec<usize>,
    pub processors: Vec<Attached>,
    /// `chains[node · n + peer]`: the processors on that interface, top-down; empty if the
    /// scenario has no processors at all (a hot path then skips them with one check).
    pub chains: Vec<Vec<u32>>,
    pub n_nodes: usize,
    pub node_names: Vec<String>,
}

impl Network {
    /// Builds the network of a validated scenario; random streams come from `rng` by name.
    pub fn new(scenario: &Scenario, rng: &RngStreams) -> Network {
        let topo = Topology::new(scenario);
        let n = topo.names.len();
        let node = |name: &str| topo.index(name).expect("validated") as u32;
        let mut hops = Vec::new();
        for l in &scenario.links {
            let name = l.display_name();
            // Hop 2·i is a -> b of link i, hop 2·i + 1 is b -> a (the routes rely on it).
            for (from, to, loss, rate, trace) in [
                (l.a.get_ref(), l.b.get_ref(), l.loss_a_to_b.unwrap_or(l.loss), l.rate_a_to_b(), &l.delivery[0]),
                (l.b.get_ref(), l.a.get_ref(), l.loss_b_to_a.unwrap_or(l.loss), l.rate_b_to_a(), &l.delivery[1]),
            ] {
                let cname = format!("{name}:{from}->{to}");
                let stream = rng.stream(&format!("link/{cname}/loss"));
                let qdisc = match l.aqm {
                    Aqm::Pie => {
                        let params = PieParams { mtu: l.mtu.0 as u32, ecn: l.ecn, ..PieParams::default() };
                        Qdisc::pie(l.queue(), params, rng.stream(&format!("link/{cname}/pie")))
                    }
                    aqm => build_marking_qdisc(aqm, l.queue(), l.mtu.0 as u32, l.ecn),
                };
                let mut c = Channel::new(cname, rate, l.delay(), l.queue(), qdisc, loss, stream);
                if let Some(t) = trace {
                    c = c.with_trace(t.clone());
                }
                c.trace = scenario.probes.queues.contains(&name).then(QueueTrace::default);
                hops.push(HopSlot { hop: Hop::Wired(c), nodes: vec![node(from), node(to)] });
            }
        }
        // A W-CDMA uplink modelled as a plain link is one more channel, after the links'.
        let mut uplink_hop = vec![None; scenario.wcdma.len()];
        for (ci, c) in scenario.wcdma.iter().enumerate() {
            if c.uplink == WcdmaUplink::Link {
                let cname = format!("{}:up", c.name);
                let limit = QueueLimit::Packets(c.buffer);
                let stream = rng.stream(&format!("link/{cname}/loss"));
                let qdisc = build_qdisc(Aqm::Droptail, limit, c.mtu.0 as u32);
                let chan = Channel::new(cname, c.uplink_rate.unwrap_or(c.rate), c.delay, limit, qdisc, 0.0, stream);
                uplink_hop[ci] = Some(hops.len() as u32);
                hops.push(HopSlot { hop: Hop::Wired(chan), nodes: vec![node(c.ms.get_ref()), node(c.bs.get_ref())] });
            }
        }
        let first_wlan = hops.len();
        for w in &scenario.wlans {
            let mac = build_wlan_mac(w, rng, scenario.probes.queues.contains(&w.name));
            let nodes = w.members().iter().map(|m| node(m)).collect();
            hops.push(HopSlot { hop: Hop::Wlan(WlanHop::new(w.name.clone(), mac)), nodes });
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
                let hop = Hop::Rlc(RlcHop::new(format!("{}:{dir}", c.name), build_rlc(c, down, rng)));
                hops.push(HopSlot { hop, nodes: vec![node(from), node(to)] });
            }
        }
        let mut routes = vec![Egress::None; n * n];
        let mut next_node = vec![u32::MAX; n * n];
        for dst in 0..n {
            for (from_node, hop) in topo.routes_to(dst).into_iter().enumerate() {
                if let Some((_, nx)) = hop {
                    next_node[from_node * n + dst] = nx as u32;
                }
                routes[from_node * n + dst] = match hop {
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
        let processors = attach_processors(scenario, &topo, rng);
        let chains = interface_chains(&processors, n);
        Network { hops, routes, next_node, downlinks, processors, chains, n_nodes: n, node_names: topo.names.clone() }
    }

    /// The egress of `node` towards `dst`.
    pub fn route(&self, node: u32, dst: u32) -> Egress {
        self.routes[node as usize * self.n_nodes + dst as usize]
    }

    /// The processors on the interface of `node` towards its neighbour `peer`, top-down.
    pub fn chain(&self, node: u32, peer: u32) -> &[u32] {
        if self.chains.is_empty() {
            return &[];
        }
        &self.chains[node as usize * self.n_nodes + peer as usize]
    }

    /// The SAP-LAW, Snoop and error generator entries of the run report.
    pub fn processor_reports(&self) -> ProcessorReports {
        processor_reports(&self.processors, &self.node_names)
    }
}

/// The hops' report after a run of length `end`; the queue traces of probed links, then those
/// of probed WLAN members, go to `tables` (in the hops' order, kind by kind).
/// Jain's index of the airtime of a WLAN's stations that had any (the AP, member 0 of an
/// infrastructure cell, left out).
fn station_airtime_fairness(members: &[WlanMemberReport], has_ap: bool) -> Option<f64> {
    let airtimes: Vec<f64> = members.iter().skip(has_ap as usize).filter_map(|m| m.aggregation.as_ref()).map(|a| a.station_airtime_s).filter(|&t| t > 0.0).collect();
    lasthop_core::metrics::jain_index(&airtimes)
}

pub fn hop_reports(hops: &mut [HopSlot], names: &[String], end: Time, tables: &mut Vec<Table>) -> HopReports {
    let mut r = HopReports::default();
    for slot in hops.iter_mut() {
        if let Hop::Wired(c) = &mut slot.hop {
            r.links.push(c.report(end, tables));
        }
    }
    for slot in hops.iter_mut() {
        let Hop::Wlan(w) = &mut slot.hop else { continue };
        let mut members = Vec::with_capacity(slot.nodes.len());
        for (i, &node) in slot.nodes.iter().enumerate() {
            let node = &names[node as usize];
            members.push(WlanMemberReport { node: node.clone(), mac: w.mac.station_stats(i).clone(), aggregation: w.mac.aggregation_stats(i, end) });
            if let Some((t, n)) = w.mac.queue_trace(i).take() {
                tables.push(wlan_queue_table(&w.name, node, t, n));
            }
        }
        if let Some(rates) = w.mac.rate_trace() {
            let rows = std::mem::take(&mut rates.rows);
            if !rows.is_empty() {
                let member = |i: u16| names[slot.nodes[i as usize] as usize].clone();
                tables.push(wlan_rate_table(&w.name, &rows, member));
            }
        }
        let st = w.mac.stats();
        r.wlans.push(WlanReport {
            name: w.name.clone(),
            exchanges: st.exchanges,
            successes: st.successes,
            collisions: st.collisions,
            busy_share: busy_share(st.busy_ns, end),
            airtime_fairness: station_airtime_fairness(&members, w.mac.has_access_point()),
            members,
        });
    }
    // Downlink then uplink per cell (an uplink modelled as a plain link is a link above).
    for slot in hops.iter() {
        let Hop::Rlc(st) = &slot.hop else { continue };
        let s = &st.rlc.stats;
        r.wcdma.push(RlcReport {
            name: st.name.clone(),
            sdus_in: s.sdus_in,
            buffer_drops: s.buffer_drops,
            sdus_discarded: s.discarded,
            sdus_out_of_order: s.out_of_order,
            sdus_delivered: s.delivered,
            ttis: s.ttis,
            ttis_lost: s.ttis_lost,
            pdus_sent: s.pdus_sent,
            pdus_retransmitted: s.pdus_retransmitted,
        });
    }
    r
}

/// The hops' queue samples recorded since the last call, as rows of their tables (links, then
/// WLAN members), handed over while recording goes on: a long run streams them. Tables with no
/// new rows are left out.
pub fn drain_hop_traces(hops: &mut [HopSlot], names: &[String]) -> Vec<Table> {
    let mut tables = Vec::new();
    for slot in hops.iter_mut() {
        if let Hop::Wired(c) = &mut slot.hop {
            tables.extend(c.drain_queue_trace().filter(|t| t.rows() > 0));
        }
    }
    for slot in hops.iter_mut() {
        let Hop::Wlan(w) = &mut slot.hop else { continue };
        for (i, &node) in slot.nodes.iter().enumerate() {
            if let Some((t, n)) = w.mac.queue_trace(i).drain().filter(|(t, _)| !t.is_empty()) {
                tables.push(wlan_queue_table(&w.name, &names[node as usize], t, n));
            }
        }
    }
    tables
}

/// Queue samples the hops hold in memory (what [`drain_hop_traces`] would hand over).
pub fn held_hop_trace_samples(hops: &[HopSlot]) -> usize {
    hops.iter()
        .map(|slot| match &slot.hop {
            Hop::Wired(c) => c.held_trace_samples(),
            Hop::Wlan(w) => w.mac.held_trace_samples(),
            Hop::Rlc(_) => 0,
        })
        .sum()
}

/// The table "wlan/<wlan>/<node>": a station's queue length in packets over time.
fn wlan_queue_table(wlan: &str, node: &str, time_ns: Vec<u64>, packets: Vec<u64>) -> Table {
    let mut t = Table::new(format!("wlan/{wlan}/{node}"));
    t.push("time_s", Column::F64(time_ns.iter().map(|&x| x as f64 / 1e9).collect()));
    t.push("packets", Column::U64(packets));
    t
}

/// `rates/<wlan>`: a row each time a link's TxVector changed (its first included).
fn wlan_rate_table(wlan: &str, rows: &[(Time, u16, u16, lasthop_core::wifi::ppdu::TxVector)], member: impl Fn(u16) -> String) -> Table {
    let mut t = Table::new(format!("rates/{wlan}"));
    t.push("time_s", Column::F64(rows.iter().map(|r| r.0 .0 as f64 / 1e9).collect()));
    t.push("from", Column::Str(rows.iter().map(|r| member(r.1)).collect()));
    t.push("to", Column::Str(rows.iter().map(|r| member(r.2)).collect()));
    t.push("mcs", Column::U64(rows.iter().map(|r| r.3.mcs as u64).collect()));
    t.push("streams", Column::U64(rows.iter().map(|r| r.3.streams as u64).collect()));
    t.push("width_mhz", Column::U64(rows.iter().map(|r| r.3.width as u64).collect()));
    t.push("guard_interval_ns", Column::U64(rows.iter().map(|r| r.3.guard_interval as u64).collect()));
    t.push("rate_mbps", Column::F64(rows.iter().map(|r| r.3.data_rate_bps() / 1e6).collect()));
    t
}

/// The run report's entries of the processors: SAP-LAW per access point, Snoop per agent, and
/// one error generator entry per direction a generator acts on, in order of attachment.
pub fn processor_reports(processors: &[Attached], names: &[String]) -> ProcessorReports {
    let (mut sap, mut snoop, mut gens) = (Vec::new(), Vec::new(), Vec::new());
    for a in processors {
        match &a.processor {
            Processor::SapLaw(s) => sap.push(SapLawReport {
                node: names[a.node as usize].clone(),
                windows_lowered: s.windows_lowered,
                udp_rate_bps: s.udp_rate_bps(),
                max_tcp_rate_bps: s.max_tcp_rate_bps(),
            }),
            Processor::Snoop(s) => snoop.push(SnoopReport {
                node: names[a.node as usize].clone(),
                peer: names[a.peer.expect("a Snoop agent sits on one interface") as usize].clone(),
                cached: s.stats.cached,
                local_retransmissions: s.stats.local_retransmissions,
                timer_retransmissions: s.stats.timer_retransmissions,
                dupacks_suppressed: s.stats.dupacks_suppressed,
                connections_closed: s.stats.connections_closed,
            }),
            Processor::ErrorGenerator(g) => gens.push(ErrorGeneratorReport { dropped: g.dropped, spared: g.spared }),
        }
    }
    ProcessorReports { sap_law: sap, snoop, error_generators: gens }
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
        for (from, to, applies) in [(a, b, g.direction != GeneratorDirection::In), (b, a, g.direction != GeneratorDirection::Out)] {
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
/// are no processors at all.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_routes_and_chains_in_the_documented_order() {
        // The bundled dumbbell: sender (0) -access- router (1) -bottleneck- receiver (2), plus a
        // Snoop agent and a two-way error generator on the router's bottleneck interface.
        let src = crate::bundled::bundled("dumbbell").unwrap().to_string()
            + "\n[[snoop]]\nnode = \"router\"\npeer = \"receiver\"\n[[error_generators]]\nnode = \"router\"\npeer = \"receiver\"\nrate = 0.1\n";
        let s = Scenario::from_toml_str(&src, "dumbbell+", &[]).unwrap();
        let net = Network::new(&s, &RngStreams::new(1));
        let names: Vec<String> = net.hops.iter().map(|h| h.hop.describe()).collect();
        assert_eq!(net.hops.len(), 4, "{names:?}");
        // Link i gives hop 2·i (a -> b) and 2·i + 1 (b -> a).
        assert_eq!(net.hops[2].nodes, vec![1, 2]);
        assert_eq!(net.hops[3].nodes, vec![2, 1]);
        assert_eq!(net.route(0, 2), Egress::Hop { hop: 0, from: 0, to: 1 });
        assert_eq!(net.route(1, 2), Egress::Hop { hop: 2, from: 0, to: 1 });
        assert_eq!(net.route(2, 0), Egress::Hop { hop: 3, from: 0, to: 1 });
        assert_eq!(net.route(1, 1), Egress::None);
        assert_eq!(net.next_node[2], 1, "sender -> receiver goes to the router");
        // Snoop, then the generator's router -> receiver direction, on that interface (top-down);
        // the generator's other direction sits on the receiver's interface towards the router.
        assert_eq!(net.chain(1, 2), &[0, 1]);
        assert_eq!(net.chain(2, 1), &[2]);
        assert!(net.chain(1, 0).is_empty() && net.chain(0, 1).is_empty());
        let r = net.processor_reports();
        assert_eq!((r.sap_law.len(), r.snoop.len(), r.error_generators.len()), (0, 1, 2));
    }
}
