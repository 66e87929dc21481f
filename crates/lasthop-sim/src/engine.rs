//! The event queue: a binary heap ordered by (time, insertion sequence), so events at the same
//! instant run in the order they were scheduled — the determinism rule of DESIGN.md. Events are a
//! small `Copy` enum dispatched with `match` in `sim.rs`; packets travel by arena id.

use lasthop_core::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Which end of a TCP connection a timer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Client,
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link model asked to be polled now with `token` (see `lasthop_core::hop`).
    HopWake { hop: u32, token: u64 },
    FlowStart { flow: u32 },
    FlowStop { flow: u32 },
    /// The application of a flow sends its next packet or message.
    AppSend { flow: u32 },
    /// The receiving application of a TCP flow reads.
    AppRead { flow: u32 },
    TcpTimer { flow: u32, end: End },
    /// A packet reaches `node` from its neighbour `from` over a hop.
    NodeArrive { node: u32, from: u32, pkt: u32 },
    /// A packet processor's timer (Snoop's local retransmission timer).
    ProcessorTimer { processor: u32 },
    /// A host's CPU finished the application work in service (stale unless `generation`
    /// is the CPU's current one).
    CpuDone { node: u32, generation: u32 },
    /// A host has processed a received packet, which now reaches its socket.
    HostDeliver { pkt: u32 },
}

#[derive(Clone, Copy, Debug)]
struct Scheduled {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    /// Reversed, so that the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Scheduled>,
    next_seq: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled { time, seq, event });
    }

    /// Pops the next event if it is due at or before `limit`.
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        match self.heap.peek() {
            Some(s) if s.time <= limit => self.heap.pop().map(|s| (s.time, s.event)),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The safety net behind validation: a run whose simulated time stops advancing (one entity
/// rescheduling itself at the same instant) is stopped instead of spinning forever.
#[derive(Clone, Debug)]
pub struct Watchdog {
    at: Time,
    events_at: u64,
    limit: u64,
}

impl Watchdog {
    /// Events at one instant before a run counts as stalled (~1 s of work at ~10 M events/s; a
    /// real scenario has at most a few thousand simultaneous events).
    pub const DEFAULT_LIMIT: u64 = 10_000_000;

    pub fn new(limit: u64) -> Self {
        Watchdog { at: Time::ZERO, events_at: 0, limit }
    }

    /// Counts an event at `t`; true once `limit` events have happened at one instant.
    pub fn stalled(&mut self, t: Time) -> bool {
        if t != self.at {
            self.at = t;
            self.events_at = 0;
        }
        self.events_at += 1;
        self.events_at > self.limit
    }
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog::new(Self::DEFAULT_LIMIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_by_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(Time(20), Event::FlowStart { flow: 0 });
        q.schedule(Time(10), Event::FlowStart { flow: 1 });
        q.schedule(Time(20), Event::FlowStart { flow: 2 });
        q.schedule(Time(10), Event::FlowStart { flow: 3 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(Time::MAX))
            .map(|(_, e)| match e {
                Event::FlowStart { flow } => flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn the_watchdog_fires_only_when_time_stands_still() {
        let mut w = Watchdog::new(3);
        // Three events per instant while time advances: never stalled.
        assert!((1..100).all(|t| (0..3).all(|_| !w.stalled(Time(t)))));
        assert!(!w.stalled(Time(100)) && !w.stalled(Time(100)) && !w.stalled(Time(100)));
        assert!(w.stalled(Time(100)), "the fourth event at one instant is one too many");
    }

    #[test]
    fn pop_until_respects_the_limit() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), Event::FlowStop { flow: 0 });
        assert!(q.pop_until(Time(4)).is_none());
        assert!(q.pop_until(Time(5)).is_some());
    }
}
