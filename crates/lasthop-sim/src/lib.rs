//! lasthop-sim — the *simulate* world: a deterministic packet-level discrete-event simulator.
pub mod tcp;
