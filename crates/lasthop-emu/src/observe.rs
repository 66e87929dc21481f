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
//!
//! The receiver's advertised window ([`Observer::receiver_window`]): a kernel receiver's ACKs
//! are rewritten where they offer more than the scenario's `receive_buffer` or, with paper 004's
//! receiver-side window (`tcp.receiver_awnd`, [`AwndCap`]), more than Koga et al.'s eq. 3 gives —
//! the simulator's receiving TCP caps its own window the same way. A live window follows the
//! W-CDMA downlink's retransmissions (the driver reports them on each TTI arrival).
//!
//! Kernel TCP state over time ([`TcpInfoSample`]): a traced TCP flow (`probes.tcp`, as in the
//! simulator) has its sender's and receiver's sockets read with `getsockopt(TCP_INFO)` (Linux
//! `include/uapi/linux/tcp.h`) every [`TCP_INFO_PERIOD`] by the flow's application thread, into
//! the tables "tcp/<flow>" and "tcp/<flow>/receiver" with the simulator's trace columns where
//! they mean the same (cwnd and ssthresh in bytes = segments × the current MSS, the peer's and
//! own advertised windows, bytes in flight = Linux's `tcp_packets_in_flight` × MSS, smoothed RTT,
//! RTO) and the kernel's own beside them (congestion-avoidance state, total retransmissions,
//! segments marked lost, RTO count, delivery rate, bytes acknowledged). A sample is periodic, not
//! per ACK as the simulator's (`event` is "tcp_info"): a 10 ms period resolves slow start and
//! each recovery at the 50 ms RTTs of the bundled scenarios without a measurable load.

use lasthop_scenario::build::tcp::ReceiverWindow;
use lasthop_core::metrics::{DropCause, FlowMeter};
use lasthop_core::packet::{Protocol, SeqNum, TcpFlags};
use lasthop_core::wire::Headers;
use lasthop_core::{Duration, Time};
use lasthop_core::report::{tcp_trace_table, Column, Table, TcpTraceRow};
use lasthop_scenario::{Scenario, Topology, Transport};
use std::os::fd::RawFd;

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
    /// The scenario's DSCP of the flow (`dscp`), for the hops that classify by it.
    pub dscp: u8,
    pub start: Time,
    pub stop: Time,
    pub forward: FlowMeter,
    pub reverse: FlowMeter,
    next_seq: [u32; 2],
    /// The receiver's first cumulative ACK (RCV.NXT after the SYN) and the highest since.
    acked: Option<(SeqNum, SeqNum)>,
    /// The sequence number of the sender's FIN, once seen (it is not payload).
    fin: Option<SeqNum>,
    /// A real TCP flow's receive buffer (the scenario's `receive_buffer`): the most the
    /// receiver may advertise, bytes; with paper 004's receiver-side window, the least of it
    /// and that window.
    rwnd: Option<u64>,
    /// Paper 004's receiver-side window (`tcp.receiver_awnd`), if the flow has one.
    pub awnd: Option<AwndCap>,
    /// Window scale options of the sender's SYN and the receiver's SYN-ACK (RFC 7323 §2.2).
    wscale: [Option<u8>; 2],
}

/// Paper 004's receiver-side advertised window on a kernel receiver: the emulator writes it into
/// the receiver's ACKs where the kernel offers more (as the simulator's receiving TCP caps its
/// own window: `ReceiverAwndParams::cap_bytes`, the same eq. 3).
#[derive(Clone, Debug)]
pub struct AwndCap {
    /// Eq. 3's window and the retransmission count it follows: the simulator's own rule.
    pub receiver: ReceiverWindow,
    /// The receive buffer the window never exceeds, bytes.
    pub receive_buffer: u64,
}

impl AwndCap {
    pub fn window(&self) -> u64 {
        self.receiver.cap_bytes().min(self.receive_buffer)
    }

    /// Live mode (no retransmission count and no segments given): follows the link.
    pub fn live(&self) -> bool {
        self.receiver.live()
    }
}

/// Every flow of the scenario.
#[derive(Debug)]
pub struct Observer {
    pub flows: Vec<ObservedFlow>,
    /// The run's end: later events are not metered.
    end: Time,
}

impl ObservedFlow {
    fn with_awnd(mut self) -> ObservedFlow {
        if let Some(a) = &self.awnd {
            self.rwnd = Some(a.window());
        }
        self
    }

    /// Paper 004's live window: the W-CDMA downlink needed `observed` retransmissions at most in
    /// the last second (the simulator's `update_live_awnd`); the ACKs from now on carry its window.
    pub fn observe_retransmissions(&mut self, observed: u32) {
        let Some(a) = self.awnd.as_mut() else { return };
        if a.receiver.observe(observed) {
            self.rwnd = Some(a.window());
        }
    }
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
                let real_tcp = f.transport() == Transport::Tcp && f.world == lasthop_scenario::FlowWorld::Real;
                let p = f.tcp.clone().unwrap_or_default();
                let awnd = p.receiver_awnd.clone().filter(|_| real_tcp).map(|params| {
                    let path_mtu = topo.path_mtu(f.src.get_ref(), f.dst.get_ref()).unwrap_or(1500);
                    let mss = lasthop_scenario::build::tcp::tcp_config(&p, path_mtu).mss;
                    AwndCap { receiver: ReceiverWindow::new(params, mss), receive_buffer: p.receive_buffer.0 }
                });
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
                    dscp: f.dscp,
                    start: Time(f.start.0),
                    stop: Time(f.stop.map_or(end.0, |s| s.0.min(end.0))),
                    forward,
                    reverse: FlowMeter::light(interval),
                    next_seq: [0, 0],
                    acked: None,
                    fin: None,
                    rwnd: real_tcp.then_some(p.receive_buffer.0),
                    awnd: awnd.clone(),
                    wscale: [None, None],
                }
                .with_awnd()
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
            if proto == Transport::Tcp && h.tcp.flags.has(TcpFlags::SYN) {
                f.wscale[dir] = h.tcp.wscale;
            }
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

    /// The window field a kernel TCP receiver's segment tagged `tag` (with headers `h`) must
    /// carry instead of its own, if that is larger than the flow's receive buffer: the
    /// simulator's receiver never advertises more than `receive_buffer`, while Linux's window
    /// follows its own memory accounting (SO_RCVBUF doubled, times the payload share of its
    /// buffers; `TCP_WINDOW_CLAMP` is overwritten by the kernel when that share changes, 6.8+).
    /// The field is scaled by the receiver's shift once both SYNs offered one (RFC 7323 §2.3);
    /// a SYN-ACK's is not.
    pub fn receiver_window(&self, tag: Tag, h: &Headers) -> Option<u16> {
        let f = self.flows.get(tag.flow as usize)?;
        if tag.dir != 1 || h.proto != Protocol::Tcp {
            return None;
        }
        let rwnd = f.rwnd?;
        let shift = match (h.tcp.flags.has(TcpFlags::SYN), f.wscale) {
            (false, [Some(_), Some(s)]) => s.min(14),
            _ => 0,
        };
        let field = (rwnd >> shift).min(u16::MAX as u64) as u16;
        (h.tcp.window > field).then_some(field)
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

/// Period of the TCP_INFO samples of a traced kernel TCP flow.
pub const TCP_INFO_PERIOD: std::time::Duration = std::time::Duration::from_millis(10);

/// Linux's "infinite" slow-start threshold (`TCP_INFINITE_SSTHRESH`, include/net/tcp.h).
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// One `TCP_INFO` reading of a kernel TCP socket, in the kernel's units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfoSample {
    /// When it was read, from the emulation's start.
    pub at: Time,
    /// `tcpi_ca_state`: 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss (include/uapi/linux/tcp.h).
    pub ca_state: u8,
    pub mss: u32,
    pub cwnd: u32,
    /// Segments; [`INFINITE_SSTHRESH`] before the first loss.
    pub ssthresh: u32,
    /// The peer's advertised window and this end's, bytes (after scaling).
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    /// Segments in flight (`unacked - sacked - lost + retrans`, Linux's `tcp_packets_in_flight`).
    pub in_flight: u32,
    pub srtt_us: u32,
    pub rttvar_us: u32,
    pub rto_us: u32,
    pub total_retrans: u32,
    pub lost: u32,
    pub total_rto: u16,
    /// Bytes per second of the latest delivery-rate sample.
    pub delivery_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
}

/// `tcpi_state` values of a connection that carries or may still carry data (established or
/// closing); others (SYN_SENT, LISTEN, CLOSE, TIME_WAIT) are not sampled.
fn carries_data(state: u8) -> bool {
    // TCP_ESTABLISHED 1, FIN_WAIT1 4, FIN_WAIT2 5, CLOSE_WAIT 8, LAST_ACK 9, CLOSING 11.
    matches!(state, 1 | 4 | 5 | 8 | 9 | 11)
}

impl TcpInfoSample {
    /// Reads socket `fd` at `at`; `Ok(None)` if it carries no connection yet or any more.
    pub fn read(fd: RawFd, at: Time) -> std::io::Result<Option<TcpInfoSample>> {
        // SAFETY: tcp_info is plain integers, valid when zeroed; getsockopt writes at most
        // `len` bytes into it (an older kernel fills a prefix, the rest stays zero).
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&mut info as *mut libc::tcp_info).cast(), &mut len) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(carries_data(info.tcpi_state).then(|| TcpInfoSample::from_info(&info, at)))
    }

    fn from_info(i: &libc::tcp_info, at: Time) -> TcpInfoSample {
        TcpInfoSample {
            at,
            ca_state: i.tcpi_ca_state,
            mss: i.tcpi_snd_mss,
            cwnd: i.tcpi_snd_cwnd,
            ssthresh: i.tcpi_snd_ssthresh,
            snd_wnd: i.tcpi_snd_wnd,
            rcv_wnd: i.tcpi_rcv_wnd,
            in_flight: (i.tcpi_unacked + i.tcpi_retrans).saturating_sub(i.tcpi_sacked + i.tcpi_lost),
            srtt_us: i.tcpi_rtt,
            rttvar_us: i.tcpi_rttvar,
            rto_us: i.tcpi_rto,
            total_retrans: i.tcpi_total_retrans,
            lost: i.tcpi_lost,
            total_rto: i.tcpi_total_rto,
            delivery_rate: i.tcpi_delivery_rate,
            bytes_acked: i.tcpi_bytes_acked,
            bytes_received: i.tcpi_bytes_received,
        }
    }

    /// The simulator's trace row for this sample (same units: bytes, ms).
    pub fn trace_row(&self) -> TcpTraceRow {
        let mss = self.mss as u64;
        TcpTraceRow {
            time_s: self.at.as_secs_f64(),
            event: "tcp_info".into(),
            cwnd_bytes: self.cwnd as u64 * mss,
            ssthresh_bytes: (self.ssthresh < INFINITE_SSTHRESH).then_some(self.ssthresh as f64 * mss as f64),
            peer_window_bytes: self.snd_wnd as u64,
            advertised_window_bytes: self.rcv_wnd as u64,
            flight_bytes: self.in_flight as u64 * mss,
            srtt_ms: (self.srtt_us > 0).then_some(self.srtt_us as f64 / 1e3),
            rto_ms: self.rto_us as f64 / 1e3,
            rtt_sample_ms: None,
        }
    }
}

/// Names of `tcpi_ca_state` values.
fn ca_state_name(s: u8) -> &'static str {
    match s {
        0 => "open",
        1 => "disorder",
        2 => "cwr",
        3 => "recovery",
        4 => "loss",
        _ => "other",
    }
}

/// The table "tcp/<flow>" (or "tcp/<flow>/receiver") of a kernel socket's samples: the
/// simulator's trace columns, then the kernel's `ca_state`, `mss_bytes`, `retransmitted_total`,
/// `lost_segments`, `timeouts_total`, `delivery_rate_bps`, `bytes_acked`, `bytes_received`.
pub fn tcp_info_table(name: &str, samples: &[TcpInfoSample]) -> Table {
    let mut t = tcp_trace_table(name, samples.iter().map(TcpInfoSample::trace_row));
    let col = |f: fn(&TcpInfoSample) -> u64| Column::U64(samples.iter().map(f).collect());
    t.push("ca_state", Column::Str(samples.iter().map(|s| ca_state_name(s.ca_state).to_string()).collect()));
    t.push("mss_bytes", col(|s| s.mss as u64));
    t.push("retransmitted_total", col(|s| s.total_retrans as u64));
    t.push("lost_segments", col(|s| s.lost as u64));
    t.push("timeouts_total", col(|s| s.total_rto as u64));
    t.push("delivery_rate_bps", col(|s| s.delivery_rate * 8));
    t.push("bytes_acked", col(|s| s.bytes_acked));
    t.push("bytes_received", col(|s| s.bytes_received));
    t
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

    fn syn(sport: u16, dport: u16, flags: u8, wscale: Option<u8>, window: u16) -> Headers {
        let mut h = tcp(sport, dport, 0, 0, flags, 0);
        h.tcp.wscale = wscale;
        h.tcp.window = window;
        h
    }

    #[test]
    fn a_kernel_receivers_window_is_clamped_to_the_scenarios_receive_buffer() {
        // The dumbbell's bulk flow: receive_buffer = 256 KiB = 262 144 B.
        let s = lasthop_scenario::Scenario::from_toml_str(lasthop_scenario::bundled::bundled("dumbbell").unwrap(), "dumbbell", &[]).unwrap();
        let mut o = Observer::new(&s, Time(30_000_000_000));
        let (snd, rcv) = (0, 2);
        const A: u8 = TcpFlags::ACK;
        let h = syn(10_000, 5_000, TcpFlags::SYN, Some(7), 64_240);
        let t = o.on_read(Time(0), snd, rcv, &h, 60);
        assert_eq!(o.receiver_window(t, &h), None, "the sender's segments keep their window");
        // The SYN-ACK's window is not scaled (RFC 7323 §2.2): 65 535 < 262 144 stays.
        let h = syn(5_000, 10_000, TcpFlags::SYN | A, Some(10), 65_535);
        let t = o.on_read(Time(1), rcv, snd, &h, 60);
        assert_eq!(o.receiver_window(t, &h), None);
        // Both offered a scale: the receiver's later field 1000 means 1000 << 10 = 1 024 000 B
        // > 262 144 B, so it becomes 262 144 >> 10 = 256 (hand count).
        let h = syn(5_000, 10_000, A, None, 1_000);
        let t = o.on_read(Time(2), rcv, snd, &h, 40);
        assert_eq!(o.receiver_window(t, &h), Some(256));
        // 200 << 10 = 204 800 B is within the buffer: untouched.
        let h = syn(5_000, 10_000, A, None, 200);
        let t = o.on_read(Time(3), rcv, snd, &h, 40);
        assert_eq!(o.receiver_window(t, &h), None);
    }

    #[test]
    fn paper_004s_window_caps_the_kernel_receivers_acks_and_follows_the_links_retransmissions() {
        // The bundled W-CDMA scenario's tcp flow (MSS 1460 B) with Koga et al.'s live window:
        // 384 kb/s, UDP 64 kb/s, 30 ms: eq. 3 gives 5.20 packets at 2 retransmissions (the
        // paper's §5.3 figure; round: 5 segments = 7 300 B) and 2 × 5.20 = 10.40 → 10 segments
        // = 14 600 B once the link needed 4 (eq. 1 scales with the count; hand count).
        let sets = [("flows.tcp.tcp.receiver_awnd".to_string(), r#"{ link_rate = "384kbps", udp_rate = "64kbps", propagation = "30ms" }"#.to_string())];
        let s = lasthop_scenario::Scenario::from_toml_str(lasthop_scenario::bundled::bundled("wcdma").unwrap(), "wcdma", &sets).unwrap();
        let mut o = Observer::new(&s, Time(60_000_000_000));
        let (snd, rcv) = (0, 3);
        let a = o.flows[0].awnd.clone().expect("the tcp flow has the window");
        assert_eq!((a.receiver.mss, a.receiver.retransmissions, a.window(), a.live()), (1460, 2, 5 * 1460, true));
        // No scale offered: the receiver's 64 240 B becomes 7 300 B; 5 000 B stays.
        let h = syn(10_000, 5_000, TcpFlags::SYN, None, 64_240);
        o.on_read(Time(0), snd, rcv, &h, 60);
        let h = syn(5_000, 10_000, TcpFlags::ACK, None, 64_240);
        let t = o.on_read(Time(1), rcv, snd, &h, 40);
        assert_eq!(o.receiver_window(t, &h), Some(7_300));
        let h = syn(5_000, 10_000, TcpFlags::ACK, None, 5_000);
        let t = o.on_read(Time(2), rcv, snd, &h, 40);
        assert_eq!(o.receiver_window(t, &h), None);
        o.flows[0].observe_retransmissions(4);
        let h = syn(5_000, 10_000, TcpFlags::ACK, None, 64_240);
        let t = o.on_read(Time(3), rcv, snd, &h, 40);
        assert_eq!(o.receiver_window(t, &h), Some(14_600));
        // A window given in segments does not follow the link.
        let sets = [("flows.tcp.tcp.receiver_awnd".to_string(), r#"{ link_rate = "384kbps", udp_rate = "64kbps", propagation = "30ms", segments = 4 }"#.to_string())];
        let s = lasthop_scenario::Scenario::from_toml_str(lasthop_scenario::bundled::bundled("wcdma").unwrap(), "wcdma", &sets).unwrap();
        let mut o = Observer::new(&s, Time(60_000_000_000));
        o.flows[0].observe_retransmissions(4);
        assert_eq!((o.flows[0].awnd.as_ref().unwrap().window(), o.flows[0].awnd.as_ref().unwrap().receiver.max_retransmissions), (4 * 1460, 4));
    }

    #[test]
    fn a_tcp_info_sample_becomes_the_simulators_trace_columns() {
        // cwnd 10 × MSS 1460 = 14 600 B; ssthresh "infinite" (0x7fffffff) is null as in the
        // simulator's trace; 3 in flight = 4 380 B; rtt 51 234 µs; rto 1 000 000 µs.
        let s = TcpInfoSample {
            at: Time(1_500_000_000),
            mss: 1460,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            snd_wnd: 262_144,
            rcv_wnd: 65_535,
            in_flight: 3,
            srtt_us: 51_234,
            rto_us: 1_000_000,
            total_retrans: 2,
            delivery_rate: 1_250_000,
            ..TcpInfoSample::default()
        };
        let r = s.trace_row();
        assert_eq!((r.time_s, r.cwnd_bytes, r.ssthresh_bytes, r.flight_bytes), (1.5, 14_600, None, 4_380));
        assert_eq!((r.peer_window_bytes, r.advertised_window_bytes, r.srtt_ms, r.rto_ms), (262_144, 65_535, Some(51.234), 1000.0));
        let t = tcp_info_table("tcp/bulk", &[s, TcpInfoSample { ssthresh: 7, ca_state: 3, ..s }]);
        assert_eq!(t.rows(), 2);
        assert!(matches!(t.column("ssthresh_bytes"), Some(Column::OptF64(v)) if v == &vec![None, Some(10_220.0)]));
        assert!(matches!(t.column("ca_state"), Some(Column::Str(v)) if v == &vec!["open".to_string(), "recovery".to_string()]));
        assert!(matches!(t.column("delivery_rate_bps"), Some(Column::U64(v)) if v == &vec![10_000_000, 10_000_000]));
    }
}
