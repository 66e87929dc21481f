"""The emulate world: a scenario's network in real time between Linux network namespaces.

``run`` builds one namespace per endpoint node (``lh-<pid>-<node index>``), joins them through
TUN devices to the Rust emulator, which drives the scenario's hops with the simulator's own
models, runs the scenario's flows with the kernel's TCP and UDP, and returns :class:`Results`
in the layout of ``lasthop run`` (plus an ``emulator`` section: packets read and written,
malformed packets, release lateness), so ``lasthop compare`` takes both.

``shell`` runs a command in a node's namespace while the emulated network runs; ``clean``
removes the namespaces of emulators that were killed (SIGKILL). Everything needs root,
/dev/net/tun and iproute2; :func:`missing` says what this machine lacks.

Without root, :func:`enter_user_namespace` re-executes the command inside an unprivileged user
namespace (``unshare --user --map-root-user --net --mount``): there the user is root of its own
network and mount namespaces, ``ip netns`` keeps its names on a private tmpfs over /run/netns, and
everything the emulator creates dies with the process (nothing is left even after SIGKILL). It
needs the kernel to allow such namespaces and /dev/net/tun to be usable by the user;
:func:`user_namespace_missing` says what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from lasthop import _core
from lasthop.results import Results, run_summary, tables_from_core
from lasthop.runner import as_scenario, pcap_file_name
from lasthop.scenario import Scenario

EmulationError = _core.EmulationError


def missing() -> list[str]:
    """What this machine lacks to emulate, one line each; empty when it can."""
    return list(_core.emu_missing())


# "1": enter a user namespace even as root (tests of that path); "inside": this process is the
# command re-executed inside one.
USERNS_ENV = "LASTHOP_EMU_USERNS"


def user_namespace_missing() -> list[str]:
    """What an unprivileged user namespace lacks on this machine, one line each; empty when
    ``lasthop emu`` can run in one."""
    return list(_core.emu_userns_missing())


def in_user_namespace() -> bool:
    """True in a command that :func:`enter_user_namespace` re-executed."""
    return os.environ.get(USERNS_ENV) == "inside"


def enter_user_namespace() -> None:
    """Without root (or with LASTHOP_EMU_USERNS=1), replaces this process by the same command
    inside a new user namespace with its own network and mount namespaces, when the machine
    allows it; otherwise returns (and :func:`missing` explains). The process keeps its pid, so
    signals still reach it."""
    if in_user_namespace() or (os.geteuid() == 0 and os.environ.get(USERNS_ENV) != "1"):
        return
    if user_namespace_missing():
        return
    # A private tmpfs for `ip netns` names (mount propagation is private in the new namespace).
    script = ('if [ -d /run/netns ]; then mount -t tmpfs lasthop-netns /run/netns; '
              'else mount -t tmpfs lasthop-run /run && mkdir /run/netns; fi && exec "$@"')
    argv = ["unshare", "--user", "--map-root-user", "--net", "--mount", "--", "sh", "-c", script, "sh",
            sys.executable, "-m", "lasthop", *sys.argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe("unshare", argv, dict(os.environ, **{USERNS_ENV: "inside"}))


def clean() -> list[str]:
    """Removes what emulators, senders and receivers no longer running left (namespaces, the
    lh-<pid>-{gen,recv,pcap}-* working directories in the temporary directory); returns their
    names."""
    return list(_core.emu_clean())


@contextmanager
def _signals_to_the_emulator() -> Iterator[None]:
    """While the emulator runs, SIGINT and SIGTERM are its to handle (it stops, removes its
    namespaces and reports); Python's handlers come back afterwards."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _results(sc: Scenario, out: tuple, wall: float, spool: Path | None = None) -> Results:
    summary_json, raw_tables, emulator_json, sig, captures = out
    core = json.loads(summary_json)
    emulator = json.loads(emulator_json)
    emulator["ended_by_signal"] = None if sig is None else signal.Signals(sig).name
    emulator["user_namespace"] = in_user_namespace()
    summary = run_summary(core, world="emulate", scenario_name=sc.name, scenario_file=sc.file, overrides=sc.overrides,
                          wall_s=wall, emulator=emulator)
    res = Results(summary, tables_from_core(raw_tables))
    # A capture streamed to its file in `spool` comes back as None: the results point at the file.
    res.pcaps = {pcap_file_name(spec): bytes(data) if data is not None else (spool / pcap_file_name(spec))
                 for spec, data in captures}
    return res


def run(scenario_or_path: Scenario | str | Path | None = None, *, pcap: Sequence[str] | None = None,
        snaplen: int | None = None, spin_us: float = 0.0, clear_push: bool = False, keep_cpus_awake: bool = True,
        steer_receives: bool = False, **overrides: Any) -> Results:
    """Emulates a scenario for its duration with its flows (SIGINT/SIGTERM end it early: the
    results then cover the time run, and ``summary["emulator"]["ended_by_signal"]`` says so).
    ``pcap`` lists capture points as ``lasthop run`` takes them (``"node"`` or
    ``"node:neighbour"``): the real packets there, each leaving one stamped when its
    transmission starts, become ``<node>[-<neighbour>].pcap`` (``snaplen`` bytes of each, or all).
    ``spin_us``: the emulator polls instead of sleeping that long before each due event
    (releases no longer wait for the timer's wake-up, ~25 µs at the median here; a busy core
    for that long before each). ``clear_push``: PSH is cleared on the kernel TCPs' data segments
    as they enter the emulated network, so their Linux receivers acknowledge every second
    full-sized segment (RFC 1122, as the simulator's receivers do) instead of at once after a
    full-sized segment carrying PSH (Linux >= 5.13; EMULATION.md). ``keep_cpus_awake``: while
    it runs, idle CPUs are held at 0 µs wake-up latency (a PM QoS request on
    /dev/cpu_dma_latency, dropped when the run ends), so a halted virtual CPU does not delay the
    releases by milliseconds (``summary["emulator"]["cpus_kept_awake"]`` says whether the kernel
    granted it). ``steer_receives``: the emulator's loop keeps a CPU of its own and the TUN
    devices hand the namespaces' receive processing (their kernel TCP) to the other CPUs (RPS),
    so it does not run inside the loop's writes (``summary["emulator"]["receive_steering"]``;
    off by default: it changes when the kernel's ACKs come back, EMULATION.md).
    Errors: ScenarioError, EmulationError."""
    sc = as_scenario(scenario_or_path, **overrides)
    if snaplen is not None and snaplen < 1:
        raise EmulationError(f"--snaplen {snaplen}: keep at least 1 byte of each packet (e.g. 128 for the headers)")
    if not 0 <= spin_us <= 10_000:
        raise EmulationError(f"--spin-us {spin_us}: between 0 and 10000 µs (e.g. 60)")
    points = list(dict.fromkeys(pcap or []))
    # Captures are streamed to files while the run goes (a long capture is never held in
    # memory); they live in a directory of their own until the results are written, and go
    # with the results object.
    spool = Path(tempfile.mkdtemp(prefix=f"lh-{os.getpid()}-pcap-")) if points else None
    files = [str(spool / pcap_file_name(p)) for p in points] if spool else []
    t0 = time.perf_counter()
    try:
        with _signals_to_the_emulator():
            emu = _core.Emulation(sc.text, sc.file, list(sc.overrides.items()), flows=True, timed=True, handle_signals=True,
                                  pcap=points, snaplen=snaplen, spin_us=float(spin_us), pcap_files=files,
                                  clear_push=bool(clear_push), keep_cpus_awake=bool(keep_cpus_awake),
                                  steer_receives=bool(steer_receives))
            while not emu.wait(0.2):
                pass
            out = emu.finish()
        res = _results(sc, out, time.perf_counter() - t0, spool)
    except BaseException:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
        raise
    if spool is not None:
        weakref.finalize(res, shutil.rmtree, spool, True)
    return res


def shell(scenario_or_path: Scenario | str | Path | None, node: str | None, command: Sequence[str], *, flows: bool = False, **overrides: Any) -> int:
    """Runs `command` (default: $SHELL or /bin/sh) in the namespace of `node` (default: the
    first endpoint) while the scenario's network runs, until the command exits; returns its exit
    code. With `flows`, the scenario's own flows run too. Errors: ScenarioError, EmulationError."""
    import os

    sc = as_scenario(scenario_or_path, **overrides)
    emu = _core.Emulation(sc.text, sc.file, list(sc.overrides.items()), flows=flows, timed=False, handle_signals=True)
    try:
        spaces = dict(emu.namespaces())
        if node is None:
            node = next(iter(spaces))
        if node not in spaces:
            nodes = [n["name"] for n in sc.resolved.get("nodes", [])]
            where = "a node inside the emulator (a router, an access point)" if node in nodes else "no node of the scenario"
            raise EmulationError(f"--node {node}: {where}; nodes with a namespace: {', '.join(spaces)}")
        argv = list(command) or [os.environ.get("SHELL", "/bin/sh")]
        # Every endpoint's namespace by name (LASTHOP_NS_RECEIVER, LASTHOP_NS_N0, ...): a command
        # can start a server on another node (README: ip netns exec "$LASTHOP_NS_RECEIVER" iperf3 -s).
        env = dict(os.environ, LASTHOP_NODE=node, LASTHOP_NAMESPACE=spaces[node],
                   **{namespace_variable(n): ns for n, ns in spaces.items()})
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the command
        try:
            child = subprocess.Popen(["ip", "netns", "exec", spaces[node], *argv], env=env)
            while child.poll() is None:
                if emu.stopped:  # SIGTERM reached the emulator: end the command too
                    child.terminate()
                    child.wait()
                    break
                time.sleep(0.05)
            return child.returncode
        finally:
            signal.signal(signal.SIGINT, old)
    finally:
        emu.finish()


def namespace_variable(node: str) -> str:
    """The environment variable `emu shell` sets to `node`'s namespace: LASTHOP_NS_ and the name in
    capitals, every other character than a letter or digit as _ (a node "old-laptop": LASTHOP_NS_OLD_LAPTOP)."""
    return "LASTHOP_NS_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in node.upper())


def node_addresses(sc: Scenario) -> dict[str, str]:
    """The IPv4 address of every node, as the emulator assigns them (10.0.0.1 for the first)."""
    out = {}
    for i, n in enumerate(sc.resolved.get("nodes", [])):
        k = i + 1
        out[n["name"]] = f"10.{k >> 16 & 255}.{k >> 8 & 255}.{k & 255}"
    return out
