//! The papers' mechanisms in the run report: SAP-LAW at an access point (Palazzi et al. 2006),
//! Snoop agents (Balakrishnan et al. 1995) and packet error generators (Ng, Chow and Trajkovic),
//! each with its counters at the end of the run. The mechanisms themselves are in
//! [`crate::mechanisms`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SAP-LAW at one access point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SapLawReport {
    /// The access point's node name.
    pub node: String,
    /// ACKs whose advertised window the AP lowered, segments.
    pub windows_lowered: u64,
    /// The smoothed aggregate UDP rate crossing the AP at the end, bit/s.
    pub udp_rate_bps: f64,
    /// maxTCPrate = (C − UDPrate) / #TCPflows at the end, bit/s.
    pub max_tcp_rate_bps: f64,
}

/// One Snoop agent, on the interface of `node` towards `peer`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SnoopReport {
    /// The node the agent runs on.
    pub node: String,
    /// The node across the wireless hop.
    pub peer: String,
    /// Data segments cached, segments.
    pub cached: u64,
    /// Local retransmissions triggered by a duplicate ACK, segments.
    pub local_retransmissions: u64,
    /// Local retransmissions triggered by the agent's timer, segments.
    pub timer_retransmissions: u64,
    /// Duplicate ACKs the agent absorbed instead of forwarding, segments.
    pub dupacks_suppressed: u64,
    /// Connections forgotten after their FIN was acknowledged, connections.
    pub connections_closed: u64,
}

/// One direction of a packet error generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorGeneratorReport {
    /// Packets it dropped, packets.
    pub dropped: u64,
    /// TCP SYN and FIN segments it let through without a draw, packets.
    pub spared: u64,
}

/// The packet processors' sections of a run report, each in order of attachment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessorReports {
    pub sap_law: Vec<SapLawReport>,
    pub snoop: Vec<SnoopReport>,
    pub error_generators: Vec<ErrorGeneratorReport>,
}
