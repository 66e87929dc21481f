//! The real-time driver of the hop contract (`lasthop_core::hop`): reads real packets from the
//! endpoints' TUN devices, offers them to the scenario's hop models at the time they were read,
//! keeps each packet's bytes in an arena slot named by its `PacketRef` while the model holds
//! it, and writes it to the destination's TUN device when the model says it arrives — after
//! the model's queueing, serialization, contention, retransmissions and propagation.
//!
//! Time: `Time` is nanoseconds of `CLOCK_MONOTONIC` since the emulation started. A model's wake
//! is polled with its *scheduled* time, not the (slightly later) time the thread woke up, so
//! the model's own schedule never drifts (a 10 Mb/s serializer stays exactly 10 Mb/s); only the
//! release of bytes to the kernel is late, by the wake-up latency, which is measured and
//! reported (`release_lateness`). Packets read in one pass are offered at one `now` taken after
//! the due wakes ran, so model time never goes backwards.
//!
//! The loop: run the wakes and arrivals that are due (lasthop-core's schedule, by time, then
//! insertion, as the simulator's engine); read every TUN device until it is empty (a batch per wake-up); `ppoll` on the
//! devices with a nanosecond timeout to the next due event (timer slack set to 1 ns). One
//! thread, no allocation per packet (slots are reused; event buffers are reused).
//!
//! Malformed input from a namespace — truncated headers, lengths that disagree, bad options,
//! non-IPv4, addresses outside the scenario — is counted and dropped, never a panic: TCP and UDP
//! go through `wire::parse`, other IPv4 (ICMP: ping) through etherparse's header check.
//!
//! Packet processors (SAP-LAW, Snoop, the error generator; [`crate::mechanisms`]) run where the
//! scenario attaches them: a packet leaving a node (read from its device, or forwarded by a
//! router inside the emulator) runs the chain of that interface before it is offered to the hop;
//! a packet reaching a node runs the chain of the interface it came in on before it is written or
//! forwarded. With no processors in the scenario this costs one check per packet.
//! Captures ([`crate::capture`]) record a packet's bytes when a hop reports its transmission
//! (`HopEvent::Transmit`, asked of the hops only when a capture exists: after the interface's
//! processors) and when it arrives (before the arriving interface's processors), as in the
//! simulator.

use crate::capture::Captures;
use crate::mechanisms::{MechanismStats, Mechanisms};
use crate::model::{segment_of, ModelFlow, ModelTcp};
use lasthop_core::schedule::Schedule;
use lasthop_core::tcp::Segment;
use crate::network::{Egress, Network};
use crate::observe::{Observer, Tag};
use crate::steering::Steering;
use crate::tun::Tun;
use lasthop_core::cellular::hop::RlcHop;
use lasthop_core::hop::{Hop, HopEvent, Offer, TrafficClass};
use lasthop_core::mechanisms::processor::Verdict;
use lasthop_core::metrics::DropCause;
use lasthop_core::packet::{PacketMeta, Protocol, TcpFlags};
use lasthop_core::report::{ErrorGeneratorReport, SapLawReport, SnoopReport};
use lasthop_core::wire;
use lasthop_core::wired::flow_key;
use lasthop_core::Time;
use lasthop_gen::pacer::CpuLatencyRequest;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Longest sleep between two checks of the stop flag.
const MAX_SLEEP_NS: u64 = 5_000_000;
/// Packets read from one device per pass before the others get their turn.
const BATCH: usize = 64;

/// One packet's bytes and what the driver knows of it.
#[derive(Debug)]
struct Slot {
    buf: Box<[u8]>,
    len: usize,
    read_at: Time,
    dst: u32,
    tag: Tag,
    /// Fair-queueing key and traffic class, for every hop on the way.
    key: u32,
    class: TrafficClass,
    /// Where the packet comes from: a namespace, or a modelled flow (absorbed at its
    /// destination, never written to a device).
    origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Real,
    ModelUdp,
    /// Modelled TCP flow `m`'s segment.
    ModelTcp { m: u32 },
}

/// Packet storage: slots reused through a free list; a `PacketRef` is a slot index.
#[derive(Debug, Default)]
struct Arena {
    slots: Vec<Slot>,
    free: Vec<u32>,
    slot_bytes: usize,
}

impl Arena {
    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            // A reused slot holds a real packet unless its filler says otherwise.
            self.slots[i as usize].origin = Origin::Real;
            return i;
        }
        let buf = vec![0u8; self.slot_bytes].into_boxed_slice();
        self.slots.push(Slot { buf, len: 0, read_at: Time::ZERO, dst: 0, tag: Tag::NONE, key: 0, class: TrafficClass::Udp, origin: Origin::Real });
        (self.slots.len() - 1) as u32
    }
    fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// What the driver counted, for the run report's `emulator` section.
#[derive(Clone, Debug, Default)]
pub struct DriverStats {
    pub packets_read: u64,
    pub packets_written: u64,
    /// Bytes from a namespace that are not an IPv4 packet lasthop can route.
    pub malformed: u64,
    /// IPv4 packets to an address that is no endpoint of the scenario (or the sender itself).
    pub unroutable: u64,
    /// Packets that belong to no flow (a ping, a shell's traffic), routed all the same.
    pub other_packets: u64,
    /// The generator's signalling packets, passed between namespaces outside the models.
    pub signalling_packets: u64,
    pub write_errors: u64,
    /// Kernel TCP data segments whose PSH flag was cleared (`Driver::clear_push`).
    pub push_flags_cleared: u64,
    /// How late packets were written after the time the model scheduled, ns: a histogram in
    /// powers of two (bucket k holds lateness in [2^(k-1), 2^k)), and the maximum.
    pub lateness_log2: [u64; 32],
    /// The same releases below [`FINE_LATENESS_US`] µs in 1 µs buckets (the quantiles' resolution
    /// where the 100 µs target lies; the powers of two straddle it with 65–131 µs).
    pub lateness_us: Vec<u64>,
    pub lateness_max_ns: u64,
    pub wakeups: u64,
    /// How late `ppoll` returned after its timeout, per µs below [`FINE_LATENESS_US`] (the
    /// timer's wake-up latency, apart from the loop's own work).
    pub wake_lateness_us: Vec<u64>,
    /// True if the driver thread runs under SCHED_FIFO.
    pub realtime: bool,
    /// The spin before each due event ([`Driver::set_spin`]), ns.
    pub spin_ns: u64,
    /// True if the run held the kernel's CPU wake-up latency at 0 µs (`Driver::keep_cpus_awake`).
    pub cpus_kept_awake: bool,
    /// Why the kernel refused that request, if it was made and refused.
    pub cpus_kept_awake_error: Option<String>,
    /// The receive steering in force: the driver pinned to its CPU ([`Driver::steering`]).
    pub steering: Option<Steering>,
    /// What of the steering could not be set (a device's `rps_cpus`, the driver's affinity).
    pub steering_error: Option<String>,
}

/// Lateness below this many µs is histogrammed per µs.
pub const FINE_LATENESS_US: usize = 4096;

impl DriverStats {
    fn late(&mut self, ns: u64) {
        let k = (64 - ns.leading_zeros()) as usize;
        self.lateness_log2[k.min(31)] += 1;
        self.lateness_max_ns = self.lateness_max_ns.max(ns);
        let us = (ns / 1000) as usize;
        if us < FINE_LATENESS_US {
            if self.lateness_us.is_empty() {
                self.lateness_us = vec![0; FINE_LATENESS_US];
            }
            self.lateness_us[us] += 1;
        }
    }

    fn wake_late(&mut self, ns: u64) {
        if self.wake_lateness_us.is_empty() {
            self.wake_lateness_us = vec![0; FINE_LATENESS_US];
        }
        self.wake_lateness_us[((ns / 1000) as usize).min(FINE_LATENESS_US - 1)] += 1;
    }

    /// The timer wake-up latency below which a fraction `q` of timed-out sleeps woke, µs (the
    /// upper edge of its 1 µs bucket; the last bucket holds everything beyond).
    pub fn wake_quantile_us(&self, q: f64) -> Option<u64> {
        let total: u64 = self.wake_lateness_us.iter().sum();
        let mut seen = 0;
        for (us, &c) in self.wake_lateness_us.iter().enumerate() {
            seen += c;
            if total > 0 && seen as f64 >= q * total as f64 {
                return Some(us as u64 + 1);
            }
        }
        None
    }

    /// The lateness below which a fraction `q` of releases fell: the upper edge of its bucket
    /// (1 µs wide below [`FINE_LATENESS_US`] µs, a power of two above), at most the maximum.
    pub fn lateness_quantile_ns(&self, q: f64) -> Option<u64> {
        let total: u64 = self.lateness_log2.iter().sum();
        if total == 0 {
            return None;
        }
        let mut seen = 0;
        for (us, &c) in self.lateness_us.iter().enumerate() {
            seen += c;
            if seen as f64 >= q * total as f64 {
                return Some(((us as u64 + 1) * 1000).min(self.lateness_max_ns));
            }
        }
        let mut seen = 0;
        for (k, &c) in self.lateness_log2.iter().enumerate() {
            seen += c;
            if seen as f64 >= q * total as f64 {
                return Some(if k == 0 { 0 } else { (1u64 << k).min(self.lateness_max_ns) });
            }
        }
        Some(self.lateness_max_ns)
    }
}

/// Puts this thread under SCHED_FIFO at a low real-time priority, so that the compilers and
/// tests of a busy machine do not delay the release of packets by whole scheduler slices
/// (measured on this 2-core machine under load: p99 lateness 2 ms in SCHED_OTHER). The loop
/// sleeps in `ppoll` whenever nothing is due, and the kernel's RT throttling
/// (`sched_rt_runtime_us`) keeps 5 % of each CPU for others even if it did not. False when the
/// kernel refuses (no CAP_SYS_NICE): the driver then runs as an ordinary thread.
fn set_realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: sets the policy of the calling thread (pid 0) from a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Wake { hop: u32, token: u64 },
    Arrive { node: u32, from: u32, pkt: u32 },
    /// Processor `k`'s timer, scheduled for `deadline`.
    Processor { k: u32, deadline: Time },
    /// Modelled flow `model`'s next departure.
    Depart { model: u32 },
    /// Modelled TCP flow `m` opens its connection.
    TcpOpen { m: u32 },
    /// A timer of endpoint `side` of modelled TCP flow `m`.
    TcpTimer { m: u32, side: u8 },
    /// Modelled TCP flow `m`'s message source has its next message.
    TcpMessage { m: u32 },
}

/// The emulated network between the TUN devices.
pub struct Driver {
    pub net: Network,
    /// Per node, its TUN device (endpoints only).
    tuns: Vec<Option<Tun>>,
    arena: Arena,
    schedule: Schedule<Due>,
    out: Vec<HopEvent>,
    spare: Vec<Vec<HopEvent>>,
    pub observer: Observer,
    next_uid: u64,
    t0: Instant,
    pub end: Time,
    pub stats: DriverStats,
    /// The model time last handed to a hop (never decreases).
    model_now: Time,
    /// The packet processors' bridge to bytes.
    pub mechanisms: Mechanisms,
    pub captures: Captures,
    /// Modelled flows (hybrid runs), generated here.
    models: Vec<ModelFlow>,
    /// Payload sizes of one departure (reused).
    sizes: Vec<u32>,
    /// Modelled TCP flows (hybrid runs): the simulator's endpoints, driven here.
    tcps: Vec<ModelTcp>,
    /// Segments an endpoint sends (reused).
    segs: Vec<Segment>,
    /// How long before a due event the loop stops sleeping and polls (see [`Driver::set_spin`]).
    spin_ns: u64,
    /// The processors' reports and the bridge's counts as they stood at `end`: what they do
    /// while the run drains (packets still sent or in flight) is unmetered, as it is for the flows.
    processors_at_end: Option<(ProcessorReports, MechanismStats)>,
    /// Clear PSH on the kernel TCPs' data segments as they are read (see `EmuOptions::clear_push`).
    pub clear_push: bool,
    /// Hold idle CPUs at 0 µs wake-up latency while `run` runs (see `EmuOptions::keep_cpus_awake`).
    pub keep_cpus_awake: bool,
    /// Run on `driver_cpu` while the TUN devices steer receives elsewhere (steering.rs).
    pub steering: Option<Steering>,
}

/// SAP-LAW's, Snoop's and the error generators' entries of the run report.
pub type ProcessorReports = (Vec<SapLawReport>, Vec<SnoopReport>, Vec<ErrorGeneratorReport>);

impl Driver {
    pub fn new(mut net: Network, tuns: Vec<Option<Tun>>, observer: Observer, slot_bytes: usize, t0: Instant, end: Time, captures: Captures) -> Driver {
        // Transmit events only when a capture reads them.
        for slot in &mut net.hops {
            slot.hop.report_transmits(!captures.is_empty());
        }
        Driver {
            net,
            tuns,
            arena: Arena { slot_bytes, ..Arena::default() },
            schedule: Schedule::default(),
            out: Vec::new(),
            spare: Vec::new(),
            observer,
            next_uid: 0,
            t0,
            end,
            stats: DriverStats::default(),
            model_now: Time::ZERO,
            mechanisms: Mechanisms::default(),
            captures,
            models: Vec::new(),
            sizes: Vec::new(),
            tcps: Vec::new(),
            segs: Vec::new(),
            spin_ns: 0,
            keep_cpus_awake: false,
            steering: None,
            processors_at_end: None,
            clear_push: false,
        }
    }

    /// The processors' reports and the bridge's counts over the metered run: as they stood at
    /// `end`, or now if the run has not passed it.
    pub fn processors_metered(&self) -> (ProcessorReports, MechanismStats) {
        self.processors_at_end.clone().unwrap_or_else(|| (self.net.processor_reports(), self.mechanisms.stats))
    }

    /// Keeps the processors' reports as they stand before the first event after `end` (events
    /// are handled in time order).
    fn meter_until(&mut self, t: Time) {
        if t > self.end && self.processors_at_end.is_none() {
            self.processors_at_end = Some((self.net.processor_reports(), self.mechanisms.stats));
        }
    }

    /// Stop sleeping `spin` before each due event and poll the devices instead: releases then
    /// do not wait for the timer's wake-up latency, at the price of a busy core for that long
    /// before every event.
    pub fn set_spin(&mut self, spin: std::time::Duration) {
        self.spin_ns = spin.as_nanos() as u64;
        self.stats.spin_ns = self.spin_ns;
    }

    /// Runs the modelled TCP flows (a hybrid run's) from their starts on.
    pub fn add_model_tcp(&mut self, tcps: Vec<ModelTcp>) {
        for t in tcps {
            if t.start < t.stop {
                self.schedule(t.start, Due::TcpOpen { m: self.tcps.len() as u32 });
            }
            if let Some(at) = t.next_message() {
                self.schedule(at, Due::TcpMessage { m: self.tcps.len() as u32 });
            }
            self.tcps.push(t);
        }
    }

    /// Generates the modelled flows (a hybrid run's) from their first departures on.
    pub fn add_models(&mut self, models: Vec<ModelFlow>) {
        for f in models {
            if let Some(at) = f.next_departure() {
                self.schedule(at, Due::Depart { model: self.models.len() as u32 });
            }
            self.models.push(f);
        }
    }

    fn clock(&self) -> Time {
        Time(self.t0.elapsed().as_nanos() as u64)
    }

    /// Packets the models still hold.
    pub fn in_network(&self) -> usize {
        self.arena.live()
    }

    /// Runs until `stop` is set; returns the time the run reached: `end`, or when `signal`
    /// became non-zero. From then on `over` is set and the models keep running (so packets in
    /// flight arrive and the generator's sessions can hand over their records), unmetered.
    pub fn run(&mut self, stop: &AtomicBool, signal: &AtomicUsize, over: &AtomicBool) -> Time {
        // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack (1 ns: the
        // default 50 µs would be the floor of every release's lateness).
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        self.stats.realtime = set_realtime_priority();
        if let Some(st) = &self.steering {
            match crate::steering::pin_current_thread(st.driver_cpu) {
                Ok(()) => self.stats.steering = Some(st.clone()),
                Err(e) => {
                    self.stats.steering_error.get_or_insert(format!("pinning the driver to CPU {}: {e}", st.driver_cpu));
                }
            }
        }
        let _awake = self.keep_cpus_awake.then(|| self.request_cpus_awake()).flatten();
        let mut fds: Vec<libc::pollfd> =
            self.tuns.iter().flatten().map(|t| libc::pollfd { fd: t.fd(), events: libc::POLLIN, revents: 0 }).collect();
        let mut reached = None;
        loop {
            let now = self.clock();
            if reached.is_none() && (now >= self.end || signal.load(Ordering::Relaxed) != 0) {
                reached = Some(now.min(self.end));
                over.store(true, Ordering::Relaxed);
            }
            if stop.load(Ordering::Relaxed) {
                return reached.unwrap_or(now.min(self.end));
            }
            self.run_due(now);
            self.read_all();
            let before = self.clock().0;
            let timeout = match self.schedule.next_time() {
                Some(at) => at.0.saturating_sub(before).min(MAX_SLEEP_NS),
                None => MAX_SLEEP_NS,
            };
            // The last `spin_ns` before an event are spent polling the devices without sleeping,
            // so the event does not wait for the timer's wake-up latency.
            let sleep = timeout.saturating_sub(self.spin_ns);
            if timeout > 0 {
                let ts = libc::timespec { tv_sec: (sleep / 1_000_000_000) as libc::time_t, tv_nsec: (sleep % 1_000_000_000) as libc::c_long };
                // SAFETY: fds is a valid array of fds.len() pollfds; ts outlives the call.
                let ready = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
                if sleep > 0 {
                    self.stats.wakeups += 1;
                    if ready == 0 {
                        // Woken by the timeout: how late after the requested time.
                        self.stats.wake_late(self.clock().0.saturating_sub(before + sleep));
                    }
                }
            }
        }
    }

    /// Asks the kernel to keep idle CPUs polling for as long as the request lives; records the
    /// outcome in the stats.
    fn request_cpus_awake(&mut self) -> Option<CpuLatencyRequest> {
        match CpuLatencyRequest::zero() {
            Ok(r) => {
                self.stats.cpus_kept_awake = true;
                Some(r)
            }
            Err(e) => {
                self.stats.cpus_kept_awake_error = Some(format!("{}: {e}", CpuLatencyRequest::DEVICE));
                None
            }
        }
    }

    /// Handles every event due at or before `now`, in time order.
    fn run_due(&mut self, now: Time) {
        while let Some((at, due)) = self.schedule.pop_until(now) {
            self.meter_until(at);
            self.model_now = self.model_now.max(at);
            match due {
                Due::Wake { hop, token } => self.wake(hop, token, at),
                Due::Arrive { node, from, pkt } => self.arrive(node, from, pkt, at),
                Due::Processor { k, deadline } => self.processor_timer(k as usize, deadline, at),
                Due::Depart { model } => self.depart(model as usize, at),
                Due::TcpOpen { m } => self.tcp_open(m as usize, at),
                Due::TcpTimer { m, side } => self.tcp_timer(m as usize, side as usize, at),
                Due::TcpMessage { m } => self.tcp_message(m as usize, at),
            }
        }
    }

    /// Reads every device until it is empty (at most BATCH per device per round). Each packet
    /// enters the models at the clock's time when it was read, after the events due by then: a
    /// time taken before the read (this round's start, or before a stall of the machine) would
    /// stamp a packet written meanwhile before it was sent.
    fn read_all(&mut self) {
        loop {
            let mut any = false;
            for node in 0..self.tuns.len() {
                for _ in 0..BATCH {
                    let Some(tun) = &self.tuns[node] else { break };
                    let id = self.arena.alloc();
                    let slot = &mut self.arena.slots[id as usize];
                    match tun.recv(&mut slot.buf) {
                        Ok(Some(n)) => {
                            slot.len = n;
                            any = true;
                            self.stats.packets_read += 1;
                            let now = self.clock().max(self.model_now);
                            self.run_due(now);
                            self.model_now = now;
                            self.meter_until(now);
                            self.ingest(node as u32, id, now);
                        }
                        Ok(None) | Err(_) => {
                            self.arena.release(id);
                            break;
                        }
                    }
                }
            }
            if !any {
                return;
            }
        }
    }

    /// A packet read from `node`'s device: checked, tagged, offered to the first hop.
    fn ingest(&mut self, node: u32, id: u32, now: Time) {
        let slot = &mut self.arena.slots[id as usize];
        let bytes = &slot.buf[..slot.len];
        if slot.len >= slot.buf.len() {
            // Filled the slot: larger than every MTU of the scenario, possibly cut.
            self.stats.malformed += 1;
            self.arena.release(id);
            return;
        }
        let (dst_addr, proto, headers) = match wire::parse(bytes) {
            Ok(h) => (h.ip.dst, Some(h.proto), Some(h)),
            Err(wire::WireError::UnsupportedProtocol { .. }) => match etherparse::Ipv4HeaderSlice::from_slice(bytes) {
                Ok(ip) if (ip.total_len() as usize) <= bytes.len() && ip.total_len() as usize >= ip.slice().len() => (ip.destination(), None, None),
                _ => {
                    self.stats.malformed += 1;
                    self.arena.release(id);
                    return;
                }
            },
            Err(_) => {
                self.stats.malformed += 1;
                self.arena.release(id);
                return;
            }
        };
        let dst = wire::node_id(dst_addr).filter(|&d| (d as usize) < self.tuns.len() && d != node && self.tuns[d as usize].is_some());
        let Some(dst) = dst else {
            self.stats.unroutable += 1;
            self.arena.release(id);
            return;
        };
        if headers.as_ref().is_some_and(|h| self.observer.is_signalling(node, dst, h)) {
            // The generator's signalling: passed on at once, outside the models.
            let tun = self.tuns[dst as usize].as_ref().expect("destinations are endpoints");
            match tun.send(&slot.buf[..slot.len]) {
                Ok(()) => self.stats.signalling_packets += 1,
                Err(_) => self.stats.write_errors += 1,
            }
            self.arena.release(id);
            return;
        }
        let wire_len = slot.len as u32;
        let uid = self.next_uid;
        self.next_uid += 1;
        let (tag, flow) = match headers {
            Some(h) => {
                let tag = self.observer.on_read(now, node, dst, &h, wire_len);
                if let Some(window) = self.observer.receiver_window(tag, &h) {
                    let slot = &mut self.arena.slots[id as usize];
                    let _ = wire::set_tcp_window(&mut slot.buf[..slot.len], window);
                }
                if self.clear_push && h.proto == Protocol::Tcp && h.payload_len > 0 && h.tcp.flags.has(TcpFlags::PSH) {
                    let slot = &mut self.arena.slots[id as usize];
                    if wire::clear_tcp_push(&mut slot.buf[..slot.len]) == Ok(true) {
                        self.stats.push_flags_cleared += 1;
                    }
                }
                let meta = PacketMeta { uid, flow: 0, pkt_seq: 0, sent_at: now };
                let key = h.to_packet(meta).map(|p| flow_key(&p)).unwrap_or(0);
                (tag, key)
            }
            None => (Tag::NONE, u32::from_be_bytes(dst_addr) ^ node),
        };
        if tag == Tag::NONE {
            self.stats.other_packets += 1;
        }
        let slot = &mut self.arena.slots[id as usize];
        slot.read_at = now;
        slot.dst = dst;
        slot.tag = tag;
        slot.key = flow;
        slot.class = if proto == Some(Protocol::Tcp) { TrafficClass::Tcp } else { TrafficClass::Udp };
        slot.origin = Origin::Real;
        self.forward(node, id, uid, now);
    }

    /// Modelled flow `m` departs at model time `at` (not after the run's end): its datagrams
    /// enter the first hop at its source node, and its next departure is scheduled.
    fn depart(&mut self, m: usize, at: Time) {
        if at > self.end {
            return;
        }
        let mut sizes = std::mem::take(&mut self.sizes);
        sizes.extend(self.models[m].depart());
        for &payload in &sizes {
            let id = self.arena.alloc();
            let uid = self.next_uid;
            self.next_uid += 1;
            let f = &self.models[m];
            let slot = &mut self.arena.slots[id as usize];
            let (len, p) = f.packet(uid, payload, at, &mut slot.buf);
            slot.len = len;
            slot.read_at = at;
            slot.dst = f.dst;
            slot.tag = self.observer.on_model_sent(at, f.flow, 0, len as u32, payload);
            slot.key = flow_key(&p);
            slot.class = TrafficClass::Udp;
            slot.origin = Origin::ModelUdp;
            let src = f.src;
            self.forward(src, id, uid, at);
        }
        sizes.clear();
        self.sizes = sizes;
        if let Some(next) = self.models[m].next_departure() {
            self.schedule(next, Due::Depart { model: m as u32 });
        }
    }

    /// Offers packet `id` at `node` to the hop towards its destination, after the processors of
    /// that interface.
    fn forward(&mut self, node: u32, id: u32, uid: u64, now: Time) {
        self.forward_below(node, id, uid, now, 0);
    }

    /// [`Self::forward`], entering the interface's processor chain at position `pos`.
    fn forward_below(&mut self, node: u32, id: u32, uid: u64, now: Time, pos: usize) {
        if !self.net.chains.is_empty() {
            let dst = self.arena.slots[id as usize].dst;
            let next = self.net.next_node[node as usize * self.net.n_nodes + dst as usize];
            if next != u32::MAX {
                let slot = &mut self.arena.slots[id as usize];
                let verdict = self.mechanisms.egress(&mut self.net, now, node, next, pos, &mut slot.buf[..slot.len]);
                self.schedule_processor_timers(now);
                if let Verdict::Drop(cause) = verdict {
                    self.drop_packet(id, cause, now);
                    return;
                }
            }
        }
        let slot = &self.arena.slots[id as usize];
        let (dst, bytes, class, flow) = (slot.dst, slot.len as u32, slot.class, slot.key);
        let Egress::Hop { hop, from, to } = self.net.route(node, dst) else {
            self.stats.unroutable += 1;
            self.arena.release(id);
            return;
        };
        let h = hop as usize;
        let flow = if self.net.hops[h].hop.is_fair(from) { flow } else { 0 };
        let mut out = std::mem::take(&mut self.out);
        self.net.hops[h].hop.accept(now, Offer { pkt: id, bytes, class, flow, uid, from, to }, &mut out);
        self.on_events(h, &mut out, now);
        self.out = out;
    }

    fn wake(&mut self, hop: u32, token: u64, at: Time) {
        let mut out = self.spare.pop().unwrap_or_default();
        self.net.hops[hop as usize].hop.poll(at, token, &mut out);
        if RlcHop::is_arrival(token) {
            self.update_live_awnd(hop as usize, at);
        }
        self.on_events(hop as usize, &mut out, at);
        self.spare.push(out);
    }

    /// Paper 004's live receiver-side windows: the flows received behind RLC hop `h` follow the
    /// retransmissions it needed in the last second (as the simulator's `update_live_awnd`).
    fn update_live_awnd(&mut self, h: usize, now: Time) {
        let slot = &mut self.net.hops[h];
        let Hop::Rlc(r) = &mut slot.hop else { return };
        let receiver = slot.nodes[1];
        let mut observed = None;
        for f in self.observer.flows.iter_mut().filter(|f| f.dst == receiver && f.awnd.as_ref().is_some_and(|a| a.live())) {
            let n = *observed.get_or_insert_with(|| r.rlc.observed_retransmissions(now, lasthop_core::Duration::from_secs(1)).max(1));
            f.observe_retransmissions(n);
        }
    }

    fn on_events(&mut self, h: usize, out: &mut Vec<HopEvent>, now: Time) {
        for &ev in out.iter() {
            match ev {
                HopEvent::Wake { at, token } => self.schedule(at, Due::Wake { hop: h as u32, token }),
                HopEvent::Arrive { pkt, from, to, at } => {
                    let (node, from) = (self.net.hops[h].nodes[to as usize], self.net.hops[h].nodes[from as usize]);
                    self.schedule(at, Due::Arrive { node, from, pkt });
                }
                HopEvent::Deliver { pkt, from, to } => {
                    let (node, from) = (self.net.hops[h].nodes[to as usize], self.net.hops[h].nodes[from as usize]);
                    self.arrive(node, from, pkt, now);
                }
                HopEvent::Drop { pkt, cause } => self.drop_packet(pkt, cause, now),
                HopEvent::Transmit { pkt, from, to, at } => {
                    let (node, peer) = (self.net.hops[h].nodes[from as usize], self.net.hops[h].nodes[to as usize]);
                    let slot = &self.arena.slots[pkt as usize];
                    self.captures.transmit(at, node, peer, &slot.buf[..slot.len]);
                }
            }
        }
        out.clear();
    }

    fn schedule(&mut self, at: Time, due: Due) {
        self.schedule.schedule(at, due);
    }

    /// Packet `pkt` reaches `node` from its neighbour `from` at model time `at`: captured, shown
    /// to the processors of that interface, then written to the device if it is the
    /// destination, else forwarded (a router or access point inside the emulator).
    fn arrive(&mut self, node: u32, from: u32, pkt: u32, at: Time) {
        if !self.captures.is_empty() {
            let slot = &self.arena.slots[pkt as usize];
            self.captures.arrive(at, node, from, &slot.buf[..slot.len]);
        }
        if !self.net.chains.is_empty() {
            let slot = &self.arena.slots[pkt as usize];
            let verdict = self.mechanisms.ingress(&mut self.net, at, node, from, &slot.buf[..slot.len]);
            self.schedule_processor_timers(at);
            self.send_emitted(at);
            if let Verdict::Drop(cause) = verdict {
                self.drop_packet(pkt, cause, at);
                return;
            }
        }
        let slot = &self.arena.slots[pkt as usize];
        if slot.dst == node && slot.origin != Origin::Real {
            let (read_at, tag, len, origin) = (slot.read_at, slot.tag, slot.len as u32, slot.origin);
            self.observer.on_delivered(at, read_at, tag, len);
            let seg = segment_of(&slot.buf[..slot.len]);
            self.arena.release(pkt);
            if let (Origin::ModelTcp { m }, Some(seg)) = (origin, seg) {
                self.tcp_segment(m as usize, node, &seg, at);
            }
            return;
        }
        if slot.dst != node {
            // A new transmission on the next hop: a new MAC identity.
            let uid = self.next_uid;
            self.next_uid += 1;
            self.forward(node, pkt, uid, at);
            return;
        }
        let tun = self.tuns[node as usize].as_ref().expect("destinations are endpoints");
        let written = self.clock();
        match tun.send(&slot.buf[..slot.len]) {
            Ok(()) => {
                self.stats.packets_written += 1;
                self.stats.late(written.0.saturating_sub(at.0));
                let (read_at, tag, len) = (slot.read_at, slot.tag, slot.len as u32);
                self.observer.on_delivered(at, read_at, tag, len);
            }
            Err(_) => self.stats.write_errors += 1,
        }
        self.arena.release(pkt);
    }

    /// Processor `k`'s timer (scheduled for `deadline`) is due at `now`.
    fn processor_timer(&mut self, k: usize, deadline: Time, now: Time) {
        self.mechanisms.on_timer(&mut self.net, now, k, deadline);
        self.schedule_processor_timers(now);
        self.send_emitted(now);
    }

    fn schedule_processor_timers(&mut self, now: Time) {
        while let Some((k, deadline)) = self.mechanisms.take_timer() {
            self.schedule(deadline.max(now), Due::Processor { k, deadline });
        }
    }

    /// Packets the processors emitted (Snoop's local retransmissions) leave the processor's node
    /// as new transmissions of their flow, entering the interface's chain just below it.
    fn send_emitted(&mut self, now: Time) {
        while let Some((k, bytes)) = self.mechanisms.take_emitted() {
            let Ok(h) = wire::parse(bytes) else { continue };
            let (Some(src), Some(dst)) = (wire::node_id(h.ip.src), wire::node_id(h.ip.dst)) else { continue };
            let id = self.arena.alloc();
            let slot = &mut self.arena.slots[id as usize];
            if bytes.len() > slot.buf.len() {
                self.arena.release(id);
                continue;
            }
            slot.buf[..bytes.len()].copy_from_slice(bytes);
            slot.len = bytes.len();
            let tag = self.observer.on_read(now, src, dst, &h, bytes.len() as u32);
            let uid = self.next_uid;
            self.next_uid += 1;
            let key = h.to_packet(PacketMeta { uid, flow: 0, pkt_seq: 0, sent_at: now }).map(|p| flow_key(&p)).unwrap_or(0);
            let slot = &mut self.arena.slots[id as usize];
            (slot.read_at, slot.dst, slot.tag, slot.key, slot.class) = (now, dst, tag, key, TrafficClass::Tcp);
            // A local retransmission of a modelled TCP flow's segment goes to its endpoint.
            if let Some(m) = self.tcps.iter().position(|t| t.flow == tag.flow) {
                slot.origin = Origin::ModelTcp { m: m as u32 };
            }
            let node = self.net.processors[k as usize].node;
            let next = self.net.next_node[node as usize * self.net.n_nodes + dst as usize];
            if next == u32::MAX {
                self.arena.release(id);
                continue;
            }
            let chain = self.net.chain(node, next);
            let below = chain.iter().position(|&x| x == k).map_or(0, |i| i + 1);
            self.forward_below(node, id, uid, now, below);
        }
    }

    /// Modelled TCP flow `m` opens at `at`: the client's SYN, and the writer's first bytes.
    fn tcp_open(&mut self, m: usize, at: Time) {
        if at > self.end {
            return;
        }
        let mut segs = std::mem::take(&mut self.segs);
        self.tcps[m].open(at, &mut segs);
        self.tcp_send(m, 0, &mut segs, at);
        self.segs = segs;
    }

    /// Segment `seg` of modelled TCP flow `m` reaches its endpoint at `node`; the application
    /// at that end reads (the server) or writes more (the client).
    fn tcp_segment(&mut self, m: usize, node: u32, seg: &Segment, at: Time) {
        let side = self.tcps[m].side_at(node);
        let mut segs = std::mem::take(&mut self.segs);
        self.tcps[m].ends[side].on_segment(at, seg, &mut segs);
        self.tcp_app(m, side, &mut segs, at);
        self.tcp_send(m, side, &mut segs, at);
        self.segs = segs;
    }

    /// Modelled TCP flow `m`'s message source writes its next message; the one after is
    /// scheduled.
    fn tcp_message(&mut self, m: usize, at: Time) {
        if at >= self.end {
            return; // as in the simulator, nothing is sent at the run's last instant
        }
        let mut segs = std::mem::take(&mut self.segs);
        self.tcps[m].message(at, &mut segs);
        self.tcp_send(m, 0, &mut segs, at);
        self.segs = segs;
        if let Some(next) = self.tcps[m].next_message() {
            self.schedule(next, Due::TcpMessage { m: m as u32 });
        }
    }

    fn tcp_timer(&mut self, m: usize, side: usize, at: Time) {
        if self.tcps[m].timer_at[side] != Some(at) {
            return; // superseded by an earlier deadline, which re-armed it
        }
        self.tcps[m].timer_at[side] = None;
        let mut segs = std::mem::take(&mut self.segs);
        self.tcps[m].ends[side].on_timer(at, &mut segs);
        self.tcp_app(m, side, &mut segs, at);
        self.tcp_send(m, side, &mut segs, at);
        self.segs = segs;
    }

    /// The application at endpoint `side`: the server reads everything (goodput), the client
    /// writes as much as its buffer takes.
    fn tcp_app(&mut self, m: usize, side: usize, segs: &mut Vec<Segment>, at: Time) {
        if side == 1 {
            let n = self.tcps[m].read(at, segs);
            if n > 0 {
                self.observer.on_model_read(at, self.tcps[m].flow, n);
            }
        } else {
            self.tcps[m].write(at, segs);
        }
    }

    /// Endpoint `side` of modelled TCP flow `m` sends `segs` as real packets, then its timer is
    /// armed for its next deadline.
    fn tcp_send(&mut self, m: usize, side: usize, segs: &mut Vec<Segment>, at: Time) {
        for seg in segs.drain(..) {
            let id = self.arena.alloc();
            let uid = self.next_uid;
            self.next_uid += 1;
            let t = &self.tcps[m];
            let slot = &mut self.arena.slots[id as usize];
            let (len, p) = t.packet(side, &seg, uid, at, &mut slot.buf);
            let (src, dst) = t.nodes(side);
            slot.len = len;
            slot.read_at = at;
            slot.dst = dst;
            slot.tag = self.observer.on_model_sent(at, t.flow, side as u8, len as u32, seg.payload_len);
            slot.key = flow_key(&p);
            slot.class = TrafficClass::Tcp;
            slot.origin = Origin::ModelTcp { m: m as u32 };
            self.forward(src, id, uid, at);
        }
        let t = &mut self.tcps[m];
        if let Some(d) = t.ends[side].poll_deadline() {
            if t.timer_at[side].is_none_or(|s| d < s) {
                t.timer_at[side] = Some(d);
                self.schedule(d.max(at), Due::TcpTimer { m: m as u32, side: side as u8 });
            }
        }
    }

    fn drop_packet(&mut self, pkt: u32, cause: DropCause, now: Time) {
        let tag = self.arena.slots[pkt as usize].tag;
        self.observer.on_dropped(now, tag, cause);
        self.arena.release(pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_microsecond_buckets_then_powers_of_two() {
        let mut s = DriverStats::default();
        // 98 releases 3.2 µs late (bucket [3, 4) µs), 2 at 70 µs: the p50 edge is 4 000 ns, the
        // p99 edge 71 000 ns → capped at the maximum seen, 70 000 ns.
        for _ in 0..98 {
            s.late(3_200);
        }
        s.late(70_000);
        s.late(70_000);
        assert_eq!(s.lateness_quantile_ns(0.5), Some(4_000));
        assert_eq!(s.lateness_quantile_ns(0.99), Some(70_000));
        assert_eq!(DriverStats::default().lateness_quantile_ns(0.5), None);
        // 990 at 80.5 µs, 10 at 5 ms (beyond the fine range, bucket [4.19, 8.39) ms): p99 is
        // 81 µs, the 100 µs target's side of the old 65–131 µs bucket; p999 the 5 ms maximum.
        let mut s = DriverStats::default();
        for _ in 0..990 {
            s.late(80_500);
        }
        for _ in 0..10 {
            s.late(5_000_000);
        }
        assert_eq!(s.lateness_quantile_ns(0.99), Some(81_000));
        assert_eq!(s.lateness_quantile_ns(0.999), Some(5_000_000));
    }
}
