//! The papers' mechanisms as sans-I/O packet processors: given `now` and a packet, each says
//! what to do with it; none reads a clock or a socket, so the simulator and the emulator run
//! the same code.
//!
//! - [`processor`]        the interface contract every processor follows
//! - [`sap_law`]          SAP-LAW's advertised-window cap at the AP (paper 001)
//! - [`snoop`]            the Snoop agent (paper 003)
//! - [`error_generator`]  the packet error generator (paper 003)
//! - [`receiver_awnd`]    the receiver-based advertised window over W-CDMA (paper 004)
//! - [`aqm`]              queue disciplines: DropTail, CoDel, FQ-CoDel, PIE (links use them too)
//! - [`pie`]              PIE (RFC 8033), one of them

pub mod aqm;
pub mod error_generator;
pub mod pie;
pub mod processor;
pub mod receiver_awnd;
pub mod sap_law;
pub mod snoop;
