//! The graph a scenario describes: nodes, hops between them (link directions, WLAN member
//! pairs, W-CDMA directions), shortest routes and path MTUs.

use crate::*;

/// One hop out of a node: one direction of a link, or a frame from one WLAN member to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    Link { link: usize, a_to_b: bool },
    /// `from` and `to` are member indexes in [`Wlan::members`] order.
    Wlan { wlan: usize, from: usize, to: usize },
    /// A W-CDMA channel, downlink (base station -> mobile) or uplink.
    Cell { cell: usize, down: bool },
}

impl Edge {
    fn reversed(self) -> Edge {
        match self {
            Edge::Link { link, a_to_b } => Edge::Link { link, a_to_b: !a_to_b },
            Edge::Wlan { wlan, from, to } => Edge::Wlan { wlan, from: to, to: from },
            Edge::Cell { cell, down } => Edge::Cell { cell, down: !down },
        }
    }
}

/// Node adjacency, used for validation (reachability, path MTU) and by the builder for routes.
pub struct Topology {
    pub names: Vec<String>,
    /// For each node: (neighbour, edge from this node to it), links first, in file order.
    pub adj: Vec<Vec<(usize, Edge)>>,
    link_mtus: Vec<u64>,
    wlan_mtus: Vec<u64>,
    cell_mtus: Vec<u64>,
}

impl Topology {
    pub fn new(s: &Scenario) -> Self {
        let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
        let idx = |n: &str| names.iter().position(|x| x == n);
        let mut adj = vec![Vec::new(); names.len()];
        let mut add = |a: usize, b: usize, e: Edge| {
            // (a self-loop is reported by validation)
            if a != b {
                adj[a].push((b, e));
                adj[b].push((a, e.reversed()));
            }
        };
        for (li, l) in s.links.iter().enumerate() {
            if let (Some(a), Some(b)) = (idx(l.a.get_ref()), idx(l.b.get_ref())) {
                add(a, b, Edge::Link { link: li, a_to_b: true });
            }
        }
        for (wi, w) in s.wlans.iter().enumerate() {
            let members: Vec<Option<usize>> = w.members().iter().map(|m| idx(m)).collect();
            for i in 0..members.len() {
                // Infrastructure: every station talks to the AP (member 0); ad hoc: to everyone.
                let peers = if w.ap.is_some() { if i == 0 { 0..0 } else { 0..1 } } else { 0..i };
                for j in peers {
                    if let (Some(a), Some(b)) = (members[i], members[j]) {
                        add(a, b, Edge::Wlan { wlan: wi, from: i, to: j });
                    }
                }
            }
        }
        for (ci, c) in s.wcdma.iter().enumerate() {
            if let (Some(bs), Some(ms)) = (idx(c.bs.get_ref()), idx(c.ms.get_ref())) {
                add(bs, ms, Edge::Cell { cell: ci, down: true });
            }
        }
        Topology {
            names,
            adj,
            link_mtus: s.links.iter().map(|l| l.mtu.0).collect(),
            wlan_mtus: s.wlans.iter().map(|w| w.mtu.0).collect(),
            cell_mtus: s.wcdma.iter().map(|c| c.mtu.0).collect(),
        }
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|x| x == name)
    }

    /// Breadth-first shortest-hop next steps towards `dst`: `next[n] = (edge out of n, next node)`.
    /// Ties go to the edge listed first, so routes are deterministic.
    pub fn routes_to(&self, dst: usize) -> Vec<Option<(Edge, usize)>> {
        let mut next = vec![None; self.names.len()];
        let mut seen = vec![false; self.names.len()];
        seen[dst] = true;
        let mut frontier = std::collections::VecDeque::from([dst]);
        while let Some(n) = frontier.pop_front() {
            for &(m, e) in &self.adj[n] {
                if !seen[m] {
                    seen[m] = true;
                    next[m] = Some((e.reversed(), n));
                    frontier.push_back(m);
                }
            }
        }
        next
    }

    /// Smallest MTU along the route, or None if `dst` is unreachable.
    pub fn path_mtu(&self, src: &str, dst: &str) -> Option<u64> {
        let (s, d) = (self.index(src)?, self.index(dst)?);
        let routes = self.routes_to(d);
        let mut n = s;
        let mut mtu = u64::MAX;
        while n != d {
            let (edge, next) = routes[n]?;
            mtu = mtu.min(match edge {
                Edge::Link { link, .. } => self.link_mtus[link],
                Edge::Wlan { wlan, .. } => self.wlan_mtus[wlan],
                Edge::Cell { cell, .. } => self.cell_mtus[cell],
            });
            n = next;
        }
        Some(mtu)
    }
}
