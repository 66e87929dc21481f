"""``lasthop emu``: the emulate world on the command line (run, shell, clean, check).

Kept beside ``cli.py`` and registered there as a sub-app; it reuses the main CLI's error
printing, ``--set`` parsing and summary table, imported when a command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.text import Text

emu_app = typer.Typer(no_args_is_help=True, help="Emulate: the scenario's network in real time between Linux network "
                      "namespaces, with the kernel's TCP/UDP at the ends (root).")


def _scenario(file, set_, seed):
    from lasthop.cli import _parse_sets
    from lasthop.runner import as_scenario

    overrides = _parse_sets(set_)
    if seed is not None:
        overrides["simulation.seed"] = str(seed)
    return as_scenario(file, **overrides)


@emu_app.command("run")
def emu_run(
    file: Optional[str] = typer.Argument(None, help="Scenario TOML file or bundled name (default: the bundled dumbbell)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Results directory (default: results/<scenario>-emu)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Overrides simulation.seed."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: dotted.path=value (repeatable)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the summary table."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html (figures drawn by the browser, offline), as `lasthop run` does."),
    force: bool = typer.Option(False, "--force", help="Write into --out even if it is a non-empty directory that is not a lasthop run directory."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout and nothing else there."),
    pcap: List[str] = typer.Option([], "--pcap", help="Capture the real packets crossing NODE (or NODE:NEIGHBOUR) into <out>/<node>.pcap (repeatable)."),
    snaplen: Optional[int] = typer.Option(None, "--snaplen", help="Bytes kept of each captured packet (default: all; 128 keeps the headers)."),
    spin_us: float = typer.Option(0.0, "--spin-us", help="Poll instead of sleeping this long before each due event, µs: releases on time to a few µs instead of the timer's ~25 µs, a busy core meanwhile (BENCHMARKS.md)."),
    clear_psh: bool = typer.Option(False, "--clear-psh", help="Clear PSH on the kernel TCPs' data segments: their Linux receivers then ACK every second full segment (RFC 1122, as the simulator's) instead of at once after a full segment with PSH (EMULATION.md)."),
    keep_cpus_awake: bool = typer.Option(True, "--keep-cpus-awake/--let-cpus-sleep", help="While the run goes, hold idle CPUs at 0 µs wake-up latency (PM QoS, /dev/cpu_dma_latency; needs root): on a virtual machine a halted CPU wakes the emulator ms late (BENCHMARKS.md). Idle CPUs poll meanwhile."),
    steer_receives: bool = typer.Option(False, "--steer-receives/--no-steer-receives", help="Give the emulator's loop a CPU of its own and hand the namespaces' kernel receive processing to the other CPUs (RPS on the TUN devices), so it does not run inside the loop's writes: about 1.7x the throughput on 2 CPUs (BENCHMARKS.md); it also changes when the kernel's ACKs come back (EMULATION.md), hence off by default."),
) -> None:
    """Emulate a scenario for its duration (real time) with its flows; write a results directory
    in the layout of `lasthop run` (Ctrl-C stops early and still writes it)."""
    from lasthop import emu
    from lasthop.cli import USER_ERRORS, _error, console, err, print_summary
    from lasthop.files import check_output, safe_name

    emu.enter_user_namespace()  # without root, where the machine allows it (returns otherwise)
    missing = emu.missing()  # before anything else: nothing can run without it
    if missing:
        raise _error("lasthop emu needs what this machine does not give it:\n" + "\n".join(missing))
    try:
        sc = _scenario(file, set_, seed)
        directory = out or Path("results") / f"{safe_name(sc.name)}-emu"
        check_output(directory, "run", force)
        err.print(f"emulating {sc.name} for {sc.resolved['simulation']['duration']} (real time)…", highlight=False)
        res = emu.run(sc, pcap=pcap, snaplen=snaplen, spin_us=spin_us, clear_push=clear_psh, keep_cpus_awake=keep_cpus_awake, steer_receives=steer_receives)
        res.write(directory, force=force, report=report)
    except USER_ERRORS as e:
        raise _error(e)
    except emu.EmulationError as e:
        raise _error(e)
    if json_out:
        sys.stdout.write((directory / "summary.json").read_text(encoding="utf-8"))
        return
    if not quiet:
        print_summary(res)
    em = res.summary["emulator"]
    late = em["release_lateness_us"]
    console.print(Text(f"emulator: {em['packets_read']} packets read, {em['packets_written']} written, "
                       f"{em['malformed_packets']} malformed, release lateness p50 {late['p50']} µs p99 {late['p99']} µs"))
    if em.get("cpus_kept_awake_error"):
        console.print(Text(f"idle CPUs were not kept awake ({em['cpus_kept_awake_error']}): releases may be ms late on a virtual machine"))
    for link in res.summary["links"]:
        if link["queue_drops"]:
            console.print(Text(f"queue drops: {link['name']}: {link['queue_drops']}"))
    if em["ended_by_signal"]:
        console.print(Text(f"stopped early by {em['ended_by_signal']}: results cover {res.summary['simulated_s']:.1f} s"))
    extra = (", report.html" if report else "") + "".join(f", {n}" for n in res.pcaps)
    console.print(Text(f"results: {directory}/ (summary.json, flows.parquet, intervals.parquet{extra})"))


@emu_app.command("shell", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def emu_shell(
    ctx: typer.Context,
    file: Optional[str] = typer.Argument(None, help="Scenario TOML file or bundled name (default: the bundled dumbbell)."),
    node: Optional[str] = typer.Option(None, "--node", "-n", help="The node whose namespace the command runs in (default: the first endpoint)."),
    flows: bool = typer.Option(False, "--flows/--no-flows", help="Also run the scenario's own flows."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Overrides simulation.seed."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: dotted.path=value (repeatable)."),
) -> None:
    """Run a command (after --) or a shell inside a node's namespace while the emulated network
    runs; other nodes are at 10.0.0.<index + 1> (printed first). Exits with the command's code."""
    from lasthop import emu
    from lasthop.cli import USER_ERRORS, _error, err

    command = list(ctx.args)
    emu.enter_user_namespace()  # without root, where the machine allows it (returns otherwise)
    try:
        sc = _scenario(file, set_, seed)
        addrs = ", ".join(f"{n} {a}" for n, a in emu.node_addresses(sc).items())
        err.print(f"emulated {sc.name}: {addrs}", highlight=False)
        code = emu.shell(sc, node, command, flows=flows)
    except USER_ERRORS as e:
        raise _error(e)
    except emu.EmulationError as e:
        raise _error(e)
    raise typer.Exit(code)


@emu_app.command("clean")
def emu_clean() -> None:
    """Remove what emulators, senders and receivers no longer running left behind, e.g. after SIGKILL: their namespaces (lh-<pid>-<node>) and working directories (<tmp>/lh-<pid>-{gen,recv,pcap}-*)."""
    from lasthop import emu
    from lasthop.cli import _error, console

    try:
        removed = emu.clean()
    except emu.EmulationError as e:
        raise _error(e)
    console.print(Text(f"removed {len(removed)} namespace(s) and work directories" + (f": {', '.join(removed)}" if removed else "")))


@emu_app.command("check")
def emu_check() -> None:
    """Say whether this machine can emulate, and what it lacks if not."""
    from lasthop import emu
    from lasthop.cli import _error, console

    import os

    if os.geteuid() != 0 and not emu.user_namespace_missing():
        console.print(Text("this machine can emulate without root, inside an unprivileged user namespace "
                           "(lasthop emu run/shell enter one themselves; no real-time scheduling there)"))
        return
    missing = emu.missing()
    if missing:
        raise _error("lasthop emu needs:\n" + "\n".join(missing))
    console.print(Text("this machine can emulate (root, /dev/net/tun, ip, sysctl)"))
