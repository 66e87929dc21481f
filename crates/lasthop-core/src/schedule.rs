//! The event schedule both drivers use: the simulator's engine and the emulator's real-time
//! loop. Events pop by time, and those at the same instant in the order they were scheduled
//! (insertion sequence) — the determinism rule of DESIGN.md, so that the same inputs give the
//! same order whatever the events are. A binary heap: O(log n) per event, no allocation once
//! grown.
//!
//! Beside the heap, *lanes*: streams whose events are scheduled in time order (a wire's
//! arrivals, propagating in the order they were sent) wait in a FIFO each, and a small heap
//! holds each lane's first. A wire full of packets then costs the main heap nothing, and pops
//! stay in (time, sequence) order: a lane is sorted by construction (an event out of its lane's
//! order goes to the main heap), and the next event is the earlier of the two heaps' tops.

use crate::Time;
use std::cmp::Ordering;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, Debug)]
struct Scheduled<E> {
    /// The time in its high 64 bits and the insertion sequence in its low: one integer compare
    /// orders by (time, sequence).
    key: u128,
    event: E,
}

impl<E> Scheduled<E> {
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Scheduled<E> {
    /// Reversed, so that the max-heap pops the earliest (time, seq) first; the event itself is
    /// never compared (the sequence numbers are unique).
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// Events of type `E` ordered by (time, insertion sequence).
#[derive(Debug)]
pub struct Schedule<E> {
    heap: BinaryHeap<Scheduled<E>>,
    lanes: Vec<VecDeque<Scheduled<E>>>,
    /// The key of each non-empty lane's first event, with the lane.
    lane_heads: BinaryHeap<Reverse<(u128, u32)>>,
    next_seq: u64,
}

impl<E> Default for Schedule<E> {
    fn default() -> Self {
        Schedule { heap: BinaryHeap::new(), lanes: Vec::new(), lane_heads: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<E: Copy> Schedule<E> {
    /// Schedules `event` at `time`, after every event already scheduled at that time.
    pub fn schedule(&mut self, time: Time, event: E) {
        let s = self.stamp(time, event);
        self.heap.push(s);
    }

    /// Schedules `event` at `time` like [`Schedule::schedule`], kept in lane `lane` (any
    /// number; lanes are made as first used) when no later event waits there: a stream
    /// scheduled in time order never touches the main heap.
    pub fn schedule_in_lane(&mut self, lane: u32, time: Time, event: E) {
        let s = self.stamp(time, event);
        let l = lane as usize;
        if l >= self.lanes.len() {
            self.lanes.resize_with(l + 1, VecDeque::new);
        }
        let fifo = &mut self.lanes[l];
        match fifo.back() {
            None => {
                self.lane_heads.push(Reverse((s.key, lane)));
                fifo.push_back(s);
            }
            Some(last) if last.key < s.key => fifo.push_back(s),
            Some(_) => self.heap.push(s),
        }
    }

    fn stamp(&mut self, time: Time, event: E) -> Scheduled<E> {
        let seq = self.next_seq;
        self.next_seq += 1;
        Scheduled { key: (u128::from(time.0) << 64) | u128::from(seq), event }
    }

    /// Pops the next event if it is due at or before `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        let in_heap = self.heap.peek().map(|s| s.key);
        let in_lane = self.lane_heads.peek().map(|h| h.0);
        let next = match (in_heap, in_lane) {
            (Some(h), Some((l, lane))) if l < h => Some((l, Some(lane))),
            (None, Some((l, lane))) => Some((l, Some(lane))),
            (Some(h), _) => Some((h, None)),
            (None, None) => None,
        };
        let (key, lane) = next?;
        if Time((key >> 64) as u64) > limit {
            return None;
        }
        let s = match lane {
            None => self.heap.pop().expect("peeked"),
            Some(lane) => self.pop_lane(lane),
        };
        Some((s.time(), s.event))
    }

    /// The first event of `lane`, the lane's next first taking its place among the heads.
    fn pop_lane(&mut self, lane: u32) -> Scheduled<E> {
        let fifo = &mut self.lanes[lane as usize];
        let s = fifo.pop_front().expect("a lane among the heads has an event");
        let mut head = self.lane_heads.peek_mut().expect("peeked");
        match fifo.front() {
            Some(next) => head.0 = (next.key, lane),
            None => {
                std::collections::binary_heap::PeekMut::pop(head);
            }
        }
        s
    }

    /// When the next event is due, if any.
    pub fn next_time(&self) -> Option<Time> {
        let in_heap = self.heap.peek().map(|s| s.key);
        let in_lane = self.lane_heads.peek().map(|h| h.0 .0);
        in_heap.into_iter().chain(in_lane).min().map(|k| Time((k >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.lane_heads.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_by_time_then_insertion_order() {
        // Scheduled out of time order, two at each instant: by time, and at one time in the
        // order they were scheduled (a, then c; b, then d).
        let mut q = Schedule::default();
        for (t, e) in [(20, 'a'), (10, 'b'), (20, 'c'), (10, 'd'), (15, 'e')] {
            q.schedule(Time(t), e);
        }
        assert_eq!(q.next_time(), Some(Time(10)));
        let order: String = std::iter::from_fn(|| q.pop_until(Time::MAX)).map(|(_, e)| e).collect();
        assert_eq!(order, "bdeac");
    }

    #[test]
    fn lanes_and_the_heap_pop_in_one_time_then_insertion_order() {
        // The order of the first test with the same events spread over two lanes and the heap,
        // and one event scheduled out of its lane's order ('f' at 12 after 'c' at 20 in lane
        // 0: it goes to the heap), and a lane emptied and used again ('g').
        let mut q = Schedule::default();
        q.schedule_in_lane(0, Time(20), 'a');
        q.schedule(Time(10), 'b');
        q.schedule_in_lane(0, Time(20), 'c');
        q.schedule_in_lane(3, Time(10), 'd');
        q.schedule_in_lane(3, Time(15), 'e');
        q.schedule_in_lane(0, Time(12), 'f');
        assert_eq!((q.len(), q.next_time()), (6, Some(Time(10))));
        let first: String = std::iter::from_fn(|| q.pop_until(Time(15))).map(|(_, e)| e).collect();
        assert_eq!(first, "bdfe");
        q.schedule_in_lane(3, Time(20), 'g');
        let rest: String = std::iter::from_fn(|| q.pop_until(Time::MAX)).map(|(_, e)| e).collect();
        assert_eq!(rest, "acg");
        assert!(q.is_empty() && q.next_time().is_none());
    }

    #[test]
    fn nothing_pops_before_it_is_due() {
        let mut q = Schedule::default();
        q.schedule(Time(10), 1u8);
        assert_eq!(q.pop_until(Time(9)), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), 1)));
        assert!(q.is_empty() && q.next_time().is_none());
    }
}
