//! TCP: a sans-I/O endpoint ([`socket::TcpSocket`]) with NewReno congestion control
//! ([`newreno`]), RFC 6298 RTO estimation ([`rtt`]) and SACK ranges ([`ranges`]). The simulator
//! wraps each endpoint's segments into packets; the tests drive an endpoint directly with
//! explicit time.

pub mod bbr;
pub mod cc;
pub mod cubic;
pub mod delivery_rate;
pub mod newreno;
pub mod ranges;
pub mod rtt;
pub mod socket;
#[cfg(test)]
mod tests;

pub use cc::{CcKind, CongestionControl};
pub use socket::{Segment, State, TcpConfig, TcpSocket, TcpStats, TraceEvent, TraceSample};
