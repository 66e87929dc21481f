//! The two ends of a Block Ack agreement (802.11-2016 10.24: immediate Block Ack, compressed
//! bitmap), as sans-I/O bookkeeping a MAC drives:
//!
//! - [`Originator`]: the sender's scoreboard for one (receiver, TID). New MPDUs get sequence
//!   numbers (mod 4096) only within the window [WinStart, WinStart + size); an A-MPDU carries the
//!   MPDUs to retransmit first, oldest first, then new ones; a Block Ack acknowledges some of
//!   them, and each one it does not (or all, when no Block Ack comes) counts a retry. An MPDU at
//!   its retry limit is discarded, so the window never stalls behind it: WinStart moves past
//!   every acknowledged or discarded MPDU at its head (the recipient learns it from the next
//!   PPDU's starting sequence number, as from a BlockAckReq).
//! - [`Reorder`]: the recipient's buffer, releasing MSDUs to the layer above in sequence-number
//!   order (10.24.7.6, WinStartB/WinEndB): an MPDU at WinStart releases itself and every held
//!   successor in a row; one ahead of the window moves the window so it fits, releasing in
//!   order what falls behind (gaps are lost); one behind WinStart is a duplicate and dropped;
//!   [`Reorder::advance_to`] is the originator's new WinStart (BlockAckReq / next PPDU).
//!
//! Sequence numbers compare in the half of the 4096 space ahead of a reference: `b` is ahead
//! of `a` when (b − a) mod 4096 < 2048.

use std::collections::VecDeque;

/// Sequence numbers are 12 bits.
pub const SN_SPACE: u16 = 4096;

/// (b − a) mod 4096: how far `b` is ahead of `a`.
pub fn sn_distance(a: u16, b: u16) -> u16 {
    b.wrapping_sub(a) % SN_SPACE
}

fn sn_add(a: u16, n: u16) -> u16 {
    (a + n) % SN_SPACE
}

/// Items by sequence number within one Block Ack window: a ring indexed by the number's low
/// bits (a window of at most its size never holds two numbers equal in them), without a map's
/// allocations on the per-MPDU path.
#[derive(Clone, Debug)]
pub struct SnSlots<T> {
    slots: Vec<Option<(u16, T)>>,
    len: usize,
}

impl<T: Copy> SnSlots<T> {
    /// Room for a window of `window` sequence numbers.
    pub fn new(window: u16) -> Self {
        let size = (window.max(1) as usize).next_power_of_two().min(SN_SPACE as usize);
        SnSlots { slots: vec![None; size], len: 0 }
    }

    fn index(&self, sn: u16) -> usize {
        sn as usize & (self.slots.len() - 1)
    }

    /// Holds `item` at `sn` (whose slot must be free: no two numbers of one window share it).
    pub fn insert(&mut self, sn: u16, item: T) {
        let i = self.index(sn);
        debug_assert!(self.slots[i].is_none(), "sequence number {sn} shares its slot with one still held");
        if self.slots[i].replace((sn, item)).is_none() {
            self.len += 1;
        }
    }

    pub fn get(&self, sn: u16) -> Option<&T> {
        match &self.slots[self.index(sn)] {
            Some((held, item)) if *held == sn => Some(item),
            _ => None,
        }
    }

    pub fn remove(&mut self, sn: u16) -> Option<T> {
        let i = self.index(sn);
        match self.slots[i] {
            Some((held, item)) if held == sn => {
                self.slots[i] = None;
                self.len -= 1;
                Some(item)
            }
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What is held, in window order from `start`.
    pub fn from_start(&self, start: u16) -> impl Iterator<Item = (u16, &T)> + '_ {
        let size = self.slots.len();
        (0..size).filter_map(move |d| self.slots[(start as usize + d) & (size - 1)].as_ref().map(|(sn, item)| (*sn, item)))
    }
}

/// What a sent MPDU's slot in the originator's window holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Sent in the last A-MPDU, its Block Ack not in yet; failed attempts so far.
    InFlight(u32),
    /// To send again; failed attempts so far.
    Retransmit(u32),
    Acked,
    Discarded,
}

/// What a Block Ack (or its absence) settled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Sequence numbers acknowledged now.
    pub acked: Vec<u16>,
    /// Sequence numbers discarded now, at the retry limit.
    pub discarded: Vec<u16>,
}

/// The originator's scoreboard of one Block Ack agreement.
#[derive(Clone, Debug)]
pub struct Originator {
    size: u16,
    retry_limit: u32,
    /// WinStart.
    start: u16,
    /// The window's slots from WinStart on, one per sequence number given out.
    slots: VecDeque<Slot>,
}

impl Originator {
    /// An agreement of `size` (64, or 256 for HE) with MPDUs given up after `retry_limit`
    /// failed attempts, starting at sequence number `start`.
    pub fn new(size: u16, retry_limit: u32, start: u16) -> Originator {
        assert!((1..=1024).contains(&size) && retry_limit >= 1);
        Originator { size, retry_limit, start: start % SN_SPACE, slots: VecDeque::new() }
    }

    /// WinStart: the oldest sequence number not yet acknowledged or discarded.
    pub fn window_start(&self) -> u16 {
        self.start
    }

    /// Sequence numbers given out and not yet settled.
    pub fn outstanding(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::InFlight(_) | Slot::Retransmit(_))).count()
    }

    /// Room for new MPDUs in the window.
    pub fn room(&self) -> usize {
        self.size as usize - self.slots.len()
    }

    /// The next A-MPDU's sequence numbers, at most `max`: the MPDUs to retransmit (oldest
    /// first), then up to `new` new ones while the window has room; all marked in flight.
    pub fn compose(&mut self, max: usize, new: usize) -> Vec<u16> {
        let mut out = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if out.len() == max {
                break;
            }
            if let Slot::Retransmit(retries) = *slot {
                *slot = Slot::InFlight(retries);
                out.push(sn_add(self.start, i as u16));
            }
        }
        let fresh = new.min(max - out.len()).min(self.room());
        for _ in 0..fresh {
            out.push(sn_add(self.start, self.slots.len() as u16));
            self.slots.push_back(Slot::InFlight(0));
        }
        out
    }

    /// The last A-MPDU never went on the air (its RTS got no CTS): its MPDUs are to send again,
    /// their attempts unchanged.
    pub fn not_sent(&mut self) {
        for slot in self.slots.iter_mut() {
            if let Slot::InFlight(retries) = *slot {
                *slot = Slot::Retransmit(retries);
            }
        }
    }

    /// The Block Ack for the last A-MPDU: `acked(sn)` for each of its MPDUs; or `None` when no
    /// Block Ack came (every one of them failed).
    pub fn on_block_ack(&mut self, acked: Option<&dyn Fn(u16) -> bool>) -> Settled {
        let mut settled = Settled::default();
        for i in 0..self.slots.len() {
            let sn = sn_add(self.start, i as u16);
            if let Slot::InFlight(retries) = self.slots[i] {
                self.slots[i] = if acked.is_some_and(|f| f(sn)) {
                    settled.acked.push(sn);
                    Slot::Acked
                } else if retries + 1 >= self.retry_limit {
                    settled.discarded.push(sn);
                    Slot::Discarded
                } else {
                    Slot::Retransmit(retries + 1)
                };
            }
        }
        while matches!(self.slots.front(), Some(Slot::Acked | Slot::Discarded)) {
            self.slots.pop_front();
            self.start = sn_add(self.start, 1);
        }
        settled
    }
}

/// The recipient's reordering buffer of one Block Ack agreement, holding `T`s (MSDUs).
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    size: u16,
    /// WinStartB.
    start: u16,
    held: VecDeque<Option<T>>,
}

impl<T> Reorder<T> {
    pub fn new(size: u16, start: u16) -> Reorder<T> {
        Reorder { size, start: start % SN_SPACE, held: VecDeque::new() }
    }

    pub fn window_start(&self) -> u16 {
        self.start
    }

    /// MPDUs held waiting for an earlier one.
    pub fn held(&self) -> usize {
        self.held.iter().filter(|h| h.is_some()).count()
    }

    /// An MPDU received: what the buffer releases now, in order (none for a duplicate).
    pub fn receive(&mut self, sn: u16, item: T) -> Vec<T> {
        let ahead = sn_distance(self.start, sn);
        if ahead >= SN_SPACE / 2 {
            return Vec::new(); // behind the window: a duplicate of something released
        }
        let mut released = Vec::new();
        if ahead >= self.size {
            // Beyond the window: move it so that `sn` is its last slot.
            let new_start = sn_add(sn, SN_SPACE - self.size + 1);
            released = self.advance_to(new_start);
        }
        let at = sn_distance(self.start, sn) as usize;
        if self.held.len() <= at {
            self.held.resize_with(at + 1, || None);
        }
        if self.held[at].is_none() {
            self.held[at] = Some(item);
        }
        released.extend(self.release_in_order());
        released
    }

    /// The originator's WinStart moved to `start` (a BlockAckReq, or the next PPDU's starting
    /// sequence number): what is held before it goes up in order, gaps lost, then any run from
    /// the new start.
    pub fn advance_to(&mut self, start: u16) -> Vec<T> {
        let by = sn_distance(self.start, start);
        if by >= SN_SPACE / 2 {
            return Vec::new(); // an old start: nothing to do
        }
        let mut released = Vec::new();
        for _ in 0..by {
            if let Some(slot) = self.held.pop_front() {
                released.extend(slot);
            }
        }
        self.start = start;
        released.extend(self.release_in_order());
        released
    }

    fn release_in_order(&mut self) -> Vec<T> {
        let mut out = Vec::new();
        while matches!(self.held.front(), Some(Some(_))) {
            out.extend(self.held.pop_front().flatten());
            self.start = sn_add(self.start, 1);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sn_slots_hold_a_window_across_the_wrap_in_window_order() {
        // A 64-MPDU window starting at 4090 spans 4090..=4095 and 0..=57; its slots are the
        // numbers' low 6 bits (4090 & 63 = 58), so 4090 and 58 would share one: 58 is outside.
        let mut w = SnSlots::new(64);
        for sn in [3u16, 4090, 4095, 0, 57] {
            w.insert(sn, u32::from(sn) * 10);
        }
        assert_eq!(w.len(), 5);
        let order: Vec<u16> = w.from_start(4090).map(|(sn, _)| sn).collect();
        assert_eq!(order, [4090, 4095, 0, 3, 57]);
        assert_eq!(w.get(4095), Some(&40950));
        assert_eq!(w.get(63), None, "4095's slot, another number");
        assert_eq!(w.remove(4095), Some(40950));
        assert_eq!(w.remove(4095), None);
        assert_eq!(w.len(), 4);
    }

    #[test]
    fn new_mpdus_only_within_the_window_and_retransmissions_first() {
        let mut o = Originator::new(64, 7, 0);
        assert_eq!(o.compose(100, 100), (0..64).collect::<Vec<u16>>(), "64 new at most");
        assert_eq!(o.compose(10, 10), Vec::<u16>::new(), "the window is full");
        // MPDUs 3 and 5 lost: the window stays at 3, the next A-MPDU resends 3 and 5 before 2
        // new ones (64 and 65 fit as 0-2 left the window).
        let s = o.on_block_ack(Some(&|sn| sn != 3 && sn != 5));
        assert_eq!((s.acked.len(), s.discarded.len(), o.window_start()), (62, 0, 3));
        assert_eq!(o.compose(4, 10), vec![3, 5, 64, 65]);
        assert_eq!(o.outstanding(), 4);
        let s = o.on_block_ack(Some(&|_| true));
        assert_eq!((s.acked, o.window_start()), (vec![3, 5, 64, 65], 66));
    }

    #[test]
    fn an_mpdu_at_its_retry_limit_is_discarded_and_the_window_moves_past_it() {
        // Retry limit 3: SN 0 fails three times (the third failure discards it); SN 1 gets
        // through the first time. No head-of-line stall: the window moves to 2.
        let mut o = Originator::new(64, 3, 0);
        assert_eq!(o.compose(2, 2), vec![0, 1]);
        let s = o.on_block_ack(Some(&|sn| sn == 1));
        assert_eq!((s.acked, o.window_start()), (vec![1], 0));
        assert_eq!(o.compose(8, 0), vec![0]);
        assert!(o.on_block_ack(None).discarded.is_empty(), "second failure: one retry left");
        assert_eq!(o.compose(8, 0), vec![0]);
        let s = o.on_block_ack(None);
        assert_eq!((s.discarded, o.window_start(), o.outstanding()), (vec![0], 2, 0));
    }

    #[test]
    fn sequence_numbers_wrap_at_4096() {
        let mut o = Originator::new(64, 7, 4090);
        let sent = o.compose(10, 10);
        assert_eq!(sent, vec![4090, 4091, 4092, 4093, 4094, 4095, 0, 1, 2, 3]);
        o.on_block_ack(Some(&|_| true));
        assert_eq!(o.window_start(), 4);
        assert_eq!(sn_distance(4095, 2), 3);
    }

    #[test]
    fn the_recipient_releases_in_order_and_drops_duplicates() {
        let mut r = Reorder::new(64, 0);
        assert_eq!(r.receive(0, "a"), vec!["a"]);
        assert_eq!(r.receive(2, "c"), Vec::<&str>::new(), "held behind the missing 1");
        assert_eq!(r.receive(3, "d"), Vec::<&str>::new());
        assert_eq!(r.held(), 2);
        assert_eq!(r.receive(1, "b"), vec!["b", "c", "d"]);
        assert_eq!(r.receive(1, "b again"), Vec::<&str>::new(), "a retransmission already delivered");
        assert_eq!(r.window_start(), 4);
    }

    #[test]
    fn a_discarded_mpdu_does_not_stall_the_recipient() {
        // 5 was discarded by the originator; 6 and 7 are held until its new WinStart (6) says so.
        let mut r = Reorder::new(64, 5);
        assert!(r.receive(6, 6).is_empty() && r.receive(7, 7).is_empty());
        assert_eq!(r.advance_to(6), vec![6, 7]);
        assert_eq!(r.window_start(), 8);
        // An MPDU beyond the window moves it: with WinStart 8 and size 64, SN 80 makes the
        // window 17..=80, releasing what was held before 17 (10, 12) in order.
        assert!(r.receive(10, 10).is_empty() && r.receive(12, 12).is_empty());
        assert_eq!(r.receive(80, 80), vec![10, 12]);
        assert_eq!(r.window_start(), 17);
        assert_eq!(r.held(), 1);
    }

    #[test]
    fn both_ends_over_a_lossy_channel_deliver_each_mpdu_once_in_order() {
        // 5 000 MPDUs in A-MPDUs of up to 32, each MPDU lost with probability 0.3 and each
        // Block Ack with 0.1 (seeded), retry limit 4: the recipient releases every MPDU it got
        // exactly once and in the order sent, everything acknowledged among them, and only
        // what the originator discarded (after 4 failures) may be missing.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut draw = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut o, mut r) = (Originator::new(64, 4, 4000), Reorder::new(64, 4000));
        let mut index_of_sn = std::collections::HashMap::new();
        let (mut sent, mut delivered, mut acked_total, mut discarded_total) = (0u64, Vec::new(), 0, 0);
        let mut rounds = 0;
        while sent < 5000 || o.outstanding() > 0 {
            rounds += 1;
            assert!(rounds < 100_000);
            delivered.extend(r.advance_to(o.window_start()));
            let batch = o.compose(32, (5000 - sent) as usize);
            for &sn in &batch {
                index_of_sn.entry(sn).or_insert_with(|| {
                    sent += 1;
                    sent - 1
                });
            }
            let got: Vec<u16> = batch.iter().copied().filter(|_| draw() >= 0.3).collect();
            for &sn in &got {
                delivered.extend(r.receive(sn, index_of_sn[&sn]));
            }
            let settled = if draw() < 0.1 { o.on_block_ack(None) } else { o.on_block_ack(Some(&|sn| got.contains(&sn))) };
            acked_total += settled.acked.len();
            discarded_total += settled.discarded.len();
            for sn in settled.acked.iter().chain(&settled.discarded) {
                index_of_sn.remove(sn);
            }
        }
        delivered.extend(r.advance_to(o.window_start()));
        assert!(delivered.windows(2).all(|w| w[0] < w[1]), "in order, each once");
        assert_eq!(acked_total + discarded_total, 5000);
        assert!(delivered.len() >= acked_total && delivered.len() <= 5000, "{} delivered, {acked_total} acked", delivered.len());
        assert!(discarded_total > 0 && acked_total > 4500, "the loss rates are felt: {acked_total} acked, {discarded_total} discarded");
    }
}
