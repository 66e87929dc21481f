//! lasthop-gen — the *measure* world: a traffic generator and receiver over real sockets, in the
//! manner of D-ITG, that runs the core's traffic sources (`lasthop_core::traffic`) on real UDP
//! and TCP sockets and computes the core's metrics (`lasthop_core::metrics`) from what both ends
//! logged, so a measured run lands in the same results layout as a simulated one.
//!
//! Map of the crate:
//! - [`ditg`]  D-ITG 2.8.1 compatibility: its binary log records, ITGDec's summary and time
//!   series, and logs written in its format
//!
//! The generator and the receiver (signalling channel, paced senders, batched receivers,
//! per-packet logs streamed to disk) are added beside these.

pub mod ditg;
