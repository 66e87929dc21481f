//! The typed run report: what one run produces, in any world (simulate, emulate, measure), as
//! serde types whose JSON is the core of `summary.json` — one definition instead of `json!`
//! calls and string keys scattered over the CLI, the reports, the reproductions and the tests.
//!
//! The JSON is a contract: key names, key order and number kinds (a counter is an integer, a
//! rate or a time a float, a missing value `null`) are what readers rely on, so the field order
//! of every struct here *is* the key order, and sections that keep a flat JSON object while
//! splitting a type by responsibility use `#[serde(flatten)]` (which keeps the order).
//! `schema/run.schema.json` is generated from these types by [`run_schema`]; a test keeps it
//! current. Units are in the key (`_s`, `_ms`, `_bps`, `_bytes`, `_packets`) and in every
//! field's doc comment, which becomes its description in the schema.
//!
//! World-neutral: the types hold plain numbers and names (a link's name is a `String`), never an
//! engine, scenario or simulator type; the simulator fills them from its meters, and the
//! emulator and the traffic generator will fill the same types.
//!
//! Left out: what the Python layer adds around it in `summary.json` — `lasthop_version`,
//! `scenario_name`, `scenario_file`, `overrides` and the `wall_clock` block (the schema allows
//! them: it does not forbid additional keys). The column tables (intervals, traces, packets)
//! are in [`tables`]: their format is Parquet, not JSON.
//!
//! Map: [`flow`] per-flow metrics (both directions, TCP state), [`hops`] links, WLANs and
//! W-CDMA RLC entities, [`mechanisms`] SAP-LAW, Snoop and the packet error generators,
//! [`tables`] the column tables and their builders.

pub mod flow;
pub mod hops;
pub mod mechanisms;
pub mod tables;

pub use flow::{AdvertisedWindows, BbrReport, EcnReport, FlowReport, MeanMax, ReverseSummary, TcpConnectionReport, TcpCounters, TcpReport, Transport};
pub use hops::{busy_share, HopReports, LinkReport, RlcReport, WlanMemberReport, WlanReport};
pub use mechanisms::{ErrorGeneratorReport, ProcessorReports, SapLawReport, SnoopReport};
pub use tables::{delay_cdf_table, round_trip_table, tcp_trace_table, Column, IntervalColumns, Table, TcpTraceRow};

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything one run reports (the core of `summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    /// What was run, with which seed, and how the run ended.
    #[serde(flatten)]
    pub header: RunHeader,
    /// One entry per flow, in the scenario's order.
    pub flows: Vec<FlowReport>,
    /// One entry per direction of every point-to-point link (and of a W-CDMA uplink modelled as
    /// a plain link), named `<link>:<from>-><to>`.
    pub links: Vec<LinkReport>,
    /// One entry per 802.11 WLAN.
    pub wlans: Vec<WlanReport>,
    /// One entry per W-CDMA RLC entity (downlink, and uplink when it runs RLC).
    pub wcdma: Vec<RlcReport>,
    /// One entry per access point running SAP-LAW.
    pub sap_law: Vec<SapLawReport>,
    /// One entry per Snoop agent.
    pub snoop: Vec<SnoopReport>,
    /// One entry per direction a packet error generator acts on: for each generator in the
    /// order declared, node → peer, then peer → node (as far as its direction applies).
    pub error_generators: Vec<ErrorGeneratorReport>,
    /// One entry per end host that takes time (a device model other than instant).
    pub hosts: Vec<HostReport>,
}

impl RunReport {
    /// A run's report from its parts: what every world assembles the same way (the header and
    /// the flows as the world metered them, the hops' and the processors' sections, the hosts).
    pub fn assemble(header: RunHeader, flows: Vec<FlowReport>, hops: HopReports, processors: ProcessorReports, hosts: Vec<HostReport>) -> RunReport {
        RunReport {
            header,
            flows,
            links: hops.links,
            wlans: hops.wlans,
            wcdma: hops.wcdma,
            sap_law: processors.sap_law,
            snoop: processors.snoop,
            error_generators: processors.error_generators,
            hosts,
        }
    }
}

/// The run's identity and end state: the header fields of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunHeader {
    /// The resolved configuration the run used, every default filled in; for the simulator the
    /// scenario (schema/scenario.schema.json).
    #[schemars(schema_with = "configuration_schema")]
    pub scenario: serde_json::Value,
    /// The seed every random stream of the run derives from.
    pub seed: u64,
    /// Time covered by the run, s.
    pub simulated_s: f64,
    /// Events the simulator's engine dispatched, events.
    pub events_processed: u64,
    /// Packets still inside the network when the run ended (queued, in service or propagating),
    /// packets; equals the sum of every flow direction's `in_flight_at_end`.
    pub packets_in_network_at_end: u64,
}

/// End-host CPU use, for hosts whose work takes time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostReport {
    /// The node's name.
    pub node: String,
    /// Time the host's CPU spent on packets and applications, s.
    pub cpu_busy_s: f64,
    /// `cpu_busy_s` over the simulated time, a fraction in [0, 1].
    pub cpu_utilization: f64,
}

impl RunReport {
    /// The report as `summary.json` text (compact, keys in their fixed order).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a run report serializes")
    }

    /// The flow named `name`.
    pub fn flow(&self, name: &str) -> Option<&FlowReport> {
        self.flows.iter().find(|f| f.name == name)
    }

    /// The link direction named `name` (`<link>:<from>-><to>`).
    pub fn link(&self, name: &str) -> Option<&LinkReport> {
        self.links.iter().find(|l| l.name == name)
    }

    /// The host report of node `node`.
    pub fn host(&self, node: &str) -> Option<&HostReport> {
        self.hosts.iter().find(|h| h.node == node)
    }
}

/// The resolved configuration is a JSON object whose schema belongs to its world (the
/// simulator's is published as schema/scenario.schema.json).
fn configuration_schema(_: &mut SchemaGenerator) -> Schema {
    SchemaObject { instance_type: Some(InstanceType::Object.into()), ..Default::default() }.into()
}

/// The JSON Schema of the run report (`schema/run.schema.json`), pretty-printed, with a final
/// newline. `cargo run -p lasthop-core --example run_schema > schema/run.schema.json` writes it.
pub fn run_schema() -> String {
    let schema = schemars::schema_for!(RunReport);
    serde_json::to_string_pretty(&schema).expect("the schema serializes") + "\n"
}

#[cfg(test)]
mod tests;
