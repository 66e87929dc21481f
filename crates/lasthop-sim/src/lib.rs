//! lasthop-sim — the *simulate* world: a deterministic packet-level discrete-event simulator.
//!
//! It composes the world-neutral parts of `lasthop-core` (link models behind the hop contract,
//! packet processors, TCP endpoints, traffic sources, metrics and the typed report), built from a
//! `lasthop-scenario` document, with what only a simulator has: an event engine and hosts whose
//! CPU takes time.
//!
//! Map of the crate:
//! - [`engine`]   the event queue ordered by (time, insertion sequence), the event enum, the watchdog
//! - [`sim`]      the simulation: `build` (scenario -> network), `network` (interfaces, hops,
//!   captures, drops), `flows` (applications and TCP endpoints), `hosts` (CPU, file loop),
//!   `output` (the report); a flow's `app` becomes core traffic in
//!   `lasthop_scenario::build::traffic`
//! - [`tcp`]      lasthop-core's TCP endpoints (re-exported: the simulator's flows run them)
//! - [`host`]     end hosts that take time (CPU, storage, timer) and the file loop on them
//! - [`net`]      the packet arena (hops hold handles into it)
//! - [`results`]  the run's output: the typed report (lasthop-core's `RunReport`) + column tables

pub mod engine;
pub mod host;
pub mod net;
pub mod results;
pub mod sim;
pub use lasthop_core::tcp;

pub use results::{Column, Drained, RunOutput, RunReport, Table};
pub use lasthop_scenario::{Scenario, ScenarioError};
pub use sim::{run_scenario, try_run_scenario, Simulation, Stalled};
