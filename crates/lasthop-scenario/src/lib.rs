//! The scenario file format (TOML), declared once with serde: every field has its unit in its
//! type, its default as a named constant, and `deny_unknown_fields`. The JSON Schema published in
//! `schema/scenario.schema.json` is generated from these types ([`json_schema`]).
//!
//! Loading is three steps: parse TOML (syntax errors carry a line), apply `--set` overrides on
//! the document, deserialize and then validate cross-references (node names, reachability,
//! sizes against the MTU). Every error names the file, the field and what would be valid.
//!
//! Map of the crate:
//! - [`document`]   the top-level [`Scenario`] and [`Simulation`] settings, probes, loading, JSON Schema
//! - [`nodes`]      hosts, routers and slow-device models
//! - [`links`]      point-to-point links, AQMs, access presets
//! - [`wifi`]       WLANs: PHY, MAC, frame errors, SAP-LAW
//! - [`wcdma`]      W-CDMA dedicated channels with RLC AM
//! - [`flows`]      flows, applications, TCP parameters
//! - [`dists`]      D-ITG's traffic words: IDT and size laws, presets, traffic files
//! - [`flows_file`] a flows-only file (a generator replays a scenario's flows on a real network)
//! - [`input`]      files a user names, read as untrusted input (regular files only, size caps)
//! - [`mechanisms`] packet error generators and Snoop agents on interfaces
//! - [`topology`]   the graph: hops, routes, path MTUs
//! - [`limits`]     the valid range of every number (checked on load, published in the schema)
//! - [`overrides`]  `--set dotted.path=value`
//! - [`error`]      [`ScenarioError`]: the file, the field, what is valid
//! - [`defaults`]   named defaults
//! - [`bundled`]    scenarios compiled in (the default `dumbbell`)
//! - [`build`]      scenario sections -> core runtime structures (qdisc, DCF, RLC) and the whole
//!   network (hops, routes, processor chains), shared by the simulator and the emulator

pub mod build;
pub mod bundled;
pub mod defaults;
pub mod dists;
pub mod document;
pub mod error;
pub mod flows;
pub mod flows_file;
pub mod input;
pub mod limits;
pub mod links;
pub mod mechanisms;
pub mod nodes;
pub mod overrides;
pub mod topology;
pub mod wcdma;
pub mod wifi;

pub use defaults::*;
pub use dists::*;
pub use document::*;
pub use error::*;
pub use flows::*;
pub use flows_file::flows_from_toml_str;
pub use links::*;
pub use mechanisms::*;
pub use nodes::*;
pub use overrides::*;
pub use topology::*;
pub use wcdma::*;
pub use wifi::*;
