//! One direction of a W-CDMA dedicated channel with RLC acknowledged mode (3GPP TS 25.322),
//! as the Koga et al. paper (shared/papers/004) models it:
//!
//! - SDUs (IP packets) wait in the base-station buffer, counted in SDUs (an SDU is never stored
//!   in part), while any of their PDUs waits to be sent: the paper's buffer is a transmission
//!   buffer of new PDUs and a retransmission buffer of the PDUs "that should be retransmitted
//!   due to transmission errors" (Sect. 3.1). PDUs sent and awaiting their status occupy no
//!   place; a NACKed PDU brings its SDU back (a retransmission is never refused for space).
//! - Segmentation into PDUs of `pdu_payload` bytes (40 B + 2 B header); one length-indicator
//!   byte marks the end of each SDU, so an SDU of L bytes needs ceil((L + 1) / 40) PDUs
//!   (1500 B -> 38, 260 B -> 7). No concatenation: the last PDU of an SDU is padded.
//! - Every TTI (20 ms) up to rate·TTI / (8·pdu_payload) PDUs are sent (384 kb/s -> 24), NACKed
//!   PDUs before new ones. A TTI is received whole or lost whole (the channel's error unit).
//! - Selective-repeat ARQ: the sender learns the fate of a TTI from the receiver's STATUS one
//!   RLC round trip after sending it (TTI + link delay down, then `status_delay` back: a TTI +
//!   link delay on an RLC uplink, the link delay alone on a plain one as in the paper's eq. 1;
//!   STATUS PDUs are error-free, as the paper assumes). A lost PDU is sent again unless it has already been
//!   retransmitted `max_retx` times for its traffic class; then its SDU is discarded and the
//!   receiver is told (move-receiving-window) one way later.
//! - In-order delivery at the receiver: a complete SDU waits for the SDUs before it; once it
//!   has waited longer than the waiting timeout WT the gap is given up, and an SDU of that gap completing later is dropped
//!   ("dropped for order", application loss).
//!
//! The entity is sans-I/O: methods take `now` and return what to deliver or drop and when to be
//! called next.

use super::channel::TtiErrors;
use crate::{Duration, Time};
use std::collections::VecDeque;

/// Traffic class of an SDU, for retransmission limits and priority scheduling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Tcp = 0,
    Udp = 1,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RlcConfig {
    pub rate_bps: u64,
    pub tti: Duration,
    /// One-way delay after a TTI ends until its PDUs are at the receiver (propagation and
    /// processing; the paper: 30 ms).
    pub delay: Duration,
    /// From a TTI's arrival at the receiver until its STATUS is at the sender.
    pub status_delay: Duration,
    pub pdu_payload: u32,
    /// Base-station buffer in SDUs: those with a PDU waiting to be sent or resent.
    pub buffer_sdus: usize,
    /// Most retransmissions of one PDU (0 = none) per class.
    pub max_retx_tcp: u32,
    pub max_retx_udp: u32,
    /// None = retransmit without limit (and never discard).
    pub unlimited: bool,
    pub waiting_timeout: Duration,
    /// Koga et al.'s layer-2 priority scheduling (their Table 1): at the sender UDP
    /// retransmissions, UDP transmissions, TCP retransmissions, TCP transmissions in strict
    /// priority; at the receiver one in-order (reordering) buffer per class.
    pub priority: bool,
    /// What happens to an SDU that completes after its successors went up (WT expired): dropped
    /// ("dropped for order", the default) or passed up late, out of order.
    pub deliver_late: bool,
}

impl RlcConfig {
    pub fn pdus_per_tti(&self) -> usize {
        ((self.rate_bps as u128 * self.tti.0 as u128 / 1_000_000_000) / (8 * self.pdu_payload as u128)) as usize
    }
    /// PDUs for an SDU of `bytes`: the payload plus one length-indicator byte.
    pub fn pdus_for(&self, bytes: u32) -> u32 {
        (bytes + 1).div_ceil(self.pdu_payload)
    }
    /// Time from a TTI's start until the sender knows its fate (the RLC round trip).
    pub fn feedback_delay(&self) -> Duration {
        self.tti + self.delay + self.status_delay
    }
    fn lane(&self, c: Class) -> usize {
        if self.priority { c as usize } else { 0 }
    }

    fn max_retx(&self, c: Class) -> u32 {
        match c {
            Class::Tcp => self.max_retx_tcp,
            Class::Udp => self.max_retx_udp,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SduState {
    /// At the sender, some PDU not yet acknowledged.
    Pending,
    /// Every PDU acknowledged.
    Acked,
    /// Given up by the sender after the retransmission limit.
    Discarded,
}

#[derive(Clone, Copy, Debug)]
struct Sdu {
    pkt: u32,
    class: Class,
    n_pdus: u32,
    first_sn: u64,
    acked: u32,
    received: u32,
    state: SduState,
    /// When the receiver learns of a discard (MRW), if discarded.
    discard_known_at: Time,
    completed_at: Option<Time>,
    /// The receiver passed it up or skipped it.
    done_at_rx: bool,
    /// The receiver gave up waiting for it (its successors went up before it).
    skipped: bool,
    /// Its PDUs waiting in the transmission or retransmission queue; the SDU occupies a buffer
    /// place while this is above zero.
    queued: u32,
}

#[derive(Clone, Copy, Debug)]
struct Pdu {
    sdu: u64,
    tx_count: u32,
    acked: bool,
    received: bool,
}

#[derive(Clone, Copy, Debug)]
struct Tti {
    id: u64,
    feedback_at: Time,
    lost: bool,
    /// Range of this TTI's PDU sequence numbers in the sent-SN log (`AwaitingStatus`).
    start: usize,
    len: usize,
}

/// Results of an RLC step for the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlcOutput {
    /// Pass the packet up at the receiver now.
    Deliver { pkt: u32 },
    /// The SDU was discarded after the retransmission limit (transport loss).
    Discarded { pkt: u32 },
    /// The SDU completed after the receiver had given up on it (application loss).
    OutOfOrder { pkt: u32 },
    /// The TTI `id` reaches the receiver at `at`.
    Arrival { id: u64, at: Time },
    /// The first PDU of the SDU carrying `pkt` goes on the air now.
    Transmit { pkt: u32 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RlcStats {
    pub sdus_in: u64,
    pub buffer_drops: u64,
    pub discarded: u64,
    pub out_of_order: u64,
    pub delivered: u64,
    pub ttis: u64,
    pub ttis_lost: u64,
    pub pdus_sent: u64,
    pub pdus_retransmitted: u64,
}

/// The SDUs and PDUs still tracked, by sequence number. One record serves both ends of the
/// link (the sender's acknowledgements and queueing, the receiver's reassembly), which share
/// this entity; a record is forgotten once both ends are finished with it.
#[derive(Debug, Default)]
struct SduStore {
    /// SDUs by sequence number, from `sdu_base`.
    sdus: VecDeque<Sdu>,
    sdu_base: u64,
    /// PDUs by sequence number, from `pdu_base`.
    pdus: VecDeque<Pdu>,
    pdu_base: u64,
}

impl SduStore {
    fn sdu(&self, seq: u64) -> &Sdu {
        &self.sdus[(seq - self.sdu_base) as usize]
    }
    fn sdu_mut(&mut self, seq: u64) -> &mut Sdu {
        &mut self.sdus[(seq - self.sdu_base) as usize]
    }
    fn pdu(&self, sn: u64) -> &Pdu {
        &self.pdus[(sn - self.pdu_base) as usize]
    }
    fn pdu_mut(&mut self, sn: u64) -> &mut Pdu {
        &mut self.pdus[(sn - self.pdu_base) as usize]
    }
    /// The sequence number one past the newest SDU.
    fn sdu_end(&self) -> u64 {
        self.sdu_base + self.sdus.len() as u64
    }
    /// Is the PDU still tracked (not yet forgotten by `compact`)?
    fn tracks_pdu(&self, sn: u64) -> bool {
        sn >= self.pdu_base
    }

    /// PDUs of discarded or acknowledged SDUs are not sent.
    fn sendable(&self, sn: u64) -> bool {
        if !self.tracks_pdu(sn) {
            return false;
        }
        let p = self.pdu(sn);
        !p.acked && self.sdu(p.sdu).state == SduState::Pending
    }

    /// Forgets SDUs and PDUs that both ends are finished with.
    fn compact(&mut self) {
        while let Some(s) = self.sdus.front() {
            let sender_done = s.state != SduState::Pending;
            if !(sender_done && (s.done_at_rx || s.skipped)) {
                break;
            }
            let n = s.n_pdus as u64;
            let first = s.first_sn;
            self.sdus.pop_front();
            self.sdu_base += 1;
            debug_assert_eq!(first, self.pdu_base);
            for _ in 0..n {
                self.pdus.pop_front();
            }
            self.pdu_base += n;
        }
    }
}

/// The sender's buffers (the AM entity model of TS 25.322 Sect. 4.2.1.3; Koga et al. Sect.
/// 3.1): the transmission buffer of PDUs never sent and the retransmission buffer of NACKed
/// ones, and how many SDUs they hold against `buffer_sdus`.
#[derive(Debug, Default)]
struct TxBuffers {
    /// PDUs never sent, per class (TCP = 0, UDP = 1).
    new_pdus: [VecDeque<u64>; 2],
    /// PDUs to retransmit, per lane (one lane, or one per class with priority).
    retx: [VecDeque<u64>; 2],
    /// SDUs occupying the base-station buffer, i.e. with `queued` above zero (one buffer, or one
    /// per class with priority scheduling: the paper gives each class the same size).
    occupancy: [usize; 2],
}

impl TxBuffers {
    fn is_empty(&self) -> bool {
        self.retx.iter().chain(self.new_pdus.iter()).all(|q| q.is_empty())
    }
}

/// TTIs sent whose STATUS has not yet reached the sender (the sender's side of the RLC round
/// trip), and the log of the PDU sequence numbers each carried.
#[derive(Debug, Default)]
struct AwaitingStatus {
    ttis: VecDeque<Tti>,
    /// PDU sequence numbers in the order sent, from log position `sent_base`.
    sent_sns: VecDeque<u64>,
    sent_base: usize,
    next_tti_id: u64,
}

impl AwaitingStatus {
    /// The log position of the next PDU sent.
    fn log_end(&self) -> usize {
        self.sent_base + self.sent_sns.len()
    }
    /// The PDU sent at log position `at`.
    fn sent_sn(&self, at: usize) -> u64 {
        self.sent_sns[at - self.sent_base]
    }
    /// Records a TTI carrying the PDUs at log positions `start..start + len`; returns its id.
    fn push(&mut self, feedback_at: Time, lost: bool, start: usize, len: usize) -> u64 {
        let id = self.next_tti_id;
        self.next_tti_id += 1;
        self.ttis.push_back(Tti { id, feedback_at, lost, start, len });
        id
    }
    /// The oldest TTI whose STATUS is at the sender by `now`, taken out.
    fn pop_due(&mut self, now: Time) -> Option<Tti> {
        if self.ttis.front().is_some_and(|t| t.feedback_at <= now) { self.ttis.pop_front() } else { None }
    }
    /// The sent-SN log is consumed in TTI order: forgets positions before `to`.
    fn forget_log_to(&mut self, to: usize) {
        while self.sent_base < to {
            self.sent_sns.pop_front();
            self.sent_base += 1;
        }
    }
}

/// The receiver's state: the next SDU each in-order lane passes up (the role of TS 25.322's
/// VR(R), Sect. 9.4, counted in SDUs rather than PDUs) and what it observed of recent
/// retransmissions.
#[derive(Debug, Default)]
struct Receiver {
    /// Next SDU each receiver lane expects (one lane, or one per class with priority).
    next: [u64; 2],
    /// Per TTI received, the most retransmissions any of its PDUs needed, for interlayer use.
    recent_retx: VecDeque<RetxObservation>,
}

#[derive(Clone, Copy, Debug)]
struct RetxObservation {
    arrived: Time,
    most: u32,
}

/// The radio channel as the sender meets it: the TTI error process and the last TTI used.
#[derive(Debug)]
struct Radio {
    errors: TtiErrors,
    last_tti_index: Option<u64>,
}

impl Radio {
    /// A TTI goes on the air at TTI `index`; is it lost? The channel moves on by the TTIs since
    /// the last transmission, idle ones included.
    fn transmit(&mut self, index: u64) -> bool {
        let gap = self.last_tti_index.map(|l| index.saturating_sub(l)).unwrap_or(1);
        self.last_tti_index = Some(index);
        self.errors.advance(gap)
    }
}

/// One RLC AM direction: the sender's buffers and outstanding TTIs, the receiver's reassembly,
/// and the SDU and PDU records both share.
#[derive(Debug)]
pub struct RlcAm {
    pub cfg: RlcConfig,
    radio: Radio,
    store: SduStore,
    tx: TxBuffers,
    awaiting: AwaitingStatus,
    rx: Receiver,
    pub stats: RlcStats,
}

impl RlcAm {
    pub fn new(cfg: RlcConfig, errors: TtiErrors) -> Self {
        RlcAm {
            cfg,
            radio: Radio { errors, last_tti_index: None },
            store: SduStore::default(),
            tx: TxBuffers::default(),
            awaiting: AwaitingStatus::default(),
            rx: Receiver::default(),
            stats: RlcStats::default(),
        }
    }

    /// The most retransmissions any PDU received in the last `window` needed (layer-2
    /// information a receiver-side mechanism may use).
    pub fn observed_retransmissions(&mut self, now: Time, window: Duration) -> u32 {
        let recent = &mut self.rx.recent_retx;
        while recent.front().is_some_and(|o| now.since(o.arrived) > window) {
            recent.pop_front();
        }
        recent.iter().map(|o| o.most).max().unwrap_or(0)
    }

    /// SDUs in the base-station buffer.
    pub fn occupancy(&self) -> usize {
        self.tx.occupancy[0] + self.tx.occupancy[1]
    }

    /// Packet ids still held (for the conservation census): not yet passed up nor dropped.
    pub fn held_packets(&self) -> usize {
        self.store.sdus.iter().filter(|s| !s.done_at_rx && s.state != SduState::Discarded).count()
    }

    /// Accepts an SDU into the buffer; false if the buffer is full (the caller drops it).
    pub fn enqueue(&mut self, pkt: u32, bytes: u32, class: Class) -> bool {
        let lane = self.cfg.lane(class);
        if self.tx.occupancy[lane] >= self.cfg.buffer_sdus {
            self.stats.buffer_drops += 1;
            return false;
        }
        self.stats.sdus_in += 1;
        self.tx.occupancy[lane] += 1;
        let seq = self.store.sdu_end();
        let n = self.cfg.pdus_for(bytes);
        let first_sn = self.store.pdu_base + self.store.pdus.len() as u64;
        for k in 0..n {
            self.store.pdus.push_back(Pdu { sdu: seq, tx_count: 0, acked: false, received: false });
            self.tx.new_pdus[class as usize].push_back(first_sn + k as u64);
        }
        self.store.sdus.push_back(Sdu {
            pkt,
            class,
            n_pdus: n,
            first_sn,
            acked: 0,
            received: 0,
            state: SduState::Pending,
            discard_known_at: Time::MAX,
            completed_at: None,
            done_at_rx: false,
            skipped: false,
            queued: n,
        });
        true
    }

    /// The next TTI boundary at or after `now`.
    pub fn next_tti_at(&self, now: Time) -> Time {
        let t = self.cfg.tti.0;
        Time(now.0.div_ceil(t) * t)
    }

    /// Is there anything for the TTI clock to do (data to send or feedback to await)?
    pub fn busy(&self) -> bool {
        !self.tx.is_empty() || !self.awaiting.ttis.is_empty()
    }

    /// Runs the TTI that starts at `now` (a TTI boundary): takes feedback, sends PDUs.
    pub fn on_tti(&mut self, now: Time, out: &mut Vec<RlcOutput>) {
        self.take_feedback(now, out);
        let cap = self.cfg.pdus_per_tti();
        let start = self.awaiting.log_end();
        let mut len = 0;
        while len < cap {
            let Some(sn) = self.next_pdu_to_send() else { break };
            let tx_count = self.store.pdu(sn).tx_count;
            if tx_count > 0 {
                self.stats.pdus_retransmitted += 1;
            }
            let seq = self.store.pdu(sn).sdu;
            self.unqueue(seq);
            if tx_count == 0 && sn == self.store.sdu(seq).first_sn {
                out.push(RlcOutput::Transmit { pkt: self.store.sdu(seq).pkt });
            }
            self.store.pdu_mut(sn).tx_count += 1;
            self.awaiting.sent_sns.push_back(sn);
            len += 1;
        }
        if len == 0 {
            return;
        }
        let lost = self.radio.transmit(now.0 / self.cfg.tti.0);
        self.stats.ttis += 1;
        self.stats.pdus_sent += len as u64;
        if lost {
            self.stats.ttis_lost += 1;
        }
        let id = self.awaiting.push(now + self.cfg.feedback_delay(), lost, start, len);
        if !lost {
            out.push(RlcOutput::Arrival { id, at: now + self.cfg.tti + self.cfg.delay });
        }
    }

    /// A PDU of SDU `seq` left the queues for the air; the SDU frees its buffer place with its
    /// last queued PDU.
    fn unqueue(&mut self, seq: u64) {
        let s = self.store.sdu_mut(seq);
        s.queued -= 1;
        if s.queued == 0 {
            self.tx.occupancy[self.cfg.lane(s.class)] -= 1;
        }
    }

    fn pop_sendable(&mut self, q: usize, retx: bool) -> Option<u64> {
        let queue = if retx { &mut self.tx.retx[q] } else { &mut self.tx.new_pdus[q] };
        loop {
            let sn = queue.pop_front()?;
            if self.store.sendable(sn) {
                return Some(sn);
            }
        }
    }

    /// The next PDU: retransmissions before new PDUs; with priority scheduling UDP before TCP
    /// (Koga et al. Table 1), otherwise new PDUs in arrival order.
    fn next_pdu_to_send(&mut self) -> Option<u64> {
        if self.cfg.priority {
            for q in [Class::Udp as usize, Class::Tcp as usize] {
                if let Some(sn) = self.pop_sendable(q, true).or_else(|| self.pop_sendable(q, false)) {
                    return Some(sn);
                }
            }
            return None;
        }
        if let Some(sn) = self.pop_sendable(0, true) {
            return Some(sn);
        }
        let new = &mut self.tx.new_pdus;
        loop {
            // The older of the two classes' next new PDUs.
            let q = match (new[0].front(), new[1].front()) {
                (Some(a), Some(b)) => usize::from(b < a),
                (Some(_), None) => 0,
                (None, Some(_)) => 1,
                (None, None) => return None,
            };
            let sn = new[q].pop_front().expect("front exists");
            if self.store.sendable(sn) {
                return Some(sn);
            }
        }
    }

    /// The STATUS of every TTI due by `now`: its PDUs are acknowledged, or (lost) queued for
    /// retransmission or, past the limit, their SDU discarded.
    fn take_feedback(&mut self, now: Time, out: &mut Vec<RlcOutput>) {
        while let Some(t) = self.awaiting.pop_due(now) {
            for k in 0..t.len {
                let sn = self.awaiting.sent_sn(t.start + k);
                if !self.store.tracks_pdu(sn) {
                    continue;
                }
                let p = *self.store.pdu(sn);
                let seq = p.sdu;
                if self.store.sdu(seq).state != SduState::Pending || p.acked {
                    continue;
                }
                if !t.lost {
                    self.store.pdu_mut(sn).acked = true;
                    let s = self.store.sdu_mut(seq);
                    s.acked += 1;
                    if s.acked == s.n_pdus {
                        s.state = SduState::Acked;
                    }
                } else {
                    let class = self.store.sdu(seq).class;
                    if self.cfg.unlimited || p.tx_count <= self.cfg.max_retx(class) {
                        let lane = self.cfg.lane(class);
                        self.tx.retx[lane].push_back(sn);
                        let s = self.store.sdu_mut(seq);
                        s.queued += 1;
                        if s.queued == 1 {
                            self.tx.occupancy[lane] += 1;
                        }
                    } else {
                        self.discard(now, seq, out);
                    }
                }
            }
            self.awaiting.forget_log_to(t.start + t.len);
        }
        self.store.compact();
    }

    fn discard(&mut self, now: Time, seq: u64, out: &mut Vec<RlcOutput>) {
        let known = now + self.cfg.tti + self.cfg.delay;
        let s = self.store.sdu_mut(seq);
        s.state = SduState::Discarded;
        s.discard_known_at = known;
        let (pkt, done, class, queued) = (s.pkt, s.done_at_rx, s.class, s.queued);
        // Its PDUs still queued are skipped when they come up (`sendable`).
        s.queued = 0;
        if queued > 0 {
            self.tx.occupancy[self.cfg.lane(class)] -= 1;
        }
        self.stats.discarded += 1;
        // A packet the receiver already passed up (all PDUs arrived, the ACK did not) is not lost.
        if !done {
            out.push(RlcOutput::Discarded { pkt });
        }
    }

    /// The PDUs of TTI `id` reach the receiver. Returns the next receiver deadline (WT, MRW).
    pub fn on_arrival(&mut self, now: Time, id: u64, out: &mut Vec<RlcOutput>) -> Option<Time> {
        // A TTI's record leaves `awaiting` at its feedback time, which is after its arrival.
        let t = *self.awaiting.ttis.iter().find(|t| t.id == id).expect("a TTI arrives before its feedback");
        let most = (0..t.len)
            .map(|k| self.awaiting.sent_sn(t.start + k))
            .filter(|&sn| self.store.tracks_pdu(sn))
            .map(|sn| self.store.pdu(sn).tx_count.saturating_sub(1))
            .max()
            .unwrap_or(0);
        self.rx.recent_retx.push_back(RetxObservation { arrived: now, most });
        for k in 0..t.len {
            let sn = self.awaiting.sent_sn(t.start + k);
            if !self.store.tracks_pdu(sn) {
                continue;
            }
            let p = *self.store.pdu(sn);
            if p.received {
                continue;
            }
            self.store.pdu_mut(sn).received = true;
            let s = self.store.sdu_mut(p.sdu);
            if s.state == SduState::Discarded {
                continue;
            }
            s.received += 1;
            if s.received == s.n_pdus {
                s.completed_at = Some(now);
                if s.skipped {
                    s.done_at_rx = true;
                    let pkt = s.pkt;
                    self.stats.out_of_order += 1;
                    if self.cfg.deliver_late {
                        self.stats.delivered += 1;
                        out.push(RlcOutput::Deliver { pkt });
                    } else {
                        out.push(RlcOutput::OutOfOrder { pkt });
                    }
                }
            }
        }
        self.deliver_in_order(now, out)
    }

    /// Passes up complete SDUs in sequence (per lane); gives up a gap once a later SDU of the lane
    /// has waited WT. Returns when it needs to be called again (a WT or MRW deadline), if ever.
    pub fn deliver_in_order(&mut self, now: Time, out: &mut Vec<RlcOutput>) -> Option<Time> {
        let mut wake: Option<Time> = None;
        let lanes = if self.cfg.priority { 2 } else { 1 };
        for lane in 0..lanes {
            if let Some(t) = self.deliver_lane(lane, now, out) {
                wake = Some(wake.map_or(t, |w| w.min(t)));
            }
        }
        self.store.compact();
        match (wake, self.next_mrw_deadline(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn in_lane(&self, seq: u64, lane: usize) -> bool {
        self.cfg.lane(self.store.sdu(seq).class) == lane
    }

    fn deliver_lane(&mut self, lane: usize, now: Time, out: &mut Vec<RlcOutput>) -> Option<Time> {
        let end = self.store.sdu_end();
        self.rx.next[lane] = self.rx.next[lane].max(self.store.sdu_base);
        loop {
            // In-sequence delivery.
            while self.rx.next[lane] < end {
                let q = self.rx.next[lane];
                let s = *self.store.sdu(q);
                if !self.in_lane(q, lane) || s.done_at_rx || s.skipped {
                    self.rx.next[lane] += 1;
                } else if s.completed_at.is_some() && s.state != SduState::Discarded {
                    self.store.sdu_mut(q).done_at_rx = true;
                    self.stats.delivered += 1;
                    out.push(RlcOutput::Deliver { pkt: s.pkt });
                    self.rx.next[lane] += 1;
                } else if s.state == SduState::Discarded && s.discard_known_at <= now {
                    self.store.sdu_mut(q).done_at_rx = true;
                    self.rx.next[lane] += 1;
                } else {
                    break;
                }
            }
            // The earliest complete SDU of the lane beyond the gap: has it waited WT?
            let held = (self.rx.next[lane]..end)
                .find(|&q| {
                    let s = self.store.sdu(q);
                    self.in_lane(q, lane) && s.completed_at.is_some() && !s.done_at_rx && s.state != SduState::Discarded
                })
                .map(|q| (q, self.store.sdu(q).completed_at.expect("found")));
            // "An IP datagram is sent to the upper layer if all of the preceding PDUs that were
            // transmitted arrive at the mobile station within the WT period" (Sect. 2.1): PDUs
            // arriving the very instant WT runs out are in time, so the gap is given up 1 ns
            // later. Arrivals lie on the TTI grid, so such ties are the rule: behind one lost TTI
            // an SDU waits exactly 60 ms for its retransmission (80 ms RLC round trip).
            let expiry = |done: Time| done + self.cfg.waiting_timeout + Duration(1);
            match held {
                Some((q, done)) if expiry(done) <= now => {
                    // Give up the lane's gap before q.
                    for g in self.rx.next[lane]..q {
                        if self.in_lane(g, lane) {
                            let s = self.store.sdu_mut(g);
                            if !s.done_at_rx {
                                s.skipped = true;
                            }
                        }
                    }
                    self.rx.next[lane] = q;
                }
                Some((_, done)) => return Some(expiry(done)),
                None => return None,
            }
        }
    }

    fn next_mrw_deadline(&self, now: Time) -> Option<Time> {
        self.store
            .sdus
            .iter()
            .filter(|s| s.state == SduState::Discarded && !s.done_at_rx && s.discard_known_at > now)
            .map(|s| s.discard_known_at)
            .min()
    }
}
