"""The measure world: send a scenario's flows over real sockets and measure them, D-ITG style.

:func:`recv` runs a receiver (loopback by default; a token is required beyond it) until SIGINT or
SIGTERM; :func:`send` sends the flows of a flows file (the scenario's ``[[flows]]`` vocabulary,
or a whole scenario) or of D-ITG-like flags to it and returns :class:`lasthop.results.Results`
in the layout of ``lasthop run``: the same ``summary.json`` flow keys (computed by the core's
meters), ``flows.parquet``, ``intervals.parquet``, per-packet tables of both ends
(``packets/<flow>``, ``packets/<flow>/receiver``), ``report.html``, plus ``records/`` (both
ends' raw 32-byte records) and a ``measure`` block in ``summary.json`` (clock and offset,
shortfall, send lateness, time blocked in ``send()``, duplicates, reordering, round trips).

The Rust engine (crates/lasthop-gen) does all I/O with the GIL released; this module only
converts arguments, shows progress and writes the results directory.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

from lasthop import _core
from lasthop._lazy import LazyModule
from lasthop.files import check_output
from lasthop.results import Results, TableSpool, run_summary, tables_from_core

GenError = _core.GenError

# progress(elapsed_s, duration_s, packets_sent, packets_planned_or_None)
GenProgressFn = Callable[[float, float, int, "int | None"], None]


def ditg_flows(protocol: str = "UDP", rate: float = 1000.0, size: int = 512, duration_ms: int = 10_000) -> str:
    """The flows file that D-ITG's ``-T protocol -C rate -c size -t duration_ms`` describe: one CBR
    flow named ``flow1`` (D-ITG's defaults: UDP, 1000 pkt/s, 512 B, 10 s)."""
    return _core.gen_ditg_flows(protocol, float(rate), int(size), int(duration_ms))


def cpu_set(spec: str) -> set[int]:
    """The CPUs of an affinity list such as ``1``, ``0,2`` or ``0-3`` (iperf3's ``-A``, taskset's
    ``-c``), each one this process may run on; a ``ValueError`` names what is valid otherwise."""
    allowed = sorted(os.sched_getaffinity(0))
    valid = f"CPU numbers or ranges among {_ranges(allowed)}, e.g. 1 or 0,2 or 0-1"
    cpus: set[int] = set()
    for part in spec.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError(f"--affinity {spec!r}: {part.strip()!r} is not a CPU number; valid: {valid}") from None
        if first > last or first not in allowed or last not in allowed:
            raise ValueError(f"--affinity {spec!r}: {part.strip()} is not a CPU this process may use; valid: {valid}")
        cpus.update(range(first, last + 1))
    if not cpus <= set(allowed):
        raise ValueError(f"--affinity {spec!r}: CPUs {sorted(cpus - set(allowed))} are not available; valid: {valid}")
    return cpus


def _ranges(cpus: list[int]) -> str:
    out, start = [], None
    for i, c in enumerate(cpus):
        start = c if start is None else start
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(str(start) if start == c else f"{start}-{c}")
            start = None
    return ",".join(out)


def set_affinity(spec: str) -> set[int]:
    """Runs this process's threads from now on (the engine's are started later) on the CPUs of
    `spec` (:func:`cpu_set`). On one host, a sender and a receiver on different CPUs behave as on
    two hosts: otherwise the kernel wakes the receiver on the sender's CPU (wake-affine) where it
    waits for the sender's spin or the next tick and delays departures (BENCHMARKS.md)."""
    cpus = cpu_set(spec)
    os.sched_setaffinity(0, cpus)
    return cpus


def recv(listen: str = "127.0.0.1:9000", *, token: str | None = None, out: str | Path | None = None,
         sessions: int | None = None, kernel_timestamps: bool = False,
         on_ready: Callable[[int], None] | None = None, realtime: bool = False,
         ditg_log: str | Path | None = None, max_sessions: int = 16, handshake_timeout: float = 30.0,
         idle_timeout: float = 30.0) -> dict:
    """Serves senders on `listen` until SIGINT/SIGTERM (or `sessions` sessions), several at once.
    With `out`, each session's records and counts stay in ``out/<session>/``; with `ditg_log`,
    every session's received packets are also appended to that D-ITG binary log (ITGRecv's
    ``-l``) as it ends; `realtime` receives UDP at SCHED_FIFO priority where permitted (idle CPUs held awake). At most
    `max_sessions` at once, a slot taken only by a hello with the token (which must come within
    5 s; the oldest of 64 connections still waiting for theirs is closed when another arrives);
    a connection must set up within `handshake_timeout` s and a running
    session that hears nothing for `idle_timeout` s is over (a sender probes every 5 s). Returns
    the receiver's summary."""
    return json.loads(_core.gen_recv(listen, token, None if out is None else str(out), sessions, kernel_timestamps, on_ready, realtime,
                                     None if ditg_log is None else str(ditg_log), int(max_sessions), float(handshake_timeout),
                                     float(idle_timeout)))



def _echo_flows(text: str) -> list[str]:
    """The names of the flows of flows-file `text` that ask for an echo (none if it does not
    parse: the generator's own parser then says why)."""
    import tomllib

    try:
        flows = tomllib.loads(text).get("flows", [])
    except (tomllib.TOMLDecodeError, AttributeError):
        return []
    return [str(f.get("name")) for f in flows if isinstance(f, dict) and f.get("echo") is True]


def send(
    to: str,
    flows: str | Path | None = None,
    *,
    text: str | None = None,
    out: str | Path | None = None,
    meter: str = "owd",
    token: str | None = None,
    duration: float | None = None,
    seed: int | None = None,
    loss_timeout: float = 1.0,
    packets: bool = True,
    data_port: int | None = None,
    realtime: bool = False,
    ditg_log: str | Path | None = None,
    spin_us: float | None = None,
    gso: bool | None = None,
    progress: GenProgressFn | None = None,
    force: bool = False,
    report: bool = False,
    writing: Callable[[], None] | None = None,
    report_progress: Callable[[int, int, str], None] | None = None,
) -> Results:
    """Sends the flows of file `flows` (or of the flows-file `text`, e.g. from :func:`ditg_flows`)
    to the receiver at `to` (``HOST[:PORT]``, port 9000 by default) and returns the results,
    written to `out` when given (with `report`, report.html too; `writing()` is called first and
    `report_progress(done, total, what)` as figures are drawn). `duration` (s) and `seed`
    override the file's ``[simulation]``.
    `realtime` runs the senders at SCHED_FIFO priority where permitted (steadier pacing on a busy
    machine) and holds idle CPUs at 0 µs wake-up latency meanwhile (PM QoS; a halted virtual CPU
    wakes the pacer late). `ditg_log` also writes the packets sent as a D-ITG binary log (ITGSend's ``-l``) that
    ITGDec and ``lasthop ditg-dec`` read. `spin_us` is how long before each departure the pacer stops sleeping and spins on
    the clock (default 50 µs): more CPU for fewer late departures. `gso` sends batches of
    equal-size datagrams as one segmented write (UDP GSO: several times the packet rate, but a
    qdisc on the way sees each batch as one packet); by default only towards a loopback address.
    Ctrl-C stops the senders early; the results then hold what was sent. Errors: GenError
    (bad flows or options, an unreachable or refusing receiver), OutputError."""
    if (flows is None) == (text is None):
        raise GenError("give a flows file (--flows FILE) or D-ITG-like flags, not both and not neither")
    if flows is not None:
        path = Path(flows)
        from lasthop.scenario import MAX_SCENARIO_BYTES, _not_regular

        kind = _not_regular(path)
        if kind is not None:  # a FIFO would block the read forever, a device never end
            raise GenError(f"{path}: is {kind}, not a regular file; a flows file is a TOML file")
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_SCENARIO_BYTES + 1)
            if len(data) > MAX_SCENARIO_BYTES:
                raise GenError(f"{path}: larger than {MAX_SCENARIO_BYTES >> 20} MiB; a flows file is a small TOML text")
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise GenError(f"{path}: cannot read the flows file: {e}") from None
        file = str(path)
    else:
        file = "command-line flags"
    echo = _echo_flows(text) if meter != "rtt" else []
    if echo:
        raise GenError(f"{file}: flows {', '.join(echo)} set echo = true; run with --meter rtt (the receiver then echoes "
                       "every UDP flow, as D-ITG's -m rttm) to measure their round trips")
    if out is not None:
        check_output(out, "run", force)
    # lh-<pid>-gen-*: what a killed sender leaves, the next start removes (lasthop_gen::workdir).
    work = Path(tempfile.mkdtemp(prefix=f"lh-{os.getpid()}-gen-"))
    try:
        t0 = time.perf_counter()
        # Written to `out`, the per-packet tables stream to Parquet files piece by piece (no
        # bound on a run's packets); kept in memory otherwise (at most 4 M planned packets).
        stream = packets and out is not None
        g = _core.GenSend(text, file, to, str(work), meter, token, duration, seed, loss_timeout, packets, data_port, realtime,
                         None if ditg_log is None else str(ditg_log), spin_us, gso, stream_packets=stream)
        while not g.finished():
            try:
                time.sleep(0.1)
                if progress is not None:
                    progress(*g.progress())
            except KeyboardInterrupt:
                g.stop()
        spool = TableSpool(work / "packet-tables") if stream else None
        try:
            summary_json, raw_tables, measure_json, files = g.wait((lambda raw: spool.add_core([raw])) if spool else None)
        finally:
            if spool is not None:
                spool.close()
        wall = time.perf_counter() - t0
        core = json.loads(summary_json)
        name = core["scenario"].get("simulation", {}).get("name") or (Path(file).stem if flows is not None else "ditg-flags")
        # The CPUs the sender ran on (`--affinity`): the measure world's conditions.
        measure = {**json.loads(measure_json), "sender_cpus": sorted(os.sched_getaffinity(0))}
        summary = run_summary(core, world="measure", scenario_name=name, scenario_file=file, overrides={}, wall_s=wall,
                              measure=measure)
        res = Results(summary, tables_from_core(raw_tables))
        if spool is not None:
            res.trace_files = dict(spool.files)
        res.files = {f"records/{Path(f).name}": Path(f) for f in files}
        if out is not None:
            if writing is not None:
                writing()
            res.write(out, force=force, report=report, progress=report_progress)
        res.files = {}  # the work directory goes; the copies in `out` stay
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)
