//! One flow in the run report: its identity, the metrics of its data direction (the meter's
//! [`FlowSummary`], flattened into the flow's object), a short summary of the reverse direction
//! (TCP's ACKs; empty for UDP) and, for TCP, the connection's end state.
//!
//! The metric definitions (RFC 7679 delay, RFC 3393 IPDV, RFC 3550 jitter, RFC 7680 loss by
//! cause) live in [`crate::metrics`]; this module only fixes how they are reported.

use crate::metrics::{FlowSummary, LossByCause, RoundTrip};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The transport protocol of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Udp,
}

/// One flow: identity, data-direction metrics, reverse direction and TCP state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowReport {
    /// The flow's name.
    pub name: String,
    /// Its transport protocol.
    pub transport: Transport,
    /// The sending node's name.
    pub src: String,
    /// The receiving node's name.
    pub dst: String,
    /// When the flow's application started, s.
    pub start_s: f64,
    /// When it stopped sending new data (its stop time, or the end of the run if earlier), s.
    pub stop_s: f64,
    /// The data direction src → dst (its keys sit in the flow's object itself).
    #[serde(flatten)]
    pub forward: FlowSummary,
    /// The reverse direction dst → src (TCP's ACKs; a UDP flow's echoes; else all zero).
    pub reverse: ReverseSummary,
    /// A UDP flow with `echo = true`: its round trips and the responsiveness they give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<RoundTrip>,
    /// TCP only: response time and the connection's end state (absent for UDP).
    #[serde(flatten)]
    pub connection: Option<TcpConnectionReport>,
}

impl FlowReport {
    /// The TCP connection's end state, for a TCP flow.
    pub fn tcp(&self) -> Option<&TcpReport> {
        self.connection.as_ref().map(|c| &c.tcp)
    }

    /// Seconds from the flow's start until its transfer completed; None for UDP or an
    /// unfinished transfer.
    pub fn response_time_s(&self) -> Option<f64> {
        self.connection.as_ref().and_then(|c| c.response_time_s)
    }
}

/// The reverse direction of a flow, from a light meter (no percentiles, no intervals).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReverseSummary {
    /// Packets sent dst → src, packets.
    pub sent_packets: u64,
    /// Of those, packets received whole, packets.
    pub received_packets: u64,
    /// Packets sent and not received (every cause in `lost_by_cause`), packets.
    pub lost_packets: u64,
    /// `lost_packets` split by cause.
    pub lost_by_cause: LossByCause,
    /// One-way delay of the reverse direction, ms.
    pub delay_ms: MeanMax,
}

impl From<&FlowSummary> for ReverseSummary {
    fn from(s: &FlowSummary) -> Self {
        ReverseSummary {
            sent_packets: s.sent_packets,
            received_packets: s.received_packets,
            lost_packets: s.lost_packets,
            lost_by_cause: s.lost_by_cause.clone(),
            delay_ms: MeanMax { mean: s.delay_ms.mean, max: s.delay_ms.max },
        }
    }
}

/// Mean and maximum of a quantity; null before the first sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeanMax {
    /// Mean, in the unit of the enclosing key.
    pub mean: Option<f64>,
    /// Maximum, in the unit of the enclosing key.
    pub max: Option<f64>,
}

/// What a TCP flow reports beyond the metrics (its keys sit in the flow's object itself).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpConnectionReport {
    /// Time from the flow's start until a finite transfer completed (its last byte read by the
    /// receiving application, or stored, for a host's file loop), s; null while unfinished or
    /// for endless transfers.
    pub response_time_s: Option<f64>,
    /// The connection's end state.
    pub tcp: TcpReport,
}

/// A TCP connection at the end of the run: sender counters and state, windows, application.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpReport {
    /// The sender's RFC 9293 state, as a CamelCase name ("Established", "TimeWait", ...).
    pub state: String,
    /// What the sender did.
    #[serde(flatten)]
    pub sender: TcpCounters,
    /// The sender's congestion window at the end, bytes.
    pub final_cwnd_bytes: u64,
    /// The sender's smoothed RTT (RFC 6298), ms; null before the first sample.
    pub srtt_ms: Option<f64>,
    /// The sender's retransmission timeout (RFC 6298), ms.
    pub rto_ms: f64,
    /// Windows the two ends advertised.
    #[serde(flatten)]
    pub windows: AdvertisedWindows,
    /// Bytes the receiving host's file loop wrote to storage, bytes; null without a file loop.
    pub bytes_stored: Option<u64>,
    /// Bytes the receiving application read, bytes.
    pub bytes_read: u64,
    /// The receiver's advertised-window cap (Koga et al.'s receiver-side awnd), bytes; null
    /// without one.
    pub receiver_awnd_cap_bytes: Option<u64>,
    /// BBR's model at the end; null for other congestion controls.
    pub bbr: Option<BbrReport>,
    /// The largest one-second RLC retransmission count the live receiver-side awnd controller
    /// observed on the W-CDMA link (0 before it first acts), retransmissions; null without one.
    pub receiver_awnd_max_retransmissions: Option<u32>,
    /// ECN (RFC 3168) when the flow asked for it (`tcp.ecn`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnReport>,
}

/// A TCP connection's ECN (RFC 3168): whether both ends agreed, what the receiver saw and
/// echoed, and how the sender reacted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EcnReport {
    /// Both ends asked for ECN in the handshake.
    pub negotiated: bool,
    /// Data segments that reached the receiver marked Congestion Experienced, segments.
    pub ce_received: u64,
    /// ACKs with ECE that reached the sender, segments.
    pub ece_received: u64,
    /// Times the sender reduced its window for ECE (at most once per window of data).
    pub cwnd_reductions: u64,
}

/// The TCP sender's counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpCounters {
    /// Segments sent (data, pure ACKs, SYN, FIN; retransmissions included), segments.
    pub segments_sent: u64,
    /// Data segments sent again, segments.
    pub retransmitted_segments: u64,
    /// Fast retransmits (RFC 5681 §3.2 / RFC 6675), events.
    pub fast_retransmits: u64,
    /// Retransmission timeouts (RFC 6298), events.
    pub timeouts: u64,
    /// Zero-window probes (RFC 9293 §3.8.6.1), segments.
    pub persist_probes: u64,
    /// RTT samples taken, samples.
    pub rtt_samples: u64,
}

/// Receive windows the ends of a connection advertised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdvertisedWindows {
    /// Zero windows the receiver advertised, advertisements.
    pub receiver_zero_windows: u64,
    /// The smallest non-zero window the receiver advertised once synchronized (paper 000's
    /// Table 4), bytes; null if none.
    pub receiver_min_open_window_bytes: Option<u64>,
    /// The same for the sender's end (windows on its ACK-carrying segments), bytes.
    pub sender_min_open_window_bytes: Option<u64>,
}

/// BBR's path model at the end of the run (draft-cardwell-iccrg-bbr).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BbrReport {
    /// Estimated bottleneck bandwidth (BtlBw) of delivered payload, bit/s.
    pub btl_bw_bps: f64,
    /// Estimated round-trip propagation time (RTprop), ms; null before the first sample.
    pub rtprop_ms: Option<f64>,
    /// The state machine's mode: "startup", "drain", "probe_bw" or "probe_rtt".
    pub mode: String,
}
