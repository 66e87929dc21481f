//! Queue disciplines as sans-I/O state machines: DropTail, CoDel (RFC 8289), FQ-CoDel
//! (RFC 8290) and PIE (RFC 8033, in [`super::pie`]). They hold opaque items (`T`: a packet id,
//! a MAC frame) with their size, flow key and enqueue time; the caller asks for the next item
//! at `now` and learns what was dropped.
//!
//! CoDel follows the RFC 8289 pseudocode (target 5 ms, interval 100 ms, drop-next by the control
//! law interval/√count, count re-use when re-entering the dropping state within 16 intervals).
//! FQ-CoDel follows RFC 8290 §4: 1024 queues by flow hash, deficit round robin with a quantum of
//! one MTU, new/old flow lists, a CoDel instance per queue, and on overflow a drop from the head of
//! the queue with the most bytes. With `ecn` (RFC 3168; Linux's `ecn` option of codel and
//! fq_codel, codel_impl.h) an ECN-capable item CoDel would drop is marked Congestion Experienced
//! instead ([`Queued::ce`]) and goes on; the control law advances as for a drop, and that
//! dequeue ends there.

use super::pie::{Pie, PieParams};
use crate::rng::SimRng;
use crate::time::{Duration, Time};
use crate::units::QueueLimit;
use std::collections::VecDeque;

pub const CODEL_TARGET: Duration = Duration::from_millis(5);
pub const CODEL_INTERVAL: Duration = Duration::from_millis(100);
pub const FQ_CODEL_FLOWS: usize = 1024;
pub const FQ_CODEL_LIMIT: u64 = 10_240;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued<T> {
    pub item: T,
    pub bytes: u32,
    /// Flow key (FQ-CoDel hashes it into a queue).
    pub flow: u32,
    pub enqueued: Time,
    /// ECN-capable (its ECN field ECT(0) or ECT(1)): an ECN queue marks it instead of dropping.
    pub ect: bool,
    /// Set by the queue: marked Congestion Experienced.
    pub ce: bool,
}

impl<T> Queued<T> {
    /// An item not ECN-capable.
    pub fn new(item: T, bytes: u32, flow: u32, enqueued: Time) -> Self {
        Queued { item, bytes, flow, enqueued, ect: false, ce: false }
    }
}

/// CoDel's per-queue control state (RFC 8289 §5).
#[derive(Clone, Debug, Default)]
pub struct CoDelState {
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoDelParams {
    pub target: Duration,
    pub interval: Duration,
    /// Below this many bytes queued, never drop (one MTU).
    pub mtu: u32,
    /// Mark ECN-capable items instead of dropping them.
    pub ecn: bool,
}

impl Default for CoDelParams {
    fn default() -> Self {
        CoDelParams { target: CODEL_TARGET, interval: CODEL_INTERVAL, mtu: 1500, ecn: false }
    }
}

fn control_law(t: Time, interval: Duration, count: u32) -> Time {
    t + Duration((interval.0 as f64 / (count.max(1) as f64).sqrt()) as u64)
}

impl CoDelState {
    /// RFC 8289 `dodequeue`: pops the head and says whether it may be dropped.
    fn dodequeue<T: Copy>(&mut self, q: &mut VecDeque<Queued<T>>, bytes: &mut u64, now: Time, p: &CoDelParams) -> (Option<Queued<T>>, bool) {
        let Some(item) = q.pop_front() else {
            self.first_above_time = None;
            return (None, false);
        };
        *bytes -= item.bytes as u64;
        let sojourn = now - item.enqueued;
        let mut ok_to_drop = false;
        if sojourn < p.target || *bytes < p.mtu as u64 {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + p.interval),
                Some(t) if now >= t => ok_to_drop = true,
                _ => {}
            }
        }
        (Some(item), ok_to_drop)
    }

    /// RFC 8289 `dequeue`: the next item to send; CoDel's drops go to `dropped`.
    fn dequeue<T: Copy>(
        &mut self,
        q: &mut VecDeque<Queued<T>>,
        bytes: &mut u64,
        now: Time,
        p: &CoDelParams,
        dropped: &mut Vec<Queued<T>>,
    ) -> Option<Queued<T>> {
        let (mut r, mut ok) = self.dodequeue(q, bytes, now, p);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if let Some(x) = r.as_mut().filter(|x| p.ecn && x.ect) {
                    x.ce = true;
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    break;
                }
                if let Some(x) = r.take() {
                    dropped.push(x);
                }
                (r, ok) = self.dodequeue(q, bytes, now, p);
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                }
            }
        } else if ok {
            if let Some(x) = r.as_mut().filter(|x| p.ecn && x.ect) {
                x.ce = true;
            } else {
                if let Some(x) = r.take() {
                    dropped.push(x);
                }
                (r, _) = self.dodequeue(q, bytes, now, p);
            }
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = if delta > 1 && now < self.drop_next + p.interval * 16 { delta } else { 1 };
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
        }
        r
    }
}

#[derive(Clone, Debug, Default)]
struct FlowQueue<T> {
    q: VecDeque<Queued<T>>,
    bytes: u64,
    deficit: i64,
    codel: CoDelState,
    listed: bool,
}

/// A queue discipline.
#[derive(Clone, Debug)]
pub enum Qdisc<T> {
    DropTail { q: VecDeque<Queued<T>>, bytes: u64, limit: QueueLimit },
    CoDel { q: VecDeque<Queued<T>>, bytes: u64, limit: QueueLimit, params: CoDelParams, state: CoDelState },
    FqCoDel(Box<FqCoDel<T>>),
    /// PIE (RFC 8033, [`super::pie`]): drops (or marks) on arrival.
    Pie(Box<Pie<T>>),
}

#[derive(Clone, Debug)]
pub struct FqCoDel<T> {
    flows: Vec<FlowQueue<T>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit: u64,
    packets: u64,
    bytes: u64,
    params: CoDelParams,
}

fn admits<T>(q: &VecDeque<Queued<T>>, bytes: u64, limit: QueueLimit, new: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => (q.len() as u64) < n,
        QueueLimit::Bytes(b) => bytes + new as u64 <= b,
    }
}

impl<T: Copy + Default> Qdisc<T> {
    pub fn drop_tail(limit: QueueLimit) -> Self {
        Qdisc::DropTail { q: VecDeque::new(), bytes: 0, limit }
    }
    pub fn codel(limit: QueueLimit, params: CoDelParams) -> Self {
        Qdisc::CoDel { q: VecDeque::new(), bytes: 0, limit, params, state: CoDelState::default() }
    }
    pub fn fq_codel(limit_packets: u64, params: CoDelParams) -> Self {
        Qdisc::FqCoDel(Box::new(FqCoDel::new(limit_packets, params.mtu + 14, params)))
    }
    /// PIE holding at most `limit`, its random drops drawn from `rng`.
    pub fn pie(limit: QueueLimit, params: PieParams, rng: SimRng) -> Self {
        Qdisc::Pie(Box::new(Pie::new(limit, params, rng)))
    }

    /// Arrivals the AQM dropped on enqueue (PIE's early drops; CoDel drops on dequeue).
    pub fn early_drops(&self) -> u64 {
        match self {
            Qdisc::Pie(p) => p.early_drops,
            _ => 0,
        }
    }

    /// Whether items need a flow key (only fair queueing looks at it).
    pub fn is_fair(&self) -> bool {
        matches!(self, Qdisc::FqCoDel(_))
    }

    /// Whether the AQM marks ECN-capable items instead of dropping them.
    pub fn marks_ecn(&self) -> bool {
        match self {
            Qdisc::DropTail { .. } => false,
            Qdisc::CoDel { params, .. } => params.ecn,
            Qdisc::FqCoDel(f) => f.params.ecn,
            Qdisc::Pie(p) => p.params().ecn,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Qdisc::DropTail { q, .. } | Qdisc::CoDel { q, .. } => q.len(),
            Qdisc::FqCoDel(f) => f.packets as usize,
            Qdisc::Pie(p) => p.q.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn bytes(&self) -> u64 {
        match self {
            Qdisc::DropTail { bytes, .. } | Qdisc::CoDel { bytes, .. } => *bytes,
            Qdisc::FqCoDel(f) => f.bytes,
            Qdisc::Pie(p) => p.bytes,
        }
    }

    /// Enqueues `x`; returns the item dropped to make room (`x` itself for a tail drop).
    pub fn enqueue(&mut self, x: Queued<T>) -> Option<Queued<T>> {
        match self {
            Qdisc::DropTail { q, bytes, limit } | Qdisc::CoDel { q, bytes, limit, .. } => {
                if !admits(q, *bytes, *limit, x.bytes) {
                    return Some(x);
                }
                *bytes += x.bytes as u64;
                q.push_back(x);
                None
            }
            Qdisc::FqCoDel(f) => f.enqueue(x),
            Qdisc::Pie(p) => p.enqueue(x),
        }
    }

    /// The next item to transmit at `now`; AQM drops are appended to `dropped`.
    pub fn dequeue(&mut self, now: Time, dropped: &mut Vec<Queued<T>>) -> Option<Queued<T>> {
        match self {
            Qdisc::DropTail { q, bytes, .. } => {
                let x = q.pop_front()?;
                *bytes -= x.bytes as u64;
                Some(x)
            }
            Qdisc::CoDel { q, bytes, params, state, .. } => state.dequeue(q, bytes, now, params, dropped),
            Qdisc::FqCoDel(f) => f.dequeue(now, dropped),
            Qdisc::Pie(p) => p.dequeue(now),
        }
    }

    /// Every queued item (for censuses).
    pub fn items(&self) -> Box<dyn Iterator<Item = &Queued<T>> + '_> {
        match self {
            Qdisc::DropTail { q, .. } | Qdisc::CoDel { q, .. } => Box::new(q.iter()),
            Qdisc::FqCoDel(f) => Box::new(f.items()),
            Qdisc::Pie(p) => Box::new(p.q.iter()),
        }
    }
}

impl<T: Copy> FqCoDel<T> {
    /// FQ-CoDel over [`FQ_CODEL_FLOWS`] queues holding at most `limit_packets`, each flow's
    /// deficit refilled by `quantum` bytes (RFC 8290: one MTU with its Ethernet header;
    /// mac80211: 300).
    pub fn new(limit_packets: u64, quantum: u32, params: CoDelParams) -> Self {
        FqCoDel {
            flows: (0..FQ_CODEL_FLOWS).map(|_| FlowQueue { q: VecDeque::new(), bytes: 0, deficit: 0, codel: CoDelState::default(), listed: false }).collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: quantum as i64,
            limit: limit_packets,
            packets: 0,
            bytes: 0,
            params,
        }
    }

    pub fn len(&self) -> usize {
        self.packets as usize
    }
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    /// The bytes queued in its fattest flow (0 when empty).
    pub fn fattest_flow_bytes(&self) -> u64 {
        self.flows.iter().map(|f| f.bytes).max().unwrap_or(0)
    }

    /// Drops the head of its fattest flow (RFC 8290 §4.1.3; mac80211's `fq_tin_enqueue` over
    /// the limit).
    pub fn drop_from_fattest(&mut self) -> Option<Queued<T>> {
        let fat = (0..FQ_CODEL_FLOWS).max_by_key(|&k| (self.flows[k].bytes, std::cmp::Reverse(k)))?;
        let fq = &mut self.flows[fat];
        let d = fq.q.pop_front()?;
        fq.bytes -= d.bytes as u64;
        self.bytes -= d.bytes as u64;
        self.packets -= 1;
        Some(d)
    }

    /// Every queued item.
    pub fn items(&self) -> impl Iterator<Item = &Queued<T>> + '_ {
        self.flows.iter().flat_map(|fq| fq.q.iter())
    }

    pub fn enqueue(&mut self, x: Queued<T>) -> Option<Queued<T>> {
        // A multiplicative hash of the flow key spreads sequential ids over the queues.
        let i = (x.flow.wrapping_mul(0x9E37_79B1) >> 22) as usize % FQ_CODEL_FLOWS;
        let fq = &mut self.flows[i];
        fq.q.push_back(x);
        fq.bytes += x.bytes as u64;
        self.bytes += x.bytes as u64;
        self.packets += 1;
        if !fq.listed {
            fq.listed = true;
            fq.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        if self.packets > self.limit {
            // RFC 8290 §4.1.3: drop from the head of the fattest queue.
            return self.drop_from_fattest();
        }
        None
    }

    /// The next item to send at `now`; CoDel's drops are appended to `dropped`.
    pub fn dequeue(&mut self, now: Time, dropped: &mut Vec<Queued<T>>) -> Option<Queued<T>> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = *(if from_new { self.new_flows.front() } else { self.old_flows.front() })?;
            if self.flows[i].deficit <= 0 {
                self.flows[i].deficit += self.quantum;
                if from_new { self.new_flows.pop_front() } else { self.old_flows.pop_front() };
                self.old_flows.push_back(i);
                continue;
            }
            let before = dropped.len();
            let fq = &mut self.flows[i];
            let mut qbytes = fq.bytes;
            let r = fq.codel.dequeue(&mut fq.q, &mut qbytes, now, &self.params, dropped);
            let removed: u64 = fq.bytes - qbytes;
            fq.bytes = qbytes;
            self.bytes -= removed;
            self.packets -= (dropped.len() - before) as u64 + r.is_some() as u64;
            match r {
                None => {
                    // RFC 8290 §4.2: an emptied new flow moves to the old list (to avoid
                    // starvation); an emptied old flow leaves the lists.
                    if from_new { self.new_flows.pop_front() } else { self.old_flows.pop_front() };
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(i);
                    } else {
                        self.flows[i].listed = false;
                    }
                }
                Some(x) => {
                    self.flows[i].deficit -= x.bytes as i64;
                    return Some(x);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: u32, flow: u32, t: Time) -> Queued<u32> {
        Queued::new(id, 1500, flow, t)
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn codel_leaves_a_short_standing_queue_alone() {
        let mut q = Qdisc::codel(QueueLimit::Packets(1000), CoDelParams::default());
        let mut dropped = Vec::new();
        // 10 packets arrive at once and leave one per ms: sojourn ≤ 10 ms for under 100 ms.
        for i in 0..10 {
            q.enqueue(item(i, 0, ms(0)));
        }
        for t in 1..=10 {
            assert!(q.dequeue(ms(t), &mut dropped).is_some());
        }
        assert!(dropped.is_empty(), "above target for less than one interval: no drop");
    }

    #[test]
    fn codel_drops_after_an_interval_above_target_then_faster() {
        // A standing queue: 400 packets enqueued at 0, one dequeued per ms. The sojourn reaches the
        // 5 ms target at t = 5, so first_above_time = 105 ms and the first drop is at 105 ms with
        // count 1: the next is due at 105 + 100/√1 = 205 ms, then 205 + 100/√2 = 275.7 (-> 276),
        // then 275.7 + 100/√3 = 333.4 (-> 334) (RFC 8289 control law, checked at whole ms here).
        let mut q = Qdisc::codel(QueueLimit::Packets(1000), CoDelParams::default());
        let mut dropped = Vec::new();
        for i in 0..400 {
            q.enqueue(item(i, 0, ms(0)));
        }
        let mut drop_times = Vec::new();
        for t in 1..=350 {
            let before = dropped.len();
            q.dequeue(ms(t), &mut dropped);
            if dropped.len() > before {
                drop_times.push(t);
            }
        }
        assert_eq!(drop_times, vec![105, 205, 276, 334]);
    }

    #[test]
    fn codel_with_ecn_marks_at_the_times_it_would_drop() {
        // The standing queue above, every packet ECN-capable and the queue marking (Linux's
        // codel `ecn`): CE marks at 105, 205, 276 and 334 ms, the drop schedule (each mark
        // advances the control law as a drop does), and nothing dropped; the marked packets
        // are the ones dequeued then. A packet not ECN-capable is still dropped.
        let mut q = Qdisc::codel(QueueLimit::Packets(1000), CoDelParams { ecn: true, ..CoDelParams::default() });
        let mut dropped = Vec::new();
        for i in 0..400 {
            q.enqueue(Queued { ect: true, ..item(i, 0, ms(0)) });
        }
        let mut mark_times = Vec::new();
        for t in 1..=350 {
            if q.dequeue(ms(t), &mut dropped).is_some_and(|x| x.ce) {
                mark_times.push(t);
            }
        }
        assert_eq!((mark_times, dropped.len()), (vec![105, 205, 276, 334], 0));
        let mut plain = Qdisc::codel(QueueLimit::Packets(1000), CoDelParams { ecn: true, ..CoDelParams::default() });
        for i in 0..400 {
            plain.enqueue(item(i, 0, ms(0)));
        }
        for t in 1..=106 {
            plain.dequeue(ms(t), &mut dropped);
        }
        assert_eq!(dropped.len(), 1, "Not-ECT: dropped at 105 ms as before");
    }

    #[test]
    fn fq_codel_serves_a_sparse_flow_before_a_backlog() {
        let mut q: Qdisc<u32> = Qdisc::fq_codel(10_240, CoDelParams::default());
        let mut dropped = Vec::new();
        for i in 0..100 {
            q.enqueue(item(i, 1, ms(0))); // a bulk flow's backlog
        }
        // Bulk spends its quantum (1514 B) on its first packet and goes negative on the second.
        q.dequeue(ms(1), &mut dropped);
        q.dequeue(ms(2), &mut dropped);
        q.enqueue(Queued::new(999, 200, 2, ms(2)));
        // The sparse flow is new: it goes next, not behind 99 bulk packets.
        assert_eq!(q.dequeue(ms(3), &mut dropped).map(|x| x.item), Some(999));
        assert_eq!(q.dequeue(ms(4), &mut dropped).map(|x| x.item), Some(2), "then bulk resumes");
    }

    #[test]
    fn fq_codel_overflow_drops_from_the_fattest_flow() {
        let mut q: Qdisc<u32> = Qdisc::fq_codel(5, CoDelParams::default());
        for i in 0..4 {
            assert!(q.enqueue(item(i, 1, ms(0))).is_none());
        }
        assert!(q.enqueue(item(10, 2, ms(0))).is_none());
        let d = q.enqueue(item(11, 2, ms(0))).expect("over the limit");
        assert_eq!(d.item, 0, "the head of the fattest queue (flow 1) is dropped, not the newcomer");
        assert_eq!(q.len(), 5);
    }
}
