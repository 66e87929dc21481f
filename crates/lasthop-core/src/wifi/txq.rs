//! What an access category holds for its receivers, and in which order an access point serves
//! them: mac80211's per-station transmit queues (net/mac80211/tx.c, `ieee80211_txq`) and their
//! airtime scheduler.
//!
//! - [`Waiting`]: the MSDUs of one access category, per receiver. Served first-in first-out
//!   ([`ApQueueing::Legacy`], one FIFO per AC as drivers before Linux 4.11 kept it) the oldest
//!   MSDU's receiver goes next; an A-MPDU takes that receiver's MSDUs wherever they wait (as
//!   ns-3's and the drivers' aggregation do). With [`ApQueueing::FqCodel`] and after, each
//!   receiver's MSDUs sit in an FQ-CoDel (mac80211's `fq` in `ieee80211_txq`, include/net/
//!   fq_impl.h: flows by hash, a 300 B quantum, new and old flow lists, CoDel per flow with
//!   target 20 ms and interval 100 ms, 8192 packets over the radio and the fattest flow's head
//!   dropped beyond them); an A-MPDU is composed as the driver pulls MSDUs from it one by one
//!   (`ieee80211_tx_dequeue`), CoDel dropping at the head as it does, and an MSDU pulled that
//!   did not fit waits in the driver's queue for the next one. Left out: per-TID queues (one
//!   per access category here), ECN marking (the MAC does not carry marks yet), mac80211's
//!   50 ms / 300 ms CoDel for stations slower than 6 Mb/s, the 16 MB memory limit.
//! - A driver queue below them (`Hcf`'s `DriverQueue`: a firmware's descriptors, e.g. ath10k's
//!   1424): MSDUs leave a station's FQ-CoDel for it while it has room and, with [`AqlLimits`]
//!   (Linux 5.5's Airtime Queue Limits), while the airtime of the station's MSDUs there and in
//!   flight is under 5 ms, or 12 ms while the AP's total is under 24 ms; each is charged its
//!   MPDU's bits over the link's data rate (mac80211's estimate adds a share of the PPDU
//!   overhead; left out), released when acknowledged or discarded. A-MPDUs are composed from
//!   the driver queue, stations chosen as above.
//! - [`AirtimeDrr`]: the deficit round robin over stations' airtime of Linux 4.17's "mac80211:
//!   Add airtime accounting and scheduling to TXQs" (Høiland-Jørgensen et al., "Ending the
//!   Anomaly", USENIX ATC 2017): the station at the head of the active list is served while its
//!   deficit is not negative; a negative one gets the quantum (`airtime_weight`, 256 µs) and goes
//!   to the tail. Every frame exchange with the station, sent or received, is charged to its
//!   deficit in µs (`ieee80211_sta_register_airtime`).

use super::hcf::Msdu;
use crate::mechanisms::aqm::{CoDelParams, FqCoDel, Queued};
use crate::{Duration, Time};
use std::collections::{BTreeMap, VecDeque};

/// How an access point queues and serves its stations' traffic (`wlans.X.ap_queueing`); each
/// option adds to the one before it, as Linux's releases did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApQueueing {
    /// One FIFO per access category (drivers before Linux 4.11).
    #[default]
    Legacy,
    /// Per-station queues, each an FQ-CoDel ([`MAC80211_CODEL`], quantum 300 B), stations
    /// served in turn (mac80211's intermediate queues, Linux 4.11; ath9k's round robin).
    FqCodel,
    /// The same queues, stations served by airtime deficit round robin (mac80211 since 4.17).
    Airtime,
    /// The same, and a station's queue hands MSDUs to the driver (its firmware queue) only
    /// while the airtime of those not yet done is under its AQL limit (Linux 5.5+).
    Aql,
}

impl ApQueueing {
    /// Whether each station's queue is an FQ-CoDel (else a drop-tail FIFO).
    pub fn is_fq(self) -> bool {
        self != ApQueueing::Legacy
    }
    /// Whether stations are served by airtime deficit round robin.
    pub fn is_airtime_fair(self) -> bool {
        matches!(self, ApQueueing::Airtime | ApQueueing::Aql)
    }
}

/// Airtime Queue Limits (mac80211, "mac80211: Implement Airtime-based Queue Limit (AQL)", Linux
/// 5.5; net/mac80211/sta_info.h and ieee80211_i.h): a station's category may hand the driver
/// more while the estimated airtime it has there is under `low`, or under `high` while the
/// interface's total is under `threshold` (`ieee80211_txq_airtime_check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AqlLimits {
    pub low: Duration,
    pub high: Duration,
    pub threshold: Duration,
}

impl Default for AqlLimits {
    /// IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L/H (5 ms, 12 ms) and IEEE80211_AQL_THRESHOLD (24 ms).
    fn default() -> Self {
        AqlLimits { low: Duration::from_millis(5), high: Duration::from_millis(12), threshold: Duration::from_millis(24) }
    }
}

impl AqlLimits {
    /// Whether a station's category with `pending` airtime in the driver may hand it more, the
    /// interface having `total` in all.
    pub fn may_send(&self, pending: Duration, total: Duration) -> bool {
        pending < self.low || (total < self.threshold && pending < self.high)
    }
}

/// mac80211's CoDel in its station queues (net/mac80211/tx.c, `ieee80211_txq_setup_flows`):
/// target 20 ms, interval 100 ms. mac80211 sets `ecn = true` there; the WLAN's queues here drop
/// (their marks would need the MAC to carry them: issue 29).
pub const MAC80211_CODEL: CoDelParams = CoDelParams { target: Duration::from_millis(20), interval: Duration::from_millis(100), mtu: 1500, ecn: false };
/// mac80211's flow quantum, bytes (include/net/fq_impl.h, `fq_init`).
pub const MAC80211_FQ_QUANTUM: u32 = 300;
/// mac80211's packet limit over all its station queues (`fq_init`: `fq->limit = 8192`).
pub const MAC80211_FQ_LIMIT: usize = 8192;

/// mac80211's `IEEE80211_DEFAULT_AIRTIME_WEIGHT`: the quantum a station's deficit gets, µs.
pub const AIRTIME_QUANTUM_US: i64 = 256;

/// One receiver's MSDUs of one access category.
#[derive(Debug)]
enum Txq {
    /// In arrival order, each with its arrival number.
    Fifo(VecDeque<(u64, Msdu)>),
    /// mac80211's FQ-CoDel, and the MSDUs the driver took from it for an A-MPDU they did not
    /// fit (they go first in the next, as ath9k's per-TID queue keeps them).
    Fq { fq: Box<FqCoDel<Msdu>>, taken: VecDeque<Msdu> },
}

impl Txq {
    fn len(&self) -> usize {
        match self {
            Txq::Fifo(q) => q.len(),
            Txq::Fq { fq, taken } => fq.len() + taken.len(),
        }
    }
}

/// The MSDUs of one access category, per receiver.
#[derive(Debug, Default)]
pub struct Waiting {
    by_receiver: BTreeMap<u16, Txq>,
    len: usize,
    next_seq: u64,
    /// Each receiver's queue is an FQ-CoDel with these parameters (None: a FIFO).
    fq: Option<CoDelParams>,
    /// CoDel's drops since [`Waiting::take_dropped`].
    dropped: Vec<Msdu>,
    /// The receiver served last (FQ-CoDel queues without airtime scheduling take turns).
    last_served: Option<u16>,
    /// MSDUs reach the MAC only through the driver's queues ([`Waiting::to_driver`]): a
    /// firmware queue below mac80211's, filled by the caller; else the MAC pulls on demand.
    driver_queue: bool,
    /// MSDUs in the driver's queues (`taken`).
    in_driver: usize,
}

impl Waiting {
    /// Per-receiver FQ-CoDel queues with CoDel's `params`.
    pub fn fq_codel(params: CoDelParams) -> Waiting {
        Waiting { fq: Some(params), ..Waiting::default() }
    }
    pub fn is_fq(&self) -> bool {
        self.fq.is_some()
    }
    /// FQ-CoDel queues above a driver queue the caller fills ([`Waiting::to_driver`]).
    pub fn with_driver_queue(mut self) -> Waiting {
        self.driver_queue = true;
        self
    }
    pub fn has_driver_queue(&self) -> bool {
        self.driver_queue
    }
    /// Whether the MAC has something to compose from.
    pub fn ready(&self) -> bool {
        if self.driver_queue {
            self.in_driver > 0
        } else {
            self.len > 0
        }
    }
    /// MSDUs in the driver's queue.
    pub fn in_driver(&self) -> usize {
        self.in_driver
    }
    /// `to`'s MSDUs in the driver's queue.
    pub fn in_driver_for(&self, to: u16) -> usize {
        match self.by_receiver.get(&to) {
            Some(Txq::Fq { taken, .. }) => taken.len(),
            _ => 0,
        }
    }
    /// Receivers with MSDUs in mac80211's queues (not yet handed to the driver).
    pub fn backlogged_above_driver(&self) -> Vec<u16> {
        self.by_receiver.iter().filter(|(_, q)| matches!(q, Txq::Fq { fq, .. } if !fq.is_empty())).map(|(to, _)| *to).collect()
    }
    /// Hands `to`'s next MSDU from its FQ-CoDel to the driver's queue at `now` (CoDel dropping
    /// as it dequeues, see [`Waiting::take_dropped`]); returns it.
    pub fn to_driver(&mut self, to: u16, now: Time) -> Option<Msdu> {
        let Some(Txq::Fq { fq, taken }) = self.by_receiver.get_mut(&to) else { return None };
        let mut scratch = Vec::new();
        let next = fq.dequeue(now, &mut scratch);
        for d in scratch {
            self.dropped.push(d.item);
            self.len -= 1;
        }
        let m = next?.item;
        taken.push_back(m);
        self.in_driver += 1;
        Some(m)
    }
    /// Sets the estimated airtime of the MSDU [`Waiting::to_driver`] just handed over.
    pub fn set_last_airtime(&mut self, to: u16, airtime_ns: u32) {
        if let Some(Txq::Fq { taken, .. }) = self.by_receiver.get_mut(&to) {
            if let Some(m) = taken.back_mut() {
                m.airtime_ns = airtime_ns;
            }
        }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// MSDUs waiting for `to`.
    pub fn len_for(&self, to: u16) -> usize {
        self.by_receiver.get(&to).map_or(0, Txq::len)
    }
    /// Queues `m` (arrived at `now`; its flow key picks its FQ-CoDel queue).
    pub fn push(&mut self, now: Time, m: Msdu) {
        let fq = self.fq;
        let txq = self.by_receiver.entry(m.to).or_insert_with(|| match fq {
            None => Txq::Fifo(VecDeque::new()),
            Some(p) => Txq::Fq { fq: Box::new(FqCoDel::new(u64::MAX, MAC80211_FQ_QUANTUM, p)), taken: VecDeque::new() },
        });
        match txq {
            Txq::Fifo(q) => q.push_back((self.next_seq, m)),
            Txq::Fq { fq, .. } => {
                fq.enqueue(Queued::new(m, m.ip_bytes, m.flow, now));
            }
        }
        self.next_seq += 1;
        self.len += 1;
    }
    /// The receiver of the oldest MSDU (FIFOs).
    pub fn oldest_receiver(&self) -> Option<u16> {
        self.by_receiver
            .iter()
            .filter_map(|(to, q)| match q {
                Txq::Fifo(q) => q.front().map(|(seq, _)| (*seq, *to)),
                Txq::Fq { .. } => None,
            })
            .min()
            .map(|(_, to)| to)
    }
    /// The receiver after the last one served, in turn (FQ-CoDel queues without airtime
    /// scheduling: ath9k's round robin over its TIDs), among `backlogged` (sorted).
    pub fn next_in_turn(&mut self, backlogged: &[u16]) -> Option<u16> {
        let next = match self.last_served {
            Some(last) => backlogged.iter().find(|&&r| r > last).or(backlogged.first()),
            None => backlogged.first(),
        }
        .copied();
        self.last_served = next.or(self.last_served);
        next
    }
    /// Receivers with MSDUs the MAC may send (in the driver's queue, where there is one).
    pub fn receivers(&self) -> impl Iterator<Item = u16> + '_ {
        let driver = self.driver_queue;
        self.by_receiver
            .iter()
            .filter(move |(_, q)| match q {
                Txq::Fq { taken, .. } if driver => !taken.is_empty(),
                q => q.len() > 0,
            })
            .map(|(to, _)| *to)
    }
    /// The MPDU sizes of `to`'s next MSDUs, at most `room`, as an A-MPDU's composition asks for
    /// them: a FIFO's in order; an FQ-CoDel's as it dequeues them at `now`, CoDel dropping as
    /// it does (see [`Waiting::take_dropped`]). Take the ones composed with [`Waiting::pop`].
    pub fn next_mpdus(&mut self, to: u16, now: Time, room: usize) -> NextMpdus<'_> {
        let pull = !self.driver_queue;
        NextMpdus { txq: self.by_receiver.get_mut(&to), k: 0, room, now, pull, len: &mut self.len, in_driver: &mut self.in_driver, dropped: &mut self.dropped, scratch: Vec::new() }
    }
    /// Takes `to`'s next MSDU (one [`Waiting::next_mpdus`] gave).
    pub fn pop(&mut self, to: u16) -> Option<Msdu> {
        let m = match self.by_receiver.get_mut(&to)? {
            Txq::Fifo(q) => q.pop_front().map(|(_, m)| m),
            Txq::Fq { taken, .. } => {
                let m = taken.pop_front();
                self.in_driver -= m.is_some() as usize;
                m
            }
        }?;
        self.len -= 1;
        Some(m)
    }
    /// Notes an MSDU an AQM above these queues dropped (reported with CoDel's).
    pub fn note_dropped(&mut self, m: Msdu) {
        self.dropped.push(m);
    }
    /// The MSDUs CoDel dropped since the last call.
    pub fn take_dropped(&mut self) -> std::vec::Drain<'_, Msdu> {
        self.dropped.drain(..)
    }
    /// The bytes of the fattest flow over the receivers' FQ-CoDel queues, and its receiver.
    pub fn fattest_flow(&self) -> Option<(u64, u16)> {
        self.by_receiver
            .iter()
            .filter_map(|(to, q)| match q {
                Txq::Fq { fq, .. } if !fq.is_empty() => Some((fq.fattest_flow_bytes(), *to)),
                _ => None,
            })
            .max_by_key(|&(bytes, to)| (bytes, std::cmp::Reverse(to)))
    }
    /// Drops the head of the fattest flow of `to`'s FQ-CoDel queue (mac80211's overflow).
    pub fn drop_from_fattest(&mut self, to: u16) -> Option<Msdu> {
        let Some(Txq::Fq { fq, .. }) = self.by_receiver.get_mut(&to) else { return None };
        let m = fq.drop_from_fattest()?.item;
        self.len -= 1;
        Some(m)
    }
}

/// The MPDU sizes of one receiver's next MSDUs ([`Waiting::next_mpdus`]).
pub struct NextMpdus<'a> {
    txq: Option<&'a mut Txq>,
    k: usize,
    room: usize,
    now: Time,
    /// Pull from the FQ-CoDel once the driver's MSDUs are used (no firmware queue).
    pull: bool,
    len: &'a mut usize,
    in_driver: &'a mut usize,
    dropped: &'a mut Vec<Msdu>,
    scratch: Vec<Queued<Msdu>>,
}

impl Iterator for NextMpdus<'_> {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.k >= self.room {
            return None;
        }
        let m = match self.txq.as_deref_mut()? {
            Txq::Fifo(q) => q.get(self.k).map(|(_, m)| *m),
            Txq::Fq { taken, .. } if self.k < taken.len() => Some(taken[self.k]),
            Txq::Fq { .. } if !self.pull => None,
            Txq::Fq { fq, taken } => {
                let next = fq.dequeue(self.now, &mut self.scratch);
                for d in self.scratch.drain(..) {
                    self.dropped.push(d.item);
                    *self.len -= 1;
                }
                next.map(|x| {
                    taken.push_back(x.item);
                    *self.in_driver += 1;
                    x.item
                })
            }
        }?;
        self.k += 1;
        Some(m.mpdu_bytes())
    }
}

/// Airtime deficit round robin over the receivers of one access category.
#[derive(Debug, Default)]
pub struct AirtimeDrr {
    active: VecDeque<u16>,
    deficit: BTreeMap<u16, i64>,
    /// Receivers' weights where not [`AIRTIME_QUANTUM_US`] (`sta->airtime_weight`, set by
    /// NL80211_ATTR_AIRTIME_WEIGHT): the quantum their deficit gets each lap, µs.
    weights: BTreeMap<u16, i64>,
}

impl AirtimeDrr {
    /// The receiver to serve among those `backlogged` (`ieee80211_next_txq`): the head of the
    /// active list once its deficit is not negative; new receivers join at the tail.
    pub fn next(&mut self, backlogged: &[u16]) -> Option<u16> {
        for &r in backlogged {
            if !self.active.contains(&r) {
                self.active.push_back(r);
            }
        }
        self.active.retain(|r| backlogged.contains(r));
        // Each lap adds the quantum to every negative deficit: this ends.
        loop {
            let &head = self.active.front()?;
            let d = self.deficit.entry(head).or_insert(0);
            if *d >= 0 {
                return Some(head);
            }
            *d += self.weights.get(&head).copied().unwrap_or(AIRTIME_QUANTUM_US);
            self.active.rotate_left(1);
        }
    }
    /// Receiver `r`'s deficit gets `weight` µs each lap instead of 256: airtime in proportion.
    pub fn set_weight(&mut self, r: u16, weight: u32) {
        self.weights.insert(r, weight as i64);
    }
    /// Charges `us` of airtime to receiver `r` (`ieee80211_sta_register_airtime`).
    pub fn charge(&mut self, r: u16, us: i64) {
        *self.deficit.entry(r).or_insert(0) -= us;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::edca::AccessCategory;
    use crate::Time;

    fn msdu(pkt: u32, to: u16) -> Msdu {
        Msdu { pkt, ip_bytes: 1500, to, ac: AccessCategory::BestEffort, transmitted: false, queued_at: Time::ZERO, flow: 0, airtime_ns: 0 }
    }

    #[test]
    fn the_oldest_msdu_names_the_receiver_and_an_ampdu_takes_all_of_its() {
        let mut w = Waiting::default();
        for (pkt, to) in [(1, 2), (2, 2), (3, 3), (4, 2), (5, 3)] {
            w.push(Time::ZERO, msdu(pkt, to));
        }
        assert_eq!(w.oldest_receiver(), Some(2));
        // Receiver 2's three MSDUs, 1500 B + 8 B LLC/SNAP + 30 B header and FCS each.
        assert_eq!(w.next_mpdus(2, Time::ZERO, 10).collect::<Vec<_>>(), [1538; 3]);
        assert_eq!(w.pop(2).map(|m| m.pkt), Some(1));
        assert_eq!(w.pop(2).map(|m| m.pkt), Some(2));
        assert_eq!((w.oldest_receiver(), w.len(), w.len_for(2)), (Some(3), 3, 1));
        assert_eq!([w.pop(3), w.pop(3)].map(|m| m.map(|m| m.pkt)), [Some(3), Some(5)]);
    }

    fn fq_msdu(pkt: u32, flow: u32, bytes: u32) -> Msdu {
        Msdu { ip_bytes: bytes, flow, ..msdu(pkt, 1) }
    }

    #[test]
    fn a_sparse_flow_overtakes_a_bulk_backlog_in_a_station_queue() {
        // mac80211's FQ in one station's queue: a bulk flow's 20 MSDUs, two taken for an A-MPDU;
        // then a 200 B MSDU of another flow. It is a new flow (RFC 8290 §4.2), so the driver's
        // next pull gives it first, then the bulk flow's third MSDU.
        let mut w = Waiting::fq_codel(MAC80211_CODEL);
        for pkt in 1..=20 {
            w.push(Time::ZERO, fq_msdu(pkt, 7, 1500));
        }
        assert_eq!(w.next_mpdus(1, Time::ZERO, 2).count(), 2);
        assert_eq!([w.pop(1), w.pop(1)].map(|m| m.map(|m| m.pkt)), [Some(1), Some(2)]);
        w.push(Time::ZERO, fq_msdu(100, 9, 200));
        assert_eq!(w.next_mpdus(1, Time::ZERO, 2).collect::<Vec<_>>(), [238, 1538]);
        assert_eq!([w.pop(1), w.pop(1)].map(|m| m.map(|m| m.pkt)), [Some(100), Some(3)]);
        // An MSDU pulled for an A-MPDU it did not fit waits for the next, first.
        assert_eq!(w.next_mpdus(1, Time::ZERO, 3).count(), 3);
        assert_eq!(w.pop(1).map(|m| m.pkt), Some(4));
        assert_eq!(w.next_mpdus(1, Time::ZERO, 1).count(), 1);
        assert_eq!((w.pop(1).map(|m| m.pkt), w.len()), (Some(5), 15));
    }

    #[test]
    fn codel_in_a_station_queue_drops_on_mac80211s_schedule() {
        // The CoDel test of mechanisms::aqm with mac80211's target 20 ms: 400 MSDUs of one flow
        // at 0, one pulled per ms. Sojourn reaches 20 ms at t = 20, so the first drop is at
        // 20 + 100 = 120 ms, then 220, 220 + 100/√2 = 290.7 (-> 291), 290.7 + 100/√3 = 348.4
        // (-> 349) (RFC 8289's control law, checked at whole ms here).
        let mut w = Waiting::fq_codel(MAC80211_CODEL);
        for pkt in 0..400 {
            w.push(Time::ZERO, fq_msdu(pkt, 7, 1500));
        }
        let mut drops = Vec::new();
        for t in 1..=360u64 {
            let now = Time(t * 1_000_000);
            assert_eq!(w.next_mpdus(1, now, 1).count(), 1);
            w.pop(1);
            if w.take_dropped().count() > 0 {
                drops.push(t);
            }
        }
        assert_eq!(drops, [120, 220, 291, 349]);
        assert_eq!(w.len(), 400 - 360 - 4);
    }

    #[test]
    fn the_deficit_round_robin_gives_equal_airtime() {
        // Receiver 1's exchanges take 1000 µs, receiver 2's 250 µs (a 4× faster rate): each serve
        // costs its airtime, each lap adds 256 µs. Over many serves both get the same airtime
        // within one exchange's worth, so receiver 2 is served ~4× as often (hand count: per
        // 1000 µs of deficit, 1 serve of 1 against 4 of 2).
        let mut drr = AirtimeDrr::default();
        let mut airtime = [0i64; 3];
        let mut serves = [0u32; 3];
        for _ in 0..10_000 {
            let r = drr.next(&[1, 2]).unwrap();
            let us = if r == 1 { 1000 } else { 250 };
            drr.charge(r, us);
            airtime[r as usize] += us;
            serves[r as usize] += 1;
        }
        assert!((airtime[1] - airtime[2]).abs() <= 1000, "{airtime:?}");
        assert!((serves[2] as f64 / serves[1] as f64 - 4.0).abs() < 0.01, "{serves:?}");
        // Weights: receiver 2 at 512 µs against receiver 1's default 256, both 250 µs per
        // exchange: airtime 2 : 1 within one lap's worth.
        let mut drr = AirtimeDrr::default();
        drr.set_weight(2, 512);
        let mut got = [0i64; 3];
        for _ in 0..9_000 {
            let r = drr.next(&[1, 2]).unwrap();
            drr.charge(r, 250);
            got[r as usize] += 250;
        }
        assert!((got[2] as f64 / got[1] as f64 - 2.0).abs() < 0.01, "{got:?}");
        // A receiver that empties leaves the list; coming back it joins at the tail.
        assert_eq!(drr.next(&[2]), Some(2));
        assert!(drr.next(&[]).is_none());
    }
}
