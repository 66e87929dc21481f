//! Wired network pieces: the packet arena and one direction of a point-to-point link (a
//! [`Channel`]: DropTail queue, serializer at the link rate, propagation delay, Bernoulli loss).
//! Queue limits count packets waiting, not the one being serialized (as in ns-3's
//! PointToPointNetDevice and Linux qdiscs).

use lasthop_core::packet::Packet;
use lasthop_core::rng::{bernoulli, SimRng};
use lasthop_core::units::{BitRate, QueueLimit};
use lasthop_core::{Duration, Time};
use std::collections::VecDeque;

/// Packets live here while in the network and move by id; freed ids are reused, so the arena
/// never grows beyond the largest number of packets in flight at once.
#[derive(Debug, Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketArena {
    pub fn insert(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }
    pub fn get(&self, id: u32) -> &Packet {
        &self.slots[id as usize]
    }
    /// Removes a packet, returning a copy of it.
    pub fn take(&mut self, id: u32) -> Packet {
        self.free.push(id);
        self.slots[id as usize]
    }
    /// Packets currently in the network.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// Queue occupancy samples, recorded at every change when the link is probed.
#[derive(Debug, Default, Clone)]
pub struct QueueTrace {
    pub time_ns: Vec<u64>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

/// One direction of a point-to-point link.
#[derive(Debug)]
pub struct Channel {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate: BitRate,
    pub delay: Duration,
    pub limit: QueueLimit,
    pub loss: f64,
    pub rng: SimRng,
    pub queue: VecDeque<u32>,
    pub queued_bytes: u64,
    /// The packet being serialized.
    pub in_service: Option<u32>,
    pub max_queued_packets: u64,
    pub max_queued_bytes: u64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    pub link_losses: u64,
    pub busy_ns: u64,
    pub trace: Option<QueueTrace>,
}

impl Channel {
    /// Would a packet of `bytes` fit behind what is queued?
    pub fn admits(&self, bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.queue.len() as u64) < n,
            QueueLimit::Bytes(b) => self.queued_bytes + bytes as u64 <= b,
        }
    }

    pub fn push(&mut self, now: Time, id: u32, bytes: u32) {
        self.queue.push_back(id);
        self.queued_bytes += bytes as u64;
        self.max_queued_packets = self.max_queued_packets.max(self.queue.len() as u64);
        self.max_queued_bytes = self.max_queued_bytes.max(self.queued_bytes);
        self.record(now);
    }

    pub fn pop(&mut self, now: Time, bytes_of: impl Fn(u32) -> u32) -> Option<u32> {
        let id = self.queue.pop_front()?;
        self.queued_bytes -= bytes_of(id) as u64;
        self.record(now);
        Some(id)
    }

    /// Draws this channel's loss process for one packet.
    pub fn loses(&mut self) -> bool {
        bernoulli(&mut self.rng, self.loss)
    }

    pub fn record(&mut self, now: Time) {
        if let Some(t) = self.trace.as_mut() {
            t.time_ns.push(now.0);
            t.packets.push(self.queue.len() as u64);
            t.bytes.push(self.queued_bytes);
        }
    }
}
