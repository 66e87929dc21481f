//! TCP endpoints of every world: sans-I/O sockets driven with explicit time (segments in,
//! segments out), which the simulator wraps into packets and the emulator runs for its modelled flows. Map:
//!
//! | module            | what it holds                                                            |
//! |-------------------|--------------------------------------------------------------------------|
//! | [`socket`]        | `TcpSocket`, connection states and segment dispatch (RFC 9293 §3.3, §3.10) |
//! | [`config`]        | `TcpConfig`: one endpoint's parameters                                   |
//! | [`sender`]        | writes, output, Nagle, sender SWS, limited transmit, pacing (RFC 9293 §3.8.6.2.1, RFC 3042) |
//! | [`receiver`]      | reassembly, delayed ACK, SACK blocks, advertised window (RFC 9293 §3.10.7.4, RFC 1122, RFC 2018 §4) |
//! | [`recovery`]      | ACK processing, fast retransmit/recovery, SACK recovery (RFC 5681 §3.2, RFC 6582, RFC 6675) |
//! | [`timers`]        | retransmission, persist, delayed-ACK and pacing timers; RTT timing (RFC 6298, RFC 9293 §3.8.6.1) |
//! | [`options`]       | MSS, window scale, SACK-permitted in the SYN exchange (RFC 7323 §2, RFC 2018 §2) |
//! | [`ecn`]           | ECN negotiation, ECT marking, ECE/CWR and the once-per-window reaction (RFC 3168 §6.1) |
//! | [`trace`]         | `TcpStats` counters and per-event `TraceSample`s                          |
//! | [`cc`]            | `CongestionControl` (one enum: NewReno, CUBIC, BBR), `CcKind`, the shared window rules |
//! | [`newreno`]       | RFC 5681 slow start and congestion avoidance, eq. 4                      |
//! | [`cubic`]         | RFC 9438 window growth and β = 0.7 decrease                               |
//! | [`bbr`]           | BBR v1 model (draft-cardwell-iccrg-bbr-congestion-control-00)            |
//! | [`delivery_rate`] | delivery-rate samples for BBR (draft-cheng-iccrg-delivery-rate-estimation) |
//! | [`rtt`]           | RFC 6298 SRTT/RTTVAR/RTO estimation                                      |
//! | [`ranges`]        | sorted sequence ranges: reassembly queue and SACK scoreboard             |
//!
//! `tests` drives endpoints segment by segment in the smoltcp style.

pub mod bbr;
pub mod cc;
pub mod config;
pub mod cubic;
pub mod delivery_rate;
pub mod ecn;
pub mod newreno;
pub mod options;
pub mod ranges;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod sender;
pub mod socket;
pub mod timers;
pub mod trace;
#[cfg(test)]
mod tests;

pub use cc::{CcKind, CongestionControl};
pub use config::TcpConfig;
pub use socket::{Segment, State, TcpSocket};
pub use trace::{TcpStats, TraceEvent, TraceSample};
