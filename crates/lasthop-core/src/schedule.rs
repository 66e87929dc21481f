//! The event schedule both drivers use: the simulator's engine and the emulator's real-time
//! loop. Events pop by time, and those at the same instant in the order they were scheduled
//! (insertion sequence) — the determinism rule of DESIGN.md, so that the same inputs give the
//! same order whatever the events are. A binary heap: O(log n) per event, no allocation once
//! grown.

use crate::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Scheduled<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
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
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Events of type `E` ordered by (time, insertion sequence).
#[derive(Debug)]
pub struct Schedule<E> {
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
}

impl<E> Default for Schedule<E> {
    fn default() -> Self {
        Schedule { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<E: Copy> Schedule<E> {
    /// Schedules `event` at `time`, after every event already scheduled at that time.
    pub fn schedule(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled { time, seq, event });
    }

    /// Pops the next event if it is due at or before `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        match self.heap.peek() {
            Some(s) if s.time <= limit => self.heap.pop().map(|s| (s.time, s.event)),
            _ => None,
        }
    }

    /// When the next event is due, if any.
    pub fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|s| s.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
    fn nothing_pops_before_it_is_due() {
        let mut q = Schedule::default();
        q.schedule(Time(10), 1u8);
        assert_eq!(q.pop_until(Time(9)), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), 1)));
        assert!(q.is_empty() && q.next_time().is_none());
    }
}
