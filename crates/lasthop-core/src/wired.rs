//! One direction of a point-to-point link (a [`Channel`]): a queue discipline (DropTail, CoDel,
//! FQ-CoDel), a serializer at the link rate, propagation delay and Bernoulli loss drawn when a
//! packet has been serialized. Queue limits count packets waiting, not the one being serialized
//! (as in ns-3's PointToPointNetDevice and Linux qdiscs). Driven through the hop contract
//! ([`crate::hop`]): one wake per serialization end (token 0). A trace-driven direction
//! ([`Channel::delivery`], Mahimahi's mm-link rule of [`crate::link_trace`]) sends in delivery
//! opportunities instead of at a rate: one wake per opportunity time while packets wait.
//!
//! Left out: link-layer framing overhead (the wire size is the IP packet), carrier jitter,
//! bit-error models (loss is per packet).

use crate::hop::{HopEvent, Offer, PacketRef};
use crate::link_trace::{Cursor, DeliveryTrace, OPPORTUNITY_BYTES};
use crate::mechanisms::aqm::{Qdisc, Queued};
use crate::metrics::DropCause;
use crate::packet::{Packet, Protocol};
use crate::report::{busy_share, Column, LinkReport, Table};
use crate::rng::{bernoulli, SimRng};
use crate::units::{BitRate, QueueLimit};
use crate::{Duration, Time};
use std::sync::Arc;

/// Queue occupancy samples, recorded at every change when the link is probed.
#[derive(Debug, Default, Clone)]
pub struct QueueTrace {
    pub time_ns: Vec<u64>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

/// One direction of a point-to-point link.
#[derive(Debug)]
pub struct Channel {
    pub name: String,
    pub rate: BitRate,
    pub delay: Duration,
    pub limit: QueueLimit,
    pub loss: f64,
    pub rng: SimRng,
    /// Packets waiting (DropTail, CoDel or FQ-CoDel).
    pub qdisc: Qdisc<PacketRef>,
    /// The packet being serialized.
    pub in_service: Option<PacketRef>,
    pub stats: ChannelStats,
    pub trace: Option<QueueTrace>,
    /// Reused for the AQM's drops at each dequeue (no allocation per packet).
    aqm_drops: Vec<Queued<PacketRef>>,
    /// Whether [`HopEvent::Transmit`] is emitted ([`crate::hop::Hop::report_transmits`]).
    pub transmits: bool,
    /// A trace-driven direction's delivery state ([`Channel::with_trace`]); `rate` is then unused.
    pub delivery: Option<TraceDelivery>,
}

/// A trace-driven direction's state: the next opportunity not used or gone, the packet part-way
/// through, the wake asked for.
#[derive(Debug)]
pub struct TraceDelivery {
    pub trace: Arc<DeliveryTrace>,
    next: Cursor,
    /// The packet part-way through the opportunities, and its bytes still to send.
    transit: Option<(PacketRef, u32)>,
    /// The token and time of the wake asked for (a wake with an older token is superseded).
    generation: u64,
    armed: Option<Time>,
    /// Bytes of the opportunities that carried packets.
    pub used_bytes: u64,
}

/// What a channel counts while it runs.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    pub max_queued_packets: u64,
    pub max_queued_bytes: u64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    pub aqm_drops: u64,
    /// Packets the AQM marked CE instead of dropping (an ECN queue).
    pub ecn_marks: u64,
    pub link_losses: u64,
    pub busy_ns: u64,
}

impl Channel {
    /// An idle channel holding at most `limit` in `qdisc`, losing each packet with probability
    /// `loss` drawn from `rng`. Set [`Channel::trace`] to record its queue occupancy.
    pub fn new(name: String, rate: BitRate, delay: Duration, limit: QueueLimit, qdisc: Qdisc<PacketRef>, loss: f64, rng: SimRng) -> Self {
        Channel {
            name,
            rate,
            delay,
            limit,
            loss,
            rng,
            qdisc,
            in_service: None,
            stats: ChannelStats::default(),
            trace: None,
            aqm_drops: Vec::new(),
            transmits: true,
            delivery: None,
        }
    }

    /// This channel sending in the delivery opportunities of `trace` instead of at its rate.
    pub fn with_trace(mut self, trace: Arc<DeliveryTrace>) -> Self {
        self.delivery = Some(TraceDelivery { trace, next: Cursor { pass: 0, index: 0 }, transit: None, generation: 0, armed: None, used_bytes: 0 });
        self
    }

    /// Serializes the packet at once if the line is idle, else queues it (a tail drop is
    /// reported as a queue drop).
    #[inline]
    pub fn accept(&mut self, now: Time, o: Offer, out: &mut Vec<HopEvent>) {
        if self.delivery.is_some() {
            return self.accept_traced(now, o, out);
        }
        if self.in_service.is_none() {
            self.in_service = Some(o.pkt);
            if self.transmits {
                out.push(HopEvent::Transmit { pkt: o.pkt, from: 0, to: 1, at: now });
            }
            out.push(HopEvent::Wake { at: now + self.start_service(o.bytes), token: 0 });
        } else if let Some(victim) = self.push(now, o.pkt, o.bytes, o.flow, o.ect) {
            out.push(HopEvent::Drop { pkt: victim, cause: DropCause::Queue });
        }
    }

    /// The packet in service is serialized: it is lost or propagates; the next one starts.
    #[inline]
    pub fn poll(&mut self, now: Time, token: u64, out: &mut Vec<HopEvent>) {
        if let Some(d) = self.delivery.as_mut() {
            if token == d.generation {
                d.armed = None;
                self.deliver_due(now, out);
                self.arm(out);
            }
            return;
        }
        let done = self.in_service.take().expect("a channel wakes only with a packet in service");
        self.stats.tx_packets += 1;
        let lost = self.loses();
        if lost {
            self.stats.link_losses += 1;
        }
        let mut aqm = std::mem::take(&mut self.aqm_drops);
        if let Some(next) = self.pop(now, &mut aqm) {
            self.in_service = Some(next.item);
            self.leaving(&next, now, out);
            out.push(HopEvent::Wake { at: now + self.start_service(next.bytes), token: 0 });
        }
        if !aqm.is_empty() {
            out.extend(aqm.drain(..).map(|d| HopEvent::Drop { pkt: d.item, cause: DropCause::Queue }));
        }
        self.aqm_drops = aqm;
        out.push(if lost {
            HopEvent::Drop { pkt: done, cause: DropCause::Link }
        } else {
            HopEvent::Arrive { pkt: done, from: 0, to: 1, at: now + self.delay }
        });
    }

    /// mm-link's `read_packet`: the opportunities up to now go first (burned when nothing
    /// waits), then the packet joins the queue.
    fn accept_traced(&mut self, now: Time, o: Offer, out: &mut Vec<HopEvent>) {
        let d = self.delivery.as_mut().expect("traced");
        if d.transit.is_none() && self.qdisc.is_empty() {
            d.next = d.next.max(d.trace.first_after(now));
        } else {
            self.deliver_due(now, out);
        }
        if let Some(victim) = self.push(now, o.pkt, o.bytes, o.flow, o.ect) {
            out.push(HopEvent::Drop { pkt: victim, cause: DropCause::Queue });
        }
        self.arm(out);
    }

    /// mm-link's `rationalize`: every opportunity due by `now`, in order, carries up to
    /// [`OPPORTUNITY_BYTES`] of the packet part-way through and then of the queue's next ones.
    fn deliver_due(&mut self, now: Time, out: &mut Vec<HopEvent>) {
        let mut d = self.delivery.take().expect("traced");
        let mut aqm = std::mem::take(&mut self.aqm_drops);
        while d.trace.time(d.next) <= now {
            let at = d.trace.time(d.next);
            d.next = d.trace.next(d.next);
            let mut room = OPPORTUNITY_BYTES;
            while room > 0 {
                let (pkt, left) = match d.transit.take() {
                    Some(t) => t,
                    None => match self.pop(at, &mut aqm) {
                        Some(q) => {
                            self.leaving(&q, at, out);
                            (q.item, q.bytes)
                        }
                        None => break,
                    },
                };
                let sent = room.min(left);
                room -= sent;
                d.used_bytes += sent as u64;
                if sent < left {
                    d.transit = Some((pkt, left - sent));
                } else {
                    self.sent(pkt, at, out);
                }
            }
        }
        out.extend(aqm.drain(..).map(|q| HopEvent::Drop { pkt: q.item, cause: DropCause::Queue }));
        self.aqm_drops = aqm;
        self.delivery = Some(d);
    }

    /// A wake at the next opportunity while packets wait, unless one is asked for already.
    fn arm(&mut self, out: &mut Vec<HopEvent>) {
        let waiting = !self.qdisc.is_empty();
        let d = self.delivery.as_mut().expect("traced");
        if d.transit.is_none() && !waiting {
            return;
        }
        let at = d.trace.time(d.next);
        if d.armed != Some(at) {
            d.generation += 1;
            d.armed = Some(at);
            out.push(HopEvent::Wake { at, token: d.generation });
        }
    }

    /// A traced packet's last byte left at `at`: lost, or on its way.
    fn sent(&mut self, pkt: PacketRef, at: Time, out: &mut Vec<HopEvent>) {
        self.stats.tx_packets += 1;
        if self.loses() {
            self.stats.link_losses += 1;
            out.push(HopEvent::Drop { pkt, cause: DropCause::Link });
        } else {
            out.push(HopEvent::Arrive { pkt, from: 0, to: 1, at: at + self.delay });
        }
    }

    fn start_service(&mut self, bytes: u32) -> Duration {
        let t = self.rate.tx_time(bytes as u64);
        self.stats.busy_ns += t.0;
        t
    }

    /// Queues packet `id`; returns a packet dropped to make room (the newcomer on a tail drop).
    pub fn push(&mut self, now: Time, id: PacketRef, bytes: u32, flow: u32, ect: bool) -> Option<PacketRef> {
        let early = self.qdisc.early_drops();
        let dropped = self.qdisc.enqueue(Queued { ect, ..Queued::new(id, bytes, flow, now) });
        if dropped.is_some() {
            // PIE's early drops are the AQM's; the rest are tail drops.
            if self.qdisc.early_drops() > early {
                self.stats.aqm_drops += 1;
            } else {
                self.stats.queue_drops += 1;
            }
        }
        self.stats.max_queued_packets = self.stats.max_queued_packets.max(self.qdisc.len() as u64);
        self.stats.max_queued_bytes = self.stats.max_queued_bytes.max(self.qdisc.bytes());
        self.record(now);
        dropped.map(|d| d.item)
    }

    /// The next packet to serialize; AQM drops are appended to `dropped`.
    pub fn pop(&mut self, now: Time, dropped: &mut Vec<Queued<PacketRef>>) -> Option<Queued<PacketRef>> {
        let before = dropped.len();
        let next = self.qdisc.dequeue(now, dropped);
        self.stats.aqm_drops += (dropped.len() - before) as u64;
        self.stats.ecn_marks += next.is_some_and(|q| q.ce) as u64;
        self.record(now);
        next
    }

    /// The events of a packet leaving the queue: its CE mark if the AQM set one, then (for
    /// captures) its transmission.
    fn leaving(&self, q: &Queued<PacketRef>, at: Time, out: &mut Vec<HopEvent>) {
        if q.ce {
            out.push(HopEvent::Mark { pkt: q.item });
        }
        if self.transmits {
            out.push(HopEvent::Transmit { pkt: q.item, from: 0, to: 1, at });
        }
    }

    /// Draws this channel's loss process for one packet.
    pub fn loses(&mut self) -> bool {
        bernoulli(&mut self.rng, self.loss)
    }

    pub fn record(&mut self, now: Time) {
        if let Some(t) = self.trace.as_mut() {
            t.time_ns.push(now.0);
            t.packets.push(self.qdisc.len() as u64);
            t.bytes.push(self.qdisc.bytes());
        }
    }
}

/// A flow key for fair queueing: the packet's addresses, ports and protocol, mixed without
/// allocating (it is computed only for fair-queueing disciplines).
impl Channel {
    /// This direction's report after a run of length `end`; its queue trace, if probed, goes to
    /// `tables` (the simulator and the emulator report a channel the same way).
    pub fn report(&mut self, end: Time, tables: &mut Vec<Table>) -> LinkReport {
        if let Some(tr) = self.trace.take() {
            tables.push(self.queue_table(tr));
        }
        LinkReport {
            name: self.name.clone(),
            tx_packets: self.stats.tx_packets,
            queue_drops: self.stats.queue_drops + self.stats.aqm_drops,
            aqm_drops: self.stats.aqm_drops,
            ecn_marks: self.qdisc.marks_ecn().then_some(self.stats.ecn_marks),
            link_losses: self.stats.link_losses,
            max_queue_packets: self.stats.max_queued_packets,
            max_queue_bytes: self.stats.max_queued_bytes,
            queue_limit: self.limit.to_string(),
            utilization: match &self.delivery {
                // The share of the opportunities' bytes that carried packets.
                Some(d) => d.used_bytes as f64 / (d.trace.opportunities_until(end) * OPPORTUNITY_BYTES as u64).max(1) as f64,
                None => busy_share(self.stats.busy_ns, end),
            },
        }
    }
}

impl Channel {
    /// The queue samples recorded since the last call as rows of its "queue/<name>" table,
    /// handed over while recording goes on (a long run streams them); None when not probed.
    pub fn drain_queue_trace(&mut self) -> Option<Table> {
        let tr = std::mem::take(self.trace.as_mut()?);
        Some(self.queue_table(tr))
    }

    /// Queue samples held in memory.
    pub fn held_trace_samples(&self) -> usize {
        self.trace.as_ref().map_or(0, |t| t.time_ns.len())
    }

    fn queue_table(&self, tr: QueueTrace) -> Table {
        let mut t = Table::new(format!("queue/{}", self.name));
        t.push("time_s", Column::F64(tr.time_ns.iter().map(|&n| n as f64 / 1e9).collect()));
        t.push("packets", Column::U64(tr.packets));
        t.push("bytes", Column::U64(tr.bytes));
        t
    }
}

pub fn flow_key(p: &Packet) -> u32 {
    let a = (p.src as u64) << 32 | p.dst as u64;
    let b = (p.sport as u64) << 16 | p.dport as u64 | ((p.proto == Protocol::Tcp) as u64) << 32;
    let mut h = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::TrafficClass;
    use crate::rng::RngStreams;

    fn offer(pkt: u32, bytes: u32) -> Offer {
        Offer { pkt, bytes, class: TrafficClass::Udp, flow: 0, uid: pkt as u64, dscp: 0, from: 0, to: 1, ect: false }
    }

    #[test]
    fn back_to_back_packets_are_serialized_then_propagate() {
        // 1250 B at 10 Mb/s take 1 ms to serialize (1250 · 8 / 10⁷ s); the link adds 5 ms.
        let rng = RngStreams::new(1).stream("test");
        let mut c = Channel::new("l".into(), BitRate(10_000_000), Duration::from_millis(5), QueueLimit::Packets(1), Qdisc::drop_tail(QueueLimit::Packets(1)), 0.0, rng);
        let mut out = Vec::new();
        let ms = |n: u64| Time(n * 1_000_000);
        c.accept(Time::ZERO, offer(7, 1250), &mut out);
        c.accept(Time::ZERO, offer(8, 1250), &mut out); // waits in the one-packet queue
        c.accept(Time::ZERO, offer(9, 1250), &mut out); // finds it full: tail drop
        let on_air = |pkt, t| HopEvent::Transmit { pkt, from: 0, to: 1, at: t };
        assert_eq!(out, vec![on_air(7, Time::ZERO), HopEvent::Wake { at: ms(1), token: 0 }, HopEvent::Drop { pkt: 9, cause: DropCause::Queue }]);
        out.clear();
        c.poll(ms(1), 0, &mut out);
        assert_eq!(out, vec![on_air(8, ms(1)), HopEvent::Wake { at: ms(2), token: 0 }, HopEvent::Arrive { pkt: 7, from: 0, to: 1, at: ms(6) }]);
        out.clear();
        c.poll(ms(2), 0, &mut out);
        assert_eq!(out, vec![HopEvent::Arrive { pkt: 8, from: 0, to: 1, at: ms(7) }], "no wake once the queue is empty");
        assert_eq!((c.stats.tx_packets, c.stats.queue_drops, c.stats.busy_ns), (2, 1, 2_000_000));
    }

    #[test]
    fn a_traced_direction_delivers_what_mm_link_would() {
        // The trace "2 2 10": opportunities of 1504 B at 2, 2, 10 | 12, 12, 20 | 22, 22, 30 ms.
        // Hand count of mm-link's rule (link_queue.cc `rationalize`), 5 ms of propagation after:
        // - A, B, C (1000 B) and D (3000 B) at 0 ms. The first opportunity at 2 ms carries A and
        //   504 B of B; the second the rest of B (496), C and 8 B of D: A, B, C arrive at 7 ms.
        // - 10 ms: 1504 B more of D; 12 ms: its last 1488 B (D arrives at 17 ms); the second
        //   opportunity at 12 ms finds nothing and is lost.
        // - E (1500 B) at 15 ms goes at 20 ms (arrives 25). F (100 B) at 22 ms finds both
        //   opportunities of 22 ms gone (mm-link burns those up to now first): it goes at 30.
        let trace = Arc::new(DeliveryTrace::parse("2\n2\n10\n").unwrap());
        let rng = RngStreams::new(1).stream("test");
        let limit = QueueLimit::Packets(10);
        let mut c = Channel::new("t".into(), BitRate(1), Duration::from_millis(5), limit, Qdisc::drop_tail(limit), 0.0, rng).with_trace(trace);
        c.transmits = false;
        let ms = |n: u64| Time(n * 1_000_000);
        let mut out = Vec::new();
        let mut arrivals = Vec::new();
        let mut wakes = Vec::new();
        let take = |out: &mut Vec<HopEvent>, arrivals: &mut Vec<(u32, u64)>, wakes: &mut Vec<(u64, u64)>| {
            for e in out.drain(..) {
                match e {
                    HopEvent::Arrive { pkt, at, .. } => arrivals.push((pkt, at.0 / 1_000_000)),
                    HopEvent::Wake { at, token } => wakes.push((at.0 / 1_000_000, token)),
                    other => panic!("{other:?}"),
                }
            }
        };
        for (pkt, bytes) in [(1, 1000), (2, 1000), (3, 1000), (4, 3000)] {
            c.accept(Time::ZERO, offer(pkt, bytes), &mut out);
        }
        take(&mut out, &mut arrivals, &mut wakes);
        for (t, token) in [(2, 1), (10, 2), (12, 3)] {
            c.poll(ms(t), token, &mut out);
            take(&mut out, &mut arrivals, &mut wakes);
        }
        c.accept(ms(15), offer(5, 1500), &mut out);
        take(&mut out, &mut arrivals, &mut wakes);
        c.poll(ms(20), 4, &mut out);
        c.poll(ms(20), 3, &mut out); // a superseded wake changes nothing
        c.accept(ms(22), offer(6, 100), &mut out);
        take(&mut out, &mut arrivals, &mut wakes);
        c.poll(ms(30), 5, &mut out);
        take(&mut out, &mut arrivals, &mut wakes);
        assert_eq!(arrivals, [(1, 7), (2, 7), (3, 7), (4, 17), (5, 25), (6, 35)]);
        assert_eq!(wakes, [(2, 1), (10, 2), (12, 3), (20, 4), (30, 5)], "one wake per opportunity time while packets wait");
        // 7600 B carried in the 9 opportunities of the first 30 ms (3 passes of 3).
        let report = c.report(ms(30), &mut Vec::new());
        assert_eq!(report.tx_packets, 6);
        assert!((report.utilization - 7600.0 / (9.0 * 1504.0)).abs() < 1e-12, "{}", report.utilization);
    }
}
