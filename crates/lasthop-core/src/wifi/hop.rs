//! A WLAN behind the hop contract ([`crate::hop`]): the [`Dcf`] decides when the shared medium
//! next changes hands; this adapter asks for a wake at that instant and turns the MAC's outputs
//! into hop events. A decision that moves earlier (a frame reaching an idle station's head)
//! supersedes the pending one: the wake's token is a generation number and stale ones are ignored.

use super::dcf::{Dcf, Frame, MacOutput};
use crate::hop::{HopEvent, Offer};
use crate::metrics::DropCause;
use crate::Time;

/// One WLAN: its MAC and its pending decision.
#[derive(Debug)]
pub struct WlanHop {
    pub name: String,
    pub dcf: Dcf,
    generation: u32,
    scheduled: Option<Time>,
    mac_out: Vec<MacOutput>,
    /// Whether [`HopEvent::Transmit`] is emitted ([`crate::hop::Hop::report_transmits`]).
    pub transmits: bool,
}

impl WlanHop {
    pub fn new(name: String, dcf: Dcf) -> Self {
        WlanHop { name, dcf, generation: 0, scheduled: None, mac_out: Vec::new(), transmits: true }
    }

    /// Queues the frame at station `o.from`; only a frame that became its station's head can
    /// move the next transmission earlier.
    pub fn accept(&mut self, now: Time, o: Offer, out: &mut Vec<HopEvent>) {
        // Without Transmit events, the frame counts as already reported: the MAC then never
        // produces the output this adapter would discard.
        let transmitted = !self.transmits;
        let frame = Frame { pkt: o.pkt, uid: o.uid, ip_bytes: o.bytes, to: o.to, delivered: false, transmitted, flow: o.flow };
        if let Some(victim) = self.dcf.enqueue(now, o.from as usize, frame) {
            out.push(HopEvent::Drop { pkt: victim.pkt, cause: DropCause::Queue });
        }
        if self.dcf.queue_len(o.from as usize) == 1 {
            self.schedule(now, out);
        }
    }

    /// The decision of generation `token` is due (unless superseded).
    pub fn poll(&mut self, now: Time, token: u64, out: &mut Vec<HopEvent>) {
        if token != self.generation as u64 {
            return;
        }
        self.scheduled = None;
        let mut mac = std::mem::take(&mut self.mac_out);
        self.dcf.decide(now, &mut mac);
        for &o in &mac {
            out.push(match o {
                MacOutput::Deliver { pkt, from, to, at } => HopEvent::Arrive { pkt, from, to, at },
                MacOutput::Transmit { .. } if !self.transmits => continue,
                MacOutput::Transmit { pkt, from, to, at } => HopEvent::Transmit { pkt, from, to, at },
                MacOutput::RetryDrop { pkt } => HopEvent::Drop { pkt, cause: DropCause::RetryLimit },
                MacOutput::QueueDrop { pkt } => HopEvent::Drop { pkt, cause: DropCause::Queue },
            });
        }
        mac.clear();
        self.mac_out = mac;
        self.schedule(now, out);
    }

    /// Asks for the next decision if it is earlier than the pending one.
    fn schedule(&mut self, now: Time, out: &mut Vec<HopEvent>) {
        if let Some(t) = self.dcf.next_decision() {
            if self.scheduled.is_none_or(|s| t < s) {
                self.generation = self.generation.wrapping_add(1);
                self.scheduled = Some(t);
                out.push(HopEvent::Wake { at: t.max(now), token: self.generation as u64 });
            }
        }
    }
}
