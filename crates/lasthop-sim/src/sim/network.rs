//! The network path of a packet: a node's interface (its processors, top-down out and
//! bottom-up in), the hop contract's events, captures, drops by cause and delivery to the
//! endpoint. Paper 003's Fig. 3 order: SAP-LAW, Snoop, the error generator, then the hop.

use super::*;

impl Simulation {
    /// Captures what crosses `node` (all its interfaces, or only the one towards `peer`) into an
    /// in-memory pcap; returns the capture's index for [`Simulation::capture_pcap`].
    pub fn add_capture(&mut self, node: &str, peer: Option<&str>) -> Result<usize, String> {
        let idx = |n: &str| self.net.node_names.iter().position(|x| x == n).map(|i| i as u32);
        let known = || self.net.node_names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        let node_id = idx(node).ok_or_else(|| format!("--pcap {node:?}: no such node; nodes: {}", known()))?;
        let peer_id = match peer {
            None => None,
            Some(p) => {
                let id = idx(p).ok_or_else(|| format!("--pcap {node}:{p}: no such node {p:?}; nodes: {}", known()))?;
                let n = self.net.n_nodes;
                let adjacent = (0..n).any(|d| self.net.next_node[node_id as usize * n + d] == id || self.net.next_node[id as usize * n + d] == node_id);
                if !adjacent {
                    return Err(format!("--pcap {node}:{p}: {p:?} is not a neighbour of {node:?}"));
                }
                Some(id)
            }
        };
        self.net.captures.push(Capture { node: node_id, peer: peer_id, pcap: lasthop_core::pcap::PcapWriter::new() });
        for slot in &mut self.net.hops {
            slot.hop.report_transmits(true);
        }
        Ok(self.net.captures.len() - 1)
    }

    /// The bytes of a pcap capture (a complete file).
    pub fn capture_pcap(&self, i: usize) -> Vec<u8> {
        self.net.captures[i].pcap.file()
    }

    /// Packet `id` reaching `node` from `from` runs the processors of that interface bottom-up:
    /// a Snoop agent may retransmit locally and absorb a duplicate ACK. True if it goes no
    /// further (it has then left the arena).
    pub(super) fn ingress_absorbs(&mut self, node: u32, from: u32, id: u32) -> bool {
        let iface = node as usize * self.net.n_nodes + from as usize;
        for pos in (0..self.net.chains[iface].len()).rev() {
            let k = self.net.chains[iface][pos] as usize;
            let mut emit = std::mem::take(&mut self.net.emitted);
            let verdict = self.net.processors[k].processor.ingress(self.now, self.net.packets.get_mut(id), &mut emit);
            self.send_emitted(k, &mut emit);
            self.net.emitted = emit;
            self.arm_processor(k);
            if let Verdict::Drop(cause) = verdict {
                self.discard(id, cause);
                return true;
            }
        }
        false
    }

    /// Packets processor `k` emits leave its node as new transmissions of their flow (new
    /// per-flow sequence, the original send time), entering the interface's chain just below `k`.
    pub(super) fn send_emitted(&mut self, k: usize, emit: &mut Vec<Packet>) {
        let node = self.net.processors[k].node;
        for mut q in emit.drain(..) {
            let f = &mut self.flows[q.flow as usize];
            let dir = usize::from(q.dst != f.ends.dst);
            q.pkt_seq = f.meters.number(dir);
            q.uid = self.next_uid;
            self.next_uid += 1;
            f.meters.direction(dir).on_sent(self.now, q.wire_len());
            let next = self.net.next_node[node as usize * self.net.n_nodes + q.dst as usize];
            let chain = &self.net.chains[node as usize * self.net.n_nodes + next as usize];
            let below = chain.iter().position(|&x| x as usize == k).map_or(0, |i| i + 1);
            let id = self.net.packets.insert(q);
            self.pass_down(node, next, below, id);
        }
    }

    /// Schedules processor `k`'s timer if its deadline is earlier than the pending one.
    pub(super) fn arm_processor(&mut self, k: usize) {
        if let Some(d) = self.net.processors[k].processor.next_deadline() {
            if self.net.processors[k].scheduled.is_none_or(|s| d < s) {
                self.net.processors[k].scheduled = Some(d);
                self.events.schedule(d.max(self.now), Event::ProcessorTimer { processor: k as u32 });
            }
        }
    }

    pub(super) fn on_processor_timer(&mut self, k: usize) {
        if self.net.processors[k].scheduled == Some(self.now) {
            self.net.processors[k].scheduled = None;
        }
        let mut emit = std::mem::take(&mut self.net.emitted);
        self.net.processors[k].processor.on_timer(self.now, &mut emit);
        self.send_emitted(k, &mut emit);
        self.net.emitted = emit;
        self.arm_processor(k);
    }

    /// Records `p` at time `t` in the captures of node `at` (on its interface towards `other`).
    pub(super) fn capture(&mut self, t: Time, at: u32, other: u32, p: &Packet) {
        for c in &mut self.net.captures {
            if c.node == at && c.peer.is_none_or(|x| x == other) {
                c.pcap.record(t, p);
            }
        }
    }

    /// Hands a packet to the network at `node`, through its interface towards the next node.
    pub(super) fn send_from(&mut self, node: u32, p: Packet) {
        let dst = p.dst;
        let id = self.net.packets.insert(p);
        self.forward(node, dst, id);
    }

    /// Sends packet `id` (in the arena) on from `node` towards `dst`: it stays in its slot from
    /// the sender's interface to the receiver, so a forwarding node copies nothing.
    fn forward(&mut self, node: u32, dst: u32, id: u32) {
        let next = self.net.next_node[node as usize * self.net.n_nodes + dst as usize];
        self.pass_down(node, next, 0, id);
    }

    /// The interface of `node` towards `next`: its processors from chain position `pos` down
    /// (top-down as in paper 003's Fig. 3: SAP-LAW, then Snoop, which caches what it sees, then
    /// the packet error generator, so Snoop can repair its drops), then the hop (a capture on
    /// the interface records the packet when the hop puts it on the medium).
    pub(super) fn pass_down(&mut self, node: u32, next: u32, pos: usize, id: u32) {
        if !self.net.chains.is_empty() {
            let iface = node as usize * self.net.n_nodes + next as usize;
            for i in pos..self.net.chains[iface].len() {
                let k = self.net.chains[iface][i] as usize;
                let verdict = self.net.processors[k].processor.egress(self.now, self.net.packets.get_mut(id));
                self.arm_processor(k);
                if let Verdict::Drop(cause) = verdict {
                    self.discard(id, cause);
                    return;
                }
            }
        }
        self.route(node, id);
    }

    /// Offers packet `id` to the hop `node` sends its destination's packets on.
    fn route(&mut self, node: u32, id: u32) {
        let p = self.net.packets.get(id);
        let Egress::Hop { hop, from, to } = self.net.routes[node as usize * self.net.n_nodes + p.dst as usize] else {
            unreachable!("validated: every flow has a route")
        };
        let h = hop as usize;
        let flow = if self.net.hops[h].hop.is_fair(from) { flow_key(p) } else { 0 };
        let class = match p.proto {
            Protocol::Tcp => TrafficClass::Tcp,
            Protocol::Udp => TrafficClass::Udp,
        };
        let offer = Offer { pkt: id, bytes: p.wire_len(), class, flow, uid: p.uid, dscp: p.dscp, from, to, ect: ecn::capable(p.ecn) };
        let start = self.net.hop_out.len();
        self.net.hops[h].hop.accept(self.now, offer, &mut self.net.hop_out);
        self.on_hop_events(h, start);
    }

    /// A hop's wake with `token` is due.
    pub(super) fn on_hop_wake(&mut self, h: usize, token: u64) {
        let start = self.net.hop_out.len();
        self.net.hops[h].hop.poll(self.now, token, &mut self.net.hop_out);
        if !self.live_awnd.is_empty() && matches!(self.net.hops[h].hop, Hop::Rlc(_)) && RlcHop::is_arrival(token) {
            self.update_live_awnd(h);
        }
        self.on_hop_events(h, start);
    }

    /// Carries out what hop `h` asked for (its events from `start` on in the shared buffer), in
    /// its order. The buffer is a stack: an event that makes another hop act at once (a
    /// delivery forwarded on) appends that hop's events above these and removes them again.
    fn on_hop_events(&mut self, h: usize, start: usize) {
        // By index, not `drain`: the events are `Copy` and this runs for every packet at every
        // hop (a `Drain` cost ~60 instructions per call here; callgrind, bench dumbbell-100s-10M).
        for i in start..self.net.hop_out.len() {
            match self.net.hop_out[i] {
                HopEvent::Wake { at, token } => self.events.schedule(at, Event::HopWake { hop: h as u32, token }),
                HopEvent::Arrive { pkt, from, to, at } => {
                    let nodes = &self.net.hops[h].nodes;
                    let (node, from) = (nodes[to as usize], nodes[from as usize]);
                    // A hop's arrivals mostly come in time order (a wire's always): its lane.
                    self.events.schedule_in_lane(h as u32, at, Event::NodeArrive { node, from, pkt });
                }
                HopEvent::Deliver { pkt, from, to } => {
                    let nodes = &self.net.hops[h].nodes;
                    let (node, from) = (nodes[to as usize], nodes[from as usize]);
                    self.on_node_arrive(node, from, pkt);
                }
                HopEvent::Drop { pkt, cause } => self.discard(pkt, cause),
                HopEvent::Mark { pkt } => self.net.packets.get_mut(pkt).ecn = ecn::CE,
                HopEvent::Transmit { pkt, from, to, at } => {
                    if !self.net.captures.is_empty() {
                        let (node, peer) = (self.net.hops[h].nodes[from as usize], self.net.hops[h].nodes[to as usize]);
                        let p = *self.net.packets.get(pkt);
                        self.capture(at, node, peer, &p);
                    }
                }
            }
        }
        self.net.hop_out.truncate(start);
    }

    /// Interlayer collaboration (Koga et al.): receivers behind RLC hop `h` recompute their
    /// window from the retransmissions the link needed in the last second.
    pub(super) fn update_live_awnd(&mut self, h: usize) {
        let Hop::Rlc(r) = &mut self.net.hops[h].hop else { return };
        let observed = lasthop_scenario::build::tcp::observed_retransmissions(r, self.now);
        for live in self.live_awnd.iter_mut().filter(|l| l.rlc_hop == h) {
            if live.window.observe(observed) {
                if let FlowKind::Tcp(t) = &mut self.flows[live.flow].kind {
                    t.server.set_awnd_cap(Some(live.window.cap_bytes()));
                }
            }
        }
    }

    /// Packet `id` reaches `node` from its neighbour `from` (over any kind of hop): captured,
    /// shown to a Snoop agent on that interface, then delivered or forwarded.
    pub(super) fn on_node_arrive(&mut self, node: u32, from: u32, id: u32) {
        if !self.net.captures.is_empty() {
            let p = *self.net.packets.get(id);
            self.capture(self.now, node, from, &p);
        }
        if !self.net.chains.is_empty() && self.ingress_absorbs(node, from, id) {
            return;
        }
        let dst = self.net.packets.get(id).dst;
        let packet_cost = self.hosts.devices[node as usize].packet_cost;
        if dst == node && packet_cost.0 > 0 {
            // The host's stack takes the packet when its CPU gets to it (interrupt level); it
            // waits in the arena.
            let cpu = &mut self.hosts.cpus[node as usize];
            let (done, stretched) = cpu.packet(self.now, packet_cost);
            if stretched {
                let (at, generation) = (cpu.current_done_at(), cpu.generation);
                self.events.schedule(at, Event::CpuDone { node, generation });
            }
            self.events.schedule(done, Event::HostDeliver { pkt: id });
        } else if dst == node {
            let p = self.net.packets.take(id);
            self.deliver(p);
        } else {
            self.forward(node, dst, id);
        }
    }

    /// Takes packet `id` out of the network as lost for `cause` (read in its freed slot: no
    /// copy of the packet).
    pub(super) fn discard(&mut self, id: u32, cause: DropCause) {
        let p = self.net.packets.free(id);
        let now = self.now;
        let f = &mut self.flows[p.flow as usize];
        let forward = p.dst == f.ends.dst;
        f.meters.direction(usize::from(!forward)).on_dropped(now, cause);
        if forward {
            if let Some(r) = f.meters.records.as_mut() {
                r.pkt_seq.push(p.pkt_seq as u64);
                r.sent_ns.push(p.sent_at.0);
                r.received_ns.push(None);
                r.bytes.push(p.wire_len() as u64);
                r.outcome.push(match cause {
                    DropCause::Queue => "queue_drop".into(),
                    DropCause::Link => "link_loss".into(),
                    DropCause::RetryLimit => "retry_limit".into(),
                    DropCause::OutOfOrder => "out_of_order".into(),
                    DropCause::Suppressed => "suppressed".into(),
                    DropCause::Unattributed => "unattributed".into(),
                });
            }
        }
    }

    pub(super) fn deliver(&mut self, p: Packet) {
        let now = self.now;
        let bytes = p.wire_len();
        self.meter(&p).on_received(now, p.sent_at, p.pkt_seq, bytes);
        let fi = p.flow as usize;
        let forward = p.dst == self.flows[fi].ends.dst;
        if forward {
            if let Some(r) = self.flows[fi].meters.records.as_mut() {
                r.pkt_seq.push(p.pkt_seq as u64);
                r.sent_ns.push(p.sent_at.0);
                r.received_ns.push(Some(now.0 as f64 / 1e9));
                r.bytes.push(bytes as u64);
                r.outcome.push("received".into());
            }
        }
        match p.proto {
            Protocol::Udp if forward => {
                self.flows[fi].meters.forward.on_delivered(now, p.payload_len as u64);
                if self.flows[fi].echo {
                    self.send_echo(fi, p);
                }
            }
            Protocol::Udp => self.flows[fi].meters.reverse.on_delivered(now, p.payload_len as u64),
            Protocol::Tcp => {
                let seg = Segment { hdr: p.tcp, payload_len: p.payload_len, ecn: p.ecn };
                let end = if forward { End::Server } else { End::Client };
                self.tcp_input(fi, end, &seg);
            }
        }
    }
}
