//! The packet arena: where the simulator keeps packets while they are in the network (hops
//! hold `u32` handles into it; see `lasthop_core::hop`).

use lasthop_core::packet::Packet;

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
    /// The packet `id`, for a processor to rewrite in place.
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Removes a packet; it can be read until the next insert reuses its slot.
    pub fn free(&mut self, id: u32) -> &Packet {
        self.free.push(id);
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
