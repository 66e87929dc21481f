//! The simulator's events: a small `Copy` enum dispatched with `match` in `sim.rs` (packets
//! travel by arena id), queued in lasthop-core's [`Schedule`](lasthop_core::schedule::Schedule)
//! by (time, insertion sequence) as the emulator's are; and the watchdog.

use lasthop_core::Time;

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

/// The simulator's events in lasthop-core's schedule: by time, then insertion order.
pub type EventQueue = lasthop_core::schedule::Schedule<Event>;

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
    fn the_watchdog_fires_only_when_time_stands_still() {
        let mut w = Watchdog::new(3);
        // Three events per instant while time advances: never stalled.
        assert!((1..100).all(|t| (0..3).all(|_| !w.stalled(Time(t)))));
        assert!(!w.stalled(Time(100)) && !w.stalled(Time(100)) && !w.stalled(Time(100)));
        assert!(w.stalled(Time(100)), "the fourth event at one instant is one too many");
    }

}
