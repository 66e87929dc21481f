//! lasthop-sim — the *simulate* world: a deterministic packet-level discrete-event simulator.
//!
//! Map of the crate:
//! - [`scenario`] the TOML scenario schema (serde), overrides, validation, JSON Schema
//! - [`limits`]   the valid range of every number in a scenario (checked and published)
//! - [`engine`]   the event queue ordered by (time, insertion sequence) and the event enum
//! - [`net`]      packet arena and point-to-point channels (DropTail, serialization, loss)
//! - [`tcp`]      the sans-I/O TCP endpoint: NewReno, SACK/RFC 6675, RTO, persist, delayed ACK
//! - [`apps`]     a flow's `app` built once into core traffic sources and TCP transfers
//! - [`host`]     end hosts that take time (CPU, storage, timer) and the file loop on them
//! - [`sim`]      the simulation: builder, dispatch loop; `sim/output.rs` fills the report
//! - [`results`]  the run's output: the typed report (lasthop-core's `RunReport`) + column tables
//! - [`bundled`]  scenarios compiled in (the default `dumbbell`)

pub mod apps;
pub mod engine;
pub mod host;
pub mod net;
pub mod pcap;
pub mod results;
pub mod sim;
pub mod tcp;

pub use results::{Column, RunOutput, RunReport, Table};
pub use lasthop_scenario::{Scenario, ScenarioError};
pub use sim::{run_scenario, try_run_scenario, Simulation, Stalled};
