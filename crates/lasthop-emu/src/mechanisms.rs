//! The scenario's packet processors — SAP-LAW (paper 001), Snoop and the packet error generator
//! (paper 003) — on real packet bytes, on the interfaces the scenario attaches them to
//! (`lasthop_scenario::build::network`, the simulator's chains). The processors are the core's,
//! unchanged and sans-I/O (`now` is an argument); this module is the bridge between them and
//! bytes, following the core's `wire` recipe:
//!
//! ```text
//! bytes --wire::parse--> Packet --processor--> Packet --set_tcp_window--> bytes
//! ```
//!
//! - a packet leaving a node through an interface runs its chain top-down ([`Mechanisms::egress`]);
//!   SAP-LAW lowers the advertised window of an ACK and the bytes get the new window with an
//!   incremental checksum update (RFC 1624 eqn. 3, `wire::set_tcp_window`). SAP-LAW learns each
//!   connection's window scale from the SYN and SYN-ACK options as they cross the AP, so the
//!   16-bit field it writes is the window shifted by the data receiver's scale (RFC 7323 §2.3).
//!   Options the model does not parse (timestamps) stay as they are: only the window word changes;
//! - a packet arriving through an interface runs the chain bottom-up ([`Mechanisms::ingress`]):
//!   Snoop frees acknowledged segments, suppresses duplicate ACKs and retransmits locally;
//! - Snoop caches the model of a data segment; this module keeps the segment's *bytes* beside
//!   it, in a store named by the `uid` the model carries, so a local retransmission is the very
//!   segment the sender sent. Copies the agent no longer caches are freed in batches (the store
//!   never holds more than 64 segments beyond the agents' caches). Buffers are reused: no
//!   allocation per packet once the store has grown to the caches' size;
//! - the error generator drops with its model's probability from its named random stream;
//!   a drop is a packet that never reaches the next hop;
//! - packets a processor emits (Snoop's retransmissions, from an ACK or from its timer) are
//!   queued here as (processor, stored bytes); the driver sends them from the processor's node
//!   into the chain just below it, as the simulator does;
//! - timers: after each call the processor's next deadline is compared with the one the driver
//!   scheduled, and a new deadline is queued for the driver ([`Mechanisms::take_timer`]).
//!
//! Bytes that are not an IPv4 TCP or UDP packet `wire::parse` accepts (ICMP, truncated headers,
//! bad data offsets or options) pass the processors untouched: a processor only ever sees a
//! well-formed packet model, so malformed input cannot make it panic. Left out: the processors
//! see no ICMP (the packet model has none), so a ping crosses an error generator unharmed.
//! CoDel and FQ-CoDel need nothing here: they are queue disciplines inside the hops.

use crate::network::Network;
use lasthop_core::mechanisms::processor::{Processor, Verdict};
use lasthop_core::packet::{Packet, PacketMeta, Protocol};
use lasthop_core::wire;
use lasthop_core::Time;

/// Copies beyond the agents' caches the store may hold before it is swept.
const SWEEP_SLACK: usize = 64;

/// Byte copies of the segments Snoop agents cache, by index.
#[derive(Debug, Default)]
struct SegmentStore {
    bufs: Vec<Vec<u8>>,
    used: Vec<bool>,
    free: Vec<u32>,
    live: usize,
}

impl SegmentStore {
    fn put(&mut self, bytes: &[u8]) -> u32 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.bufs.push(Vec::new());
                self.used.push(false);
                (self.bufs.len() - 1) as u32
            }
        };
        let buf = &mut self.bufs[i as usize];
        buf.clear();
        buf.extend_from_slice(bytes);
        self.used[i as usize] = true;
        self.live += 1;
        i
    }

    fn release(&mut self, i: u32) {
        if std::mem::replace(&mut self.used[i as usize], false) {
            self.free.push(i);
            self.live -= 1;
        }
    }
}

/// What the bridge counted, for the run report's `emulator` section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MechanismStats {
    /// Packets shown to a chain.
    pub processed: u64,
    /// ACKs whose window field was rewritten in their bytes.
    pub windows_rewritten: u64,
    /// Packets emitted by processors (Snoop's local retransmissions) and handed to the driver.
    pub emitted: u64,
    /// Packets on an interface with processors that were not TCP/UDP the parser accepts.
    pub unparsed: u64,
}

/// The bridge between the network's processors and packet bytes.
#[derive(Debug, Default)]
pub struct Mechanisms {
    store: SegmentStore,
    emitted: Vec<Packet>,
    /// (processor, store index) of emitted packets the driver has not taken yet.
    out: Vec<(u32, u32)>,
    /// (processor, deadline) of timers the driver has to schedule.
    timers: Vec<(u32, Time)>,
    keep: Vec<u64>,
    pub stats: MechanismStats,
}

/// The packet model of `bytes`, if they are a TCP or UDP packet lasthop parses.
fn model(bytes: &[u8]) -> Option<Packet> {
    wire::parse(bytes).ok()?.to_packet(PacketMeta::default()).ok()
}

fn snoop_cached(p: &Processor) -> u64 {
    match p {
        Processor::Snoop(s) => s.stats.cached,
        _ => 0,
    }
}

impl Mechanisms {
    /// Packet `bytes` leaves `node` towards its neighbour `next`: the interface's processors from
    /// chain position `pos` down see it. SAP-LAW's window changes are written into `bytes`.
    pub fn egress(&mut self, net: &mut Network, now: Time, node: u32, next: u32, pos: usize, bytes: &mut [u8]) -> Verdict {
        let len = net.chain(node, next).len();
        if pos >= len {
            return Verdict::Pass;
        }
        let Some(mut p) = model(bytes) else {
            self.stats.unparsed += 1;
            return Verdict::Pass;
        };
        self.stats.processed += 1;
        for i in pos..len {
            let k = net.chain(node, next)[i] as usize;
            let processor = &mut net.processors[k].processor;
            // Snoop keeps the model; the bytes go to the store under the uid the model carries.
            let copy = (matches!(processor, Processor::Snoop(_)) && p.proto == Protocol::Tcp && p.payload_len > 0)
                .then(|| (self.store.put(bytes), snoop_cached(processor)));
            if let Some((at, _)) = copy {
                p.uid = at as u64;
            }
            let window = p.tcp.window;
            let verdict = processor.egress(now, &mut p);
            if let Some((at, before)) = copy {
                if snoop_cached(processor) == before {
                    self.store.release(at);
                }
            }
            if p.tcp.window != window && wire::set_tcp_window(bytes, p.tcp.window).is_ok() {
                self.stats.windows_rewritten += 1;
            }
            self.arm(net, k);
            if let Verdict::Drop(_) = verdict {
                return verdict;
            }
        }
        Verdict::Pass
    }

    /// Packet `bytes` reaches `node` from its neighbour `from`: the interface's processors see it
    /// bottom-up; what they emit waits in [`Self::take_emitted`].
    pub fn ingress(&mut self, net: &mut Network, now: Time, node: u32, from: u32, bytes: &[u8]) -> Verdict {
        let len = net.chain(node, from).len();
        if len == 0 {
            return Verdict::Pass;
        }
        let Some(mut p) = model(bytes) else {
            self.stats.unparsed += 1;
            return Verdict::Pass;
        };
        self.stats.processed += 1;
        let mut verdict = Verdict::Pass;
        for i in (0..len).rev() {
            let k = net.chain(node, from)[i] as usize;
            verdict = net.processors[k].processor.ingress(now, &mut p, &mut self.emitted);
            self.collect(k);
            self.arm(net, k);
            if let Verdict::Drop(_) = verdict {
                break;
            }
        }
        self.sweep(net);
        verdict
    }

    /// Processor `k`'s timer, scheduled for `deadline`, is due at `now`.
    pub fn on_timer(&mut self, net: &mut Network, now: Time, k: usize, deadline: Time) {
        if net.processors[k].scheduled == Some(deadline) {
            net.processors[k].scheduled = None;
        }
        net.processors[k].processor.on_timer(now, &mut self.emitted);
        self.collect(k);
        self.arm(net, k);
    }

    /// The next packet a processor emitted: the processor and the packet's bytes.
    pub fn take_emitted(&mut self) -> Option<(u32, &[u8])> {
        let (k, at) = self.out.pop()?;
        self.stats.emitted += 1;
        Some((k, &self.store.bufs[at as usize]))
    }

    /// The next processor timer to schedule: (processor, deadline).
    pub fn take_timer(&mut self) -> Option<(u32, Time)> {
        self.timers.pop()
    }

    /// Segment copies held for Snoop agents.
    pub fn stored(&self) -> usize {
        self.store.live
    }

    fn collect(&mut self, k: usize) {
        // In emission order (`out` is a stack: push in reverse).
        for q in self.emitted.drain(..).rev() {
            self.out.push((k as u32, q.uid as u32));
        }
    }

    /// Queues processor `k`'s timer if its deadline is earlier than the scheduled one.
    fn arm(&mut self, net: &mut Network, k: usize) {
        let a = &mut net.processors[k];
        if let Some(d) = a.processor.next_deadline() {
            if a.scheduled.is_none_or(|s| d < s) {
                a.scheduled = Some(d);
                self.timers.push((k as u32, d));
            }
        }
    }

    /// Frees the copies no Snoop agent caches any more, once there are enough of them.
    fn sweep(&mut self, net: &Network) {
        let agents = || net.processors.iter().filter_map(|a| if let Processor::Snoop(s) = &a.processor { Some(s) } else { None });
        let cached: usize = agents().map(|s| s.cached_len()).sum();
        if self.store.live <= cached + SWEEP_SLACK || !self.out.is_empty() {
            return;
        }
        self.keep.clear();
        for s in agents() {
            self.keep.extend(s.cached_uids());
        }
        self.keep.sort_unstable();
        for i in 0..self.store.used.len() {
            if self.store.used[i] && self.keep.binary_search(&(i as u64)).is_err() {
                self.store.release(i as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::packet::{SeqNum, TcpFlags, TcpHeader};
    use lasthop_core::rng::{uniform_below, RngStreams};
    use lasthop_scenario::Scenario;

    /// W (node 0) -- 20 ms wired -- AP (node 1) ~~ 802.11g ~~ N (node 2); SAP-LAW at the AP with
    /// C = 4 Mb/s, a Snoop agent at the AP towards N, an error generator on the same interface.
    const HOME: &str = r#"
        [simulation]
        duration = "10s"
        [[nodes]]
        name = "W"
        [[nodes]]
        name = "AP"
        [[nodes]]
        name = "N"
        [[links]]
        a = "W"
        b = "AP"
        rate = "100Mbps"
        delay = "20ms"
        [[wlans]]
        name = "home"
        standard = "802.11g"
        ap = "AP"
        stations = ["N"]
        sap_law = { capacity = "4Mbps" }
        [[snoop]]
        node = "AP"
        peer = "N"
        [[error_generators]]
        node = "AP"
        peer = "N"
        direction = "out"
        rate = 0.5
    "#;
    const W: u32 = 0;
    const AP: u32 = 1;
    const N: u32 = 2;

    fn network(toml: &str) -> Network {
        let s = Scenario::from_toml_str(toml, "test.toml", &[]).unwrap();
        Network::new(&s, &RngStreams::new(s.simulation.seed))
    }

    /// The bytes of a TCP segment between W (port 40000) and N (port 5000).
    #[allow(clippy::too_many_arguments)] // one argument per header field a test varies
    fn segment(src: u32, dst: u32, flags: u8, seq: u32, ack: u32, len: u32, window: u16, wscale: Option<u8>) -> Vec<u8> {
        let (sport, dport) = if src == W { (40_000, 5_000) } else { (5_000, 40_000) };
        let syn = flags & TcpFlags::SYN != 0;
        let p = Packet {
            uid: 0,
            flow: 0,
            pkt_seq: 0,
            src,
            dst,
            sport,
            dport,
            dscp: 0,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader {
                seq: SeqNum(seq),
                ack: SeqNum(ack),
                flags: TcpFlags(flags),
                window,
                mss: syn.then_some(1460),
                wscale,
                ..TcpHeader::default()
            },
            payload_len: len,
            sent_at: Time::ZERO,
        };
        let h = wire::Headers::from_packet(&p, 1);
        let mut buf = vec![0u8; h.total_len()];
        wire::emit(&h, &mut buf).unwrap();
        buf
    }

    fn window_of(bytes: &[u8]) -> u16 {
        wire::parse(bytes).unwrap().tcp.window
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn sap_law_lowers_a_real_acks_window_by_the_receivers_scale_with_a_valid_checksum() {
        // SAP-LAW alone: the scenario up to its Snoop agent.
        let mut net = network(HOME.split("[[snoop]]").next().unwrap());
        let mut m = Mechanisms::default();
        // The handshake crosses the AP: SYN (W offers scale 7) at 0 ms, SYN-ACK (N offers 7) at
        // 30 ms, the handshake ACK at 90 ms; data at 100 ms, its ACK from N at 110 ms.
        let mut syn = segment(W, N, TcpFlags::SYN, 1_000, 0, 0, 64_240, Some(7));
        assert_eq!(m.egress(&mut net, ms(0), AP, N, 0, &mut syn), Verdict::Pass);
        let mut synack = segment(N, W, TcpFlags::SYN | TcpFlags::ACK, 9_000, 1_001, 0, 65_160, Some(7));
        assert_eq!(m.egress(&mut net, ms(30), AP, W, 0, &mut synack), Verdict::Pass);
        let mut ack = segment(W, N, TcpFlags::ACK, 1_001, 9_001, 0, 502, None);
        m.egress(&mut net, ms(90), AP, N, 0, &mut ack);
        let mut data = segment(W, N, TcpFlags::ACK, 1_001, 9_001, 1_000, 502, None);
        m.egress(&mut net, ms(100), AP, N, 0, &mut data);
        let mut ack = segment(N, W, TcpFlags::ACK, 9_001, 2_001, 0, 2_000, None);
        assert_eq!(m.egress(&mut net, ms(110), AP, W, 0, &mut ack), Verdict::Pass);
        // Paper 001: awnd = maxTCPrate · RTT / 8. Before the first 200 ms period ends maxTCPrate is
        // C = 4 Mb/s; RTT = the SYN side (90 − 30 = 60 ms) + the smaller of the SYN-ACK side
        // (30 ms) and the receiver-side sample (110 − 100 = 10 ms) = 70 ms: 35 000 bytes, which
        // N's scale of 7 makes 35 000 >> 7 = 273 in the 16-bit field (RFC 7323 §2.3).
        assert_eq!(window_of(&ack), 273);
        assert_eq!(wire::verify_checksums(&ack), Ok(()), "the incremental update (RFC 1624) matches a full recomputation");
        assert_eq!(m.stats.windows_rewritten, 1);
        // A window already below it is left alone (a window is only ever lowered).
        let mut small = segment(N, W, TcpFlags::ACK, 9_001, 2_001, 0, 100, None);
        m.egress(&mut net, ms(120), AP, W, 0, &mut small);
        assert_eq!(window_of(&small), 100);
        let sap = net.processor_reports().sap_law;
        assert_eq!(sap[0].windows_lowered, 1);
    }

    #[test]
    fn snoop_retransmits_the_cached_bytes_on_a_duplicate_ack_and_suppresses_it() {
        let toml = HOME.replace("rate = 0.5", "rate = 0.0");
        let mut net = network(&toml);
        let mut m = Mechanisms::default();
        let mut sent = Vec::new();
        for (i, t) in [(0u32, 0u64), (1, 1), (2, 2)] {
            let mut d = segment(W, N, TcpFlags::ACK, 1_000 + 1_000 * i, 1, 1_000, 500, None);
            assert_eq!(m.egress(&mut net, ms(t), AP, N, 0, &mut d), Verdict::Pass);
            sent.push(d);
        }
        assert_eq!(m.stored(), 3, "three data segments cached with their bytes");
        // N acknowledges the first, then repeats that ACK: the second segment was lost.
        let ack = segment(N, W, TcpFlags::ACK, 1, 2_000, 0, 1_000, None);
        assert_eq!(m.ingress(&mut net, ms(50), AP, N, &ack), Verdict::Pass);
        assert!(m.take_emitted().is_none());
        let dup = ack.clone();
        assert_eq!(m.ingress(&mut net, ms(51), AP, N, &dup), Verdict::Drop(lasthop_core::metrics::DropCause::Suppressed));
        let (k, bytes) = m.take_emitted().expect("a local retransmission");
        assert_eq!(bytes, &sent[1][..], "the very bytes the sender sent");
        assert!(matches!(net.processors[k as usize].processor, Processor::Snoop(_)));
        // The next duplicate (from the third segment) is expected and suppressed too.
        assert_eq!(m.ingress(&mut net, ms(52), AP, N, &dup), Verdict::Drop(lasthop_core::metrics::DropCause::Suppressed));
        // The local timer was queued for the driver.
        assert!(m.take_timer().is_some());
        let snoop = net.processor_reports().snoop;
        assert_eq!((snoop[0].local_retransmissions, snoop[0].dupacks_suppressed), (1, 2));
    }

    #[test]
    fn the_store_never_keeps_much_more_than_the_agents_cache() {
        let toml = HOME.replace("rate = 0.5", "rate = 0.0");
        let mut net = network(&toml);
        let mut m = Mechanisms::default();
        for i in 0..1_000u32 {
            let mut d = segment(W, N, TcpFlags::ACK, 1_000 + 1_000 * i, 1, 1_000, 500, None);
            m.egress(&mut net, ms(i as u64), AP, N, 0, &mut d);
            let ack = segment(N, W, TcpFlags::ACK, 1, 2_000 + 1_000 * i, 0, 1_000, None);
            m.ingress(&mut net, ms(i as u64), AP, N, &ack);
        }
        assert!(m.stored() <= SWEEP_SLACK + 1, "{} copies kept for an empty cache", m.stored());
    }

    /// Malformed packets from a namespace: truncated headers, bad data offsets and lengths,
    /// garbage options, random bytes. No processor may panic; the chain lets them pass.
    #[test]
    fn fuzzed_bytes_never_panic_a_processor() {
        let mut net = network(&HOME.replace("rate = 0.5", "rate = 0.1"));
        let mut m = Mechanisms::default();
        let mut rng = RngStreams::new(7).stream("fuzz");
        let seeds = [
            segment(W, N, TcpFlags::SYN, 1_000, 0, 0, 64_240, Some(7)),
            segment(N, W, TcpFlags::SYN | TcpFlags::ACK, 9_000, 1_001, 0, 65_160, Some(14)),
            segment(W, N, TcpFlags::ACK, 1_001, 9_001, 1_000, 502, None),
            segment(N, W, TcpFlags::ACK, 9_001, 2_001, 0, 2_000, None),
        ];
        let mut passed = 0;
        for i in 0..50_000u64 {
            let mut b = seeds[(i % 4) as usize].clone();
            match uniform_below(&mut rng, 6) {
                0 => b.truncate(uniform_below(&mut rng, b.len() as u64) as usize),
                // The TCP data offset (byte 32's upper nibble): below 5, or beyond the packet.
                1 => b[32] = (uniform_below(&mut rng, 16) as u8) << 4,
                // Option bytes (the SYNs carry options at 40..): random kinds and lengths.
                2 if b.len() > 44 => {
                    for x in &mut b[40..44] {
                        *x = uniform_below(&mut rng, 256) as u8;
                    }
                }
                // IPv4 total length or IHL.
                3 => {
                    let at = if uniform_below(&mut rng, 2) == 0 { 0 } else { 3 };
                    b[at] = uniform_below(&mut rng, 256) as u8;
                }
                4 => {
                    for _ in 0..4 {
                        let at = uniform_below(&mut rng, b.len() as u64) as usize;
                        b[at] = uniform_below(&mut rng, 256) as u8;
                    }
                }
                _ => b = (0..uniform_below(&mut rng, 80)).map(|_| uniform_below(&mut rng, 256) as u8).collect(),
            }
            let now = Time(i * 100_000);
            let (node_from, toward) = if i % 2 == 0 { (AP, N) } else { (AP, W) };
            if m.egress(&mut net, now, node_from, toward, 0, &mut b) == Verdict::Pass {
                passed += 1;
            }
            m.ingress(&mut net, now, AP, N, &b);
            while m.take_emitted().is_some() {}
            // Due timers run once each (a timer re-arms itself for later).
            let due: Vec<(u32, Time)> = std::iter::from_fn(|| m.take_timer()).collect();
            for (k, d) in due {
                if d <= now {
                    m.on_timer(&mut net, now, k as usize, d);
                }
            }
        }
        assert!(m.stats.unparsed > 10_000, "most mutations are malformed: {:?}", m.stats);
        assert!(passed > 0 && m.stats.processed > 0);
    }
}
