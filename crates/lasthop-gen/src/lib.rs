//! lasthop-gen — the *measure* world: a traffic generator and receiver over real sockets, in the
//! manner of D-ITG, that runs the core's traffic sources (`lasthop_core::traffic`) on real UDP
//! and TCP sockets and computes the core's metrics (`lasthop_core::metrics`) from what both ends
//! logged, so a measured run lands in the same results layout as a simulated one.
//!
//! Map of the crate:
//! - [`plan`]     what to send: a flows file (the scenario's `[[flows]]`) or D-ITG-like flags,
//!   turned into core schedules by the scenario's own conversion
//! - [`header`]   the versioned 40-byte header of every datagram and TCP message
//! - [`control`]  the signalling channel (JSON lines): session, clock probes, setup, stop, done
//! - [`clock`]    monotonic and realtime clocks, absolute sleeps, the NTP-style offset estimate
//! - [`pacer`]    absolute-deadline pacing (sleep, then a short spin; lateness repaid)
//! - [`mmsg`]     `sendmmsg`/`recvmmsg` batches, UDP GSO/GRO, `SO_TIMESTAMPNS`
//! - [`sockopt`]  the flow's `tcp` settings on a Linux TCP socket, checked against the kernel
//! - [`records`]  fixed 32-byte per-packet records streamed to disk
//! - [`send`]     the sender: UDP flows merged by due time, a thread per TCP flow, echoes
//! - [`recv`]     the receiver daemon: sessions, batched UDP, TCP readers, signals
//! - [`results`]  both ends' records → the core's meters → `RunReport` and tables
//! - [`account`]  the one records → meters → report path of `results` and the D-ITG import
//! - [`workdir`]  the `lh-<pid>-<kind>-*` working directories, and removing those of dead processes
//! - [`ditg`]     D-ITG 2.8.1 compatibility: its binary log records, ITGDec's summary and time
//!   series, and logs written in its format
//!
//! Linux only (clock_nanosleep, sendmmsg/recvmmsg, TCP_INFO, SO_RCVBUFFORCE).

pub mod account;
pub mod clock;
pub mod control;
pub mod ditg;
pub mod header;
pub mod mmsg;
pub mod pacer;
pub mod plan;
pub mod records;
pub mod recv;
pub mod results;
pub mod send;
pub mod sockopt;
pub mod workdir;
