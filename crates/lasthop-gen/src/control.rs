//! The signalling channel: one TCP connection from the sender to the receiver's control port,
//! carrying JSON objects one per line (serde, tagged by `"type"`), plus one raw block (the
//! receiver's record file) announced by the line before it.
//!
//! A session, sender → receiver and back:
//! 1. `hello` {version, session, token, data_port} → `welcome` {version, boot_id, udp_port, tcp_port}, or
//!    `error` and the connection closes (wrong token, other version).
//! 2. `clock_probe` {t1} → `clock_reply` {t1, t2, t3}, several times (the offset exchange of
//!    [`crate::clock`]).
//! 3. `setup` {clock, meter, flows, loss_timeout_ns} → `ready`.
//! 4. data flows on the data ports; the sender's `stop` {sent: packets per flow} ends it.
//! 5. The receiver waits until it has every packet the sender counted or the loss timeout has
//!    passed since `stop`, then answers `done` {counts, malformed, records_bytes} followed by
//!    `records_bytes` bytes of its record file ([`crate::records`]).
//!
//! Robustness: a line longer than [`MAX_LINE`], invalid UTF-8, invalid JSON, an unknown type or
//! a message out of turn is answered with `error` and ends the session; the receiver counts it
//! and goes on serving. A receiver listening beyond loopback requires the token (checked before
//! anything else is read). Left out: encryption and authentication beyond the shared token
//! (as in irtt's HMAC-less mode and iperf3 without `--rsa-public-key-path`).

use crate::clock::Clock;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Read, Write};

/// Protocol version; `hello` and `welcome` carry it and a mismatch ends the session.
pub const PROTOCOL_VERSION: u32 = 1;
/// The longest control line accepted, bytes.
pub const MAX_LINE: usize = 64 * 1024;
/// Default control port (D-ITG's ITGRecv listens on 9000 too).
pub const DEFAULT_PORT: u16 = 9000;

/// How delay is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Meter {
    /// One-way delay: the receiver logs each packet (D-ITG's `-m owdm`).
    Owd,
    /// Round trip: the receiver also echoes each UDP datagram back (`-m rttm`).
    Rtt,
}

/// Transport of a flow on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    Udp,
    Tcp,
}

/// What the receiver needs to know of one flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSetup {
    pub id: u32,
    pub name: String,
    pub proto: Proto,
    /// TCP receiving application's paced reads: (rate bit/s, bytes per read); None reads at once.
    #[serde(default)]
    pub paced_reads: Option<(u64, u64)>,
    /// TCP receiving application of a file loop (paper 000): (bytes per `read()`, sleep after
    /// each `read()` in ns).
    #[serde(default)]
    pub file_reads: Option<(u64, u64)>,
    /// TCP: the receiving socket's `SO_RCVBUF` as the flows file gives it (`tcp.receive_buffer`),
    /// bytes; None keeps the kernel's autotuning.
    #[serde(default)]
    pub receive_buffer: Option<u64>,
    /// TCP: the receiving socket's `TCP_DELACK_MAX_US` (`tcp.delayed_ack`), µs; None keeps
    /// the kernel's.
    #[serde(default)]
    pub delack_max_us: Option<u32>,
    /// TCP: acknowledge every segment at once (`tcp.delayed_ack_enabled = false`): the
    /// receiver re-arms `TCP_QUICKACK` after every read.
    #[serde(default)]
    pub quickack: bool,
}

/// The receiver's counts of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowCounts {
    /// Datagrams or messages logged (duplicates included).
    pub received: u64,
    /// Their bytes.
    pub bytes: u64,
    /// TCP: the receiving socket's `SO_RCVBUF` as the kernel reports it (Linux doubles what is
    /// set, socket(7)), bytes; 0 for UDP or when unknown.
    #[serde(default)]
    pub so_rcvbuf: u64,
    /// TCP: the receiving socket's `TCP_DELACK_MAX_US` as the kernel reports it once the flow's
    /// `tcp.delayed_ack` is set, µs; 0 where the flow leaves it to the kernel.
    #[serde(default)]
    pub delack_max_us: u64,
}

/// Every control message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Msg {
    Hello {
        version: u32,
        session: u32,
        token: Option<String>,
        /// The data port the sender asks for (D-ITG's `-rp`), UDP and TCP; ephemeral when None.
        #[serde(default)]
        data_port: Option<u16>,
    },
    Welcome { version: u32, boot_id: String, udp_port: u16, tcp_port: u16 },
    ClockProbe { t1: u64 },
    ClockReply { t1: u64, t2: u64, t3: u64 },
    Setup { clock: Clock, meter: Meter, flows: Vec<FlowSetup>, loss_timeout_ns: u64 },
    /// `tcp_ports`: (flow id, port) of the flows with a listener of their own (a flow that sets
    /// its receive buffer: the buffer is set before `listen()`, as an application does, so the
    /// handshake's window scale and first window come from it). Absent when there are none.
    Ready {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tcp_ports: Vec<(u32, u16)>,
    },
    Stop { sent: Vec<u64> },
    Done { counts: Vec<FlowCounts>, malformed: u64, control_errors: u64, records_bytes: u64, interrupted: bool },
    Error { message: String },
}

/// Why a control message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("control connection: {0}")]
    Io(#[from] io::Error),
    #[error("control connection closed by the peer")]
    Closed,
    #[error("control message longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("malformed control message: {0}")]
    Malformed(String),
}

/// Reads messages, one line of at most [`MAX_LINE`] bytes holding one JSON object each, from
/// a stream that may have a read timeout: a line cut by the timeout is kept and completed by
/// the next call.
pub struct LineReader<R> {
    r: R,
    line: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(r: R) -> Self {
        LineReader { r, line: Vec::new() }
    }

    /// The underlying reader (for the raw block after `done`).
    pub fn inner(&mut self) -> &mut R {
        &mut self.r
    }

    /// The next message; `Io` errors of kind WouldBlock/TimedOut keep what was read so far.
    pub fn read_msg(&mut self) -> Result<Msg, ControlError> {
        let room = (MAX_LINE + 1).saturating_sub(self.line.len()) as u64;
        if room == 0 {
            self.line.clear();
            return Err(ControlError::TooLong);
        }
        // read_until leaves the bytes read before an error in `line` (std documents it).
        let n = self.r.by_ref().take(room).read_until(b'\n', &mut self.line)?;
        if self.line.last() != Some(&b'\n') {
            if self.line.len() > MAX_LINE {
                self.line.clear();
                return Err(ControlError::TooLong);
            }
            if n == 0 {
                return Err(ControlError::Closed);
            }
            // A line still arriving: no error, ask again.
            return Err(ControlError::Io(io::Error::new(io::ErrorKind::WouldBlock, "partial line")));
        }
        let line = std::mem::take(&mut self.line);
        let text = std::str::from_utf8(&line).map_err(|_| ControlError::Malformed("not UTF-8".into()))?;
        serde_json::from_str(text.trim_end()).map_err(|e| ControlError::Malformed(e.to_string()))
    }
}

/// Writes one message as a line.
pub fn write_msg(w: &mut impl Write, m: &Msg) -> io::Result<()> {
    let mut line = serde_json::to_vec(m).expect("control messages serialize");
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::BufReader;

    #[test]
    fn messages_round_trip_as_one_json_line_each() {
        let msgs = vec![
            Msg::Hello { version: 1, session: 7, token: Some("s3cret".into()), data_port: None },
            Msg::Setup {
                clock: Clock::Monotonic,
                meter: Meter::Rtt,
                flows: vec![FlowSetup { id: 0, name: "voice".into(), proto: Proto::Udp, paced_reads: None, file_reads: None, receive_buffer: None, delack_max_us: None, quickack: false }],
                loss_timeout_ns: 1_000_000_000,
            },
            Msg::Ready { tcp_ports: vec![] },
            Msg::Ready { tcp_ports: vec![(1, 40_000)] },
            Msg::Stop { sent: vec![500, 0] },
        ];
        let mut buf = Vec::new();
        for m in &msgs {
            write_msg(&mut buf, m).unwrap();
        }
        let text = String::from_utf8(buf.clone()).unwrap();
        assert_eq!(text.lines().count(), 5);
        // A ready without own listeners is the old one-field-less message.
        assert!(text.contains("{\"type\":\"ready\"}\n{\"type\":\"ready\",\"tcp_ports\":[[1,40000]]}\n"), "{text}");
        assert!(text.starts_with(r#"{"type":"hello","version":1,"session":7,"token":"s3cret","data_port":null}"#), "{text}");
        let mut r = LineReader::new(BufReader::new(&buf[..]));
        for m in &msgs {
            assert_eq!(&r.read_msg().unwrap(), m);
        }
        assert!(matches!(r.read_msg(), Err(ControlError::Closed)));
    }

    #[test]
    fn a_line_cut_by_a_read_timeout_is_completed_by_the_next_read() {
        // A reader that returns the first half, then a timeout, then the rest.
        struct Halves(Vec<io::Result<Vec<u8>>>);
        impl Read for Halves {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.pop() {
                    None => Ok(0),
                    Some(Err(e)) => Err(e),
                    Some(Ok(b)) => {
                        buf[..b.len()].copy_from_slice(&b);
                        Ok(b.len())
                    }
                }
            }
        }
        let parts = vec![Ok(b"\"sent\":[3]}\n".to_vec()), Err(io::Error::new(io::ErrorKind::WouldBlock, "timeout")), Ok(b"{\"type\":\"stop\",".to_vec())];
        let mut r = LineReader::new(BufReader::new(Halves(parts)));
        assert!(matches!(r.read_msg(), Err(ControlError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock));
        assert_eq!(r.read_msg().unwrap(), Msg::Stop { sent: vec![3] });
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [&b"{\"type\":\"nope\"}\n"[..], b"not json\n", b"\xff\xfe\n", b"{\"type\":\"stop\",\"sent\":[-1]}\n", b"{\"type\":\"ready\",\"x\":1}\n"] {
            assert!(matches!(LineReader::new(BufReader::new(bad)).read_msg(), Err(ControlError::Malformed(_))), "{bad:?}");
        }
        let long = vec![b'a'; MAX_LINE + 10];
        assert!(matches!(LineReader::new(BufReader::new(&long[..])).read_msg(), Err(ControlError::TooLong)));
        let mut cut = LineReader::new(BufReader::new(&b"{\"type\":\"ready\"}"[..]));
        assert!(matches!(cut.read_msg(), Err(ControlError::Io(_))), "a partial line waits for more");
        assert!(matches!(cut.read_msg(), Err(ControlError::Closed)), "then the connection closed");
    }

    proptest! {
        #[test]
        fn any_bytes_are_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut r = LineReader::new(BufReader::new(&bytes[..]));
            for _ in 0..4 {
                if r.read_msg().is_err() { break; }
            }
        }
    }
}
