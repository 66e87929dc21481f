//! The scenario's links, WLANs and W-CDMA channels as the core's [`Hop`] models, and the route
//! of every (node, destination) pair onto one of them: the same construction, random stream
//! names and hop order as the simulator's (`lasthop-sim/src/sim/build.rs`), so a hop in the
//! emulator draws its losses and backoffs from the stream of the same name.
//!
//! It is a mirror of the simulator's, not a shared function, because that one lives inside the
//! simulator's `Simulation` type; moving it to `lasthop-scenario::build` (world-neutral) would
//! let both worlds call it and is left for a refactor of the simulator.

use lasthop_core::cellular::hop::RlcHop;
use lasthop_core::hop::Hop;
use lasthop_core::rng::RngStreams;
use lasthop_core::wifi::hop::WlanHop;
use lasthop_core::wired::{Channel, QueueTrace};
use lasthop_core::QueueLimit;
use lasthop_scenario::build::{build_qdisc, cellular::build_rlc, wifi::build_dcf};
use lasthop_scenario::{Aqm, Edge, Scenario, Topology, WcdmaUplink};

/// A hop and the nodes of its members (0 → 1 for a channel; the WLAN's member order).
#[derive(Debug)]
pub struct HopSlot {
    pub hop: Hop,
    pub nodes: Vec<u32>,
}

/// Where a node sends a packet for a destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Egress {
    /// No route (the node itself, or unreachable).
    None,
    Hop { hop: u32, from: u16, to: u16 },
}

/// Every hop of the scenario and the routes over them.
#[derive(Debug)]
pub struct Network {
    pub hops: Vec<HopSlot>,
    /// `routes[node · n + dst]`.
    pub routes: Vec<Egress>,
    pub n_nodes: usize,
    pub node_names: Vec<String>,
}

impl Network {
    pub fn new(scenario: &Scenario) -> Network {
        let rng = RngStreams::new(scenario.simulation.seed);
        let topo = Topology::new(scenario);
        let n = topo.names.len();
        let node = |name: &str| topo.index(name).expect("validated") as u32;
        let mut hops = Vec::new();
        for l in &scenario.links {
            let name = l.display_name();
            // Hop 2·i is a -> b of link i, hop 2·i + 1 is b -> a (the routes rely on it).
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
            let dcf = build_dcf(w, &rng, scenario.probes.queues.contains(&w.name));
            let nodes = w.members().iter().map(|m| node(m)).collect();
            hops.push(HopSlot { hop: Hop::Wlan(WlanHop::new(w.name.clone(), dcf)), nodes });
        }
        let mut rlc_hop = vec![[None; 2]; scenario.wcdma.len()];
        for (ci, c) in scenario.wcdma.iter().enumerate() {
            for down in [true, false] {
                if !down && uplink_hop[ci].is_some() {
                    continue;
                }
                let (from, to, dir) = if down { (c.bs.get_ref(), c.ms.get_ref(), "down") } else { (c.ms.get_ref(), c.bs.get_ref(), "up") };
                rlc_hop[ci][usize::from(!down)] = Some(hops.len() as u32);
                let hop = Hop::Rlc(RlcHop::new(format!("{}:{dir}", c.name), build_rlc(c, down, &rng)));
                hops.push(HopSlot { hop, nodes: vec![node(from), node(to)] });
            }
        }
        let mut routes = vec![Egress::None; n * n];
        for dst in 0..n {
            for (from_node, hop) in topo.routes_to(dst).into_iter().enumerate() {
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
        Network { hops, routes, n_nodes: n, node_names: topo.names.clone() }
    }

    /// The egress of `node` towards `dst`.
    pub fn route(&self, node: u32, dst: u32) -> Egress {
        self.routes[node as usize * self.n_nodes + dst as usize]
    }

    /// The endpoint nodes, which get a namespace: every flow's ends, and every node with a
    /// single neighbour (a host a user may want a shell on). Routers, access points and base
    /// stations in the middle live inside the emulator.
    pub fn endpoints(scenario: &Scenario) -> Vec<usize> {
        let topo = Topology::new(scenario);
        let mut ends: Vec<bool> = topo.adj.iter().map(|a| {
            let mut peers: Vec<usize> = a.iter().map(|&(m, _)| m).collect();
            peers.dedup();
            peers.len() <= 1
        }).collect();
        for f in &scenario.flows {
            for name in [f.src.get_ref(), f.dst.get_ref()] {
                ends[topo.index(name).expect("validated")] = true;
            }
        }
        (0..ends.len()).filter(|&i| ends[i]).collect()
    }
}
