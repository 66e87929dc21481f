//! Wired network pieces: the packet arena and one direction of a point-to-point link (a
//! [`Channel`]: a queue discipline (DropTail, CoDel, FQ-CoDel), serializer at the link rate,
//! propagation delay, Bernoulli loss).
//! Queue limits count packets waiting, not the one being serialized (as in ns-3's
//! PointToPointNetDevice and Linux qdiscs).

use lasthop_core::mechanisms::aqm::{Qdisc, Queued};
use lasthop_core::packet::Packet;
use lasthop_core::rng::{bernoulli, SimRng};
use lasthop_core::units::{BitRate, QueueLimit};
use lasthop_core::{Duration, Time};

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
    /// Packets waiting (DropTail, CoDel or FQ-CoDel).
    pub qdisc: Qdisc<u32>,
    /// The packet being serialized.
    pub in_service: Option<u32>,
    pub stats: ChannelStats,
    pub trace: Option<QueueTrace>,
}

/// What a channel counts while it runs.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    pub max_queued_packets: u64,
    pub max_queued_bytes: u64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    pub aqm_drops: u64,
    pub link_losses: u64,
    pub busy_ns: u64,
}

impl Channel {
    /// Queues packet `id`; returns a packet dropped to make room (the newcomer on a tail drop).
    pub fn push(&mut self, now: Time, id: u32, bytes: u32, flow: u32) -> Option<u32> {
        let dropped = self.qdisc.enqueue(Queued { item: id, bytes, flow, enqueued: now });
        if dropped.is_some() {
            self.stats.queue_drops += 1;
        }
        self.stats.max_queued_packets = self.stats.max_queued_packets.max(self.qdisc.len() as u64);
        self.stats.max_queued_bytes = self.stats.max_queued_bytes.max(self.qdisc.bytes());
        self.record(now);
        dropped.map(|d| d.item)
    }

    /// The next packet to serialize; AQM drops are appended to `dropped`.
    pub fn pop(&mut self, now: Time, dropped: &mut Vec<Queued<u32>>) -> Option<u32> {
        let before = dropped.len();
        let next = self.qdisc.dequeue(now, dropped);
        self.stats.aqm_drops += (dropped.len() - before) as u64;
        self.record(now);
        next.map(|q| q.item)
    }

    /// Draws this channel's loss process for one packet.
    pub fn loses(&mut self) -> bool {
        bernoulli(&mut self.rng, self.loss)
    }

    pub fn record(&mut self, now: Time) {
        if let Some(t) = self.trace.as_mut() {
            t.time_ns.push(now.0);
            t.packets.push(self.qdisc.len() as u64);
            t.bytes.push(self.qdisc.bytes());
        }
    }
}

/// A flow key for fair queueing: the packet's addresses, ports and protocol, mixed without
/// allocating (it is computed only for fair-queueing disciplines).
pub fn flow_key(p: &Packet) -> u32 {
    let a = (p.src as u64) << 32 | p.dst as u64;
    let b = (p.sport as u64) << 16 | p.dport as u64 | ((p.proto == lasthop_core::packet::Protocol::Tcp) as u64) << 32;
    let mut h = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    (h ^ (h >> 32)) as u32
}
