//! SAP-LAW (Palazzi et al., "Wireless Home Entertainment Center", ACE 2006; paper 001): an
//! access point that keeps TCP from filling its queue by lowering the advertised window of the
//! ACKs it forwards to TCP senders:
//!
//! ```text
//! maxTCPrate(t) = (C − UDPrate(t)) / #TCPflows(t),   awnd = maxTCPrate · RTT / 8
//! ```
//!
//! every `period` (200 ms in the paper). UDPrate is the aggregate UDP rate crossing the AP, smoothed
//! by a low-pass filter (rate ← (1 − g)·rate + g·sample); #TCPflows counts connections that carried
//! data in the last two periods.
//!
//! RTT: the AP sees both halves of every handshake. SYN → SYN-ACK gives the round trip on the
//! SYN-ACK's side of the AP, SYN-ACK → ACK the other side; their sum is the flow's RTT. After that
//! the side towards the data receiver (the wireless last hop) is re-measured continuously — a data
//! segment going out and the first ACK covering it coming back, one timed segment at a time,
//! skipping retransmissions (Karn) — and the *minimum* of the handshake value and all samples is
//! used: the base RTT. A window of maxTCPrate × base RTT sends exactly maxTCPrate and lets any
//! queue drain; a smoothed RTT includes the queueing the window itself causes, so it would grant
//! the queue back (in the home scenario it raised the game's maximum jitter from 10.6 to 13.0 ms
//! at C = 18 Mb/s). Like any base-RTT estimate it would miss a path that became longer.
//!
//! Window scaling (RFC 7323) is honoured: the new window is shifted by the scale the data receiver
//! announced in its SYN, so windows above 64 KiB work (the public thesis code clamps to 65 535).
//! A window is only ever lowered, never raised, and never below two segments.
//!
//! Sans-I/O: `process(now, &mut packet)` for every packet crossing the AP; the filter advances
//! lazily at the next packet, and `next_deadline()` tells an event loop when a period ends.

use crate::packet::{Packet, Protocol, SeqNum, TcpFlags};
use crate::time::{Duration, Time};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SapLawConfig {
    /// C: the capacity the AP grants to all traffic (the paper: 18 Mb/s of a ~20 Mb/s channel).
    pub capacity_bps: f64,
    pub period: Duration,
    /// Low-pass filter gain g of the UDP rate.
    pub gain: f64,
}

/// The connection as the AP sees it; `a` is the endpoint that sent the SYN.
#[derive(Clone, Copy, Debug, Default)]
struct Conn {
    syn_at: Option<Time>,
    synack_at: Option<Time>,
    /// Round trip on the SYN-ACK sender's side, and on the SYN sender's side.
    rtt_synack_side: Option<Duration>,
    rtt_syn_side: Option<Duration>,
    /// Window scale each end announced (a = SYN sender, b = SYN-ACK sender); used if both did.
    wscale_a: Option<u8>,
    wscale_b: Option<u8>,
    mss: u32,
    /// Data direction: true if a (the SYN sender) sends the data.
    a_sends: Option<bool>,
    last_data: Option<Time>,
    highest_seq: Option<SeqNum>,
    timed: Option<(SeqNum, Time)>,
    min_receiver_side_ns: Option<f64>,
}

/// 4-tuple key with the SYN sender first.
type Key = (u32, u16, u32, u16);

#[derive(Debug)]
pub struct SapLaw {
    cfg: SapLawConfig,
    conns: BTreeMap<Key, Conn>,
    udp_bytes: u64,
    udp_rate_bps: f64,
    period_end: Time,
    active_flows: usize,
    max_tcp_rate_bps: f64,
    pub windows_lowered: u64,
}

impl SapLaw {
    pub fn new(cfg: SapLawConfig) -> Self {
        SapLaw {
            cfg,
            conns: BTreeMap::new(),
            udp_bytes: 0,
            udp_rate_bps: 0.0,
            period_end: Time(cfg.period.0),
            active_flows: 0,
            max_tcp_rate_bps: cfg.capacity_bps,
            windows_lowered: 0,
        }
    }

    pub fn udp_rate_bps(&self) -> f64 {
        self.udp_rate_bps
    }
    pub fn max_tcp_rate_bps(&self) -> f64 {
        self.max_tcp_rate_bps
    }
    pub fn active_tcp_flows(&self) -> usize {
        self.active_flows
    }
    /// When the current period ends (the filter and maxTCPrate update then).
    pub fn next_deadline(&self) -> Time {
        self.period_end
    }

    /// The RTT the AP currently believes for the connection of `p`, if it saw the handshake.
    pub fn rtt_of(&self, p: &Packet) -> Option<Duration> {
        let (key, _) = self.key_of(p)?;
        let c = self.conns.get(&key)?;
        Self::rtt(c)
    }

    fn rtt(c: &Conn) -> Option<Duration> {
        let (syn_side, synack_side) = (c.rtt_syn_side?, c.rtt_synack_side?);
        // The receiver's side is re-measured; which side that is depends on who sends data.
        let base = |handshake: Duration| c.min_receiver_side_ns.map_or(handshake, |n| handshake.min(Duration(n as u64)));
        Some(match c.a_sends {
            Some(true) => syn_side + base(synack_side),
            Some(false) => synack_side + base(syn_side),
            None => syn_side + synack_side,
        })
    }

    fn advance(&mut self, now: Time) {
        while now >= self.period_end {
            let sample = self.udp_bytes as f64 * 8.0 / self.cfg.period.as_secs_f64();
            self.udp_rate_bps += self.cfg.gain * (sample - self.udp_rate_bps);
            self.udp_bytes = 0;
            let horizon = self.cfg.period * 2;
            let start = self.period_end;
            self.active_flows = self.conns.values().filter(|c| c.last_data.is_some_and(|t| start.since(t) < horizon)).count();
            self.max_tcp_rate_bps = (self.cfg.capacity_bps - self.udp_rate_bps).max(0.0) / self.active_flows.max(1) as f64;
            self.period_end += self.cfg.period;
        }
    }

    fn key_of(&self, p: &Packet) -> Option<(Key, bool)> {
        let fwd = (p.src, p.sport, p.dst, p.dport);
        let rev = (p.dst, p.dport, p.src, p.sport);
        if self.conns.contains_key(&fwd) {
            Some((fwd, true))
        } else if self.conns.contains_key(&rev) {
            Some((rev, false))
        } else {
            None
        }
    }

    /// A packet crosses the AP; an ACK towards a TCP sender may leave with a lower window.
    pub fn process(&mut self, now: Time, p: &mut Packet) {
        self.advance(now);
        match p.proto {
            Protocol::Udp => self.udp_bytes += p.wire_len() as u64,
            Protocol::Tcp => self.tcp(now, p),
        }
    }

    fn tcp(&mut self, now: Time, p: &mut Packet) {
        let f = p.tcp.flags;
        if f.has(TcpFlags::SYN) && !f.has(TcpFlags::ACK) {
            let c = self.conns.entry((p.src, p.sport, p.dst, p.dport)).or_default();
            c.syn_at.get_or_insert(now);
            c.wscale_a = p.tcp.wscale;
            c.mss = p.tcp.mss.unwrap_or(536) as u32;
            return;
        }
        let Some((key, from_a)) = self.key_of(p) else { return };
        let c = self.conns.get_mut(&key).expect("found");
        if f.has(TcpFlags::SYN) {
            // SYN-ACK, from b.
            if c.synack_at.is_none() {
                c.synack_at = Some(now);
                c.rtt_synack_side = c.syn_at.map(|s| now - s);
            }
            c.wscale_b = p.tcp.wscale;
            c.mss = c.mss.min(p.tcp.mss.unwrap_or(536) as u32);
            return;
        }
        if from_a && c.rtt_syn_side.is_none() {
            // The ACK completing the handshake.
            c.rtt_syn_side = c.synack_at.map(|s| now - s);
        }
        if p.payload_len > 0 {
            c.a_sends.get_or_insert(from_a);
            if c.a_sends == Some(from_a) {
                c.last_data = Some(now);
                let end = p.tcp.seq + p.payload_len;
                let fresh = c.highest_seq.is_none_or(|h| end > h);
                if fresh {
                    c.highest_seq = Some(end);
                    if c.timed.is_none() {
                        c.timed = Some((end, now));
                    }
                } else if c.timed.is_some_and(|(s, _)| s > p.tcp.seq) {
                    c.timed = None; // Karn: a retransmission covers the timed segment
                }
            }
        }
        let towards_sender = c.a_sends.is_some_and(|a| a != from_a);
        if towards_sender && f.has(TcpFlags::ACK) {
            if let Some((s, t)) = c.timed {
                if p.tcp.ack >= s {
                    let sample = (now - t).0 as f64;
                    let e = c.min_receiver_side_ns.get_or_insert(sample);
                    *e = e.min(sample);
                    c.timed = None;
                }
            }
            self.clamp(key, p);
        }
    }

    /// Lowers the window of an ACK going to the data sender to maxTCPrate · RTT.
    fn clamp(&mut self, key: Key, p: &mut Packet) {
        let c = self.conns[&key];
        let Some(rtt) = Self::rtt(&c) else { return };
        let bytes = (self.max_tcp_rate_bps * rtt.as_secs_f64() / 8.0).max(2.0 * c.mss as f64);
        // The window in this ACK is scaled by the shift its sender (the data receiver) announced,
        // if both ends offered scaling (RFC 7323 §2.2).
        let receiver_shift = match (c.wscale_a, c.wscale_b, c.a_sends) {
            (Some(a), Some(b), Some(a_sends)) => if a_sends { b } else { a },
            _ => 0,
        };
        let field = ((bytes as u64) >> receiver_shift).min(65_535) as u16;
        if field < p.tcp.window {
            p.tcp.window = field;
            self.windows_lowered += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn seg(src: u32, dst: u32, flags: u8, seq: u32, ack: u32, len: u32, window: u16) -> Packet {
        Packet {
            uid: 0,
            flow: 0,
            pkt_seq: 0,
            src,
            dst,
            sport: if src == 1 { 1000 } else { 80 },
            dport: if src == 1 { 80 } else { 1000 },
            dscp: 0,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader { seq: SeqNum(seq), ack: SeqNum(ack), flags: TcpFlags(flags), window, ..TcpHeader::default() },
            payload_len: len,
            sent_at: Time::ZERO,
        }
    }

    /// Sender 1 (wired) opens a connection to receiver 2 (wireless) across the AP: the SYN passes
    /// the AP at 0 ms, the SYN-ACK at 30 ms (wireless side), the handshake ACK at 90 ms (wired).
    fn handshake(s: &mut SapLaw, wscale: Option<u8>) {
        let mut syn = seg(1, 2, TcpFlags::SYN, 0, 0, 0, 65_535);
        syn.tcp.wscale = wscale;
        syn.tcp.mss = Some(1460);
        s.process(ms(0), &mut syn);
        let mut synack = seg(2, 1, TcpFlags::SYN | TcpFlags::ACK, 0, 1, 0, 65_535);
        synack.tcp.wscale = wscale;
        synack.tcp.mss = Some(1460);
        s.process(ms(30), &mut synack);
        s.process(ms(90), &mut seg(1, 2, TcpFlags::ACK, 1, 1, 0, 1000));
        s.process(ms(91), &mut seg(1, 2, TcpFlags::ACK, 1, 1, 1460, 1000));
    }

    fn sap() -> SapLaw {
        SapLaw::new(SapLawConfig { capacity_bps: 18e6, period: Duration::from_millis(200), gain: 1.0 })
    }

    #[test]
    fn rtt_is_the_sum_of_both_handshake_halves() {
        let mut s = sap();
        handshake(&mut s, None);
        // 30 ms on the wireless side + 60 ms on the wired side.
        assert_eq!(s.rtt_of(&seg(1, 2, 0, 0, 0, 0, 0)), Some(Duration::from_millis(90)));
    }

    #[test]
    fn acks_towards_the_sender_get_max_tcp_rate_times_rtt() {
        let mut s = sap();
        handshake(&mut s, None);
        // 2 Mb/s of UDP crosses the AP in the first period (50 000 B in 200 ms).
        for _ in 0..50 {
            let mut u = seg(3, 2, 0, 0, 0, 0, 0);
            u.proto = Protocol::Udp;
            u.payload_len = 1000 - 28;
            s.process(ms(100), &mut u);
        }
        // At 200 ms the period closes: UDPrate = 2 Mb/s (gain 1), one active TCP flow:
        // maxTCPrate = 16 Mb/s. The ACK's own timed-segment sample (91 -> 210 ms = 119 ms on the
        // wireless side) is above the handshake's 30 ms, so the base RTT stays 60 + 30 = 90 ms and
        // awnd = 16e6 × 0.090 / 8 = 180 000 B -> the 16-bit field is capped at 65 535.
        let mut ack = seg(2, 1, TcpFlags::ACK, 1, 1461, 0, 65_535);
        s.process(ms(210), &mut ack);
        assert!((s.udp_rate_bps() - 2e6).abs() < 1.0);
        assert!((s.max_tcp_rate_bps() - 16e6).abs() < 1.0);
        assert_eq!(s.active_tcp_flows(), 1);
        assert_eq!(ack.tcp.window, 65_535, "never above what the field can carry, never raised");
        // A window already below awnd is left alone.
        let mut small = seg(2, 1, TcpFlags::ACK, 1, 1461, 0, 40_000);
        s.process(ms(220), &mut small);
        assert_eq!(small.tcp.window, 40_000, "a window is only ever lowered");
    }

    #[test]
    fn rtt_is_the_base_rtt_queueing_does_not_inflate_it() {
        let mut s = sap();
        handshake(&mut s, None);
        let probe = seg(2, 1, TcpFlags::ACK, 1, 1, 0, 65_535);
        assert_eq!(s.rtt_of(&probe), Some(Duration::from_millis(90)));
        // The segment timed at 91 ms is acked at 210 ms: 119 ms on the wireless side (a queue).
        s.process(ms(210), &mut seg(2, 1, TcpFlags::ACK, 1, 1461, 0, 65_535));
        assert_eq!(s.rtt_of(&probe), Some(Duration::from_millis(90)), "60 + min(30, 119) ms");
        // A segment at 300 ms acked at 320 ms: 20 ms, below the handshake's 30 -> 60 + 20 ms.
        s.process(ms(300), &mut seg(1, 2, TcpFlags::ACK, 1461, 1, 1460, 1000));
        s.process(ms(320), &mut seg(2, 1, TcpFlags::ACK, 1, 2921, 0, 65_535));
        assert_eq!(s.rtt_of(&probe), Some(Duration::from_millis(80)));
    }

    #[test]
    fn window_scaling_is_respected() {
        let mut s = sap();
        handshake(&mut s, Some(7));
        // 17 Mb/s of UDP: maxTCPrate = 1 Mb/s; RTT 90 ms -> awnd = 1e6 × 0.09 / 8 = 11 250 B,
        // and with the receiver's shift of 7 the field is 11 250 >> 7 = 87 (87 × 128 = 11 136 B).
        for _ in 0..425 {
            let mut u = seg(3, 2, 0, 0, 0, 0, 0);
            u.proto = Protocol::Udp;
            u.payload_len = 1000 - 28;
            s.process(ms(100), &mut u);
        }
        let mut ack = seg(2, 1, TcpFlags::ACK, 1, 1, 0, 2_000); // acks nothing new: no RTT sample
        s.process(ms(200), &mut ack);
        assert!((s.max_tcp_rate_bps() - 1e6).abs() < 1.0);
        assert_eq!(ack.tcp.window, 87);
    }

    #[test]
    fn capacity_is_shared_by_the_active_flows() {
        let mut s = sap();
        handshake(&mut s, None);
        // A second connection from another port.
        let mut syn = seg(1, 2, TcpFlags::SYN, 0, 0, 0, 65_535);
        syn.sport = 1001;
        s.process(ms(100), &mut syn);
        let mut synack = seg(2, 1, TcpFlags::SYN | TcpFlags::ACK, 0, 1, 0, 65_535);
        synack.dport = 1001;
        s.process(ms(120), &mut synack);
        let mut data = seg(1, 2, TcpFlags::ACK, 1, 1, 1460, 1000);
        data.sport = 1001;
        s.process(ms(150), &mut data);
        s.process(ms(200), &mut seg(1, 2, TcpFlags::ACK, 1461, 1, 1460, 1000));
        assert_eq!(s.active_tcp_flows(), 2);
        assert!((s.max_tcp_rate_bps() - 9e6).abs() < 1.0, "(18 − 0) / 2 Mb/s");
    }
}
