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
//! Streamed: given a file, a capture is written while the run goes on — the core's
//! [`PcapStream`] puts the records in time order within a 1 s horizon of model time (a WLAN
//! reports a transmission up to an exchange ahead), and a writer thread of the capture's own
//! takes the bytes to disk in 256 KiB pieces, so the real-time driver never waits on a disk and
//! a capture holds about a second of traffic whatever the run's length. Without a file (the
//! library's callers that want the bytes) the file is built in memory, as before. A write error
//! (a full disk) ends that capture's file where it failed, and `emulator.captures[].error` says
//! so; the run goes on.

use lasthop_core::pcap::PcapStream;
use lasthop_core::{Duration, Time};
use lasthop_scenario::{Scenario, Topology};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// How far ahead of the others a record may come and still be written in time order.
const HORIZON: Duration = Duration(1_000_000_000);
/// Bytes handed to the writer thread at a time.
const PIECE: usize = 256 * 1024;

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

/// Where a capture's bytes go.
#[derive(Debug)]
enum Sink {
    /// The whole file, for the caller.
    Memory(Vec<u8>),
    /// Pieces to the writer thread, which writes them to the file.
    File { pieces: Option<SyncSender<Vec<u8>>>, writer: Option<JoinHandle<Result<(), String>>>, piece: Vec<u8> },
}

/// A capture in progress.
#[derive(Debug)]
pub struct Capture {
    pub spec: CaptureSpec,
    pcap: PcapStream,
    sink: Sink,
    pub tx: Counts,
    pub rx: Counts,
    /// Packets recorded.
    pub packets: u64,
    /// Why its file ends early, if it does.
    pub error: Option<String>,
}

impl Capture {
    /// A capture into `file`, or into memory without one. The file is created now (an error
    /// names it).
    fn new(spec: CaptureSpec, file: Option<PathBuf>) -> Result<Capture, String> {
        let sink = match file {
            None => Sink::Memory(Vec::new()),
            Some(path) => {
                let f = std::fs::File::create(&path).map_err(|e| format!("--pcap {}: {}: {e}", spec.spec, path.display()))?;
                // A few pieces in flight: a slow disk holds the driver only once they are all queued.
                let (pieces, rx) = sync_channel::<Vec<u8>>(16);
                let writer = std::thread::spawn(move || {
                    let mut f = std::io::BufWriter::with_capacity(PIECE, f);
                    for piece in rx {
                        f.write_all(&piece).map_err(|e| format!("{}: {e}", path.display()))?;
                    }
                    f.flush().map_err(|e| format!("{}: {e}", path.display()))
                });
                Sink::File { pieces: Some(pieces), writer: Some(writer), piece: Vec::with_capacity(PIECE) }
            }
        };
        Ok(Capture { spec, pcap: PcapStream::new(HORIZON), sink, tx: Counts::default(), rx: Counts::default(), packets: 0, error: None })
    }

    fn record(&mut self, t: Time, bytes: &[u8], snaplen: usize) {
        self.pcap.record_bytes(t, bytes, snaplen);
        self.packets += 1;
        self.move_ready();
    }

    /// Moves what the stream has ready to the sink (to the writer once a piece is full).
    fn move_ready(&mut self) {
        match &mut self.sink {
            Sink::Memory(file) => self.pcap.move_ready(file),
            Sink::File { pieces, piece, .. } => {
                self.pcap.move_ready(piece);
                if piece.len() >= PIECE {
                    let full = std::mem::replace(piece, Vec::with_capacity(PIECE));
                    if let Some(tx) = pieces {
                        if tx.send(full).is_err() {
                            *pieces = None; // the writer stopped on an error; finish() reports it
                        }
                    }
                }
            }
        }
    }

    /// Ends the capture: the records still held, then the file closed. Returns the file's
    /// bytes when it was kept in memory.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        match &mut self.sink {
            Sink::Memory(file) => {
                self.pcap.finish(file);
                Some(std::mem::take(file))
            }
            Sink::File { pieces, writer, piece } => {
                self.pcap.finish(piece);
                if let Some(tx) = pieces.take() {
                    let _ = tx.send(std::mem::take(piece));
                }
                if let Some(w) = writer.take() {
                    if let Err(e) = w.join().unwrap_or_else(|_| Err("the capture's writer failed".into())) {
                        self.error = Some(e);
                    }
                }
                None
            }
        }
    }
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
    /// The captures of `specs`, each streamed to its file in `files` (in the same order) or,
    /// where `files` is shorter, kept in memory.
    pub fn new(specs: Vec<CaptureSpec>, files: &[PathBuf], epoch_ns: u64, snaplen: usize) -> Result<Captures, String> {
        let list = specs.into_iter().enumerate().map(|(i, spec)| Capture::new(spec, files.get(i).cloned())).collect::<Result<_, _>>()?;
        Ok(Captures { list, epoch_ns, snaplen })
    }

    /// Ends every capture: [(capture point, the file's bytes if kept in memory)].
    pub fn finish(&mut self) -> Vec<(String, Option<Vec<u8>>)> {
        self.list.iter_mut().map(|c| (c.spec.spec.clone(), c.finish())).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `bytes` go on the medium from `node` towards `peer` at model time `at`.
    pub fn transmit(&mut self, at: Time, node: u32, peer: u32, bytes: &[u8]) {
        let t = Time(self.epoch_ns + at.0);
        for c in self.list.iter_mut().filter(|c| c.spec.node == node && c.spec.peer.is_none_or(|p| p == peer)) {
            c.record(t, bytes, self.snaplen);
            c.tx.packets += 1;
            c.tx.bytes += bytes.len() as u64;
        }
    }

    /// `bytes` reach `node` from `from` at model time `at`.
    pub fn arrive(&mut self, at: Time, node: u32, from: u32, bytes: &[u8]) {
        let t = Time(self.epoch_ns + at.0);
        for c in self.list.iter_mut().filter(|c| c.spec.node == node && c.spec.peer.is_none_or(|p| p == from)) {
            c.record(t, bytes, self.snaplen);
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
        let mut c = Captures::new(specs, &[], 1_000_000_000, 65_535).unwrap();
        c.transmit(Time(5), 1, 2, &[0u8; 1500]); // router → receiver: recorded
        c.transmit(Time(6), 1, 0, &[0u8; 52]); // router → sender: another interface
        c.arrive(Time(7), 1, 2, &[0u8; 52]); // an ACK from the receiver
        let cap = &c.list[0];
        assert_eq!((cap.tx, cap.rx), (Counts { packets: 1, bytes: 1500 }, Counts { packets: 1, bytes: 52 }));
        assert_eq!(cap.packets, 2);
        // Timestamps carry the epoch: the first record is at 1 s + 5 ns.
        let f = c.finish().remove(0).1.unwrap();
        assert_eq!(f.len(), 24 + 16 + 1500 + 16 + 52, "header, then two records (hand count)");
        assert_eq!(u32::from_le_bytes(f[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(f[28..32].try_into().unwrap()), 5);
    }

    #[test]
    fn a_streamed_capture_writes_the_file_memory_would_hold_and_holds_about_a_second() {
        // 20 000 packets of 1 500 B, 1 ms apart (20 s of model time, 30 MB): the file on disk is
        // the one kept in memory byte for byte, and the stream never holds more than its 1 s
        // horizon: ≤ 1 001 records (hand count).
        let s = dumbbell();
        let path = std::env::temp_dir().join(format!("lh-{}-stream.pcap", std::process::id()));
        let spec = || vec![CaptureSpec::parse(&s, "router:receiver").unwrap()];
        let mut disk = Captures::new(spec(), std::slice::from_ref(&path), 0, 65_535).unwrap();
        let mut memory = Captures::new(spec(), &[], 0, 65_535).unwrap();
        let mut most_held = 0;
        for i in 0..20_000u64 {
            let bytes = [(i % 256) as u8; 1500];
            disk.transmit(Time(i * 1_000_000), 1, 2, &bytes);
            memory.transmit(Time(i * 1_000_000), 1, 2, &bytes);
            most_held = most_held.max(disk.list[0].pcap.held());
        }
        assert_eq!(disk.finish()[0].1, None, "streamed: no bytes held for the caller");
        let in_memory = memory.finish().remove(0).1.unwrap();
        assert_eq!(in_memory.len(), 24 + 20_000 * (16 + 1500));
        assert!(std::fs::read(&path).unwrap() == in_memory, "the streamed file differs");
        assert!(most_held <= 1001, "{most_held}");
        std::fs::remove_file(&path).unwrap();
        // A file that cannot be created is refused at the start, naming it.
        let e = Captures::new(spec(), &[PathBuf::from("/nonexistent-lh/x.pcap")], 0, 65_535).unwrap_err();
        assert!(e.starts_with("--pcap router:receiver: /nonexistent-lh/x.pcap: "), "{e}");
    }
}
