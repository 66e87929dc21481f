//! The driver's packet storage: each packet's bytes in a reused slot while a model holds it,
//! with what the driver knows of it (where it was read, its flow tag, its fair-queueing key).

use crate::observe::Tag;
use lasthop_core::hop::TrafficClass;
use lasthop_core::Time;

/// One packet's bytes and what the driver knows of it.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) buf: Box<[u8]>,
    pub(super) len: usize,
    pub(super) read_at: Time,
    pub(super) dst: u32,
    pub(super) tag: Tag,
    /// Fair-queueing key and traffic class, for every hop on the way.
    pub(super) key: u32,
    pub(super) class: TrafficClass,
    /// Where the packet comes from: a namespace, or a modelled flow (absorbed at its
    /// destination, never written to a device).
    pub(super) origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    Real,
    ModelUdp,
    /// Modelled TCP flow `m`'s segment.
    ModelTcp { m: u32 },
}

/// Packet storage: slots reused through a free list; a `PacketRef` is a slot index. It also
/// numbers the packets (`uid`, unique for the run) as they enter the models.
#[derive(Debug, Default)]
pub(super) struct Arena {
    pub(super) slots: Vec<Slot>,
    free: Vec<u32>,
    slot_bytes: usize,
    next_uid: u64,
}

impl Arena {
    /// An arena whose slots hold `slot_bytes` bytes (the largest packet a device gives).
    pub(super) fn new(slot_bytes: usize) -> Arena {
        Arena { slot_bytes, ..Arena::default() }
    }
    pub(super) fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            // A reused slot holds a real packet unless its filler says otherwise.
            self.slots[i as usize].origin = Origin::Real;
            return i;
        }
        let buf = vec![0u8; self.slot_bytes].into_boxed_slice();
        self.slots.push(Slot { buf, len: 0, read_at: Time::ZERO, dst: 0, tag: Tag::NONE, key: 0, class: TrafficClass::Udp, origin: Origin::Real });
        (self.slots.len() - 1) as u32
    }
    pub(super) fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    pub(super) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// The next packet's unique id.
    pub(super) fn new_uid(&mut self) -> u64 {
        self.next_uid += 1;
        self.next_uid - 1
    }
}

