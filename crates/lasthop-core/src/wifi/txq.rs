//! What an access category holds for its receivers, and in which order an access point serves
//! them: mac80211's per-station transmit queues (net/mac80211/tx.c, `ieee80211_txq`) and their
//! airtime scheduler.
//!
//! - [`Waiting`]: the MSDUs of one access category, per receiver, each numbered on arrival.
//!   Served first-in first-out ([`ApQueueing::Legacy`], one FIFO per AC as drivers before Linux
//!   4.11 kept it) the oldest MSDU's receiver goes next; an A-MPDU takes that receiver's MSDUs
//!   wherever they wait (as ns-3's and the drivers' aggregation do).
//! - [`AirtimeDrr`]: the deficit round robin over stations' airtime of Linux 4.17's "mac80211:
//!   Add airtime accounting and scheduling to TXQs" (Høiland-Jørgensen et al., "Ending the
//!   Anomaly", USENIX ATC 2017): the station at the head of the active list is served while its
//!   deficit is not negative; a negative one gets the quantum (`airtime_weight`, 256 µs) and goes
//!   to the tail. Every frame exchange with the station, sent or received, is charged to its
//!   deficit in µs (`ieee80211_sta_register_airtime`).

use super::hcf::Msdu;
use std::collections::{BTreeMap, VecDeque};

/// How an access point queues and serves its stations' traffic (`wlans.X.ap_queueing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApQueueing {
    /// One FIFO per access category (drivers before Linux 4.11).
    #[default]
    Legacy,
    /// Per-station queues served by airtime deficit round robin (mac80211 since 4.17).
    Airtime,
}

/// mac80211's `IEEE80211_DEFAULT_AIRTIME_WEIGHT`: the quantum a station's deficit gets, µs.
pub const AIRTIME_QUANTUM_US: i64 = 256;

/// The MSDUs of one access category, per receiver, in arrival order.
#[derive(Debug, Default)]
pub struct Waiting {
    by_receiver: BTreeMap<u16, VecDeque<(u64, Msdu)>>,
    len: usize,
    next_seq: u64,
}

impl Waiting {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// MSDUs waiting for `to`.
    pub fn len_for(&self, to: u16) -> usize {
        self.by_receiver.get(&to).map_or(0, VecDeque::len)
    }
    pub fn push(&mut self, m: Msdu) {
        self.by_receiver.entry(m.to).or_default().push_back((self.next_seq, m));
        self.next_seq += 1;
        self.len += 1;
    }
    /// The receiver of the oldest MSDU.
    pub fn oldest_receiver(&self) -> Option<u16> {
        self.by_receiver.iter().filter_map(|(to, q)| q.front().map(|(seq, _)| (*seq, *to))).min().map(|(_, to)| to)
    }
    /// Receivers with MSDUs waiting.
    pub fn receivers(&self) -> impl Iterator<Item = u16> + '_ {
        self.by_receiver.iter().filter(|(_, q)| !q.is_empty()).map(|(to, _)| *to)
    }
    /// `to`'s MSDUs in order.
    pub fn for_receiver(&self, to: u16) -> impl Iterator<Item = &Msdu> + '_ {
        self.by_receiver.get(&to).into_iter().flatten().map(|(_, m)| m)
    }
    /// Takes `to`'s oldest MSDU.
    pub fn pop(&mut self, to: u16) -> Option<Msdu> {
        let m = self.by_receiver.get_mut(&to)?.pop_front().map(|(_, m)| m)?;
        self.len -= 1;
        Some(m)
    }
}

/// Airtime deficit round robin over the receivers of one access category.
#[derive(Debug, Default)]
pub struct AirtimeDrr {
    active: VecDeque<u16>,
    deficit: BTreeMap<u16, i64>,
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
            *d += AIRTIME_QUANTUM_US;
            self.active.rotate_left(1);
        }
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
        Msdu { pkt, ip_bytes: 1500, to, ac: AccessCategory::BestEffort, transmitted: false, queued_at: Time::ZERO }
    }

    #[test]
    fn the_oldest_msdu_names_the_receiver_and_an_ampdu_takes_all_of_its() {
        let mut w = Waiting::default();
        for (pkt, to) in [(1, 2), (2, 2), (3, 3), (4, 2), (5, 3)] {
            w.push(msdu(pkt, to));
        }
        assert_eq!(w.oldest_receiver(), Some(2));
        let pkts = |w: &Waiting, to| w.for_receiver(to).map(|m| m.pkt).collect::<Vec<_>>();
        assert_eq!(pkts(&w, 2), [1, 2, 4]);
        assert_eq!(w.pop(2).map(|m| m.pkt), Some(1));
        assert_eq!(w.pop(2).map(|m| m.pkt), Some(2));
        assert_eq!((w.oldest_receiver(), w.len(), w.len_for(2)), (Some(3), 3, 1));
        assert_eq!(pkts(&w, 3), [3, 5]);
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
        // A receiver that empties leaves the list; coming back it joins at the tail.
        assert_eq!(drr.next(&[2]), Some(2));
        assert!(drr.next(&[]).is_none());
    }
}
