//! What the emulator sees of the scenario's flows at the endpoints' TUN devices, measured with
//! the core's [`FlowMeter`] (RFC 7679 one-way delay, RFC 3393 IPDV, RFC 3550 jitter, RFC 7680
//! loss by cause) — the same meter the simulator fills, so `summary.json` has the same keys.
//!
//! A packet belongs to flow `i` by its ports: the flow's sockets use destination port
//! `5000 + i` and source port `10000 + i` (the simulator's numbering). Its send time is when the
//! emulator read it from the sender's TUN (the first bit on the emulated wire), its receive time
//! when it wrote it to the receiver's TUN; drops carry the hop's cause.
//!
//! Goodput: UDP counts the payload of each datagram handed to the receiver's namespace. TCP
//! counts the advance of the receiver's cumulative ACK as its namespace sends it (bytes
//! received in order by the kernel, RFC 9293 RCV.NXT), up to the sender's FIN: the in-order
//! delivery the simulator's goodput counts, observed without reading the receiving application.
//! UDP flows run by the generator (`generator`) are metered here too, for the causes of their
//! losses in the models; their signalling connection (`is_signalling`) is no flow's traffic.
//! Nothing after the run's end is metered (the models may keep running while the generator's
//! sessions hand over their records): a packet still on its way then is in flight at the end,
//! as in the simulator.
//! Left out: per-flow TCP state (cwnd, RTO, retransmissions), which lives in the kernel; it
//! could be sampled with TCP_INFO.

use lasthop_core::metrics::{DropCause, FlowMeter};
use lasthop_core::packet::{Protocol, SeqNum, TcpFlags};
use lasthop_core::wire::Headers;
use lasthop_core::{Duration, Time};
use lasthop_scenario::{Scenario, Topology, Transport};

/// First destination port of the flows' sockets (flow i listens on `FLOW_PORT + i`).
pub const FLOW_PORT: u16 = 5_000;
/// First source port of the flows' senders.
pub const SOURCE_PORT: u16 = 10_000;

/// A packet's flow and direction (0 forward, 1 reverse), as the driver keeps it with the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tag {
    /// `u32::MAX` when the packet is no flow's (a ping, a shell's traffic).
    pub flow: u32,
    pub dir: u8,
    pub pkt_seq: u32,
    /// Bytes of transport payload (UDP goodput).
    pub payload: u32,
}

impl Tag {
    pub const NONE: Tag = Tag { flow: u32::MAX, dir: 0, pkt_seq: 0, payload: 0 };
}

/// One flow as observed.
#[derive(Debug)]
pub struct ObservedFlow {
    pub name: String,
    pub transport: Transport,
    pub src: u32,
    pub dst: u32,
    pub port: u16,
    pub start: Time,
    pub stop: Time,
    pub forward: FlowMeter,
    pub reverse: FlowMeter,
    next_seq: [u32; 2],
    /// The receiver's first cumulative ACK (RCV.NXT after the SYN) and the highest since.
    acked: Option<(SeqNum, SeqNum)>,
    /// The sequence number of the sender's FIN, once seen (it is not payload).
    fin: Option<SeqNum>,
}

/// Every flow of the scenario.
#[derive(Debug)]
pub struct Observer {
    pub flows: Vec<ObservedFlow>,
    /// The run's end: later events are not metered.
    end: Time,
}

impl Observer {
    pub fn new(scenario: &Scenario, end: Time) -> Observer {
        let topo = Topology::new(scenario);
        let interval = scenario.simulation.interval;
        let flows = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut forward = FlowMeter::new(interval);
                if let Some(d) = f.effective_deadline() {
                    forward.set_deadline(d);
                }
                if f.discard_reordered {
                    forward.set_discard_reordered();
                }
                ObservedFlow {
                    name: f.name.clone(),
                    transport: f.transport(),
                    src: topo.index(f.src.get_ref()).expect("validated") as u32,
                    dst: topo.index(f.dst.get_ref()).expect("validated") as u32,
                    port: FLOW_PORT + i as u16,
                    start: Time(f.start.0),
                    stop: Time(f.stop.map_or(end.0, |s| s.0.min(end.0))),
                    forward,
                    reverse: FlowMeter::light(interval),
                    next_seq: [0, 0],
                    acked: None,
                    fin: None,
                }
            })
            .collect();
        Observer { flows, end }
    }

    /// True for the signalling connection of UDP flow `i`'s generator session (TCP between the
    /// flow's two nodes on `generator::CONTROL_PORT + i`): management traffic, not the
    /// experiment's.
    pub fn is_signalling(&self, src: u32, dst: u32, h: &Headers) -> bool {
        if h.proto != Protocol::Tcp {
            return false;
        }
        let port = |p: u16| p.checked_sub(crate::generator::CONTROL_PORT).map(usize::from);
        let (fwd, rev) = (port(h.dport), port(h.sport));
        let is = |i: Option<usize>, a: u32, b: u32| {
            i.and_then(|i| self.flows.get(i)).is_some_and(|f| f.transport == Transport::Udp && f.src == a && f.dst == b)
        };
        is(fwd, src, dst) || is(rev, dst, src)
    }

    /// The flow and direction of a packet from node `src` to node `dst`; numbers its
    /// transmission and meters it as sent at `now`.
    pub fn on_read(&mut self, now: Time, src: u32, dst: u32, h: &Headers, wire_len: u32) -> Tag {
        if now > self.end {
            return Tag::NONE;
        }
        let proto = match h.proto {
            Protocol::Tcp => Transport::Tcp,
            Protocol::Udp => Transport::Udp,
        };
        for (i, f) in self.flows.iter_mut().enumerate() {
            if f.transport != proto {
                continue;
            }
            let dir = if src == f.src && dst == f.dst && h.dport == f.port {
                0
            } else if src == f.dst && dst == f.src && h.sport == f.port {
                1
            } else {
                continue;
            };
            let pkt_seq = f.next_seq[dir];
            f.next_seq[dir] += 1;
            if dir == 0 {
                f.forward.on_sent(now, wire_len);
                if h.tcp.flags.has(TcpFlags::FIN) {
                    f.fin = Some(h.tcp.seq + h.payload_len);
                }
            } else {
                f.reverse.on_sent(now, wire_len);
                if proto == Transport::Tcp && h.tcp.flags.has(TcpFlags::ACK) {
                    f.on_receiver_ack(now, h.tcp.ack);
                }
            }
            return Tag { flow: i as u32, dir: dir as u8, pkt_seq, payload: h.payload_len };
        }
        Tag::NONE
    }

    /// Modelled flow `flow` (a hybrid run's) sends a packet of `wire_len` bytes (`payload` of
    /// them transport payload) at `now` in direction `dir` (0 forward, 1 a TCP flow's ACKs):
    /// numbered and metered as sent.
    pub fn on_model_sent(&mut self, now: Time, flow: u32, dir: u8, wire_len: u32, payload: u32) -> Tag {
        if now > self.end {
            return Tag::NONE;
        }
        let f = &mut self.flows[flow as usize];
        let pkt_seq = f.next_seq[dir as usize];
        f.next_seq[dir as usize] += 1;
        if dir == 0 {
            f.forward.on_sent(now, wire_len);
        } else {
            f.reverse.on_sent(now, wire_len);
        }
        Tag { flow, dir, pkt_seq, payload }
    }

    /// Modelled TCP flow `flow`'s receiving application read `bytes` in order at `now`.
    pub fn on_model_read(&mut self, now: Time, flow: u32, bytes: u64) {
        if now <= self.end {
            self.flows[flow as usize].forward.on_delivered(now, bytes);
        }
    }

    /// The packet tagged `tag`, read at `sent_at`, was handed to its receiver's namespace.
    pub fn on_delivered(&mut self, now: Time, sent_at: Time, tag: Tag, wire_len: u32) {
        if now > self.end {
            return;
        }
        let Some(f) = self.flows.get_mut(tag.flow as usize) else { return };
        if tag.dir == 0 {
            f.forward.on_received(now, sent_at, tag.pkt_seq, wire_len);
            if f.transport == Transport::Udp {
                f.forward.on_delivered(now, tag.payload as u64);
            }
        } else {
            f.reverse.on_received(now, sent_at, tag.pkt_seq, wire_len);
        }
    }

    /// The packet tagged `tag` was lost in the emulated network for `cause`.
    pub fn on_dropped(&mut self, now: Time, tag: Tag, cause: DropCause) {
        if now > self.end {
            return;
        }
        let Some(f) = self.flows.get_mut(tag.flow as usize) else { return };
        if tag.dir == 0 {
            f.forward.on_dropped(now, cause);
        } else {
            f.reverse.on_dropped(now, cause);
        }
    }
}

impl ObservedFlow {
    /// The receiver acknowledges `ack` cumulatively: the advance is payload in order at its TCP.
    fn on_receiver_ack(&mut self, now: Time, ack: SeqNum) {
        let ack = match self.fin {
            Some(fin) if ack > fin => fin,
            _ => ack,
        };
        match &mut self.acked {
            None => self.acked = Some((ack, ack)),
            Some((_, high)) => {
                if ack > *high {
                    let advance = (ack - *high) as u64;
                    *high = ack;
                    self.forward.on_delivered(now, advance);
                }
            }
        }
    }

    /// The time the flow was active until `end`.
    pub fn active(&self, end: Time) -> Duration {
        self.stop.min(end).since(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::packet::TcpHeader;
    use lasthop_core::wire::Ipv4Fields;

    fn tcp(sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, payload: u32) -> Headers {
        Headers {
            ip: Ipv4Fields::default(),
            proto: Protocol::Tcp,
            sport,
            dport,
            tcp: TcpHeader { seq: SeqNum(seq), ack: SeqNum(ack), flags: TcpFlags(flags), ..TcpHeader::default() },
            payload_len: payload,
        }
    }

    #[test]
    fn tcp_goodput_is_the_receivers_ack_advance_up_to_the_fin() {
        let s = lasthop_scenario::Scenario::from_toml_str(lasthop_scenario::bundled::bundled("dumbbell").unwrap(), "dumbbell", &[]).unwrap();
        let mut o = Observer::new(&s, Time(30_000_000_000));
        let (snd, rcv) = (0, 2); // sender, receiver in the dumbbell's node order
        const A: u8 = TcpFlags::ACK;
        // SYN (ISN 999), SYN-ACK acking 1000: the base; then two 1000-byte segments acked in one
        // ACK (delayed ACK), a FIN at 3000 and its ACK 3001: 2000 bytes of goodput by hand count.
        o.on_read(Time(0), snd, rcv, &tcp(10_000, 5_000, 999, 0, TcpFlags::SYN, 0), 60);
        o.on_read(Time(1), rcv, snd, &tcp(5_000, 10_000, 7, 1000, TcpFlags::SYN | A, 0), 60);
        o.on_read(Time(2), snd, rcv, &tcp(10_000, 5_000, 1000, 8, A, 1000), 1040);
        o.on_read(Time(3), snd, rcv, &tcp(10_000, 5_000, 2000, 8, A, 1000), 1040);
        o.on_read(Time(4), rcv, snd, &tcp(5_000, 10_000, 8, 3000, A, 0), 40);
        o.on_read(Time(5), snd, rcv, &tcp(10_000, 5_000, 3000, 8, TcpFlags::FIN | A, 0), 40);
        let tag = o.on_read(Time(6), rcv, snd, &tcp(5_000, 10_000, 8, 3001, A, 0), 40);
        assert_eq!((tag.flow, tag.dir, tag.pkt_seq), (0, 1, 2), "the third packet of the bulk flow's ACK direction");
        assert_eq!(o.flows[0].forward.delivered_bytes(), 2000);
        assert_eq!(o.flows[0].forward.sent_packets(), 4);
        // Another port is no flow's.
        assert_eq!(o.on_read(Time(7), snd, rcv, &tcp(10_000, 5_999, 1, 0, 0, 0), 40), Tag::NONE);
    }
}
