//! The scenario's network in the emulator: the hops, routes and interface processors built by
//! `lasthop_scenario::build::network` — the very construction the simulator uses, so a hop in
//! the emulator draws its losses and backoffs from the stream of the same name — and which
//! nodes get a namespace.

use lasthop_scenario::{Scenario, Topology};

pub use lasthop_scenario::build::network::{Attached, Egress, HopSlot, Network};

/// The endpoint nodes, which get a namespace: every flow's ends, and every node with a single
/// neighbour (a host a user may want a shell on). Routers, access points and base stations in
/// the middle live inside the emulator.
pub fn endpoints(scenario: &Scenario) -> Vec<usize> {
    let topo = Topology::new(scenario);
    let mut ends: Vec<bool> = topo
        .adj
        .iter()
        .map(|a| {
            let mut peers: Vec<usize> = a.iter().map(|&(m, _)| m).collect();
            peers.dedup();
            peers.len() <= 1
        })
        .collect();
    // A modelled flow's ends live inside the emulator (hybrid runs: `model`).
    for f in scenario.flows.iter().filter(|f| f.world.is_real()) {
        for name in [f.src.get_ref(), f.dst.get_ref()] {
            ends[topo.index(name).expect("validated")] = true;
        }
    }
    (0..ends.len()).filter(|&i| ends[i]).collect()
}
