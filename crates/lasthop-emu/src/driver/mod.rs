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
//! Parts: [`arena`] (the packets' bytes while a model holds them), [`modelled`] (the hybrid
//! run's modelled flows on the emulator's clock), [`stats`] (what the run report's `emulator`
//! section counts).
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

mod arena;
mod modelled;
mod stats;

use arena::{Arena, Origin};
use modelled::Modelled;
pub use stats::{DriverStats, FINE_LATENESS_US};

use crate::capture::Captures;
use crate::mechanisms::{MechanismStats, Mechanisms};
use crate::model::segment_of;
use lasthop_core::schedule::Schedule;
use crate::network::{Egress, Network};
use crate::observe::{Observer, Tag};
use crate::steering::Steering;
use crate::tun::Tun;
use lasthop_core::cellular::hop::RlcHop;
use lasthop_core::hop::{Hop, HopEvent, Offer, TrafficClass};
use lasthop_core::mechanisms::processor::Verdict;
use lasthop_core::metrics::DropCause;
use lasthop_core::packet::{PacketMeta, Protocol, TcpFlags};
use lasthop_core::report::ProcessorReports;
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
    events: HopEventBuffers,
    pub observer: Observer,
    timeline: Timeline,
    pub stats: DriverStats,
    processors: Processors,
    pub captures: Captures,
    /// Modelled flows (hybrid runs), generated and driven here.
    modelled: Modelled,
    pub options: LoopOptions,
}

/// How the loop runs: set before [`Driver::run`].
#[derive(Debug, Default)]
pub struct LoopOptions {
    /// How long before a due event the loop stops sleeping and polls (see [`Driver::set_spin`]).
    spin_ns: u64,
    /// Clear PSH on the kernel TCPs' data segments as they are read (see `EmuOptions::clear_push`).
    pub clear_push: bool,
    /// Hold idle CPUs at 0 µs wake-up latency while `run` runs (see `EmuOptions::keep_cpus_awake`).
    pub keep_cpus_awake: bool,
    /// Run on `driver_cpu` while the TUN devices steer receives elsewhere (steering.rs).
    pub steering: Option<Steering>,
}

/// The run's time: model time is nanoseconds of `CLOCK_MONOTONIC` since `t0`.
#[derive(Debug)]
struct Timeline {
    t0: Instant,
    /// The end of the metered run.
    end: Time,
    /// The model time last handed to a hop (never decreases).
    model_now: Time,
}

/// The hops' event lists, reused (no allocation per packet).
#[derive(Debug, Default)]
struct HopEventBuffers {
    out: Vec<HopEvent>,
    spare: Vec<Vec<HopEvent>>,
}

/// The packet processors' bridge to bytes, and their reports as they stood at the run's end.
#[derive(Default)]
struct Processors {
    mechanisms: Mechanisms,
    /// The processors' reports and the bridge's counts as they stood at `end`: what they do
    /// while the run drains (packets still sent or in flight) is unmetered, as it is for the flows.
    at_end: Option<(ProcessorReports, MechanismStats)>,
}


impl Driver {
    pub fn new(mut net: Network, tuns: Vec<Option<Tun>>, observer: Observer, slot_bytes: usize, t0: Instant, end: Time, captures: Captures) -> Driver {
        // Transmit events only when a capture reads them.
        for slot in &mut net.hops {
            slot.hop.report_transmits(!captures.is_empty());
        }
        Driver {
            net,
            tuns,
            arena: Arena::new(slot_bytes),
            schedule: Schedule::default(),
            events: HopEventBuffers::default(),
            observer,
            timeline: Timeline { t0, end, model_now: Time::ZERO },
            stats: DriverStats::default(),
            processors: Processors::default(),
            captures,
            modelled: Modelled::default(),
            options: LoopOptions::default(),
        }
    }

    /// The processors' reports and the bridge's counts over the metered run: as they stood at
    /// `end`, or now if the run has not passed it.
    pub fn processors_metered(&self) -> (ProcessorReports, MechanismStats) {
        self.processors.at_end.clone().unwrap_or_else(|| (self.net.processor_reports(), self.processors.mechanisms.stats))
    }

    /// Keeps the processors' reports as they stand before the first event after `end` (events
    /// are handled in time order).
    fn meter_until(&mut self, t: Time) {
        if t > self.timeline.end && self.processors.at_end.is_none() {
            self.processors.at_end = Some((self.net.processor_reports(), self.processors.mechanisms.stats));
        }
    }

    /// Stop sleeping `spin` before each due event and poll the devices instead: releases then
    /// do not wait for the timer's wake-up latency, at the price of a busy core for that long
    /// before every event.
    pub fn set_spin(&mut self, spin: std::time::Duration) {
        self.options.spin_ns = spin.as_nanos() as u64;
        self.stats.spin_ns = self.options.spin_ns;
    }

    fn clock(&self) -> Time {
        Time(self.timeline.t0.elapsed().as_nanos() as u64)
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
        if let Some(st) = &self.options.steering {
            match crate::steering::pin_current_thread(st.driver_cpu) {
                Ok(()) => self.stats.steering = Some(st.clone()),
                Err(e) => {
                    self.stats.steering_error.get_or_insert(format!("pinning the driver to CPU {}: {e}", st.driver_cpu));
                }
            }
        }
        let _awake = self.options.keep_cpus_awake.then(|| self.request_cpus_awake()).flatten();
        let mut fds: Vec<libc::pollfd> =
            self.tuns.iter().flatten().map(|t| libc::pollfd { fd: t.fd(), events: libc::POLLIN, revents: 0 }).collect();
        let mut reached = None;
        loop {
            let now = self.clock();
            if reached.is_none() && (now >= self.timeline.end || signal.load(Ordering::Relaxed) != 0) {
                reached = Some(now.min(self.timeline.end));
                over.store(true, Ordering::Relaxed);
            }
            if stop.load(Ordering::Relaxed) {
                return reached.unwrap_or(now.min(self.timeline.end));
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
            let sleep = timeout.saturating_sub(self.options.spin_ns);
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
            self.timeline.model_now = self.timeline.model_now.max(at);
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
                            let now = self.clock().max(self.timeline.model_now);
                            self.run_due(now);
                            self.timeline.model_now = now;
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
        let uid = self.arena.new_uid();
        let (tag, flow) = match headers {
            Some(h) => {
                let tag = self.observer.on_read(now, node, dst, &h, wire_len);
                if let Some(window) = self.observer.receiver_window(tag, &h) {
                    let slot = &mut self.arena.slots[id as usize];
                    let _ = wire::set_tcp_window(&mut slot.buf[..slot.len], window);
                }
                if self.options.clear_push && h.proto == Protocol::Tcp && h.payload_len > 0 && h.tcp.flags.has(TcpFlags::PSH) {
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
                let verdict = self.processors.mechanisms.egress(&mut self.net, now, node, next, pos, &mut slot.buf[..slot.len]);
                self.schedule_processor_timers(now);
                if let Verdict::Drop(cause) = verdict {
                    self.drop_packet(id, cause, now);
                    return;
                }
            }
        }
        let slot = &self.arena.slots[id as usize];
        let (dst, bytes, class, flow) = (slot.dst, slot.len as u32, slot.class, slot.key);
        // The DSCP the packet carries (the IPv4 header's TOS byte), or where it carries none the
        // scenario's for its flow (as a host marking its flow's packets would: both directions,
        // as the simulator marks them): an 802.11n/ac/ax WLAN's access category.
        let carried = slot.buf.get(1).map_or(0, |tos| tos >> 2);
        let dscp = match self.observer.flows.get(slot.tag.flow as usize) {
            Some(f) if carried == 0 => f.dscp,
            _ => carried,
        };
        let Egress::Hop { hop, from, to } = self.net.route(node, dst) else {
            self.stats.unroutable += 1;
            self.arena.release(id);
            return;
        };
        let h = hop as usize;
        let flow = if self.net.hops[h].hop.is_fair(from) { flow } else { 0 };
        let mut out = std::mem::take(&mut self.events.out);
        let ect = lasthop_core::packet::ecn::capable(slot.buf.get(1).map_or(0, |tos| tos & 0x3));
        self.net.hops[h].hop.accept(now, Offer { pkt: id, bytes, class, flow, uid, dscp, from, to, ect }, &mut out);
        self.on_events(h, &mut out, now);
        self.events.out = out;
    }

    fn wake(&mut self, hop: u32, token: u64, at: Time) {
        let mut out = self.events.spare.pop().unwrap_or_default();
        self.net.hops[hop as usize].hop.poll(at, token, &mut out);
        if RlcHop::is_arrival(token) {
            self.update_live_awnd(hop as usize, at);
        }
        self.on_events(hop as usize, &mut out, at);
        self.events.spare.push(out);
    }

    /// Paper 004's live receiver-side windows: the flows received behind RLC hop `h` follow the
    /// retransmissions it needed in the last second (as the simulator's `update_live_awnd`).
    fn update_live_awnd(&mut self, h: usize, now: Time) {
        let slot = &mut self.net.hops[h];
        let Hop::Rlc(r) = &mut slot.hop else { return };
        let receiver = slot.nodes[1];
        let mut observed = None;
        for f in self.observer.flows.iter_mut().filter(|f| f.dst == receiver && f.awnd.as_ref().is_some_and(|a| a.live())) {
            let n = *observed.get_or_insert_with(|| lasthop_scenario::build::tcp::observed_retransmissions(r, now));
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
                HopEvent::Mark { pkt } => {
                    // Congestion Experienced on the real packet (checksum updated incrementally).
                    let slot = &mut self.arena.slots[pkt as usize];
                    let _ = wire::set_ecn(&mut slot.buf[..slot.len], lasthop_core::packet::ecn::CE);
                }
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
            let verdict = self.processors.mechanisms.ingress(&mut self.net, at, node, from, &slot.buf[..slot.len]);
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
            // A router forwards (RFC 1812 §5.3.1): TTL one lower, or the packet discarded at 1.
            let slot = &mut self.arena.slots[pkt as usize];
            if wire::decrement_ttl(&mut slot.buf[..slot.len]) != Ok(true) {
                self.stats.ttl_expired += 1;
                self.drop_packet(pkt, DropCause::Unattributed, at);
                return;
            }
            // A new transmission on the next hop: a new MAC identity.
            let uid = self.arena.new_uid();
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
        self.processors.mechanisms.on_timer(&mut self.net, now, k, deadline);
        self.schedule_processor_timers(now);
        self.send_emitted(now);
    }

    fn schedule_processor_timers(&mut self, now: Time) {
        while let Some((k, deadline)) = self.processors.mechanisms.take_timer() {
            self.schedule(deadline.max(now), Due::Processor { k, deadline });
        }
    }

    /// Packets the processors emitted (Snoop's local retransmissions) leave the processor's node
    /// as new transmissions of their flow, entering the interface's chain just below it.
    fn send_emitted(&mut self, now: Time) {
        while let Some((k, bytes)) = self.processors.mechanisms.take_emitted() {
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
            let uid = self.arena.new_uid();
            let key = h.to_packet(PacketMeta { uid, flow: 0, pkt_seq: 0, sent_at: now }).map(|p| flow_key(&p)).unwrap_or(0);
            let slot = &mut self.arena.slots[id as usize];
            (slot.read_at, slot.dst, slot.tag, slot.key, slot.class) = (now, dst, tag, key, TrafficClass::Tcp);
            // A local retransmission of a modelled TCP flow's segment goes to its endpoint.
            if let Some(m) = self.modelled.tcps.iter().position(|t| t.flow == tag.flow) {
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

    fn drop_packet(&mut self, pkt: u32, cause: DropCause, now: Time) {
        let tag = self.arena.slots[pkt as usize].tag;
        self.observer.on_dropped(now, tag, cause);
        self.arena.release(pkt);
    }
}
