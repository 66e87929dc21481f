//! The hop contract: every link model — the wired [`Channel`], an 802.11 WLAN ([`WlanHop`]), one
//! direction of a W-CDMA dedicated channel ([`RlcHop`]) — is driven the same way, by the
//! simulator's event loop and by a real-time driver alike:
//!
//! - [`Hop::accept`] offers it a packet (an [`Offer`]: the driver's handle and the few header
//!   facts a link needs: size, traffic class, fair-queueing key, which members it goes between);
//! - the model answers with [`HopEvent`]s in the order they must take effect: a [`HopEvent::Wake`]
//!   asks the driver to call [`Hop::poll`] with its token at a time (a serializer finishing, a
//!   TTI boundary, a contention decision, a PDU batch arriving); deliveries after propagation
//!   ([`HopEvent::Arrive`]) or at once ([`HopEvent::Deliver`], the RLC receiver's in-order
//!   release); drops with their cause ([`HopEvent::Drop`]); and, for captures, when a packet
//!   first goes on the medium ([`HopEvent::Transmit`]), only while the driver asks for them
//!   ([`Hop::report_transmits`]; on by default) — a simulation without captures turns them off,
//!   so no packet pays for an event nobody reads.
//!
//! Wakes are requests, not cancellable timers: a model that moves a deadline earlier asks again
//! and ignores the superseded wake when it comes (the DCF's generation, the RLC's clocks). The
//! simulator turns each event into exactly one scheduled engine event, in this order, so runs
//! stay byte-identical to the hand-wired drivers that preceded this contract; a real-time driver
//! keeps the wakes in a timer heap. Packets are `u32` handles into the driver's own storage (the
//! simulator's arena, the emulator's buffers); the models never look inside a packet.
//! Dispatch is an enum and a `match`, never `dyn`: the hot path stays a jump table.

use crate::cellular::hop::RlcHop;
use crate::metrics::DropCause;
use crate::time::Time;
use crate::wifi::hop::WlanHop;
use crate::wired::Channel;

/// A packet handle: an index into the driver's packet storage.
pub type PacketRef = u32;

/// What a packet is, as far as a link's scheduling is concerned (W-CDMA layer-2 priority, Koga
/// et al.: TCP PDUs before UDP ones, or the reverse).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficClass {
    Tcp,
    Udp,
}

/// A packet offered to a hop.
#[derive(Clone, Copy, Debug)]
pub struct Offer {
    pub pkt: PacketRef,
    /// Its size on the wire (IP header included), what serialization and queue limits count.
    pub bytes: u32,
    pub class: TrafficClass,
    /// Its flow's fair-queueing key ([`crate::wired::flow_key`]); only read where
    /// [`Hop::is_fair`] says so.
    pub flow: u32,
    /// An identifier unique over the run (the MAC's frame identity, for duplicate detection).
    pub uid: u64,
    /// Its DSCP (0..=63): an 802.11n/ac/ax WLAN's access category
    /// ([`crate::wifi::edca::AccessCategory::of_dscp`]).
    pub dscp: u8,
    /// Member indexes of the sender and the receiver on this hop (0 → 1 for a channel).
    pub from: u16,
    pub to: u16,
    /// ECN-capable ([`crate::packet::ecn::capable`]): a queue with ECN marks it instead of
    /// dropping it ([`HopEvent::Mark`]).
    pub ect: bool,
}

/// What a hop asks of its driver, in the order it must happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopEvent {
    /// Call [`Hop::poll`] with `token` at `at`.
    Wake { at: Time, token: u64 },
    /// `pkt` goes on the medium from member `from` for the first time at `at` (≥ now): what a
    /// capture on the sender's interface records (a packet dropped in the queue never is).
    Transmit { pkt: PacketRef, from: u16, to: u16, at: Time },
    /// `pkt` reaches member `to` at `at` (serialization and propagation done).
    Arrive { pkt: PacketRef, from: u16, to: u16, at: Time },
    /// `pkt` reaches member `to` now.
    Deliver { pkt: PacketRef, from: u16, to: u16 },
    /// `pkt` leaves the network, lost for `cause`.
    Drop { pkt: PacketRef, cause: DropCause },
    /// A queue marked `pkt` Congestion Experienced (RFC 3168) instead of dropping it: the
    /// driver sets its ECN field to CE (the emulator rewrites the real packet's).
    Mark { pkt: PacketRef },
}

/// Every link model, behind one contract.
#[derive(Debug)]
pub enum Hop {
    Wired(Channel),
    Wlan(WlanHop),
    Rlc(RlcHop),
}

impl Hop {
    /// Offers a packet at `now`; what follows is appended to `out`.
    #[inline]
    pub fn accept(&mut self, now: Time, offer: Offer, out: &mut Vec<HopEvent>) {
        match self {
            Hop::Wired(c) => c.accept(now, offer, out),
            Hop::Wlan(w) => w.accept(now, offer, out),
            Hop::Rlc(r) => r.accept(now, offer, out),
        }
    }

    /// The wake with `token` is due at `now`.
    #[inline]
    pub fn poll(&mut self, now: Time, token: u64, out: &mut Vec<HopEvent>) {
        match self {
            Hop::Wired(c) => c.poll(now, token, out),
            Hop::Wlan(w) => w.poll(now, token, out),
            Hop::Rlc(r) => r.poll(now, token, out),
        }
    }

    /// Whether the hop emits [`HopEvent::Transmit`] (for captures); on when a model is built.
    pub fn report_transmits(&mut self, on: bool) {
        match self {
            Hop::Wired(c) => c.transmits = on,
            Hop::Wlan(w) => w.transmits = on,
            Hop::Rlc(r) => r.transmits = on,
        }
    }

    /// True when packets from member `from` are queued by flow, so [`Offer::flow`] matters.
    #[inline]
    pub fn is_fair(&self, from: u16) -> bool {
        match self {
            Hop::Wired(c) => c.qdisc.is_fair(),
            Hop::Wlan(w) => w.mac.is_fair(from as usize),
            Hop::Rlc(_) => false,
        }
    }

    /// The hop's name as the scenario gives it, and what kind of hop it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Hop::Wired(c) => format!("link {:?}", c.name),
            Hop::Wlan(w) => format!("WLAN {:?}", w.name),
            Hop::Rlc(r) => format!("W-CDMA RLC {:?}", r.name),
        }
    }
}
