//! One direction of a W-CDMA dedicated channel behind the hop contract ([`crate::hop`]): the
//! [`RlcAm`] entity runs on a TTI clock while it has data, its TTI batches reach the receiver
//! after the channel delay, and the receiver releases SDUs in order or at its waiting deadline.
//! Three kinds of wake, told apart by the token: a TTI boundary ([`TTI`]), a receiver deadline
//! ([`RX_DEADLINE`]) and the arrival of TTI batch `n` ([`ARRIVAL`]` + n`).

use super::rlc::{Class, RlcAm, RlcOutput};
use crate::hop::{HopEvent, Offer, TrafficClass};
use crate::metrics::DropCause;
use crate::Time;

/// Wake token of a TTI boundary.
pub const TTI: u64 = 0;
/// Wake token of a receiver deadline (waiting timeout, discard notice).
pub const RX_DEADLINE: u64 = 1;
/// Wake token of the arrival of TTI batch `n` is `ARRIVAL + n`.
pub const ARRIVAL: u64 = 2;

/// An RLC entity (one direction) and its clocks.
#[derive(Debug)]
pub struct RlcHop {
    pub name: String,
    pub rlc: RlcAm,
    next_tick: Option<Time>,
    last_tick: Option<Time>,
    rx_wake: Option<Time>,
    rlc_out: Vec<RlcOutput>,
    /// Whether [`HopEvent::Transmit`] is emitted ([`crate::hop::Hop::report_transmits`]).
    pub transmits: bool,
}

impl RlcHop {
    pub fn new(name: String, rlc: RlcAm) -> Self {
        RlcHop { name, rlc, next_tick: None, last_tick: None, rx_wake: None, rlc_out: Vec::new(), transmits: true }
    }

    /// Buffers the SDU (a full buffer drops it) and starts the TTI clock.
    pub fn accept(&mut self, now: Time, o: Offer, out: &mut Vec<HopEvent>) {
        let class = match o.class {
            TrafficClass::Tcp => Class::Tcp,
            TrafficClass::Udp => Class::Udp,
        };
        if self.rlc.enqueue(o.pkt, o.bytes, class) {
            self.start_tti_clock(now, out);
        } else {
            out.push(HopEvent::Drop { pkt: o.pkt, cause: DropCause::Queue });
        }
    }

    pub fn poll(&mut self, now: Time, token: u64, out: &mut Vec<HopEvent>) {
        let mut rlc_out = std::mem::take(&mut self.rlc_out);
        let wake = match token {
            TTI => {
                self.next_tick = None;
                self.last_tick = Some(now);
                self.rlc.on_tti(now, &mut rlc_out);
                self.rlc.deliver_in_order(now, &mut rlc_out)
            }
            RX_DEADLINE => {
                if self.rx_wake.is_some_and(|w| w <= now) {
                    self.rx_wake = None;
                }
                self.rlc.deliver_in_order(now, &mut rlc_out)
            }
            batch => self.rlc.on_arrival(now, batch - ARRIVAL, &mut rlc_out),
        };
        self.emit(now, &mut rlc_out, out);
        self.rlc_out = rlc_out;
        self.schedule_rx(now, wake, out);
        if token == TTI && self.rlc.busy() {
            let t = now + self.rlc.cfg.tti;
            self.next_tick = Some(t);
            out.push(HopEvent::Wake { at: t, token: TTI });
        }
    }

    /// True for the wake of a TTI batch's arrival: the moment the receiver learns how many
    /// retransmissions the link needed (what Koga et al.'s receiver-side window follows).
    pub fn is_arrival(token: u64) -> bool {
        token >= ARRIVAL
    }

    /// Makes sure a TTI tick is pending: at the next TTI boundary not yet served.
    fn start_tti_clock(&mut self, now: Time, out: &mut Vec<HopEvent>) {
        if self.next_tick.is_some() {
            return;
        }
        let mut t = self.rlc.next_tti_at(now);
        if self.last_tick == Some(t) {
            t += self.rlc.cfg.tti;
        }
        self.next_tick = Some(t);
        out.push(HopEvent::Wake { at: t, token: TTI });
    }

    fn schedule_rx(&mut self, now: Time, wake: Option<Time>, out: &mut Vec<HopEvent>) {
        if let Some(w) = wake {
            if self.rx_wake.is_none_or(|p| w < p) {
                self.rx_wake = Some(w);
                out.push(HopEvent::Wake { at: w.max(now), token: RX_DEADLINE });
            }
        }
    }

    fn emit(&mut self, now: Time, rlc_out: &mut Vec<RlcOutput>, out: &mut Vec<HopEvent>) {
        for &o in rlc_out.iter() {
            out.push(match o {
                RlcOutput::Arrival { id, at } => HopEvent::Wake { at, token: ARRIVAL + id },
                RlcOutput::Deliver { pkt } => HopEvent::Deliver { pkt, from: 0, to: 1 },
                RlcOutput::Transmit { .. } if !self.transmits => continue,
                RlcOutput::Transmit { pkt } => HopEvent::Transmit { pkt, from: 0, to: 1, at: now },
                RlcOutput::Discarded { pkt } => HopEvent::Drop { pkt, cause: DropCause::RetryLimit },
                RlcOutput::OutOfOrder { pkt } => HopEvent::Drop { pkt, cause: DropCause::OutOfOrder },
            });
        }
        rlc_out.clear();
    }
}
