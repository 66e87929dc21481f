//! The modelled flows of a hybrid run, driven by the emulator's clock: UDP sources whose
//! packets the driver makes and absorbs at their destination, and TCP flows that are pairs of
//! the core's sans-I/O endpoints, whose segments become real IPv4/TCP packets on the hops and
//! whose timers are the driver's wakes (`crate::model` builds both from the scenario).

use super::{Driver, Due, Origin};
use crate::model::{ModelFlow, ModelTcp};
use lasthop_core::hop::TrafficClass;
use lasthop_core::tcp::Segment;
use lasthop_core::wired::flow_key;
use lasthop_core::Time;

/// The modelled flows and the buffers they reuse.
#[derive(Default)]
pub(super) struct Modelled {
    pub(super) flows: Vec<ModelFlow>,
    /// Payload sizes of one departure (reused).
    pub(super) sizes: Vec<u32>,
    /// Modelled TCP flows: the core's endpoints, driven here.
    pub(super) tcps: Vec<ModelTcp>,
    /// Segments an endpoint sends (reused).
    pub(super) segs: Vec<Segment>,
}

impl Driver {
    /// Runs the modelled TCP flows (a hybrid run's) from their starts on.
    pub fn add_model_tcp(&mut self, tcps: Vec<ModelTcp>) {
        for t in tcps {
            if t.start < t.stop {
                self.schedule(t.start, Due::TcpOpen { m: self.modelled.tcps.len() as u32 });
            }
            if let Some(at) = t.next_message() {
                self.schedule(at, Due::TcpMessage { m: self.modelled.tcps.len() as u32 });
            }
            self.modelled.tcps.push(t);
        }
    }

    /// Generates the modelled flows (a hybrid run's) from their first departures on.
    pub fn add_models(&mut self, models: Vec<ModelFlow>) {
        for f in models {
            if let Some(at) = f.next_departure() {
                self.schedule(at, Due::Depart { model: self.modelled.flows.len() as u32 });
            }
            self.modelled.flows.push(f);
        }
    }

    /// Modelled flow `m` departs at model time `at` (not after the run's end): its datagrams
    /// enter the first hop at its source node, and its next departure is scheduled.
    pub(super) fn depart(&mut self, m: usize, at: Time) {
        if at > self.timeline.end {
            return;
        }
        let mut sizes = std::mem::take(&mut self.modelled.sizes);
        sizes.extend(self.modelled.flows[m].depart());
        for &payload in &sizes {
            let id = self.arena.alloc();
            let uid = self.arena.new_uid();
            let f = &self.modelled.flows[m];
            let slot = &mut self.arena.slots[id as usize];
            let (len, p) = f.packet(uid, payload, at, &mut slot.buf);
            slot.len = len;
            slot.read_at = at;
            slot.dst = f.dst;
            slot.tag = self.observer.on_model_sent(at, f.flow, 0, len as u32, payload);
            slot.key = flow_key(&p);
            slot.class = TrafficClass::Udp;
            slot.origin = Origin::ModelUdp;
            let src = f.src;
            self.forward(src, id, uid, at);
        }
        sizes.clear();
        self.modelled.sizes = sizes;
        if let Some(next) = self.modelled.flows[m].next_departure() {
            self.schedule(next, Due::Depart { model: m as u32 });
        }
    }

    /// Modelled TCP flow `m` opens at `at`: the client's SYN, and the writer's first bytes.
    pub(super) fn tcp_open(&mut self, m: usize, at: Time) {
        if at > self.timeline.end {
            return;
        }
        let mut segs = std::mem::take(&mut self.modelled.segs);
        self.modelled.tcps[m].open(at, &mut segs);
        self.tcp_send(m, 0, &mut segs, at);
        self.modelled.segs = segs;
    }

    /// Segment `seg` of modelled TCP flow `m` reaches its endpoint at `node`; the application
    /// at that end reads (the server) or writes more (the client).
    pub(super) fn tcp_segment(&mut self, m: usize, node: u32, seg: &Segment, at: Time) {
        let side = self.modelled.tcps[m].side_at(node);
        let mut segs = std::mem::take(&mut self.modelled.segs);
        self.modelled.tcps[m].ends[side].on_segment(at, seg, &mut segs);
        self.tcp_app(m, side, &mut segs, at);
        self.tcp_send(m, side, &mut segs, at);
        self.modelled.segs = segs;
    }

    /// Modelled TCP flow `m`'s message source writes its next message; the one after is
    /// scheduled.
    pub(super) fn tcp_message(&mut self, m: usize, at: Time) {
        if at >= self.timeline.end {
            return; // as in the simulator, nothing is sent at the run's last instant
        }
        let mut segs = std::mem::take(&mut self.modelled.segs);
        self.modelled.tcps[m].message(at, &mut segs);
        self.tcp_send(m, 0, &mut segs, at);
        self.modelled.segs = segs;
        if let Some(next) = self.modelled.tcps[m].next_message() {
            self.schedule(next, Due::TcpMessage { m: m as u32 });
        }
    }

    pub(super) fn tcp_timer(&mut self, m: usize, side: usize, at: Time) {
        if self.modelled.tcps[m].timer_at[side] != Some(at) {
            return; // superseded by an earlier deadline, which re-armed it
        }
        self.modelled.tcps[m].timer_at[side] = None;
        let mut segs = std::mem::take(&mut self.modelled.segs);
        self.modelled.tcps[m].ends[side].on_timer(at, &mut segs);
        self.tcp_app(m, side, &mut segs, at);
        self.tcp_send(m, side, &mut segs, at);
        self.modelled.segs = segs;
    }

    /// The application at endpoint `side`: the server reads everything (goodput), the client
    /// writes as much as its buffer takes.
    pub(super) fn tcp_app(&mut self, m: usize, side: usize, segs: &mut Vec<Segment>, at: Time) {
        if side == 1 {
            let n = self.modelled.tcps[m].read(at, segs);
            if n > 0 {
                self.observer.on_model_read(at, self.modelled.tcps[m].flow, n);
            }
        } else {
            self.modelled.tcps[m].write(at, segs);
        }
    }

    /// Endpoint `side` of modelled TCP flow `m` sends `segs` as real packets, then its timer is
    /// armed for its next deadline.
    pub(super) fn tcp_send(&mut self, m: usize, side: usize, segs: &mut Vec<Segment>, at: Time) {
        for seg in segs.drain(..) {
            let id = self.arena.alloc();
            let uid = self.arena.new_uid();
            let t = &self.modelled.tcps[m];
            let slot = &mut self.arena.slots[id as usize];
            let (len, p) = t.packet(side, &seg, uid, at, &mut slot.buf);
            let (src, dst) = t.nodes(side);
            slot.len = len;
            slot.read_at = at;
            slot.dst = dst;
            slot.tag = self.observer.on_model_sent(at, t.flow, side as u8, len as u32, seg.payload_len);
            slot.key = flow_key(&p);
            slot.class = TrafficClass::Tcp;
            slot.origin = Origin::ModelTcp { m: m as u32 };
            self.forward(src, id, uid, at);
        }
        let t = &mut self.modelled.tcps[m];
        if let Some(d) = t.ends[side].poll_deadline() {
            if t.timer_at[side].is_none_or(|s| d < s) {
                t.timer_at[side] = Some(d);
                self.schedule(d.max(at), Due::TcpTimer { m: m as u32, side: side as u8 });
            }
        }
    }
}
