"""Running a scenario: build the Rust simulation, step it (for progress), collect results."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

from lasthop import _core
from lasthop.results import WALL_CLOCK_KEY, Results, tables_from_core
from lasthop.scenario import Scenario

ProgressFn = Callable[[float, float], None]


def as_scenario(scenario_or_path: Scenario | str | Path | None, **overrides: Any) -> Scenario:
    """A Scenario from a Scenario, a file path or a bundled name (None = the default)."""
    if scenario_or_path is None:
        return Scenario.bundled(**overrides)
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path.with_overrides(**overrides) if overrides else scenario_or_path
    p = Path(scenario_or_path)
    if p.exists() or p.suffix == ".toml":
        return Scenario.from_toml(p, **overrides)
    if _core.bundled_scenario(str(scenario_or_path)) is not None:
        return Scenario.bundled(str(scenario_or_path), **overrides)
    raise _core.ScenarioError(f"{scenario_or_path}: no such file and no bundled scenario of that name")


def run(
    scenario_or_path: Scenario | str | Path | None = None,
    *,
    out: str | Path | None = None,
    progress: ProgressFn | None = None,
    pcap: list[str] | None = None,
    **overrides: Any,
) -> Results:
    """Runs a scenario to its end. Keyword overrides use ``--set`` paths: ``seed=3``,
    ``**{"links.bottleneck.rate": "20Mbps"}`` or ``links__bottleneck__rate="20Mbps"``.
    ``progress(now_s, end_s)`` is called between chunks of 1 % of the run. ``pcap`` lists
    capture points, ``"node"`` or ``"node:neighbour"``; each becomes ``<node>[-<neighbour>].pcap``
    in the results directory."""
    sc = as_scenario(scenario_or_path, **overrides)
    sim = _core.Simulation(sc.text, sc.file, list(sc.overrides.items()))
    captures = []
    for spec in pcap or []:
        node, _, peer = spec.partition(":")
        captures.append((spec.replace(":", "-") + ".pcap", sim.add_capture(node, peer or None)))
    t0 = time.perf_counter()
    end = sim.end_s
    step = end / 100.0
    while sim.now_s < end:
        sim.run_until(min(end, sim.now_s + step))
        if progress is not None:
            progress(sim.now_s, end)
    wall = time.perf_counter() - t0
    summary_json, raw_tables = sim.output()
    core = json.loads(summary_json)
    summary = {
        "lasthop_version": _core.__version__,
        "scenario_name": sc.name,
        "scenario_file": sc.file,
        "overrides": sc.overrides,
        "seed": core.pop("seed"),
        WALL_CLOCK_KEY: {
            "wall_time_s": wall,
            "events_per_s": core["events_processed"] / wall if wall > 0 else None,
            "simulated_s_per_wall_s": core["simulated_s"] / wall if wall > 0 else None,
        },
        **core,
    }
    res = Results(summary, tables_from_core(raw_tables))
    res.pcaps = {name: sim.capture_pcap(i) for name, i in captures}
    if out is not None:
        res.write(out)
    return res
