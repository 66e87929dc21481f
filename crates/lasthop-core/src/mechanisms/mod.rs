//! The papers' mechanisms as sans-I/O packet processors: given `now` and a packet, each says
//! what to do with it; none reads a clock or a socket, so the simulator and (later) the
//! emulator run the same code.

pub mod aqm;
pub mod error_generator;
pub mod processor;
pub mod receiver_awnd;
pub mod sap_law;
pub mod snoop;
