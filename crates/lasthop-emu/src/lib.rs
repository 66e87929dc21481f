//! lasthop's emulate world: the scenario's hops — wired channels, 802.11 WLANs with their DCF,
//! W-CDMA RLC AM — driven in real time by the same core models the simulator runs, between the
//! TUN devices of one network namespace per endpoint node, so that real Linux TCP and UDP
//! stacks (and any program a user starts in a namespace) cross them. Results are the core's
//! typed [`RunReport`], the layout of `lasthop run`, so `lasthop compare` puts both worlds side
//! by side.
//!
//! Map:
//! - [`netns`] the namespaces and their names (`lh-<pid>-<node>`), privileges, clean-up of
//!   namespaces a killed emulator left
//! - [`tun`] a TUN device (`IFF_TUN | IFF_NO_PI`, non-blocking)
//! - [`network`] the scenario's hops, routes and processors (`lasthop_scenario::build::network`,
//!   the simulator's construction) and the endpoint nodes
//! - [`driver`] the real-time loop: TUN reads, the core's event schedule, `ppoll`; its parts:
//!   `arena` (packet bytes while a model holds them), `stats` (counts and lateness for the
//!   report), `modelled` (a hybrid run's modelled UDP and TCP flows)
//! - [`mechanisms`] the scenario's packet processors (SAP-LAW, Snoop, the error generator) on
//!   real packet bytes; CoDel and FQ-CoDel run inside the hops as in the simulator
//! - [`observe`] the flows as seen at the TUN devices, metered with the core's `FlowMeter`
//! - [`emulator_report`] the emulator's own section of `summary.json` (`emulator`), typed
//! - [`capture`] pcap captures of the real packets at any node's interfaces
//! - [`steering`] opt-in receive steering: the driver on a CPU of its own, the TUN devices'
//!   receive processing (RPS) on the others
//! - [`apps`] the TCP flows as real sockets in the namespaces (kernel TCP with `TCP_CONGESTION`)
//! - [`generator`] the UDP flows as sessions of the measure world's generator (`lasthop-gen`)
//! - [`model`] hybrid runs: flows with `world = "model"` generated inside the emulator (UDP
//!   sources, and TCP as the core's sans-I/O endpoints)
//!
//! Without root, the Python CLI re-executes `lasthop emu` inside an unprivileged user namespace
//! (`netns::user_namespace_missing` says what the machine lacks for one); inside it this crate
//! runs unchanged, as root of its own namespaces.
//!
//! Lifecycle: [`Emulation::start`] checks the machine, removes what dead emulators left,
//! builds namespaces and devices, starts the driver thread and the flows; [`Emulation::finish`]
//! (or dropping it) stops everything and removes the namespaces. SIGINT and SIGTERM stop the
//! driver through a flag (signal-hook), so the namespaces are removed on those too.
//!
//! Left out so far (the scenario is refused with a message saying so where it matters): TCP
//! applications other than bulk and file transfers.

pub mod apps;
pub mod capture;
pub mod emulator_report;
pub mod driver;
pub mod mechanisms;
pub mod generator;
pub mod model;
pub mod netns;
pub mod network;
pub mod observe;
pub mod steering;
pub mod tun;

use emulator_report::{EmulatorReport, GeneratorEntry, GeneratorMeasured, NetworkView, ReceiverAwnd};
use driver::Driver;
use lasthop_core::report::{self, delay_cdf_table, FlowReport, IntervalColumns, ReverseSummary, RunHeader, RunReport, Table};
use lasthop_scenario::build::network::hop_reports;
use lasthop_core::metrics::LossByCause;
use lasthop_core::rng::RngStreams;
use lasthop_gen::results::GenOutput;
use lasthop_core::Time;
use lasthop_scenario::{CcVariant, FlowWorld, Scenario, Topology, Transport};
use network::Network;
use observe::{Observer, FLOW_PORT, SOURCE_PORT};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Why an emulation cannot start or run.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("lasthop emu needs what this machine does not give it:\n  {}", .0.join("\n  "))]
    Missing(Vec<String>),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{0}")]
    Unsupported(String),
    /// An option the caller gave (a capture point) names nothing in the scenario.
    #[error("{0}")]
    BadOption(String),
}

/// How to run an emulation.
#[derive(Clone, Debug)]
pub struct EmuOptions {
    /// Start the scenario's flows (false for a shell on the bare network).
    pub flows: bool,
    /// Stop at the scenario's duration (false: run until [`Emulation::finish`]).
    pub timed: bool,
    /// Stop on SIGINT and SIGTERM.
    pub handle_signals: bool,
    /// Capture points, `node` or `node:neighbour` (`lasthop run --pcap`'s vocabulary).
    pub pcap: Vec<String>,
    /// Where each capture of `pcap` is written as the run goes (same order); a capture
    /// without a file is kept in memory and returned by `finish`.
    pub pcap_files: Vec<std::path::PathBuf>,
    /// Bytes kept of each captured packet (None: all of them).
    pub snaplen: Option<usize>,
    /// Poll instead of sleeping for this long before each due event: releases stop waiting for
    /// the timer's wake-up latency, at the price of a busy core for that long before each one.
    pub spin: std::time::Duration,
    /// Clear PSH on the kernel TCPs' data segments as they enter the emulated network, so a Linux
    /// receiver acknowledges every second full-sized segment (RFC 1122 §4.2.3.2, RFC 5681 §4.2)
    /// as the simulator's does, instead of at once after a full-sized segment carrying PSH
    /// (Linux ≥ 5.13, `tcp_measure_rcv_mss`).
    pub clear_push: bool,
    /// Hold a PM QoS request for 0 µs of CPU wake-up latency while the driver runs
    /// ([`lasthop_gen::pacer::CpuLatencyRequest`]): idle CPUs poll instead of halting, so the
    /// driver's timer wake-ups are not delayed by a halted virtual CPU (ms on a shared VM).
    pub keep_cpus_awake: bool,
    /// Pin the driver to a CPU of its own and steer the TUN devices' receives (the namespaces'
    /// kernel TCP) to the others with RPS (steering.rs). Off by default: it changes when the
    /// kernel's ACKs come back, and the fidelity tables of EMULATION.md were measured without.
    pub steer_receives: bool,
}

impl EmuOptions {
    /// A timed run of the scenario's flows, stopped early by SIGINT/SIGTERM, no captures.
    pub fn run() -> EmuOptions {
        EmuOptions { flows: true, timed: true, handle_signals: true, pcap: Vec::new(), pcap_files: Vec::new(), snaplen: None, spin: std::time::Duration::ZERO, clear_push: false, keep_cpus_awake: true, steer_receives: false }
    }
}

/// What an emulation measured: the run report, its tables, and the driver's own counters.
pub struct EmuOutput {
    pub report: RunReport,
    pub tables: Vec<Table>,
    /// The emulator's own counters (`summary.json`'s `emulator` section).
    pub emulator: EmulatorReport,
    /// The signal that ended the run, if one did.
    pub signal: Option<i32>,
    /// [(capture point, the pcap file's bytes; None when it was streamed to its file)].
    pub captures: Vec<(String, Option<Vec<u8>>)>,
}

/// A running emulation.
pub struct Emulation {
    scenario: Scenario,
    footprint: netns::Footprint,
    namespaces: Vec<(usize, String)>,
    node_names: Vec<String>,
    /// Stops the driver (last: the flows' ends need it to hand over their results).
    stop: Arc<AtomicBool>,
    /// Stops the TCP flows' threads.
    apps_stop: Arc<AtomicBool>,
    /// Set by the driver once the run has reached its end or a signal.
    over: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
    signal_ids: Vec<signal_hook::SigId>,
    driver: Option<JoinHandle<(Driver, Time)>>,
    apps: Vec<JoinHandle<apps::AppReport>>,
    gen_flows: Vec<generator::GenFlow>,
    stale_removed: Vec<String>,
}

impl Emulation {
    /// Builds the namespaces, devices and flows of `scenario` and starts the clock.
    pub fn start(scenario: Scenario, opts: &EmuOptions) -> Result<Emulation, EmuError> {
        let missing = netns::missing_requirements();
        if !missing.is_empty() {
            return Err(EmuError::Missing(missing));
        }
        refuse_unsupported(&scenario)?;
        let mut specs: Vec<capture::CaptureSpec> = Vec::new();
        let mut files = Vec::new();
        for (i, spec) in opts.pcap.iter().enumerate() {
            let c = capture::CaptureSpec::parse(&scenario, spec).map_err(EmuError::BadOption)?;
            if !specs.contains(&c) {
                specs.push(c);
                files.extend(opts.pcap_files.get(i).cloned());
            }
        }
        // Files are created before any namespace: one that cannot be is refused with nothing to undo.
        let mut captures = capture::Captures::new(specs, &files, 0, opts.snaplen.unwrap_or(usize::MAX)).map_err(EmuError::BadOption)?;
        let stale_removed = clean_stale()?;
        let pid = std::process::id();
        let net = Network::new(&scenario, &RngStreams::new(scenario.simulation.seed));
        let node_names = net.node_names.clone();
        let mtu = tun_mtu(&scenario);
        let mut footprint = netns::Footprint::default();
        let mut tuns: Vec<Option<tun::Tun>> = (0..net.n_nodes).map(|_| None).collect();
        let mut namespaces = Vec::new();
        let routes = route_settings(&scenario, mtu);
        let steering = if opts.steer_receives { steering::Steering::for_this_process() } else { None };
        let mut steering_error = None;
        for node in network::endpoints(&scenario) {
            let ns = netns::namespace_name(pid, node);
            footprint.add_namespace(&ns)?;
            if sack_off(&scenario, &node_names[node]) {
                netns::sysctl(&ns, "net.ipv4.tcp_sack=0")?;
            }
            if ecn_on(&scenario, &node_names[node]) {
                // RFC 3168 ECN asked for in this namespace's SYNs (Linux's default, 2, only accepts it).
                netns::sysctl(&ns, "net.ipv4.tcp_ecn=1")?;
            }
            if has_tcp_flow(&scenario, &node_names[node]) {
                for setting in netns::TCP_AS_MODELLED {
                    netns::sysctl(&ns, setting)?;
                }
            }
            let dev = tun::Tun::create(&netns::tun_name(pid, node))?;
            if let Some(Err(e)) = steering.as_ref().map(|st| st.apply(&dev.name)) {
                // In a user namespace this process's /sys is the host's: no device to steer.
                steering_error.get_or_insert(e);
            }
            footprint.attach_tun(&ns, &dev.name, lasthop_core::wire::node_address(node as u32), mtu, routes[node])?;
            tuns[node] = Some(dev);
            namespaces.push((node, ns));
        }
        let end = if opts.timed { Time(scenario.simulation.duration.0) } else { Time(u64::MAX) };
        let observer = Observer::new(&scenario, end);
        let stop = Arc::new(AtomicBool::new(false));
        let apps_stop = Arc::new(AtomicBool::new(false));
        let over = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        let mut signal_ids = Vec::new();
        if opts.handle_signals {
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                let id = signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
                    .map_err(|e| EmuError::Io { what: "installing the SIGINT/SIGTERM handlers".into(), source: e })?;
                signal_ids.push(id);
            }
        }
        let sockets = if opts.flows { flow_sockets(&scenario, &namespaces)? } else { Vec::new() };
        let udp_flows = opts.flows && scenario.flows.iter().any(|f| f.transport() == Transport::Udp && f.world == FlowWorld::Real);
        // The generator's sessions are set up before the origin (their signalling bypasses the
        // models), so that their first datagram leaves at the flow's start.
        let lead = if udp_flows { generator::SETUP_LEAD } else { std::time::Duration::ZERO };
        let origin_mono_ns = lasthop_gen::clock::mono_ns() + lead.as_nanos() as u64;
        let t0 = Instant::now() + lead;
        let epoch_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        captures.epoch_ns = epoch_ns;
        let models = if opts.flows { model::model_flows(&scenario, SOURCE_PORT, FLOW_PORT, mtu) } else { Vec::new() };
        let mut driver = Driver::new(net, tuns, observer, mtu as usize + 1, t0, end, captures);
        driver.set_spin(opts.spin);
        driver.options.clear_push = opts.clear_push;
        driver.options.keep_cpus_awake = opts.keep_cpus_awake;
        driver.options.steering = steering;
        driver.stats.steering_error = steering_error;
        driver.add_models(models);
        if opts.flows {
            driver.add_model_tcp(model::model_tcp_flows(&scenario, SOURCE_PORT, FLOW_PORT, mtu));
        }
        let (stop_d, signal_d, over_d) = (stop.clone(), signal.clone(), over.clone());
        let driver = std::thread::Builder::new()
            .name("lasthop-emu".into())
            .spawn(move || {
                let reached = driver.run(&stop_d, &signal_d, &over_d);
                (driver, reached)
            })
            .map_err(|e| EmuError::Io { what: "starting the driver thread".into(), source: e })?;
        let apps = sockets.into_iter().map(|s| apps::spawn(s, t0, apps_stop.clone())).collect();
        let mut emu = Emulation {
            scenario,
            footprint,
            namespaces,
            node_names,
            stop,
            apps_stop,
            over,
            signal,
            signal_ids,
            driver: Some(driver),
            apps,
            gen_flows: Vec::new(),
            stale_removed,
        };
        if udp_flows {
            // On error, dropping `emu` stops what started and removes the namespaces.
            emu.gen_flows = gen_sessions(&emu.scenario, &emu.namespaces, origin_mono_ns)?;
        }
        Ok(emu)
    }

    /// The namespace of node `name`, if it is an endpoint.
    pub fn namespace(&self, name: &str) -> Option<&str> {
        let i = self.node_names.iter().position(|n| n == name)?;
        self.namespaces.iter().find(|(n, _)| *n == i).map(|(_, ns)| ns.as_str())
    }

    /// (node name, namespace) of every endpoint.
    pub fn namespaces(&self) -> Vec<(String, String)> {
        self.namespaces.iter().map(|(n, ns)| (self.node_names[*n].clone(), ns.clone())).collect()
    }

    /// Namespaces of dead emulators removed before this one started.
    pub fn stale_removed(&self) -> &[String] {
        &self.stale_removed
    }

    /// True once the run is over (its end time, a signal, or [`Emulation::finish`]).
    pub fn stopped(&self) -> bool {
        self.over.load(Ordering::Relaxed) || self.driver.as_ref().is_none_or(|d| d.is_finished())
    }

    /// Blocks until the driver stops.
    pub fn wait(&self) {
        while !self.stopped() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Stops the flows, lets the generator's sessions hand over their records, stops the
    /// driver, removes the namespaces, and reports.
    pub fn finish(mut self) -> Result<EmuOutput, EmuError> {
        // A session ends by its plan at the run's end; one cut short (a signal, an untimed run)
        // is told to stop and reports itself interrupted.
        let early = !self.over.load(Ordering::Relaxed) || self.signal.load(Ordering::Relaxed) != 0;
        self.apps_stop.store(true, Ordering::Relaxed);
        let app_reports: Vec<apps::AppReport> = self.apps.drain(..).map(|a| a.join().expect("an app thread does not panic")).collect();
        if early {
            self.gen_flows.iter().for_each(generator::GenFlow::stop);
        }
        let gen_outputs: Vec<(usize, Result<lasthop_gen::results::GenOutput, String>)> =
            self.gen_flows.drain(..).map(|g| (g.flow, g.join())).collect();
        self.stop.store(true, Ordering::Relaxed);
        let (driver, reached) = self.driver.take().expect("finished once").join().expect("the driver does not panic");
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let signal = match self.signal.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        };
        // The driver (and with it every TUN descriptor) goes first: a device still open when
        // its namespace is deleted would be moved back to the root namespace.
        let mut out = output(&self.scenario, driver, reached, &app_reports, gen_outputs, signal);
        out.emulator.kernel_tcp = self.kernel_tcp_counters();
        let failed = self.footprint.remove();
        if !failed.is_empty() {
            return Err(EmuError::Unsupported(format!("could not remove: {}", failed.join("; "))));
        }
        Ok(out)
    }
}

impl Emulation {
    /// Per endpoint with a TCP flow's end, the kernel's non-zero TCP counters of its namespace
    /// (`/proc/net/netstat` TcpExt and `/proc/net/snmp` Tcp, as `nstat` shows them): fast
    /// retransmits, timeouts, delayed ACKs, HyStart exits, loss probes... read at the end.
    fn kernel_tcp_counters(&self) -> serde_json::Map<String, serde_json::Value> {
        let topo = Topology::new(&self.scenario);
        let mut nodes: Vec<usize> = Vec::new();
        for f in self.scenario.flows.iter().filter(|f| f.transport() == Transport::Tcp && f.world == FlowWorld::Real) {
            for n in [f.src.get_ref(), f.dst.get_ref()] {
                let i = topo.index(n).expect("validated");
                if !nodes.contains(&i) {
                    nodes.push(i);
                }
            }
        }
        let mut out = serde_json::Map::new();
        for node in nodes {
            let Some((_, ns)) = self.namespaces.iter().find(|(n, _)| *n == node) else { continue };
            // /proc/thread-self/net is the reading thread's network namespace.
            let read = |f: &'static str| move || std::fs::read_to_string(format!("/proc/thread-self/net/{f}"));
            let mut counters = serde_json::Map::new();
            for (file, prefix) in [("snmp", "Tcp:"), ("netstat", "TcpExt:")] {
                if let Ok(text) = apps::in_namespace(ns, read(file)) {
                    for (k, v) in proc_net_counters(&text, prefix) {
                        counters.insert(k, v.into());
                    }
                }
            }
            out.insert(self.node_names[node].clone(), serde_json::Value::Object(counters));
        }
        out
    }
}

/// The non-zero counters of the `prefix` section of a /proc/net/{snmp,netstat} text: a line of
/// names, then a line of values, both starting with the prefix.
fn proc_net_counters(text: &str, prefix: &str) -> Vec<(String, i64)> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else { return Vec::new() };
    names
        .split_whitespace()
        .skip(1)
        .zip(values.split_whitespace().skip(1))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse::<i64>().ok()?)))
        .filter(|(_, v)| *v != 0)
        .collect()
}

impl Drop for Emulation {
    fn drop(&mut self) {
        self.apps_stop.store(true, Ordering::Relaxed);
        for a in self.apps.drain(..) {
            let _ = a.join();
        }
        for g in self.gen_flows.drain(..) {
            g.stop();
            let _ = g.join();
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(d) = self.driver.take() {
            let _ = d.join();
        }
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        // The footprint removes the namespaces when it drops.
    }
}

/// Runs `scenario` for its duration with its flows; SIGINT/SIGTERM end it early.
pub fn run(scenario: Scenario) -> Result<EmuOutput, EmuError> {
    let emu = Emulation::start(scenario, &EmuOptions::run())?;
    emu.wait();
    emu.finish()
}

/// What this emulator cannot run yet, as an error naming the scenario's section.
fn refuse_unsupported(s: &Scenario) -> Result<(), EmuError> {
    // A kernel TCP flow here is a byte transfer written as fast as the socket takes it; a
    // message source over TCP, paced reads or Hur & Hong's file loop would silently become one.
    // A modelled one (world = "model") runs the simulator's writer, message sources included.
    let mut tcp_apps = Vec::new();
    for (i, f) in s.flows.iter().enumerate().filter(|(_, f)| f.transport() == Transport::Tcp) {
        let transfer = matches!(f.app, lasthop_scenario::App::Bulk { .. } | lasthop_scenario::App::File { .. }) || f.world == FlowWorld::Model;
        let paced = f.tcp.as_ref().is_some_and(|p| p.read_rate.is_some());
        if !transfer || paced || s.uses_file_loop(f) {
            tcp_apps.push(format!("flows[{i}] ({:?}).app", f.name));
        }
    }
    // Paper 004's receiver-side window: on a kernel receiver the emulator writes it into the
    // ACKs (observe::AwndCap); a modelled receiver (world = "model") runs the simulator's TCP
    // without it.
    let awnd: Vec<String> = s
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.world == FlowWorld::Model && f.tcp.as_ref().is_some_and(|p| p.receiver_awnd.is_some()))
        .map(|(i, f)| format!("flows[{i}] ({:?}).tcp.receiver_awnd", f.name))
        .collect();
    let echo: Vec<String> = s.flows.iter().enumerate().filter(|(_, f)| f.echo).map(|(i, f)| format!("flows[{i}] ({:?}).echo", f.name)).collect();
    let mut what = Vec::new();
    if !echo.is_empty() {
        what.push(format!("UDP echo flows (round trips; the simulator runs them, `lasthop gen --meter rtt` measures real ones): {}", echo.join(", ")));
    }
    if !awnd.is_empty() {
        what.push(format!("the receiver-side advertised window of paper 004 on a modelled (world = \"model\") receiver: {}", awnd.join(", ")));
    }
    if !tcp_apps.is_empty() {
        what.push(format!(
            "TCP applications other than plain bulk or file transfers (message sources on a kernel TCP, paced reads, the file loop): {}",
            tcp_apps.join(", ")
        ));
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(EmuError::Unsupported(format!(
        "scenario {:?}: lasthop emu does not yet run {}; lasthop run simulates them",
        s.simulation.name.clone().unwrap_or_default(),
        what.join("; ")
    )))
}

/// The smallest MTU of the scenario's hops: every TUN device gets it, so no packet is larger
/// than a hop on its way allows (the simulator's TCP uses the path MTU the same way).
fn tun_mtu(s: &Scenario) -> u32 {
    let links = s.links.iter().map(|l| l.mtu.0);
    let wlans = s.wlans.iter().map(|w| w.mtu.0);
    let cells = s.wcdma.iter().map(|c| c.mtu.0);
    links.chain(wlans).chain(cells).min().unwrap_or(1500) as u32
}

/// Per node, the route attributes that give its TCP flows the simulator's settings (those of
/// the first TCP flow it sends, if several): the initial window (the scenario's, else RFC 5681
/// §3.1's for the MSS: 2, 3 or 4 segments — Linux would start with 10, RFC 6928) and the RTO's
/// lower bound (`rto_min`, Linux's default 200 ms against the scenario's RFC 6298 1 s).
fn route_settings(s: &Scenario, mtu: u32) -> Vec<Option<netns::TcpRoute>> {
    let topo = Topology::new(s);
    let mut out = vec![None; topo.names.len()];
    for f in s.flows.iter().filter(|f| f.transport() == Transport::Tcp) {
        let p = f.tcp.clone().unwrap_or_default();
        let mss = p.mss.map_or(mtu.saturating_sub(40), |m| m.0 as u32);
        let rfc5681 = if mss > 2190 { 2 } else if mss > 1095 { 3 } else { 4 };
        let route = netns::TcpRoute { initcwnd: p.initial_cwnd.unwrap_or(rfc5681), rto_min_ms: (p.rto_min.0 / 1_000_000).max(1) };
        out[topo.index(f.src.get_ref()).expect("validated")].get_or_insert(route);
        out[topo.index(f.dst.get_ref()).expect("validated")].get_or_insert(route);
    }
    out
}

/// True if a real TCP flow starts or ends at `node`.
fn has_tcp_flow(s: &Scenario, node: &str) -> bool {
    s.flows.iter().any(|f| f.transport() == Transport::Tcp && f.world == FlowWorld::Real && (f.src.get_ref() == node || f.dst.get_ref() == node))
}

/// True if a TCP flow from or to `node` turns SACK off (Linux negotiates it per namespace).
/// A kernel TCP flow with `tcp.ecn` ends at `node`.
fn ecn_on(s: &Scenario, node: &str) -> bool {
    s.flows.iter().any(|f| {
        f.transport() == Transport::Tcp
            && f.world == FlowWorld::Real
            && (f.src.get_ref() == node || f.dst.get_ref() == node)
            && f.tcp.clone().unwrap_or_default().ecn
    })
}

fn sack_off(s: &Scenario, node: &str) -> bool {
    s.flows.iter().any(|f| {
        f.transport() == Transport::Tcp
            && (f.src.get_ref() == node || f.dst.get_ref() == node)
            && !f.tcp.clone().unwrap_or_default().sack
    })
}

fn flow_sockets(s: &Scenario, namespaces: &[(usize, String)]) -> Result<Vec<apps::FlowSockets>, EmuError> {
    let topo = Topology::new(s);
    let rng = RngStreams::new(s.simulation.seed);
    let end = s.simulation.duration.0;
    let mut out = Vec::new();
    for (i, f) in s.flows.iter().enumerate().filter(|(_, f)| f.transport() == Transport::Tcp && f.world == FlowWorld::Real) {
        let (src, dst) = (topo.index(f.src.get_ref()).expect("validated"), topo.index(f.dst.get_ref()).expect("validated"));
        let src_addr = apps::address(src as u32, SOURCE_PORT + i as u16);
        let dst_addr = apps::address(dst as u32, FLOW_PORT + i as u16);
        let app = lasthop_scenario::build::traffic::flow_app(s, f, &rng);
        let p = f.tcp.clone().unwrap_or_default();
        let congestion = match p.variant {
            CcVariant::Newreno => "reno",
            CcVariant::Cubic => "cubic",
            CcVariant::Bbr => "bbr",
        };
        let bytes = match app.transfer.volume {
            lasthop_core::traffic::Volume::Bytes(b) => Some(b),
            _ => None,
        };
        let tcp = apps::TcpOptions { congestion, send_buffer: p.send_buffer.0, receive_buffer: p.receive_buffer.0 };
        let (sender, receiver) = apps::open_flow(ns_of(namespaces, src), ns_of(namespaces, dst), src_addr, dst_addr, &tcp)?;
        out.push(apps::FlowSockets {
            name: f.name.clone(),
            sender,
            receiver,
            dst: dst_addr,
            bytes,
            start: std::time::Duration::from_nanos(f.start_time(&rng).0.min(end)),
            stop: std::time::Duration::from_nanos(f.stop.map_or(end, |t| t.0.min(end))),
            end: std::time::Duration::from_nanos(end),
            trace: s.probes.tcp.contains(&f.name),
        });
    }
    Ok(out)
}

/// The namespace of endpoint `node`.
fn ns_of(namespaces: &[(usize, String)], node: usize) -> &str {
    namespaces.iter().find(|(n, _)| *n == node).map(|(_, ns)| ns.as_str()).expect("flow ends are endpoints")
}

/// Removes what emulators, senders and receivers no longer running left behind — namespaces
/// (with their TUN devices) and the `lh-<pid>-{gen,recv,pcap}-*` working directories (a
/// SIGKILL gives them no chance to) — and returns their names; an error names anything it
/// could not remove.
pub fn clean_stale() -> Result<Vec<String>, EmuError> {
    let mut removed = netns::clean_stale()?;
    let dirs = lasthop_gen::workdir::remove_stale().map_err(|(d, source)| EmuError::Io { what: format!("removing {}", d.display()), source })?;
    removed.extend(dirs);
    Ok(removed)
}

/// A generator session per UDP flow, on the scenario's own plan (the departures the simulator
/// draws, from the same streams).
fn gen_sessions(s: &Scenario, namespaces: &[(usize, String)], origin_mono_ns: u64) -> Result<Vec<generator::GenFlow>, EmuError> {
    let topo = Topology::new(s);
    let mut plan = lasthop_gen::plan::plan_from_scenario(s, "emu");
    let flows = std::mem::take(&mut plan.flows);
    let mut out = Vec::new();
    for (i, fp) in flows.into_iter().enumerate() {
        let f = &s.flows[i];
        if f.transport() != Transport::Udp || f.world == FlowWorld::Model {
            continue;
        }
        let (src, dst) = (topo.index(f.src.get_ref()).expect("validated"), topo.index(f.dst.get_ref()).expect("validated"));
        out.push(generator::start(i, fp, &plan, (ns_of(namespaces, src), ns_of(namespaces, dst)), dst as u32, origin_mono_ns)?);
    }
    Ok(out)
}

/// The run report from what the driver observed, in the simulator's layout.
fn output(
    s: &Scenario,
    mut driver: Driver,
    reached: Time,
    apps: &[apps::AppReport],
    gen: Vec<(usize, Result<GenOutput, String>)>,
    signal: Option<i32>,
) -> EmuOutput {
    let end = reached;
    let mut tables = Vec::new();
    let names = driver.net.node_names.clone();
    let mut by_flow: Vec<Option<Result<GenOutput, String>>> = driver.observer.flows.iter().map(|_| None).collect();
    for (i, g) in gen {
        by_flow[i] = Some(g);
    }
    // Per flow, in the scenario's order: its rows of the intervals and delay CDF tables.
    let (mut intervals, mut cdf) = (Table::new("intervals"), Table::new("delay_cdf"));
    let mut generator = Vec::new();
    let mut flows = Vec::new();
    for (i, f) in driver.observer.flows.iter().enumerate() {
        let active = f.active(end);
        let seen = FlowReport {
            name: f.name.clone(),
            transport: match f.transport {
                Transport::Tcp => report::Transport::Tcp,
                Transport::Udp => report::Transport::Udp,
            },
            src: names[f.src as usize].clone(),
            dst: names[f.dst as usize].clone(),
            start_s: f.start.as_secs_f64(),
            stop_s: f.stop.min(end).as_secs_f64(),
            forward: f.forward.summary(active),
            reverse: ReverseSummary::from(&f.reverse.summary(active)),
            round_trip: None,
            connection: None,
        };
        match by_flow[i].take() {
            Some(Ok(g)) => {
                // The applications' view, measured by the generator; the causes of its losses
                // from what the models dropped.
                let mut r = g.report.flows[0].clone();
                attribute_losses(&mut r.forward.lost_by_cause, &seen.forward.lost_by_cause);
                for t in &g.tables {
                    match t.name.as_str() {
                        "intervals" => intervals.append(t),
                        "delay_cdf" => cdf.append(t),
                        _ => {}
                    }
                }
                generator.push(GeneratorEntry {
                    flow: f.name.clone(),
                    measured: Some(GeneratorMeasured {
                        clock: g.measure.clock,
                        interrupted: g.measure.interrupted,
                        receiver_malformed: g.measure.receiver_malformed,
                        measure: g.measure.flows.first().cloned(),
                        network: NetworkView { delay_ms: seen.forward.delay_ms.clone(), jitter_ms: seen.forward.jitter_ms.clone() },
                    }),
                    error: None,
                });
                flows.push(r);
            }
            other => {
                if let Some(Err(e)) = other {
                    generator.push(GeneratorEntry { flow: f.name.clone(), measured: None, error: Some(e) });
                }
                let mut rows = IntervalColumns::default();
                for row in f.forward.interval_rows(end) {
                    rows.push(&f.name, row);
                }
                intervals.append(&rows.into_table());
                cdf.append(&delay_cdf_table([(f.name.as_str(), &f.forward)]));
                flows.push(seen);
            }
        }
    }
    if intervals.columns.is_empty() {
        intervals = IntervalColumns::default().into_table();
    }
    if cdf.columns.is_empty() {
        cdf = delay_cdf_table(std::iter::empty());
    }
    tables.push(cdf);
    let hops = hop_reports(&mut driver.net.hops, &names, end, &mut tables);
    let (processors, m) = driver.processors_metered();
    let header = RunHeader {
        scenario: serde_json::to_value(s).expect("the scenario serializes"),
        seed: s.simulation.seed,
        simulated_s: end.as_secs_f64(),
        events_processed: driver.stats.packets_read,
        packets_in_network_at_end: driver.in_network() as u64,
    };
    let report = RunReport::assemble(header, flows, hops, processors, Vec::new());
    // The kernel's TCP state over time, for the traced flows (the simulator's "tcp/<flow>").
    for a in apps.iter().filter(|a| s.probes.tcp.contains(&a.name)) {
        tables.push(observe::tcp_info_table(&format!("tcp/{}", a.name), &a.sender_info));
        tables.push(observe::tcp_info_table(&format!("tcp/{}/receiver", a.name), &a.receiver_info));
    }
    let mut all = vec![intervals];
    all.extend(tables);
    let captures = driver.captures.finish();
    let mut emulator = EmulatorReport::new(&driver.stats, apps, &driver.captures, &names, m);
    emulator.generator = generator;
    emulator.receiver_awnd = driver
        .observer
        .flows
        .iter()
        .filter_map(|f| f.awnd.as_ref().map(|a| (f, a)))
        .map(|(f, a)| ReceiverAwnd {
            flow: f.name.clone(),
            cap_bytes: a.window(),
            retransmissions: a.receiver.retransmissions,
            max_retransmissions: a.receiver.max_retransmissions,
            live: a.live(),
        })
        .collect();
    EmuOutput { report, tables: all, emulator, signal, captures }
}

/// Moves the generator's unattributed losses of a flow to the causes the models dropped its
/// packets for, as many as each saw (the rest were lost in the hosts, or after the end).
fn attribute_losses(app: &mut LossByCause, net: &LossByCause) {
    let mut left = app.unattributed;
    for (cause, dropped) in [(&mut app.queue_drop, net.queue_drop), (&mut app.link_loss, net.link_loss), (&mut app.retry_limit, net.retry_limit), (&mut app.out_of_order, net.out_of_order)] {
        let moved = dropped.min(left);
        *cause += moved;
        left -= moved;
    }
    app.unattributed = left;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_net_counters_pairs_the_name_and_value_lines_and_keeps_the_non_zero() {
        // The layout of /proc/net/netstat (a names line, then a values line, per section).
        let text = "TcpExt: SyncookiesSent DelayedACKs TCPRenoRecovery\nTcpExt: 0 12 4\nIpExt: InNoRoutes\nIpExt: 3\n";
        assert_eq!(proc_net_counters(text, "TcpExt:"), vec![("DelayedACKs".to_string(), 12), ("TCPRenoRecovery".to_string(), 4)]);
        assert_eq!(proc_net_counters(text, "Tcp:"), vec![]);
        // /proc/net/snmp's Tcp: MaxConn is -1.
        assert_eq!(proc_net_counters("Tcp: MaxConn RetransSegs\nTcp: -1 100\n", "Tcp:"), vec![("MaxConn".to_string(), -1), ("RetransSegs".to_string(), 100)]);
    }
}
