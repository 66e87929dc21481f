//! The Snoop agent (Balakrishnan, Seshan, Amir, Katz, MobiCom 1995; the rules of
//! `shared/reference/models.md` §9), as used by Ng, Chow and Trajkovic (paper 003). It sits on the
//! interface in front of a wireless link, on the side that sends TCP data across it (the base
//! station for a mobile download, the mobile for an upload):
//!
//! - data going out is cached per connection (4-tuple), in sequence order;
//! - a new ACK coming back frees the cached segments it covers and is forwarded;
//! - the first duplicate ACK for a cached segment triggers a local retransmission and is
//!   suppressed, as are the duplicates expected from the segments sent after the lost one, so
//!   the TCP sender neither fast-retransmits nor halves its window for a wireless loss;
//! - a duplicate ACK for a segment not cached (or one the sender itself retransmitted) goes on to
//!   the sender, whose congestion control needs it;
//! - a local timer (fixed, 1 s by default, or from the wireless hop's RTT) retransmits the oldest
//!   unacknowledged segment;
//! - a connection is forgotten once a FIN has been acknowledged.
//!
//! Sans-I/O: `outgoing(now, &packet)` for data crossing towards the wireless side, `incoming(now,
//! &packet, &mut out) -> Verdict` for packets coming back (local retransmissions go to `out`),
//! `next_deadline()` / `on_timer(now, &mut out)` for the local timer. Left out: the NACK scheme of
//! the Snoop paper for mobile senders (here the agent simply sits on the mobile's interface).

use crate::mechanisms::error_generator::Verdict;
use crate::packet::{Packet, Protocol, SeqNum, TcpFlags};
use crate::time::{Duration, Time};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalTimer {
    /// A fixed timeout (the paper 003 configuration: 1 s).
    Fixed(Duration),
    /// SRTT + 4·RTTVAR of the wireless hop, at least `min`.
    Rtt { min: Duration },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SnoopConfig {
    pub timer: LocalTimer,
    /// Segments cached per connection (ns-2: 100).
    pub max_cache: usize,
    /// Local retransmissions of one segment before giving up (ns-2: 10).
    pub max_local_rxmit: u32,
}

impl Default for SnoopConfig {
    fn default() -> Self {
        SnoopConfig { timer: LocalTimer::Fixed(Duration::from_secs(1)), max_cache: 100, max_local_rxmit: 10 }
    }
}

#[derive(Clone, Copy, Debug)]
struct Cached {
    pkt: Packet,
    sent: Time,
    sender_rxmit: bool,
    local_rxmits: u32,
}

#[derive(Clone, Debug, Default)]
struct Conn {
    cache: VecDeque<Cached>,
    last_ack: Option<SeqNum>,
    /// The window field of the last ACK: a duplicate repeats it (RFC 5681 §2).
    last_window: u16,
    last_seen: Option<SeqNum>,
    exp_dupacks: u32,
    deadline: Option<Time>,
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    fin_seq: Option<SeqNum>,
}

/// 4-tuple of the data direction: (data sender, its port, data receiver, its port).
type Key = (u32, u16, u32, u16);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnoopStats {
    pub cached: u64,
    pub local_retransmissions: u64,
    pub timer_retransmissions: u64,
    pub dupacks_suppressed: u64,
    pub connections_closed: u64,
}

#[derive(Debug)]
pub struct SnoopAgent {
    cfg: SnoopConfig,
    conns: BTreeMap<Key, Conn>,
    pub stats: SnoopStats,
}

impl SnoopAgent {
    pub fn new(cfg: SnoopConfig) -> Self {
        SnoopAgent { cfg, conns: BTreeMap::new(), stats: SnoopStats::default() }
    }

    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Segments cached over all connections.
    pub fn cached_len(&self) -> usize {
        self.conns.values().map(|c| c.cache.len()).sum()
    }

    /// The `uid` of every cached segment. A world that keeps more than the packet model of a
    /// segment (the emulator keeps its bytes, named by the uid it gave the model) frees what
    /// is no longer among these.
    pub fn cached_uids(&self) -> impl Iterator<Item = u64> + '_ {
        self.conns.values().flat_map(|c| c.cache.iter().map(|e| e.pkt.uid))
    }

    fn timeout(&self, c: &Conn) -> Duration {
        match self.cfg.timer {
            LocalTimer::Fixed(d) => d,
            LocalTimer::Rtt { min } => match c.srtt_ns {
                Some(s) => Duration((s + 4.0 * c.rttvar_ns) as u64).max(min),
                None => Duration::from_secs(1).max(min),
            },
        }
    }

    /// A packet leaving towards the wireless side: TCP data is cached.
    pub fn outgoing(&mut self, now: Time, p: &Packet) {
        if p.proto != Protocol::Tcp || p.payload_len == 0 && !p.tcp.flags.has(TcpFlags::FIN) {
            return;
        }
        let key = (p.src, p.sport, p.dst, p.dport);
        let max_cache = self.cfg.max_cache;
        let c = self.conns.entry(key).or_default();
        if p.tcp.flags.has(TcpFlags::FIN) {
            c.fin_seq = Some(p.tcp.seq + p.payload_len);
        }
        if p.payload_len == 0 {
            return;
        }
        let seq = p.tcp.seq;
        if c.last_ack.is_some_and(|a| seq + p.payload_len <= a) {
            return; // already acknowledged by the mobile
        }
        if let Some(e) = c.cache.iter_mut().find(|e| e.pkt.tcp.seq == seq) {
            // The sender retransmitted a cached segment (its timeout or fast retransmit).
            e.sender_rxmit = true;
            e.sent = now;
            return;
        }
        let is_new = c.last_seen.is_none_or(|l| seq >= l);
        if c.cache.len() >= max_cache {
            return; // cache full: forwarded without caching
        }
        let entry = Cached { pkt: *p, sent: now, sender_rxmit: !is_new, local_rxmits: 0 };
        let pos = c.cache.iter().position(|e| e.pkt.tcp.seq > seq).unwrap_or(c.cache.len());
        c.cache.insert(pos, entry);
        if is_new {
            c.last_seen = Some(seq + p.payload_len);
        }
        self.stats.cached += 1;
        if c.deadline.is_none() {
            let t = self.timeout(&self.conns[&key]);
            self.conns.get_mut(&key).expect("present").deadline = Some(now + t);
        }
    }

    /// A packet coming back from the wireless side: ACKs are inspected; local retransmissions
    /// are appended to `out`. Returns whether the packet goes on.
    pub fn incoming(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) -> Verdict {
        if p.proto != Protocol::Tcp || !p.tcp.flags.has(TcpFlags::ACK) {
            return Verdict::Forward;
        }
        let key = (p.dst, p.dport, p.src, p.sport);
        let Some(c) = self.conns.get_mut(&key) else { return Verdict::Forward };
        let ack = p.tcp.ack;
        // RFC 5681 §2: a duplicate ACK carries no data, no SYN/FIN, and repeats both the
        // acknowledgment and the window; a window update with the same ACK is not one.
        let same_window = c.last_window == p.tcp.window;
        let bare = p.payload_len == 0 && !p.tcp.flags.has(TcpFlags::SYN) && !p.tcp.flags.has(TcpFlags::FIN);
        c.last_window = p.tcp.window;
        match c.last_ack {
            Some(last) if ack < last => Verdict::Drop, // spurious, older than what we know
            Some(last) if ack == last && bare && same_window => self.duplicate_ack(now, key, out),
            Some(last) if ack == last => Verdict::Forward, // a window update or data: not a duplicate
            _ => {
                // A new ACK: clean the cache, sample the wireless round trip.
                while let Some(e) = c.cache.front() {
                    if e.pkt.tcp.seq + e.pkt.payload_len <= ack {
                        let e = c.cache.pop_front().expect("front");
                        if !e.sender_rxmit && e.local_rxmits == 0 && e.pkt.tcp.seq + e.pkt.payload_len == ack {
                            let r = (now - e.sent).0 as f64;
                            match c.srtt_ns {
                                None => {
                                    c.srtt_ns = Some(r);
                                    c.rttvar_ns = r / 2.0;
                                }
                                Some(s) => {
                                    c.rttvar_ns = 0.75 * c.rttvar_ns + 0.25 * (s - r).abs();
                                    c.srtt_ns = Some(0.875 * s + 0.125 * r);
                                }
                            }
                        }
                    } else {
                        break;
                    }
                }
                c.last_ack = Some(ack);
                c.exp_dupacks = 0;
                let t = self.timeout(&self.conns[&key]);
                let c = self.conns.get_mut(&key).expect("present");
                c.deadline = if c.cache.is_empty() { None } else { Some(now + t) };
                if c.fin_seq.is_some_and(|f| ack > f) {
                    self.conns.remove(&key);
                    self.stats.connections_closed += 1;
                }
                Verdict::Forward
            }
        }
    }

    fn duplicate_ack(&mut self, now: Time, key: Key, out: &mut Vec<Packet>) -> Verdict {
        let max_rx = self.cfg.max_local_rxmit;
        let c = self.conns.get_mut(&key).expect("present");
        let ack = c.last_ack.expect("a duplicate has a last ACK");
        let Some(i) = c.cache.iter().position(|e| e.pkt.tcp.seq == ack) else {
            return Verdict::Forward; // not cached: the sender must recover it
        };
        if c.cache[i].sender_rxmit {
            return Verdict::Forward;
        }
        if c.exp_dupacks > 0 {
            c.exp_dupacks -= 1;
            self.stats.dupacks_suppressed += 1;
            return Verdict::Drop;
        }
        if c.cache[i].local_rxmits >= max_rx {
            return Verdict::Forward;
        }
        // First duplicate for a cached segment: retransmit locally, expect one duplicate per
        // segment sent after it, and keep this one from the sender.
        c.cache[i].local_rxmits += 1;
        c.cache[i].sent = now;
        c.exp_dupacks = (c.cache.len() - i - 1) as u32;
        out.push(c.cache[i].pkt);
        self.stats.local_retransmissions += 1;
        self.stats.dupacks_suppressed += 1;
        Verdict::Drop
    }

    /// The earliest local retransmission timer.
    pub fn next_deadline(&self) -> Option<Time> {
        self.conns.values().filter_map(|c| c.deadline).min()
    }

    /// Retransmits the oldest cached segment of every connection whose timer expired.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        let due: Vec<Key> = self.conns.iter().filter(|(_, c)| c.deadline.is_some_and(|d| d <= now)).map(|(k, _)| *k).collect();
        for key in due {
            let t = self.timeout(&self.conns[&key]);
            let max_rx = self.cfg.max_local_rxmit;
            let c = self.conns.get_mut(&key).expect("present");
            c.deadline = None;
            if let Some(e) = c.cache.front_mut() {
                if e.local_rxmits < max_rx {
                    e.local_rxmits += 1;
                    e.sent = now;
                    out.push(e.pkt);
                    self.stats.timer_retransmissions += 1;
                }
                c.deadline = Some(now + t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;

    const FH: u32 = 1;
    const MH: u32 = 2;

    fn data(seq: u32) -> Packet {
        Packet {
            uid: seq as u64,
            flow: 0,
            pkt_seq: 0,
            src: FH,
            dst: MH,
            sport: 80,
            dport: 1000,
            dscp: 0,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader { seq: SeqNum(seq), ack: SeqNum(1), flags: TcpFlags(TcpFlags::ACK), window: 8760, ..TcpHeader::default() },
            payload_len: 1000,
            sent_at: Time::ZERO,
        }
    }

    fn ack(n: u32) -> Packet {
        let mut p = data(0);
        p.src = MH;
        p.dst = FH;
        p.sport = 1000;
        p.dport = 80;
        p.payload_len = 0;
        p.tcp.seq = SeqNum(1);
        p.tcp.ack = SeqNum(n);
        p
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn a_window_update_with_the_same_ack_is_not_a_duplicate() {
        // RFC 5681 §2: only an ACK that repeats the window is a duplicate. A slow reader's
        // window updates (same ACK, larger window) must reach the sender, not trigger a local
        // retransmission or be swallowed.
        let mut s = SnoopAgent::new(SnoopConfig::default());
        let mut out = Vec::new();
        for k in 0..3 {
            s.outgoing(ms(k), &data(1 + 1000 * k as u32));
        }
        let mut a = ack(1001);
        a.tcp.window = 0;
        assert_eq!(s.incoming(ms(10), &a, &mut out), Verdict::Forward);
        a.tcp.window = 4000;
        assert_eq!(s.incoming(ms(20), &a, &mut out), Verdict::Forward, "the window update goes on");
        assert!(out.is_empty(), "and causes no local retransmission");
        assert_eq!(s.incoming(ms(21), &a, &mut out), Verdict::Drop, "a true duplicate is still Snoop's");
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn dup_ack_triggers_local_retransmit_and_expected_dupacks_are_suppressed() {
        let mut s = SnoopAgent::new(SnoopConfig::default());
        let mut out = Vec::new();
        for k in 0..5 {
            s.outgoing(ms(k), &data(1 + 1000 * k as u32));
        }
        assert_eq!(s.incoming(ms(10), &ack(1001), &mut out), Verdict::Forward, "a new ACK goes on");
        // Segment 1001 was lost on the wireless link; 2001, 3001, 4001 arrive: three duplicates.
        assert_eq!(s.incoming(ms(11), &ack(1001), &mut out), Verdict::Drop, "first duplicate: suppressed");
        assert_eq!(out.len(), 1, "... and the segment is retransmitted locally");
        assert_eq!(out[0].tcp.seq, SeqNum(1001));
        // Three segments were sent after it: expect (and suppress) the three duplicates they cause.
        assert_eq!(s.incoming(ms(12), &ack(1001), &mut out), Verdict::Drop);
        assert_eq!(s.incoming(ms(13), &ack(1001), &mut out), Verdict::Drop);
        assert_eq!(s.incoming(ms(14), &ack(1001), &mut out), Verdict::Drop);
        assert_eq!(s.stats.dupacks_suppressed, 4, "the sender saw no duplicate ACK");
        assert_eq!(out.len(), 1);
        // The retransmission arrives: a cumulative ACK for everything goes on and cleans the cache.
        assert_eq!(s.incoming(ms(20), &ack(5001), &mut out), Verdict::Forward);
        assert_eq!(s.next_deadline(), None, "empty cache, no timer");
    }

    #[test]
    fn duplicates_for_segments_not_cached_reach_the_sender() {
        let mut s = SnoopAgent::new(SnoopConfig::default());
        let mut out = Vec::new();
        s.outgoing(ms(0), &data(1));
        s.incoming(ms(5), &ack(1001), &mut out);
        // 1001 never passed the agent (lost upstream, on the wired side): not cached.
        assert_eq!(s.incoming(ms(6), &ack(1001), &mut out), Verdict::Forward);
        assert!(out.is_empty());
        // The sender's own retransmission is marked so; its duplicates also go on.
        s.outgoing(ms(7), &data(2001));
        s.outgoing(ms(8), &data(1001));
        assert_eq!(s.incoming(ms(9), &ack(1001), &mut out), Verdict::Forward, "a sender retransmission's duplicates go on");
        assert!(out.is_empty(), "and Snoop does not retransmit it");
    }

    #[test]
    fn the_fixed_local_timer_retransmits_the_oldest_segment() {
        let mut s = SnoopAgent::new(SnoopConfig::default());
        let mut out = Vec::new();
        s.outgoing(ms(0), &data(1));
        s.outgoing(ms(1), &data(1001));
        assert_eq!(s.next_deadline(), Some(ms(1000)), "1 s after the first cached segment");
        s.on_timer(ms(1000), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tcp.seq, SeqNum(1));
        assert_eq!(s.next_deadline(), Some(ms(2000)));
    }

    #[test]
    fn connections_are_kept_apart_and_removed_after_fin() {
        let mut s = SnoopAgent::new(SnoopConfig::default());
        let mut out = Vec::new();
        s.outgoing(ms(0), &data(1));
        let mut other = data(1);
        other.sport = 81;
        s.outgoing(ms(0), &other);
        assert_eq!(s.connections(), 2);
        let mut fin = data(1001);
        fin.payload_len = 0;
        fin.tcp.flags = TcpFlags(TcpFlags::FIN | TcpFlags::ACK);
        s.outgoing(ms(1), &fin);
        s.incoming(ms(5), &ack(1002), &mut out);
        assert_eq!(s.connections(), 1, "the FIN was acknowledged: forgotten");
        assert_eq!(s.stats.connections_closed, 1);
    }
}
