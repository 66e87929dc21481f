//! lasthop's per-packet records ([`crate::records`]) → D-ITG 2.8.1 binary logs, for
//! `--ditg-log FILE` on `lasthop gen send` (ITGSend's `-l`: one record per packet sent, its
//! receive time = its send time) and `lasthop gen recv` (ITGRecv's `-l`: one record per packet
//! received, the send time it carried and its receive time), so that D-ITG's own ITGDec and the
//! scripts users built on it read a lasthop run.
//!
//! The logs are written from the record files once a session is over, not from the sending and
//! receiving loops: those stay as they are, and a log is a streamed conversion (one record in,
//! one out). Mapping:
//! - flowId = the flow's index + 1 and seqNum = the sequence number + 1 (D-ITG counts both from
//!   1; ITGDec takes 1 as the first sequence number when it counts loss);
//! - size = the bytes of the datagram or message after the UDP/TCP header (header included),
//!   D-ITG's "payload";
//! - times are UTC times of day at 1 µs, truncated as `gettimeofday` gives them: a run on the
//!   realtime clock as it is, a run on the monotonic clock shifted by one reading of
//!   realtime − monotonic, the same shift for both times of a record (so its delay is the
//!   run's own, to the µs);
//! - addresses: the destination is the receiver's data socket of the flow's protocol; the
//!   source is the sender's address with the port of its control connection (the records do
//!   not keep each datagram's source port; this port is the same at both ends, so ITGDec groups
//!   a flow's records of the two logs alike, and differs between concurrent sessions).
//!
//! Round trip (`--meter rtt`, D-ITG's `-m rttm`): the sender's log holds what ITGSend's does in
//! that mode, one record per echo that came back (first copy per sequence number), its receive
//! time the echo's arrival, so ITGDec prints the round trip as its delay. TCP flows are not
//! echoed; their sender records stay one-way ones.

use super::record::{LogWriter, PacketLog};
use super::DitgError;
use crate::clock::Clock;
use crate::control::Proto;
use crate::account::SeqSet;
use crate::records::{read_records, RecordKind};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

/// Where a session's packets went, as its log names them.
#[derive(Clone, Copy, Debug)]
pub struct LogAddrs {
    /// The sender's address and control-connection port.
    pub src: SocketAddr,
    /// The receiver's UDP and TCP data sockets.
    pub udp_dst: SocketAddr,
    pub tcp_dst: SocketAddr,
}

/// Nanoseconds to add to a time on `clock` to get nanoseconds since the Unix epoch (UTC): 0
/// for the realtime clock, realtime − monotonic read now for the monotonic one.
pub fn epoch_shift(clock: Clock) -> i128 {
    match clock {
        Clock::Realtime => 0,
        Clock::Monotonic => {
            let (a, m, b) = (Clock::Realtime.now_ns(), Clock::Monotonic.now_ns(), Clock::Realtime.now_ns());
            (a / 2 + b / 2) as i128 - m as i128
        }
    }
}

/// Appends the records of `kind` in the record file `path` to the log: `Sent` records as a
/// sender's log, `Received` ones as a receiver's; with `echoes`, a UDP flow's sender log is
/// its `EchoReceived` records instead (a round-trip run). `protos[i]` is flow i's protocol;
/// records of unknown flows are skipped. Returns the records written.
pub fn append_records<W: Write>(
    log: &mut LogWriter<W>,
    path: &Path,
    kind: RecordKind,
    echoes: bool,
    protos: &[Proto],
    addrs: &LogAddrs,
    shift: i128,
) -> Result<u64, DitgError> {
    let day = |ns: u64| (ns as i128 + shift).rem_euclid(86_400_000_000_000) as u64;
    let src = addrs.src.ip().to_string();
    let (udp, tcp) = (addrs.udp_dst.ip().to_string(), addrs.tcp_dst.ip().to_string());
    let mut n = 0;
    let mut echoed: Vec<SeqSet> = Vec::new();
    for r in read_records(path).map_err(|e| DitgError::io(path, e))? {
        let Some(proto) = protos.get(r.flow as usize) else { continue };
        let wanted = if kind == RecordKind::Sent && echoes && *proto == Proto::Udp { RecordKind::EchoReceived } else { kind };
        if r.kind != wanted {
            continue;
        }
        if wanted == RecordKind::EchoReceived {
            echoed.resize_with(echoed.len().max(r.flow as usize + 1), SeqSet::default);
            if !echoed[r.flow as usize].insert(r.seq) {
                continue; // a duplicate echo
            }
        }
        let dst = match proto {
            Proto::Udp => (udp.as_str(), addrs.udp_dst.port()),
            Proto::Tcp => (tcp.as_str(), addrs.tcp_dst.port()),
        };
        let tx = day(r.tx_ns);
        let rx = if wanted == RecordKind::Sent { tx } else { day(r.rx_ns) };
        log.write_packet(&PacketLog {
            flow_id: r.flow + 1,
            seq: r.seq.wrapping_add(1),
            src: (&src, addrs.src.port()),
            dst,
            tx_ns_of_day: tx,
            rx_ns_of_day: rx,
            size: r.bytes,
        })?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ditg::LogReader;
    use crate::records::{Record, RecordWriter};

    #[test]
    fn records_become_ditg_records_with_ids_from_1_and_times_of_day() {
        let dir = std::env::temp_dir().join(format!("lh-{}-export", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lhr = dir.join("r.lhr");
        let mut w = RecordWriter::create(&lhr).unwrap();
        // 13:05:07.123456789 on the run's clock; received 1.5 ms later; a record of flow 5
        // (unknown) and a sent record, both skipped in a receiver's log.
        let tx = (13 * 3600 + 5 * 60 + 7) * 1_000_000_000u64 + 123_456_789;
        w.push(&Record { flow: 1, seq: 0, bytes: 512, kind: RecordKind::Received, tx_ns: tx, rx_ns: tx + 1_500_000 }).unwrap();
        w.push(&Record { flow: 5, seq: 0, bytes: 512, kind: RecordKind::Received, tx_ns: tx, rx_ns: tx }).unwrap();
        w.push(&Record { flow: 0, seq: 3, bytes: 64, kind: RecordKind::Sent, tx_ns: tx, rx_ns: 0 }).unwrap();
        w.flush().unwrap();
        drop(w);
        let addrs = LogAddrs { src: "10.0.0.1:40000".parse().unwrap(), udp_dst: "10.0.0.2:9001".parse().unwrap(), tcp_dst: "10.0.0.2:9002".parse().unwrap() };
        let mut bytes = Vec::new();
        let mut log = LogWriter::new(&mut bytes, "x.log");
        // A shift of one day minus 1 s: the same time of day, 1 s earlier.
        let n = append_records(&mut log, &lhr, RecordKind::Received, false, &[Proto::Udp, Proto::Tcp], &addrs, 86_399_000_000_000).unwrap();
        log.finish().unwrap();
        assert_eq!(n, 1);
        let recs: Vec<_> = LogReader::new(&bytes[..], "x.log").map(Result::unwrap).collect();
        let r = &recs[0];
        assert_eq!((r.flow_id, r.seq, r.size, r.src_port, r.dst_port), (2, 1, 512, 40000, 9002), "flow 1 is TCP: its socket");
        assert_eq!((r.tx.hour, r.tx.minute, r.tx.second), (13, 5, 6.123456));
        assert_eq!((r.rx.hour, r.rx.minute, r.rx.second), (13, 5, 6.124956));
        assert_eq!((r.src_addr.text(), r.dst_addr.text()), ("10.0.0.1".to_string(), "10.0.0.2".to_string()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
