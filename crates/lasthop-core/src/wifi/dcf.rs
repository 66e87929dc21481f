//! The 802.11 distributed coordination function on one shared medium (a BSS with an AP, or an
//! ad hoc cell): DIFS/SIFS/EIFS, slotted binary exponential backoff frozen while the medium is
//! busy, post-backoff, collisions when backoffs end in the same slot, MAC ACKs, short/long retry
//! limits, optional RTS/CTS above a threshold, duplicate filtering at the receiver.
//! Standard: IEEE 802.11-2016 §10.3 (DCF). Model check: Bianchi, JSAC 2000 (models.md §1).
//!
//! Backoff counting: a counter frozen by a busy medium loses one more slot when the medium
//! becomes busy (equivalently, at the first slot boundary after DIFS/EIFS), the convention of
//! Bianchi's Markov chain ("decremented every virtual slot, idle or busy") and of the EDCA
//! backoff-slot boundary at the end of AIFS. With a pure freeze instead, saturation throughput at
//! n = 50 (802.11g) came out 4 % below Bianchi; with this rule it is within 1 % (tests/wifi).
//!
//! How it is simulated without per-slot events: all stations hear each other (no hidden
//! terminals), so after every exchange the medium is idle for everyone from the same instant R
//! (exchange end + DIFS, or + EIFS after a collision or an errored frame). A station with
//! `backoff` slots left transmits at R + backoff·slot. The next transmission is the earliest such
//! time; when it starts, every other counting station's counter drops by the slots elapsed. One
//! decision per exchange, O(contending stations) work per decision — the cost of contention
//! itself, with no per-slot and no per-receiver events.
//!
//! Left out: hidden terminals and capture, NAV from overheard RTS/CTS durations (everyone hears
//! everything, so it changes nothing), fragmentation, rate adaptation, 802.11e EDCA, beacons.

use super::errors::ErrorModel;
use super::phy::{Phy, LLC_SNAP_BYTES};
use crate::rng::SimRng;
use crate::mechanisms::aqm::{Qdisc, Queued};
use crate::units::QueueLimit;
use crate::{Duration, Time};
use rand_core::RngCore;

/// MAC parameters of one WLAN.
#[derive(Clone, Debug, PartialEq)]
pub struct DcfConfig {
    pub phy: Phy,
    /// dot11ShortRetryLimit (default 7): attempts of an RTS, or of a frame at or below the RTS
    /// threshold.
    pub retry_short: u32,
    /// dot11LongRetryLimit (default 4): attempts of a data frame above the RTS threshold, after
    /// its RTS got a CTS.
    pub retry_long: u32,
    /// MSDUs longer than this use RTS/CTS (u64::MAX = never).
    pub rts_threshold: u64,
    pub queue_limit: QueueLimit,
    /// Add the 8-byte LLC/SNAP header to every MSDU (real stacks, ns-3; not ns-2).
    pub llc_snap: bool,
}

/// A frame waiting at a station: the network packet and its next-hop station.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub pkt: u32,
    pub uid: u64,
    pub ip_bytes: u32,
    pub to: u16,
    /// Set once the receiver has the packet (its ACK may still be lost and the frame retried).
    pub delivered: bool,
    /// Set once its data frame first went on the air (what a capture at the sender records);
    /// a frame enqueued with it set is never reported as [`MacOutput::Transmit`].
    pub transmitted: bool,
    /// Flow key for fair queueing.
    pub flow: u32,
}

/// Which retry count a failed attempt increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RetryCounter {
    Short,
    Long,
}

/// What the simulator must do after a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacOutput {
    /// The packet reaches station `to` from station `from` at `at` (end of the data frame).
    Deliver { pkt: u32, from: u16, to: u16, at: Time },
    /// The packet's data frame goes on the air for the first time at `at`.
    Transmit { pkt: u32, from: u16, to: u16, at: Time },
    /// The packet is dropped after exhausting its retries.
    RetryDrop { pkt: u32 },
    /// The packet was dropped by the station's queue discipline (CoDel at dequeue, FQ-CoDel's
    /// overflow of another flow).
    QueueDrop { pkt: u32 },
}

/// A station's MAC counters (reported as they are in each WLAN member of the run report).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct StationStats {
    /// Frames accepted into the station's queue, frames.
    pub enqueued: u64,
    /// Frames the station's queue dropped (tail drops and AQM drops), frames.
    pub queue_drops: u64,
    /// Frames dropped after the retry limit, frames.
    pub retry_drops: u64,
    /// Of those, frames the receiver had (only the ACKs were lost), frames.
    pub retry_exhausted_after_delivery: u64,
    /// Transmission attempts, successful or not, attempts.
    pub attempts: u64,
    /// Attempts that collided, attempts.
    pub collisions: u64,
    /// Attempts lost to a frame error (data or ACK), attempts.
    pub frame_errors: u64,
    /// Retransmissions after a failed attempt, attempts.
    pub retries: u64,
    /// Frames this station received and passed up to its node, frames.
    pub delivered: u64,
    /// Duplicates (a retry of a frame it already had) this station received and discarded,
    /// frames.
    pub duplicates_filtered: u64,
    /// Longest queue seen (the frame in service included), frames.
    #[serde(rename = "max_queue_packets")]
    pub max_queue: u64,
}

/// A member's queue samples (time in ns, frames queued), recorded once enabled; handed over
/// whole at the end or in pieces while the run goes (a long run streams them).
#[derive(Debug, Default)]
pub struct QueueSamples(Option<(Vec<u64>, Vec<u64>)>);

impl QueueSamples {
    pub fn enable(&mut self) {
        self.0 = Some((Vec::new(), Vec::new()));
    }
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }
    pub fn record(&mut self, now: Time, len: u64) {
        if let Some((t, n)) = self.0.as_mut() {
            t.push(now.0);
            n.push(len);
        }
    }
    /// Every sample, recording stopped.
    pub fn take(&mut self) -> Option<(Vec<u64>, Vec<u64>)> {
        self.0.take()
    }
    /// The samples since the last call, recording going on.
    pub fn drain(&mut self) -> Option<(Vec<u64>, Vec<u64>)> {
        self.0.as_mut().map(std::mem::take)
    }
    pub fn held(&self) -> usize {
        self.0.as_ref().map_or(0, |(t, _)| t.len())
    }
}

#[derive(Debug)]
struct Station {
    /// The frame in service (contending or being retried); it does not count against the limit.
    head: Option<Frame>,
    /// Frames waiting behind it (boxed: the contention loops stay on small structs).
    waiting: Box<Qdisc<Frame>>,
    /// Data rate of this station's frames (Mb/s × 10); the BSS default unless set.
    rate_x10: u32,
    /// Backoff slots left, valid at the current idle start R.
    backoff: u32,
    counting: bool,
    cw: u32,
    /// The head frame's short and long retry counts (IEEE 802.11-2016 §10.3.4.4): failed RTS
    /// and failed frames at or below the RTS threshold count short, failed data frames above it
    /// (sent after a CTS) count long; the frame is discarded when either reaches its limit.
    short_retries: u32,
    long_retries: u32,
    /// When the head frame became ready (for a transmission without backoff).
    ready_at: Time,
    /// uid + 1 of the last frame delivered from each sender (duplicate filter).
    last_rx: Vec<u64>,
    stats: StationStats,
    trace: QueueSamples,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WlanStats {
    pub exchanges: u64,
    pub successes: u64,
    pub collisions: u64,
    pub busy_ns: u64,
}

#[derive(Debug)]
pub struct Dcf {
    pub cfg: DcfConfig,
    stations: Vec<Station>,
    errors: ErrorModel,
    backoff_rng: SimRng,
    error_rng: SimRng,
    /// Start of the current idle period's slot counting (exchange end + DIFS/EIFS).
    idle_from: Time,
    /// End of the exchange in progress (the medium is busy before it).
    busy_until: Time,
    pub stats: WlanStats,
}

impl Dcf {
    pub fn new(cfg: DcfConfig, n_stations: usize, errors: ErrorModel, backoff_rng: SimRng, error_rng: SimRng) -> Self {
        let cw = cfg.phy.cw_min;
        let stations = (0..n_stations)
            .map(|_| Station {
                head: None,
                waiting: Box::new(Qdisc::drop_tail(cfg.queue_limit)),
                rate_x10: cfg.phy.data_rate_x10,
                backoff: 0,
                counting: false,
                cw,
                short_retries: 0,
                long_retries: 0,
                ready_at: Time::ZERO,
                last_rx: vec![0; n_stations],
                stats: StationStats::default(),
                trace: QueueSamples::default(),
            })
            .collect();
        Dcf {
            cfg,
            stations,
            errors,
            backoff_rng,
            error_rng,
            // The medium has been idle since before the run began.
            idle_from: Time::ZERO,
            busy_until: Time::ZERO,
            stats: WlanStats::default(),
        }
    }

    /// The queue discipline of one station (empty): a size or an AQM for the AP, say.
    pub fn set_qdisc(&mut self, i: usize, q: Qdisc<Frame>) {
        assert!(self.stations[i].waiting.is_empty(), "set the queue discipline before traffic");
        self.stations[i].waiting = Box::new(q);
    }

    /// Whether station `i`'s queue discipline needs flow keys.
    pub fn is_fair(&self, i: usize) -> bool {
        self.stations[i].waiting.is_fair()
    }

    /// A fixed data rate for one station's frames (no rate adaptation), Mb/s × 10.
    pub fn set_data_rate(&mut self, i: usize, rate_x10: u32) {
        self.stations[i].rate_x10 = rate_x10;
    }

    pub fn station_stats(&self, i: usize) -> &StationStats {
        &self.stations[i].stats
    }
    pub fn n_stations(&self) -> usize {
        self.stations.len()
    }
    /// Frames at station `i`, the one in service included.
    pub fn queue_len(&self, i: usize) -> usize {
        let s = &self.stations[i];
        s.head.is_some() as usize + s.waiting.len()
    }
    pub fn queue_trace(&mut self, i: usize) -> &mut QueueSamples {
        &mut self.stations[i].trace
    }
    /// Queue samples held by all stations.
    pub fn held_trace_samples(&self) -> usize {
        self.stations.iter().map(|s| s.trace.held()).sum()
    }
    /// Frames still queued at every station (for the conservation census).
    pub fn queued_packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.stations
            .iter()
            .flat_map(|s| s.head.iter().copied().chain(s.waiting.items().map(|q| q.item)))
            .filter(|f| !f.delivered)
            .map(|f| f.pkt)
    }

    fn msdu_bytes(&self, f: &Frame) -> u64 {
        f.ip_bytes as u64 + if self.cfg.llc_snap { LLC_SNAP_BYTES } else { 0 }
    }

    fn record_queue(&mut self, i: usize, now: Time) {
        if !self.stations[i].trace.is_on() {
            return;
        }
        let len = self.queue_len(i) as u64;
        self.stations[i].trace.record(now, len);
    }

    fn draw_backoff(&mut self, i: usize) {
        let cw = self.stations[i].cw as u64 + 1;
        // Uniform in [0, CW] (CW + 1 values, Bianchi's W_i); the modulo bias of a 64-bit draw
        // over at most 1024 values is below 1e-16.
        let b = (self.backoff_rng.next_u64() % cw) as u32;
        let s = &mut self.stations[i];
        s.backoff = b;
        s.counting = true;
    }

    /// Queues a frame at station `i`. Returns the frame dropped to make room, if any (the new
    /// one on a tail drop; another flow's under FQ-CoDel); the caller drops its packet.
    pub fn enqueue(&mut self, now: Time, i: usize, f: Frame) -> Option<Frame> {
        let s = &mut self.stations[i];
        if s.head.is_none() {
            s.stats.enqueued += 1;
            s.head = Some(f);
            s.ready_at = now;
            s.stats.max_queue = s.stats.max_queue.max(1);
            // §10.3.4.2: a frame that finds the medium busy (or not yet idle for DIFS) waits a
            // backoff; one that finds it idle for DIFS may go at once.
            if !s.counting && now < self.idle_from {
                self.draw_backoff(i);
            }
            self.record_queue(i, now);
            return None;
        }
        let dropped = s.waiting.enqueue(Queued::new(f, f.ip_bytes, f.flow, now)).map(|q| q.item);
        match dropped {
            Some(d) if d.uid == f.uid => {
                // A tail drop: nothing changed in the queue.
                s.stats.queue_drops += 1;
                return dropped;
            }
            Some(_) => s.stats.queue_drops += 1,
            None => {}
        }
        s.stats.enqueued += 1;
        let len = 1 + s.waiting.len() as u64;
        s.stats.max_queue = s.stats.max_queue.max(len);
        self.record_queue(i, now);
        dropped
    }

    /// The head frame is done: the queue discipline hands over the next one (its AQM drops
    /// are reported).
    fn next_head(&mut self, i: usize, now: Time, out: &mut Vec<MacOutput>) {
        let mut dropped = Vec::new();
        let s = &mut self.stations[i];
        s.head = s.waiting.dequeue(now, &mut dropped).map(|q| q.item);
        s.ready_at = now;
        for d in dropped {
            s.stats.queue_drops += 1;
            out.push(MacOutput::QueueDrop { pkt: d.item.pkt });
        }
        self.record_queue(i, now);
    }

    /// When the next transmission starts, if any station has a frame.
    pub fn next_decision(&self) -> Option<Time> {
        let slot = self.cfg.phy.slot;
        self.stations
            .iter()
            .filter(|s| s.head.is_some())
            .map(|s| (self.idle_from + slot * s.backoff as u64).max(s.ready_at))
            .min()
    }

    /// Runs the exchange that starts at `now` (which must be `next_decision()`).
    pub fn decide(&mut self, now: Time, out: &mut Vec<MacOutput>) {
        let slot = self.cfg.phy.slot;
        let elapsed_slots = if now >= self.idle_from { (now - self.idle_from).0 / slot.0 } else { 0 };
        // Who transmits now, and everyone else's backoff freezes after the slots that passed.
        let mut senders: [usize; 8] = [0; 8];
        let mut n_senders = 0usize;
        let mut extra_senders = Vec::new();
        for i in 0..self.stations.len() {
            let s = &mut self.stations[i];
            let fires = s.head.is_some() && (self.idle_from + slot * s.backoff as u64).max(s.ready_at) == now;
            if fires {
                if n_senders < senders.len() {
                    senders[n_senders] = i;
                } else {
                    extra_senders.push(i);
                }
                n_senders += 1;
                s.counting = false;
                s.backoff = 0;
            } else if s.counting {
                // The idle slots that passed, plus one for the busy period now starting: a frozen
                // counter decrements at the first backoff-slot boundary after DIFS/EIFS, which
                // is Bianchi's "every virtual slot, idle or busy" and EDCA's AIFS boundary.
                s.backoff = s.backoff.saturating_sub(elapsed_slots as u32 + 1);
                if s.backoff == 0 && s.head.is_none() {
                    s.counting = false; // post-backoff finished
                }
            }
        }
        let all: Vec<usize> = senders[..n_senders.min(8)].iter().copied().chain(extra_senders).collect();
        assert!(!all.is_empty(), "decide() called when no station transmits");
        self.stats.exchanges += 1;
        let (end, ifs) = if all.len() == 1 { self.single(now, all[0], out) } else { self.collision(now, &all, out) };
        self.stats.busy_ns += (end - now).0;
        self.busy_until = end;
        self.idle_from = end + ifs;
    }

    fn uses_rts(&self, f: &Frame) -> bool {
        self.msdu_bytes(f) > self.cfg.rts_threshold
    }

    /// Several stations chose the same slot: every frame is lost; the medium is busy for the
    /// longest of them and everyone waits EIFS (bystanders saw a corrupted frame; the senders
    /// wait ACKTimeout and then DIFS, which is the same span).
    fn collision(&mut self, now: Time, senders: &[usize], out: &mut Vec<MacOutput>) -> (Time, Duration) {
        self.stats.collisions += 1;
        let phy = self.cfg.phy.clone();
        let mut longest = Duration::ZERO;
        for &i in senders {
            let f = self.stations[i].head.expect("senders have frames");
            let d = if self.uses_rts(&f) { phy.rts_time() } else { phy.data_time_at(self.msdu_bytes(&f), self.stations[i].rate_x10) };
            longest = longest.max(d);
            self.stations[i].stats.collisions += 1;
            if !self.uses_rts(&f) {
                self.note_transmit(i, now, out);
            }
        }
        for &i in senders {
            self.failed_attempt(now, i, RetryCounter::Short, out);
        }
        (now + longest, phy.eifs())
    }

    /// One sender: (RTS, CTS,) DATA, ACK with frame errors drawn per frame.
    fn single(&mut self, now: Time, i: usize, out: &mut Vec<MacOutput>) -> (Time, Duration) {
        let phy = self.cfg.phy.clone();
        let f = self.stations[i].head.expect("sender has a frame");
        let to = f.to as usize;
        let mut t = now;
        let rts = self.uses_rts(&f);
        // A data frame sent after RTS/CTS counts against the long retry limit (§10.3.4.4).
        let data_counter = if rts { RetryCounter::Long } else { RetryCounter::Short };
        if rts {
            t += phy.rts_time();
            if !self.errors.control_ok(&mut self.error_rng, i, to) {
                self.stations[i].stats.frame_errors += 1;
                self.failed_attempt(now, i, RetryCounter::Short, out);
                return (t, phy.eifs());
            }
            t += phy.sifs + phy.cts_time();
            if !self.errors.control_ok(&mut self.error_rng, to, i) {
                self.stations[i].stats.frame_errors += 1;
                self.failed_attempt(now, i, RetryCounter::Short, out);
                return (t, phy.eifs());
            }
            t += phy.sifs;
        }
        self.note_transmit(i, t, out);
        t += phy.data_time_at(self.msdu_bytes(&f), self.stations[i].rate_x10);
        if !self.errors.data_ok(&mut self.error_rng, i, to) {
            self.stations[i].stats.frame_errors += 1;
            self.failed_attempt(now, i, data_counter, out);
            return (t, phy.eifs());
        }
        // The receiver has the frame: deliver it unless it is a retransmitted duplicate.
        let data_end = t;
        if self.stations[to].last_rx[i] == f.uid + 1 {
            self.stations[to].stats.duplicates_filtered += 1;
        } else {
            self.stations[to].last_rx[i] = f.uid + 1;
            self.stations[to].stats.delivered += 1;
            self.stations[i].head.as_mut().expect("head").delivered = true;
            out.push(MacOutput::Deliver { pkt: f.pkt, from: i as u16, to: f.to, at: data_end });
        }
        t += phy.sifs + phy.ack_time();
        if !self.errors.control_ok(&mut self.error_rng, to, i) {
            self.stations[i].stats.frame_errors += 1;
            self.failed_attempt(now, i, data_counter, out);
            return (t, phy.eifs());
        }
        self.stats.successes += 1;
        let s = &mut self.stations[i];
        s.stats.attempts += 1;
        s.cw = phy.cw_min;
        (s.short_retries, s.long_retries) = (0, 0);
        self.next_head(i, t, out);
        // Post-backoff after every transmission (§10.3.4.3), with or without a next frame.
        self.draw_backoff(i);
        (t, phy.difs())
    }

    /// Reports the head frame of station `i` going on the air at `at`, the first time it does.
    fn note_transmit(&mut self, i: usize, at: Time, out: &mut Vec<MacOutput>) {
        let head = self.stations[i].head.as_mut().expect("a sender has a frame");
        if !head.transmitted {
            head.transmitted = true;
            out.push(MacOutput::Transmit { pkt: head.pkt, from: i as u16, to: head.to, at });
        }
    }

    /// Counts a failed attempt against `counter`: doubles CW or, once that counter reaches its
    /// limit, drops the head frame.
    fn failed_attempt(&mut self, now: Time, i: usize, counter: RetryCounter, out: &mut Vec<MacOutput>) {
        let f = self.stations[i].head.expect("frame in service");
        let (phy_min, phy_max) = (self.cfg.phy.cw_min, self.cfg.phy.cw_max);
        let (short_limit, long_limit) = (self.cfg.retry_short, self.cfg.retry_long);
        let s = &mut self.stations[i];
        s.stats.attempts += 1;
        let exhausted = match counter {
            RetryCounter::Short => {
                s.short_retries += 1;
                s.short_retries >= short_limit
            }
            RetryCounter::Long => {
                s.long_retries += 1;
                s.long_retries >= long_limit
            }
        };
        if exhausted {
            if f.delivered {
                s.stats.retry_exhausted_after_delivery += 1;
            } else {
                s.stats.retry_drops += 1;
            }
            s.cw = phy_min;
            (s.short_retries, s.long_retries) = (0, 0);
            // A frame whose data arrived but whose ACKs were lost is not a lost packet.
            if !f.delivered {
                out.push(MacOutput::RetryDrop { pkt: f.pkt });
            }
            self.next_head(i, now, out);
        } else {
            s.stats.retries += 1;
            s.cw = (2 * s.cw + 1).min(phy_max);
        }
        self.draw_backoff(i);
    }
}
