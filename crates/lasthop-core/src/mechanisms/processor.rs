//! The interface contract every packet processor follows — SAP-LAW (paper 001), Snoop (paper
//! 003) and the packet error generator (paper 003) — so the simulator's nodes and the emulator's
//! TUN bridge run them the same way:
//!
//! - [`Processor::egress`] sees a packet leaving through the interface it sits on; it may modify
//!   it (SAP-LAW lowers an ACK's window), keep a copy (Snoop caches data), or drop it with a
//!   cause (the error generator);
//! - [`Processor::ingress`] sees a packet arriving from the peer; it may absorb it (Snoop
//!   suppresses a duplicate ACK) and emit packets of its own (Snoop's local retransmissions);
//! - [`Processor::next_deadline`] / [`Processor::on_timer`]: a processor with timers names its
//!   next deadline; the driver calls `on_timer` then (Snoop's local retransmission timer).
//!
//! Processors on one interface form a chain, top (nearest the node's IP layer) first: a
//! packet leaving runs it top-down, one arriving bottom-up, and what a processor emits enters
//! the chain just below it — paper 003's Fig. 3, where Snoop above the error generator can repair
//! the generator's drops. No processor reads a clock: `now` is an argument.
//!
//! Receiver-side advertised-window control (paper 004, [`super::receiver_awnd`]) is not an
//! interface processor in the simulator: there, as in the paper, the receiver's TCP advertises
//! the window. AQMs (CoDel, FQ-CoDel, [`super::aqm`]) are queue disciplines inside the hops.

use super::error_generator::{PacketErrorGenerator, Verdict as GeneratorVerdict};
use super::sap_law::SapLaw;
use super::snoop::SnoopAgent;
use crate::metrics::DropCause;
use crate::packet::Packet;
use crate::time::Time;

/// What happens to a packet a processor saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It goes on (possibly modified).
    Pass,
    /// It goes no further, lost for `cause`.
    Drop(DropCause),
}

/// Every packet processor, behind one contract. (A run has a handful; boxing the generator's
/// random stream would add a pointer chase per packet for nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Processor {
    SapLaw(SapLaw),
    Snoop(SnoopAgent),
    ErrorGenerator(PacketErrorGenerator),
}

impl Processor {
    /// A packet leaves through this interface.
    pub fn egress(&mut self, now: Time, p: &mut Packet) -> Verdict {
        match self {
            Processor::SapLaw(s) => {
                s.process(now, p);
                Verdict::Pass
            }
            Processor::Snoop(s) => {
                s.outgoing(now, p);
                Verdict::Pass
            }
            Processor::ErrorGenerator(g) => match g.process(p) {
                GeneratorVerdict::Forward => Verdict::Pass,
                GeneratorVerdict::Drop => Verdict::Drop(DropCause::Link),
            },
        }
    }

    /// A packet arrives from the peer; packets the processor sends towards the peer in reply
    /// are appended to `emit`.
    pub fn ingress(&mut self, now: Time, p: &mut Packet, emit: &mut Vec<Packet>) -> Verdict {
        match self {
            Processor::Snoop(s) => match s.incoming(now, p, emit) {
                GeneratorVerdict::Drop => Verdict::Drop(DropCause::Suppressed),
                GeneratorVerdict::Forward => Verdict::Pass,
            },
            // SAP-LAW acts on what the AP sends; the generator sits on the sending side of a hop.
            Processor::SapLaw(_) | Processor::ErrorGenerator(_) => Verdict::Pass,
        }
    }

    /// When [`Self::on_timer`] is next due, if ever. SAP-LAW's periods need no wake: it rolls
    /// them forward on the next packet.
    pub fn next_deadline(&self) -> Option<Time> {
        match self {
            Processor::Snoop(s) => s.next_deadline(),
            Processor::SapLaw(_) | Processor::ErrorGenerator(_) => None,
        }
    }

    /// The deadline has come; packets to send towards the peer are appended to `emit`.
    pub fn on_timer(&mut self, now: Time, emit: &mut Vec<Packet>) {
        if let Processor::Snoop(s) = self {
            s.on_timer(now, emit);
        }
    }

    /// What the processor is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Processor::SapLaw(_) => "SAP-LAW",
            Processor::Snoop(_) => "Snoop agent",
            Processor::ErrorGenerator(_) => "packet error generator",
        }
    }
}
