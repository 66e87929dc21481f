"""Running a scenario: build the Rust simulation, step it (for progress), collect results.

The stepping loop ends when the simulation reaches its end, and raises SimulationError if a
step leaves simulated time where it was (the engine's own watchdog stops a run whose time
stands still inside a step) or RunTimeout past the caller's wall-clock limit.
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from lasthop import _core
from lasthop.errors import RunTimeout, ScenarioError, SimulationError, did_you_mean, did_you_mean_path, source_label
from lasthop.files import check_output, safe_name
from lasthop.results import Results, RunSpool, run_summary, tables_from_core
from lasthop.scenario import Scenario

# Steps of the progress loop, in simulated seconds: at most 1 % of the run (so progress is
# reported at least 100 times), at least 1 µs (well above the engine's 1 ns resolution, so a
# step always moves simulated time), and sized so that one step takes about CHUNK_WALL_S of wall
# clock: the wall-clock limit and Ctrl-C are then honoured within a fraction of a second however
# heavy the scenario. Results do not depend on the steps (the engine runs every event up to and
# including each step's end; a test checks it).
MIN_STEP_S = 1e-6
FIRST_STEP_S = 0.01
CHUNK_WALL_S = 0.2

# Rows (interval rows and trace samples) the core may hold before a run written to a directory
# hands them over to files there: 4-24 MB (a queue sample takes 16 bytes, a TCP trace sample
# about 90), so that memory does not grow with simulated time (2^20 peaked ~40 MB higher over a
# one-hour home run, BENCHMARKS.md "Long runs"). A short run never reaches it and
# is written at its end, as a run without a directory always is.
SPOOL_ROWS = 1 << 18

ProgressFn = Callable[[float, float], None]

# What a run needs once the simulation ends (Arrow for its tables and files, the report's code),
# imported by a helper thread while the engine runs without the GIL: on two cores their ~0.3 s of
# import hides behind the simulation instead of following it (BENCHMARKS.md, "The AP's queue
# options"). Imports change no result.
AFTER_RUN_MODULES = ("numpy", "pyarrow", "pyarrow.compute", "pyarrow.parquet", "lasthop.report.run")


def import_in_background(names: tuple[str, ...]) -> threading.Thread | None:
    """Starts importing `names` in a daemon thread; join it before using them. A module that
    fails to import is left to the caller's own import, which then reports it; where no thread
    can start (a sweep worker's address-space limit leaves no room for its stack), nothing is
    imported ahead (None)."""

    def work() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the main thread's import raises it where it belongs
                return

    thread = threading.Thread(target=work, name="lasthop-imports", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # "can't start new thread"
        return None
    return thread


def as_scenario(scenario_or_path: Scenario | str | Path | None, **overrides: Any) -> Scenario:
    """A Scenario from a Scenario, a file path or a bundled name (None = the default)."""
    if scenario_or_path is None:
        return Scenario.bundled(**overrides)
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path.with_overrides(**overrides) if overrides else scenario_or_path
    p = Path(scenario_or_path)
    if p.exists() or p.suffix == ".toml":
        return Scenario.from_toml(p, **overrides)
    name = str(scenario_or_path)
    if _core.bundled_scenario(name) is not None:
        return Scenario.bundled(name, **overrides)
    hint = _did_you_mean_scenario(name)
    raise ScenarioError(f"{name}: no such file and no bundled scenario of that name{hint} "
                        f"(bundled: {', '.join(_core.bundled_names())})")


def _did_you_mean_scenario(name: str) -> str:
    """For a name that is neither a file nor bundled: the file it misses a suffix of, a file close
    to it (when it looks like a path), or the closest bundled name."""
    with_suffix = f"{name}.toml"
    if Path(with_suffix).is_file():
        return f"; did you mean {with_suffix}?"
    bundled = did_you_mean(name, _core.bundled_names())
    if "/" in name or os.sep in name:
        return did_you_mean_path(name) or did_you_mean_path(with_suffix) or bundled
    return bundled or did_you_mean_path(name)


def pcap_file_name(spec: str) -> str:
    """``node`` -> ``node.pcap``, ``node:peer`` -> ``node-peer.pcap``, with names made safe."""
    node, _, peer = spec.partition(":")
    return "-".join(safe_name(n) for n in (node, peer) if n) + ".pcap"


def run(
    scenario_or_path: Scenario | str | Path | None = None,
    *,
    out: str | Path | None = None,
    progress: ProgressFn | None = None,
    pcap: list[str] | None = None,
    force: bool = False,
    wall_limit_s: float | None = None,
    spool_beside: str | Path | None = None,
    **overrides: Any,
) -> Results:
    """Runs a scenario to its end. Keyword overrides use ``--set`` paths: ``seed=3``,
    ``**{"links.bottleneck.rate": "20Mbps"}`` or ``links__bottleneck__rate="20Mbps"``.
    ``progress(now_s, end_s)`` is called between steps of at most 1 % of the run. ``pcap`` lists
    capture points, ``"node"`` or ``"node:neighbour"``; each becomes ``<node>[-<neighbour>].pcap``
    in the results directory. ``out`` is written atomically and only where lasthop may write
    (``force`` to write into a non-empty directory that is not a lasthop run directory).
    ``wall_limit_s`` stops the run with RunTimeout once it has taken that long. A long run given
    ``out`` (or ``spool_beside``, the directory its Results will be written to) keeps its interval
    rows and traces in files beside that directory as it goes, not in memory.
    Errors: ScenarioError, SimulationError (RunTimeout is one), OutputError."""
    sc = as_scenario(scenario_or_path, **overrides)
    if out is not None:
        check_output(out, "run", force)  # before the run, not after it
    try:
        sim = _core.Simulation(sc.text, sc.file, list(sc.overrides.items()))
    except ScenarioError as e:  # validated already by Scenario; kept for a core stricter than resolve
        raise ScenarioError(sc.clarify(str(e))) from None
    captures = []
    for spec in dict.fromkeys(pcap or []):
        node, _, peer = spec.partition(":")
        try:
            captures.append((pcap_file_name(spec), sim.add_capture(node, peer or None)))
        except ScenarioError as e:
            nodes = [n["name"] for n in sc.resolved.get("nodes", [])]
            unknown = next((n for n in (node, peer) if n and n not in nodes), None)
            hint = did_you_mean(unknown, nodes) if unknown is not None else ""
            raise ScenarioError(f"{source_label(sc.file)}: {e}{hint}") from None
    spool_beside = out if out is not None else spool_beside
    spool = RunSpool(spool_beside) if spool_beside is not None else None
    try:
        return _run(sc, sim, captures, spool, out, force, progress, wall_limit_s)
    except BaseException:
        if spool is not None:
            spool.close()
        raise


def _run(sc: Scenario, sim, captures: list, spool: RunSpool | None, out, force: bool, progress: ProgressFn | None,
         wall_limit_s: float | None) -> Results:
    t0 = time.perf_counter()
    imports = import_in_background(AFTER_RUN_MODULES)
    end = sim.end_s
    max_step = max(end / 100.0, MIN_STEP_S)
    step = min(max_step, FIRST_STEP_S)
    while sim.now_s < end:
        before = sim.now_s
        target = min(end, before + step)
        chunk_t0 = time.perf_counter()
        try:
            sim.run_until(target)
        except SimulationError as e:  # the engine's watchdog
            label = source_label(sc.file)
            raise type(e)(str(e) if str(e).startswith((label, sc.file)) else f"{label}: {e}") from None
        took = time.perf_counter() - chunk_t0
        if took > CHUNK_WALL_S:
            step = max(MIN_STEP_S, step * CHUNK_WALL_S / took / 2)
        elif took < CHUNK_WALL_S / 4:
            step = min(max_step, step * 2)
        if sim.now_s <= before:
            raise SimulationError(
                f"{source_label(sc.file)}: simulated time did not advance past {before:.9f} s (asked for {target:.9f} s); "
                "this is a bug in lasthop: please report it with the scenario"
            )
        if spool is not None and sim.held_rows >= SPOOL_ROWS:
            spool.add(sim.drain())
        if progress is not None:
            progress(sim.now_s, end)
        if wall_limit_s is not None and time.perf_counter() - t0 > wall_limit_s:
            raise RunTimeout(f"timed out after {wall_limit_s:g} s (wall clock), at {sim.now_s:g} of {end:g} s simulated")
    wall = time.perf_counter() - t0
    if imports is not None:
        imports.join()
    summary_json, raw_tables = sim.output()
    summary = run_summary(json.loads(summary_json), world="simulate", scenario_name=sc.name, scenario_file=sc.file,
                          overrides=sc.overrides, wall_s=wall)
    tables = tables_from_core(raw_tables)
    res = spool.finish(summary, tables) if spool is not None else Results(summary, tables)
    res.pcaps = {name: sim.capture_pcap(i) for name, i in captures}
    if out is not None:
        res.write(out, force=force)
    return res
