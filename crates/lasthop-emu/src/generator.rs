//! The scenario's UDP flows through the measure world's generator (`lasthop-gen`): each UDP
//! flow is one generator session — its receiver daemon (`recv::serve`) in the destination's
//! namespace, its sender (`send::send`) in the source's — so an emulated UDP flow carries the
//! generator's 40-byte header (sequence number, send time), is logged at both applications as
//! 32-byte records, and is measured by the same code as `lasthop gen`: one-way delay, IPDV and
//! the RFC 3550 and D-ITG jitters, loss, per-interval series and the `measure` figures (send
//! lateness, shortfall, duplicates, reordering).
//!
//! How it fits the emulator:
//! - One clock: both ends share the kernel's `CLOCK_MONOTONIC` (the generator then applies no
//!   offset), and the sender's origin is fixed to the emulation's own start
//!   (`SendOptions::origin_mono_ns`), so a flow starts at the scenario's `start` (plus its
//!   `start_jitter` draw: the plan is the scenario's, `plan_from_scenario`) as in the simulator.
//! - Ports: flow `i`'s receiver listens for the session on [`CONTROL_PORT`]` + i` and takes its
//!   datagrams on `FLOW_PORT + i`, so the emulator's observer still tells the flows apart and
//!   attributes the losses it sees in the models (queue, link, MAC retry limit) by cause; the
//!   report keeps the generator's application-level figures and moves that many of its
//!   unattributed losses to their causes (the rest were lost in the hosts, or after the end).
//! - Signalling (hello, clock probes, setup, stop, the receiver's records) is not part of the
//!   experiment: the driver passes it between the namespaces at once, outside the models, as a
//!   separate management network would (`Observer::is_signalling`). The emulation starts
//!   [`SETUP_LEAD`] after the namespaces are up, and the sessions are set up in that time.
//! - After the scenario's end the models keep running until every session has handed over its
//!   records (the packets in flight arrive or are lost as they would), but nothing after the end
//!   is metered by the emulator itself.
//!
//! Left out: the generator's round-trip meter (one-way only), TCP flows (the kernel's TCP is
//! measured at the TUN devices, `observe`), several flows in one session.

use crate::apps::{address, in_namespace, spawn_in_namespace};
use crate::observe::FLOW_PORT;
use crate::EmuError;
use lasthop_gen::control::Meter;
use lasthop_gen::plan::{FlowPlan, Plan};
use lasthop_gen::recv::{bind, serve, RecvOptions};
use lasthop_gen::results::{compute, GenOutput};
use lasthop_gen::send::{send, Progress, SendOptions};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Flow `i`'s generator session listens on `CONTROL_PORT + i`.
pub const CONTROL_PORT: u16 = 9_000;
/// Time from the namespaces being ready to the emulation's origin, for the sessions' set-up
/// (hello, 16 clock probes, setup: each a few hundred µs through the TUN devices).
pub const SETUP_LEAD: std::time::Duration = std::time::Duration::from_millis(300);
/// A datagram not received this long after the sender stopped is lost (RFC 7680 §2.4).
const LOSS_TIMEOUT_NS: u64 = 1_000_000_000;

/// One UDP flow's running session.
pub struct GenFlow {
    /// The flow's index in the scenario.
    pub flow: usize,
    sender: JoinHandle<Result<GenOutput, String>>,
    receiver: JoinHandle<Result<(), String>>,
    /// Ends the session early (a signal, an untimed emulation finishing).
    stop: Arc<AtomicBool>,
}

/// Starts the session of flow `flow_plan` (scenario flow `index`) from node `src` in `src_ns` to
/// node `dst` in `dst_ns`; its departures count from `origin_mono_ns`.
pub fn start(
    index: usize,
    mut flow_plan: FlowPlan,
    whole: &Plan,
    (src_ns, dst_ns): (&str, &str),
    dst: u32,
    origin_mono_ns: u64,
) -> Result<GenFlow, EmuError> {
    let control = SocketAddr::V4(address(dst, CONTROL_PORT + index as u16));
    // The receiver listens beyond loopback, so it wants a token; nobody else is in these
    // namespaces, but the generator's rule holds all the same.
    let token = format!("lh-{}-{index}-{origin_mono_ns}", std::process::id());
    let recv_opts = move |token: String| RecvOptions { token: Some(token), sessions: Some(1), ..RecvOptions::new(control) };
    let o = recv_opts(token.clone());
    let listener = in_namespace(dst_ns, move || bind(&o).map_err(std::io::Error::other))?;
    let stop = Arc::new(AtomicBool::new(false));
    let receiver_stop = Arc::new(AtomicBool::new(false));
    let (rs, o) = (receiver_stop.clone(), recv_opts(token.clone()));
    let receiver = spawn_in_namespace(dst_ns, format!("gen-recv-{index}"), move || serve(listener, &o, &rs).map(|_| ()))?;
    flow_plan.id = 0;
    let name = flow_plan.name.clone();
    let mut plan = Plan { name: whole.name.clone(), flows: vec![flow_plan], duration_ns: whole.duration_ns, interval: whole.interval, seed: whole.seed, configuration: serde_json::Value::Null };
    // Removed when the session ends, or by the next start if the emulator was killed.
    let work_dir = lasthop_gen::workdir::private_dir("gen").map_err(|source| EmuError::Io { what: "creating the generator's working directory".into(), source })?;
    let o = SendOptions {
        to: control.to_string(),
        token: Some(token),
        meter: Meter::Owd,
        loss_timeout_ns: LOSS_TIMEOUT_NS,
        work_dir: work_dir.clone(),
        data_port: Some(FLOW_PORT + index as u16),
        realtime: false,
        ditg_log: None,
        origin_mono_ns: Some(origin_mono_ns),
        spin_ns: lasthop_gen::pacer::SPIN_NS,
        // Never: the emulated hops must see each datagram as a packet of its own.
        gso: Some(false),
    };
    let s = stop.clone();
    let sender = spawn_in_namespace(src_ns, format!("gen-send-{index}"), move || {
        let measured = send(&mut plan, &o, &s, &Progress::default());
        receiver_stop.store(true, Ordering::Relaxed);
        let out = measured.and_then(|m| compute(&plan, &m, lasthop_gen::results::PacketTables::Off));
        let _ = std::fs::remove_dir_all(&work_dir);
        out.map_err(|e| format!("flow {name:?}: {e}"))
    })?;
    Ok(GenFlow { flow: index, sender, receiver, stop })
}

impl GenFlow {
    /// Ends the session before its plan does.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// True once the sender has its results (or failed).
    pub fn is_finished(&self) -> bool {
        self.sender.is_finished()
    }

    /// Waits for both ends; the sender's results.
    pub fn join(self) -> Result<GenOutput, String> {
        let out = self.sender.join().unwrap_or_else(|_| Err("the generator's sender panicked".into()));
        let rx = self.receiver.join().unwrap_or_else(|_| Err("the generator's receiver panicked".into()));
        match (out, rx) {
            (Ok(o), _) => Ok(o),
            (Err(e), Err(r)) => Err(format!("{e} (receiver: {r})")),
            (Err(e), Ok(())) => Err(e),
        }
    }
}
