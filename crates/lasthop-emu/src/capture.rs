//! pcap captures of the real packets the emulator carries, at any node's interfaces — an
//! endpoint's (its TUN side of the first hop) or a router's or access point's inside the
//! emulator — in the simulator's convention (`lasthop run --pcap`, the core's
//! [`PcapWriter`]): a packet leaving the node is recorded when its transmission starts on the
//! interface (the hop's `HopEvent::Transmit`; a packet its queue drops never is), a packet
//! reaching the node when it arrives. The bytes are the packet's own, as read from the sender's
//! TUN device (cut at the snap length if one is given).
//!
//! Timestamps: the wall-clock (Unix) time of the emulation's start plus the model's time of
//! the event, so a capture lines up with a `tcpdump` a user runs inside a namespace (to within
//! the release lateness the emulator reports).
//!
//! Each capture also counts what it recorded per direction (`summary.json` → `emulator.captures`):
//! the interface's transmitted and received packets and bytes.
//!
//! Trade-off: the records are kept in memory until the run ends (as in the simulator), about
//! the bytes carried: a 60 s run at 10 Mb/s holds ~75 MB at full length; a snap length of 128
//! keeps the headers only. Left out: a capture file streamed while the run goes on.

use lasthop_core::pcap::PcapWriter;
use lasthop_core::Time;
use lasthop_scenario::{Scenario, Topology};

/// Where to capture: a node, or one of its interfaces (towards a neighbour).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSpec {
    /// As written: `node` or `node:neighbour`.
    pub spec: String,
    pub node: u32,
    pub peer: Option<u32>,
}

impl CaptureSpec {
    /// Parses `node` or `node:neighbour` against the scenario's nodes; the error names what is
    /// valid.
    pub fn parse(s: &Scenario, spec: &str) -> Result<CaptureSpec, String> {
        let topo = Topology::new(s);
        let known = || topo.names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        let (node, peer) = match spec.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (spec, None),
        };
        let node_id = topo.index(node).ok_or_else(|| format!("--pcap {spec}: no such node {node:?}; nodes: {}", known()))?;
        let peer_id = match peer {
            None => None,
            Some(p) => {
                let id = topo.index(p).ok_or_else(|| format!("--pcap {spec}: no such node {p:?}; nodes: {}", known()))?;
                if !topo.adj[node_id].iter().any(|&(m, _)| m == id) {
                    return Err(format!("--pcap {spec}: {p:?} is not a neighbour of {node:?}"));
                }
                Some(id as u32)
            }
        };
        Ok(CaptureSpec { spec: spec.to_string(), node: node_id as u32, peer: peer_id })
    }
}

/// Packets and bytes one way through an interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub packets: u64,
    pub bytes: u64,
}

/// A capture in progress.
#[derive(Debug)]
pub struct Capture {
    pub spec: CaptureSpec,
    pub pcap: PcapWriter,
    pub tx: Counts,
    pub rx: Counts,
}

/// Every capture of a run, with the time base of their timestamps.
#[derive(Debug, Default)]
pub struct Captures {
    pub list: Vec<Capture>,
    /// Unix time of the emulation's start, ns.
    pub epoch_ns: u64,
    /// Bytes kept of each packet.
    pub snaplen: usize,
}

impl Captures {
    pub fn new(specs: Vec<CaptureSpec>, epoch_ns: u64, snaplen: usize) -> Captures {
        let list = specs.into_iter().map(|spec| Capture { spec, pcap: PcapWriter::new(), tx: Counts::default(), rx: Counts::default() }).collect();
        Captures { list, epoch_ns, snaplen }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `bytes` go on the medium from `node` towards `peer` at model time `at`.
    pub fn transmit(&mut self, at: Time, node: u32, peer: u32, bytes: &[u8]) {
        let t = Time(self.epoch_ns + at.0);
        for c in self.list.iter_mut().filter(|c| c.spec.node == node && c.spec.peer.is_none_or(|p| p == peer)) {
            c.pcap.record_bytes(t, bytes, self.snaplen);
            c.tx.packets += 1;
            c.tx.bytes += bytes.len() as u64;
        }
    }

    /// `bytes` reach `node` from `from` at model time `at`.
    pub fn arrive(&mut self, at: Time, node: u32, from: u32, bytes: &[u8]) {
        let t = Time(self.epoch_ns + at.0);
        for c in self.list.iter_mut().filter(|c| c.spec.node == node && c.spec.peer.is_none_or(|p| p == from)) {
            c.pcap.record_bytes(t, bytes, self.snaplen);
            c.rx.packets += 1;
            c.rx.bytes += bytes.len() as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell() -> Scenario {
        Scenario::from_toml_str(lasthop_scenario::bundled::bundled("dumbbell").unwrap(), "dumbbell", &[]).unwrap()
    }

    #[test]
    fn a_capture_point_is_a_node_or_one_of_its_interfaces() {
        let s = dumbbell();
        assert_eq!(CaptureSpec::parse(&s, "router:receiver").unwrap(), CaptureSpec { spec: "router:receiver".into(), node: 1, peer: Some(2) });
        assert_eq!(CaptureSpec::parse(&s, "sender").unwrap().peer, None);
        let e = CaptureSpec::parse(&s, "sender:receiver").unwrap_err();
        assert!(e.contains("not a neighbour of \"sender\""), "{e}");
        let e = CaptureSpec::parse(&s, "ap").unwrap_err();
        assert!(e.contains("no such node \"ap\"") && e.contains("\"router\""), "{e}");
    }

    #[test]
    fn an_interface_capture_counts_each_way_and_ignores_other_interfaces() {
        let s = dumbbell();
        let specs = vec![CaptureSpec::parse(&s, "router:receiver").unwrap()];
        let mut c = Captures::new(specs, 1_000_000_000, 65_535);
        c.transmit(Time(5), 1, 2, &[0u8; 1500]); // router → receiver: recorded
        c.transmit(Time(6), 1, 0, &[0u8; 52]); // router → sender: another interface
        c.arrive(Time(7), 1, 2, &[0u8; 52]); // an ACK from the receiver
        let cap = &c.list[0];
        assert_eq!((cap.tx, cap.rx), (Counts { packets: 1, bytes: 1500 }, Counts { packets: 1, bytes: 52 }));
        assert_eq!(cap.pcap.packets(), 2);
        // Timestamps carry the epoch: the first record is at 1 s + 5 ns.
        let f = cap.pcap.file();
        assert_eq!(u32::from_le_bytes(f[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(f[28..32].try_into().unwrap()), 5);
    }
}
