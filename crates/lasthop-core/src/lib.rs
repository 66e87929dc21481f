//! lasthop-core — the sans-I/O heart of lasthop, shared by the simulator, the emulator and the
//! traffic generator. Nothing here reads a clock, a socket or a file.
//!
//! Map of the crate:
//! - [`time`]    integer-nanosecond [`Time`] and [`Duration`]
//! - [`units`]   human units in scenario files (`"10ms"`, `"11Mbps"`, `"1500B"`, `"64KiB"`, `"100p"`)
//! - [`rng`]     named, portable random streams derived from one scenario seed (ChaCha8)
//! - [`schedule`] the event schedule both drivers use, ordered by (time, insertion sequence)
//! - [`packet`]  the packet and header model (IPv4 / TCP / UDP fields, wire sizes) + simulator metadata
//! - [`hop`]     the hop contract every link model follows (accept, poll, hop events), enum [`hop::Hop`]
//! - [`wired`]   one direction of a point-to-point link: qdisc, serializer, propagation, loss
//! - [`wifi`]    802.11: PHY timing, frame-error models, the DCF MAC, its hop adapter
//! - [`cellular`] W-CDMA: TTI error process, RLC acknowledged mode, its hop adapter
//! - [`mechanisms`] the papers' mechanisms behind the processor contract (SAP-LAW, Snoop, packet
//!   error generator), the receiver-side awnd formula, CoDel/FQ-CoDel queue disciplines
//! - [`wire`]    parse, emit and rewrite real IPv4/TCP/UDP bytes (etherparse; RFC 1624 incremental
//!   checksums): packets of every world in the one header model (pcap now, the emulator next)
//! - [`metrics`] one-way delay, IPDV, RFC 3550 jitter, loss by cause, throughput — defined once
//! - [`tcp`]     the sans-I/O TCP endpoint (SACK/RFC 6675, PRR, RTO, persist, delayed ACK, the
//!   Linux-named variants) and its congestion control: NewReno, CUBIC or BBR behind one enum
//! - [`traffic`] traffic sources as schedules of (time, size): CBR, on/off, VBR video; TCP transfers
//! - [`pcap`]    pcap files (raw IPv4, nanosecond timestamps) of modelled or real packets
//! - [`report`]  the typed run report (`summary.json`: flows, links, WLANs, RLC, mechanisms), its
//!   JSON Schema, and the column tables (intervals, TCP traces, delay CDF)

pub mod cellular;
pub mod hop;
pub mod link_trace;
pub mod mechanisms;
pub mod metrics;
pub mod packet;
pub mod pcap;
pub mod report;
pub mod rng;
pub mod schedule;
pub mod tcp;
pub mod time;
pub mod traffic;
pub mod units;
pub mod wifi;
pub mod wire;
pub mod wired;

pub use time::{Duration, Time};
pub use units::{BitRate, Bytes, QueueLimit};
