//! Hybrid runs: flows marked `world = "model"` in the scenario are generated inside the
//! emulator, as modelled stations' traffic on the same hops as the real flows — a busy home
//! network without its hosts. Each departure of the flow's traffic model (the core's
//! [`Schedule`]: CBR, on/off, VBR video, D-ITG's laws; the same departures the simulator draws,
//! from the same random stream `flow/<name>/app`) becomes a real IPv4/UDP packet (the simulator's
//! ports and headers, zero payload) offered to the first hop at its source node at the
//! departure's time; at its destination node the emulator meters and absorbs it. It is never
//! written to a namespace, so a modelled station needs no host (a node with no real flow gets a
//! namespace only if it has a single neighbour, for `emu shell`).
//!
//! Modelled packets are the experiment's traffic: they queue, contend on a WLAN's DCF, collide
//! and are retried like real ones, are captured (`--pcap`) and metered at the network (sent at
//! the source's interface, received at arrival) as the simulator meters its flows.
//!
//! A modelled TCP flow ([`ModelTcp`]) is a pair of the core's sans-I/O TCP endpoints, the simulator's
//! (`lasthop_core::tcp::TcpSocket`, configured from the flow's `tcp` parameters as the simulator
//! configures them, ISNs from the same stream), driven by the emulator's clock: its segments
//! become real IPv4/TCP packets (options and all) on the hops, an arriving one is parsed back
//! into the endpoint's segment, and the endpoints' timers are the driver's wakes. The sending
//! application is the simulator's `Writer`: greedy (`bulk`), `bytes` of it, or a message source
//! (CBR, on/off, video... over TCP: each message joins the backlog when the simulator's schedule
//! says, same draws); the receiving one reads at once.
//!
//! Left out: paced reads and the file loop (refused by name, as for real TCP flows).

use lasthop_core::packet::{Packet, Protocol, SeqNum, TcpHeader};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{fragments, Schedule, Writer};
use lasthop_core::{Time, wire};
use lasthop_scenario::{FlowWorld, Scenario, Topology, Transport};
use lasthop_core::tcp::{Segment, TcpSocket};

/// One modelled UDP flow.
#[derive(Debug)]
pub struct ModelFlow {
    /// The flow's index in the scenario.
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub dscp: u8,
    pub schedule: Schedule,
    pub start: Time,
    pub stop: Time,
    /// The largest datagram payload; a longer message leaves as back-to-back datagrams.
    pub max_packet: u32,
}

impl ModelFlow {
    /// The model time of the next departure, if before the flow's stop.
    pub fn next_departure(&self) -> Option<Time> {
        let at = Time(self.start.0 + self.schedule.due().at.0);
        (at < self.stop).then_some(at)
    }

    /// Takes the due departure: the payload sizes of its datagrams.
    pub fn depart(&mut self) -> impl Iterator<Item = u32> {
        let d = self.schedule.pop();
        fragments(d.bytes, self.max_packet)
    }

    /// Writes the IPv4/UDP packet of `payload` zero bytes into `buf` (the simulator's headers:
    /// `wire::Headers::from_packet`); returns its length and the packet's header model.
    pub fn packet(&self, uid: u64, payload: u32, now: Time, buf: &mut [u8]) -> (usize, Packet) {
        let p = Packet {
            uid,
            flow: self.flow,
            pkt_seq: 0,
            src: self.src,
            dst: self.dst,
            sport: self.sport,
            dport: self.dport,
            dscp: self.dscp,
            ecn: 0,
            proto: Protocol::Udp,
            tcp: TcpHeader::default(),
            payload_len: payload,
            sent_at: now,
        };
        let h = wire::Headers::from_packet(&p, uid as u16);
        let (head, total) = (h.header_len(), h.total_len());
        buf[head..total].fill(0);
        let n = wire::emit(&h, buf).expect("a modelled datagram fits the slot: its size is below the scenario's MTU");
        (n, p)
    }
}

/// The scenario's modelled flows (UDP; the caller has refused modelled TCP), their datagrams
/// at most `mtu` bytes (the emulator's devices' MTU, as for the real flows).
pub fn model_flows(s: &Scenario, first_sport: u16, first_dport: u16, mtu: u32) -> Vec<ModelFlow> {
    let topo = Topology::new(s);
    let rng = RngStreams::new(s.simulation.seed);
    let end = s.simulation.duration.0;
    s.flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.world == FlowWorld::Model && f.transport() == Transport::Udp)
        .map(|(i, f)| {
            let app = lasthop_scenario::build::traffic::flow_app(s, f, &rng);
            let schedule = app.messages.expect("validated: a UDP app is a message source");
            ModelFlow {
                flow: i as u32,
                src: topo.index(f.src.get_ref()).expect("validated") as u32,
                dst: topo.index(f.dst.get_ref()).expect("validated") as u32,
                sport: first_sport + i as u16,
                dport: first_dport + i as u16,
                dscp: f.dscp,
                max_packet: schedule.max_packet().min(mtu.saturating_sub(28)).max(1),
                schedule,
                start: Time(f.start_time(&rng).0.min(end)),
                stop: Time(f.stop.map_or(end, |t| t.0.min(end))),
            }
        })
        .collect()
}

/// One modelled TCP flow: the simulator's two endpoints, client at `src`, server at `dst`.
#[derive(Debug)]
pub struct ModelTcp {
    /// The flow's index in the scenario.
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub dscp: u8,
    pub start: Time,
    pub stop: Time,
    /// Endpoint 0 the client (sender), 1 the server (receiver).
    pub ends: [TcpSocket; 2],
    /// The sending application: greedy, a byte count, or a message source's backlog.
    writer: Writer,
    /// A message source's departures (the simulator's: same draws), from `start`.
    messages: Option<Schedule>,
    /// The message source has reached its stop.
    source_stopped: bool,
    closed: bool,
    /// The wake each endpoint's timer is scheduled for.
    pub timer_at: [Option<Time>; 2],
}

impl ModelTcp {
    /// Which endpoint a packet to node `node` is for.
    pub fn side_at(&self, node: u32) -> usize {
        usize::from(node == self.dst)
    }

    /// The node of endpoint `side` and of its peer.
    pub fn nodes(&self, side: usize) -> (u32, u32) {
        if side == 0 { (self.src, self.dst) } else { (self.dst, self.src) }
    }

    /// The client connects and the writer starts.
    pub fn open(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.ends[0].connect(now, out);
        self.write(now, out);
    }

    /// The writer fills the client's send buffer with what it wants (everything, its bytes
    /// left, or its queued messages); a greedy or sized transfer closes at the stop, a message
    /// source once its last message is in (as the simulator's `Writer`).
    pub fn write(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.closed {
            return;
        }
        if now >= self.stop && self.messages.is_none() {
            self.closed = true;
            self.ends[0].close(now, out);
            return;
        }
        let want = self.writer.wants();
        if want > 0 {
            let n = self.ends[0].write(now, want, out);
            self.writer.wrote(n);
        }
        if self.writer.finished() {
            self.closed = true;
            self.ends[0].close(now, out);
        }
    }

    /// When the message source acts next: its next message, or its stop (once).
    pub fn next_message(&self) -> Option<Time> {
        let m = self.messages.as_ref()?;
        (!self.source_stopped).then(|| (self.start + m.due().at).min(self.stop))
    }

    /// The next message joins the writer's backlog (and as much as fits goes into the socket);
    /// at the stop the source ends and only drains its backlog (as the simulator's `Writer`).
    pub fn message(&mut self, now: Time, out: &mut Vec<Segment>) {
        let Some(m) = self.messages.as_mut() else { return };
        if now >= self.stop {
            self.source_stopped = true;
            self.writer.stop();
        } else {
            self.writer.queue(m.pop().bytes as u64);
        }
        self.write(now, out);
    }

    /// The receiving application reads all it can; returns the bytes read.
    pub fn read(&mut self, now: Time, out: &mut Vec<Segment>) -> u64 {
        self.ends[1].read(now, u64::MAX, out)
    }

    /// The IPv4/TCP packet of `seg` from endpoint `side` into `buf`; its length and header model.
    pub fn packet(&self, side: usize, seg: &Segment, uid: u64, now: Time, buf: &mut [u8]) -> (usize, Packet) {
        let (src, dst) = self.nodes(side);
        let (sport, dport) = if side == 0 { (self.sport, self.dport) } else { (self.dport, self.sport) };
        let p = Packet {
            uid,
            flow: self.flow,
            pkt_seq: 0,
            src,
            dst,
            sport,
            dport,
            dscp: self.dscp,
            ecn: seg.ecn,
            proto: Protocol::Tcp,
            tcp: seg.hdr,
            payload_len: seg.payload_len,
            sent_at: now,
        };
        let h = wire::Headers::from_packet(&p, uid as u16);
        let (head, total) = (h.header_len(), h.total_len());
        buf[head..total].fill(0);
        let n = wire::emit(&h, buf).expect("a modelled segment fits the slot: its MSS is below the scenario's MTU");
        (n, p)
    }
}

/// The segment a modelled TCP packet's bytes carry (written by [`ModelTcp::packet`]).
pub fn segment_of(bytes: &[u8]) -> Option<Segment> {
    let h = wire::parse(bytes).ok()?;
    Some(Segment { hdr: h.tcp, payload_len: h.payload_len, ecn: h.ip.ecn })
}

/// The scenario's modelled TCP flows (bulk, byte transfers and message sources: the caller
/// refuses paced reads and the file loop).
pub fn model_tcp_flows(s: &Scenario, first_sport: u16, first_dport: u16, mtu: u32) -> Vec<ModelTcp> {
    let topo = Topology::new(s);
    let rng = RngStreams::new(s.simulation.seed);
    let end = s.simulation.duration.0;
    s.flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.world == FlowWorld::Model && f.transport() == Transport::Tcp)
        .map(|(i, f)| {
            let p = f.tcp.clone().unwrap_or_default();
            // The emulator's packets are at most its devices' MTU, as for the real flows.
            let path_mtu = topo.path_mtu(f.src.get_ref(), f.dst.get_ref()).unwrap_or(1500).min(mtu as u64);
            let cfg = lasthop_scenario::build::tcp::tcp_config(&p, path_mtu);
            // The same ISN draws as the simulator's (stream flow/<name>/isn, client then server).
            let mut isn = rng.stream(&format!("flow/{}/isn", f.name));
            let client = TcpSocket::new(cfg.clone(), SeqNum(rand_core::RngCore::next_u32(&mut isn)));
            let mut server = TcpSocket::new(cfg, SeqNum(rand_core::RngCore::next_u32(&mut isn)));
            server.listen();
            let app = lasthop_scenario::build::traffic::flow_app(s, f, &rng);
            ModelTcp {
                flow: i as u32,
                src: topo.index(f.src.get_ref()).expect("validated") as u32,
                dst: topo.index(f.dst.get_ref()).expect("validated") as u32,
                sport: first_sport + i as u16,
                dport: first_dport + i as u16,
                dscp: f.dscp,
                start: Time(f.start_time(&rng).0.min(end)),
                stop: Time(f.stop.map_or(end, |t| t.0.min(end))),
                ends: [client, server],
                writer: Writer::new(app.transfer.volume),
                messages: app.messages,
                source_stopped: false,
                closed: false,
                timer_at: [None, None],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modelled_cbr_flow_departs_on_its_schedule_as_real_udp_packets() {
        let text = lasthop_scenario::bundled::bundled("dumbbell").unwrap();
        let o = vec![("flows.voice.world".to_string(), "model".to_string())];
        let s = Scenario::from_toml_str(text, "dumbbell", &o).unwrap();
        let mut flows = model_flows(&s, 10_000, 5_000, 1500);
        assert_eq!(flows.len(), 1, "only the voice flow is modelled");
        let f = &mut flows[0];
        assert_eq!((f.flow, f.src, f.dst, f.dport), (1, 0, 2, 5_001));
        // 160 B every 20 ms from 0.5 s (the dumbbell's voice flow).
        assert_eq!(f.next_departure(), Some(Time(500_000_000)));
        assert_eq!(f.depart().collect::<Vec<_>>(), vec![160]);
        assert_eq!(f.next_departure(), Some(Time(520_000_000)));
        let mut buf = [0xffu8; 1500];
        let (n, p) = f.packet(7, 160, Time(1), &mut buf);
        assert_eq!(n, 188, "IPv4 20 + UDP 8 + 160 bytes");
        // The bytes parse back to the same flow's datagram, checksums and all.
        let h = wire::parse(&buf[..n]).unwrap();
        assert_eq!((h.ip.src, h.ip.dst, h.sport, h.dport, h.payload_len), (wire::node_address(0), wire::node_address(2), 10_001, 5_001, 160));
        assert_eq!(p.payload_len, 160);
        assert!(buf[28..188].iter().all(|&b| b == 0), "the payload is zeros, not the slot's old bytes");
    }

    #[test]
    fn a_modelled_tcp_flow_opens_with_the_simulators_syn_as_real_bytes_and_parses_back() {
        let text = lasthop_scenario::bundled::bundled("dumbbell").unwrap();
        let o = vec![("flows.bulk.world".to_string(), "model".to_string())];
        let s = Scenario::from_toml_str(text, "dumbbell", &o).unwrap();
        assert!(model_flows(&s, 10_000, 5_000, 1500).is_empty(), "the bulk flow is TCP: not a datagram source");
        let mut tcps = model_tcp_flows(&s, 10_000, 5_000, 1500);
        assert_eq!(tcps.len(), 1);
        let t = &mut tcps[0];
        assert_eq!((t.flow, t.src, t.dst, t.sport, t.dport, t.start), (0, 0, 2, 10_000, 5_000, Time::ZERO));
        let mut out = Vec::new();
        t.open(Time::ZERO, &mut out);
        assert_eq!(out.len(), 1, "a SYN, and nothing written before the handshake");
        let syn = out[0];
        assert_eq!(syn.hdr.mss, Some(1460), "MSS = the 1500-byte MTU less 40 bytes of headers");
        let mut buf = [0u8; 1501];
        let (n, _) = t.packet(0, &syn, 1, Time::ZERO, &mut buf);
        // The bytes parse back to the very segment the endpoint sent: options included.
        assert_eq!(segment_of(&buf[..n]), Some(syn));
        let h = wire::parse(&buf[..n]).unwrap();
        assert_eq!((h.ip.src, h.ip.dst, h.sport, h.dport), (wire::node_address(0), wire::node_address(2), 10_000, 5_000));
        // The server answers the SYN with a SYN-ACK from the receiver's node.
        let mut answer = Vec::new();
        t.ends[1].on_segment(Time(1), &syn, &mut answer);
        assert_eq!(answer.len(), 1);
        let (n, _) = t.packet(1, &answer[0], 2, Time(1), &mut buf);
        let h = wire::parse(&buf[..n]).unwrap();
        assert_eq!((h.ip.src, h.sport, h.dport, h.tcp.ack), (wire::node_address(2), 5_000, 10_000, syn.hdr.seq + 1));
    }
}
