//! A WLAN behind the hop contract ([`crate::hop`]): its MAC — the [`Dcf`] of 802.11b/g, or the
//! [`Hcf`] (EDCA with A-MPDUs) of 802.11n/ac/ax — decides when the shared medium next changes
//! hands; this adapter asks for a wake at that instant and turns the MAC's outputs into hop
//! events. A decision that moves earlier (a frame reaching an idle station's head) supersedes the
//! pending one: the wake's token is a generation number and stale ones are ignored.
//!
//! On an [`Hcf`] a packet goes in the access category of its DSCP (Linux's mapping,
//! [`AccessCategory::of_dscp`]).

use super::dcf::{Dcf, Frame, MacOutput, QueueSamples, StationStats, WlanStats};
use super::edca::AccessCategory;
use super::hcf::{Hcf, Msdu};
use crate::hop::{HopEvent, Offer};
use crate::metrics::DropCause;
use crate::Time;

/// The MAC of a WLAN.
#[derive(Debug)]
pub enum WlanMac {
    Dcf(Dcf),
    Hcf(Hcf),
}

impl WlanMac {
    pub fn station_stats(&self, i: usize) -> &StationStats {
        match self {
            WlanMac::Dcf(d) => d.station_stats(i),
            WlanMac::Hcf(h) => h.station_stats(i),
        }
    }
    /// 802.11n/ac/ax: the rates each link used, when traced (None on 802.11b/g).
    pub fn rate_trace(&mut self) -> Option<&mut super::hcf::RateSamples> {
        match self {
            WlanMac::Dcf(_) => None,
            WlanMac::Hcf(h) => Some(&mut h.rates),
        }
    }
    /// An 802.11n/ac/ax member's aggregation and per-category counters (None on 802.11b/g).
    pub fn aggregation_stats(&self, i: usize, end: crate::Time) -> Option<super::hcf::AggregationStats> {
        match self {
            WlanMac::Dcf(_) => None,
            WlanMac::Hcf(h) => Some(h.aggregation_stats(i, end)),
        }
    }
    pub fn stats(&self) -> &WlanStats {
        match self {
            WlanMac::Dcf(d) => &d.stats,
            WlanMac::Hcf(h) => &h.wlan,
        }
    }
    /// Member `i`'s queue samples.
    pub fn queue_trace(&mut self, i: usize) -> &mut QueueSamples {
        match self {
            WlanMac::Dcf(d) => d.queue_trace(i),
            WlanMac::Hcf(h) => h.queue_trace(i),
        }
    }
    pub fn held_trace_samples(&self) -> usize {
        match self {
            WlanMac::Dcf(d) => d.held_trace_samples(),
            WlanMac::Hcf(h) => h.held_trace_samples(),
        }
    }
    /// Whether member 0 is an 802.11n/ac/ax access point (the 802.11b/g DCF keeps no roles).
    pub fn has_access_point(&self) -> bool {
        matches!(self, WlanMac::Hcf(h) if h.has_access_point())
    }
    pub fn is_fair(&self, i: usize) -> bool {
        match self {
            WlanMac::Dcf(d) => d.is_fair(i),
            WlanMac::Hcf(h) => h.is_fair(i),
        }
    }
    fn next_decision(&self) -> Option<Time> {
        match self {
            WlanMac::Dcf(d) => d.next_decision(),
            WlanMac::Hcf(h) => h.next_decision(),
        }
    }
    fn decide(&mut self, now: Time, out: &mut Vec<MacOutput>) {
        match self {
            WlanMac::Dcf(d) => d.decide(now, out),
            WlanMac::Hcf(h) => h.decide(now, out),
        }
    }
}

/// One WLAN: its MAC and its pending decision.
#[derive(Debug)]
pub struct WlanHop {
    pub name: String,
    pub mac: WlanMac,
    generation: u32,
    scheduled: Option<Time>,
    mac_out: Vec<MacOutput>,
    /// Whether [`HopEvent::Transmit`] is emitted ([`crate::hop::Hop::report_transmits`]).
    pub transmits: bool,
}

impl WlanHop {
    pub fn new(name: String, mac: WlanMac) -> Self {
        WlanHop { name, mac, generation: 0, scheduled: None, mac_out: Vec::new(), transmits: true }
    }

    /// Queues the frame at station `o.from`; only a frame that became its station's head can
    /// move the next transmission earlier.
    pub fn accept(&mut self, now: Time, o: Offer, out: &mut Vec<HopEvent>) {
        // Without Transmit events, the frame counts as already reported: the MAC then never
        // produces the output this adapter would discard.
        let transmitted = !self.transmits;
        match &mut self.mac {
            WlanMac::Dcf(dcf) => {
                let frame = Frame { pkt: o.pkt, uid: o.uid, ip_bytes: o.bytes, to: o.to, delivered: false, transmitted, flow: o.flow };
                if let Some(victim) = dcf.enqueue(now, o.from as usize, frame) {
                    out.push(HopEvent::Drop { pkt: victim.pkt, cause: DropCause::Queue });
                }
                if dcf.queue_len(o.from as usize) == 1 {
                    self.schedule(now, out);
                }
            }
            WlanMac::Hcf(hcf) => {
                let ac = AccessCategory::of_dscp(o.dscp);
                let msdu = Msdu { pkt: o.pkt, ip_bytes: o.bytes, to: o.to, ac, transmitted, queued_at: now, flow: o.flow, airtime_ns: 0 };
                if let Some(victim) = hcf.enqueue(now, o.from as usize, msdu) {
                    out.push(HopEvent::Drop { pkt: victim.pkt, cause: DropCause::Queue });
                }
                // A category that was idle may now go before the pending decision; an enqueue
                // moves no other category's time, so the pending decision (the earliest of
                // them, or none when every queue was empty) and this one's are all to compare.
                let t = hcf.category_fires_at(o.from as usize, ac);
                self.schedule_at(now, t, out);
            }
        }
    }

    /// The decision of generation `token` is due (unless superseded).
    pub fn poll(&mut self, now: Time, token: u64, out: &mut Vec<HopEvent>) {
        if token != self.generation as u64 {
            return;
        }
        self.scheduled = None;
        let mut mac = std::mem::take(&mut self.mac_out);
        self.mac.decide(now, &mut mac);
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
        let t = self.mac.next_decision();
        self.schedule_at(now, t, out);
    }

    /// Asks for a decision at `t` if it is earlier than the pending one.
    fn schedule_at(&mut self, now: Time, t: Option<Time>, out: &mut Vec<HopEvent>) {
        if let Some(t) = t {
            if self.scheduled.is_none_or(|s| t < s) {
                self.generation = self.generation.wrapping_add(1);
                self.scheduled = Some(t);
                out.push(HopEvent::Wake { at: t.max(now), token: self.generation as u64 });
            }
        }
    }
}
