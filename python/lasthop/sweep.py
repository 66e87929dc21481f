"""Sweeps: the cartesian product of parameter grids × seeds, run on local worker processes or a
Dask distributed cluster, cached and resumable, gathered into one Parquet dataset.

Layout of a sweep directory:

    sweep.json          the sweep's definition (scenario, grids, seeds) and its runs' status
    runs/<run id>/      one finished run: summary.json, intervals.parquet (written atomically)
    failed/<run id>.json  a run that failed, with its error and cause (retried by the next invocation):
                        "error" (it raised), "timeout" (past --run-timeout), "memory" (past
                        --run-memory), "signal" or "exit" (its worker died)
    flows.parquet       one row per run × flow: swept parameters (as written, and in SI units as
                        <param>__si), seed, run id, flow metrics
    intervals.parquet   the per-interval series of every run, with the same key columns

Each swept value is read by the core's unit parser (lasthop.quantities): "500kbps" is 5e5 in the
column links.bottleneck.rate__si, "2ms" 2e-3, "100p" 100; sweep.json records each parameter's
kind (duration, rate, bytes, packets, number, or text for categories such as "true", whose SI
column is NaN) and its SI unit.

A run is identified by a hash of its resolved scenario, seed and lasthop version, so a second
invocation runs nothing, and a sweep killed (even with SIGKILL) resumes where it stopped: a run
directory appears by an atomic rename only once it is complete. Local runs go to a
lasthop.pool.LocalPool: each has a wall-clock limit and its worker an address-space limit, and a
run that exceeds them or kills its worker is recorded as failed while the others go on.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from lasthop import _core
from lasthop._lazy import LazyModule
from lasthop.errors import OutputError, RunTimeout
from lasthop.files import SWEEP_FORMAT, check_output, replace_file, scratch_dir, subdirectory
from lasthop.pool import DEFAULT_MEMORY, DEFAULT_TIMEOUT_S, LocalPool, TaskFailed
from lasthop.quantities import SweptParameter, swept_parameter
from lasthop.results import flows_frame, json_file, read_summary, reading, run_damage
from lasthop.scenario import Scenario
from lasthop.stats import t975

pd = LazyModule("pandas")
pa = LazyModule("pyarrow")
pq = LazyModule("pyarrow.parquet")

_NUM_UNIT = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]*)\s*$")


# Bounds on a sweep's size, so that a typo cannot plan a billion runs or fork a thousand workers.
MAX_RUNS = 100_000
MAX_WORKERS = 256
DASK_CONNECT_TIMEOUT_S = 20.0


class SweepError(ValueError):
    """A sweep definition that cannot be used (bad grid syntax, unknown path, ...) or a sweep that
    cannot go on (an unreachable scheduler, a worker pool that broke)."""


class SweepFailed(RuntimeError):
    """Raised by SweepResults.raise_if_failed: some runs of the sweep failed."""


class RunsFailed(UserWarning):
    """Some runs of a sweep failed (they are listed in SweepResults.failed)."""


class SeedsWithoutEffect(UserWarning):
    """Runs of different seeds gave identical results: the scenario has no active randomness."""


def parse_grid(spec: str) -> tuple[str, list[str]]:
    """``path=v1,v2,...`` or ``path=start..stop:step`` (units allowed, read by the core's unit
    parser, so start, stop and step may use different prefixes of one unit:
    ``500kbps..2Mbps:500kbps``; integers may omit the step: ``1..4``). The values of a range are
    written in the unit of its start (``500kbps``, ``1000kbps``, ...). Values stay strings, as a
    user would write them."""
    if "=" not in spec:
        raise SweepError(f"--grid {spec!r}: expected dotted.path=values, e.g. links.bottleneck.rate=10Mbps,20Mbps")
    path, rhs = (x.strip() for x in spec.split("=", 1))
    if not path or not rhs:
        raise SweepError(f"--grid {spec!r}: both a path and values are needed")
    if ".." not in rhs:
        values = [v.strip() for v in rhs.split(",") if v.strip()]
        if not values:
            raise SweepError(f"--grid {spec!r}: no values")
        return path, values
    lo_s, rest = rhs.split("..", 1)
    hi_s, _, step_s = rest.partition(":")
    lo, hi = (_range_end(spec, lo_s, "start"), _range_end(spec, hi_s, "stop"))
    if lo.kind != hi.kind:
        raise SweepError(f"--grid {spec!r}: start is a {lo.kind} and stop a {hi.kind}; valid: both of one kind")
    if step_s:
        step = _range_end(spec, step_s, "step")
        if step.kind != lo.kind:
            raise SweepError(f"--grid {spec!r}: the step is a {step.kind}; valid: a {lo.kind} like start and stop")
    elif _whole(lo.si / lo.scale) and _whole(hi.si / lo.scale):
        step = _RangeEnd(lo.scale, lo.kind, lo.scale)  # one of the start's units
    else:
        raise SweepError(f"--grid {spec!r}: give a step for a non-integer range (start..stop:step)")
    if step.si <= 0 or hi.si < lo.si:
        raise SweepError(f"--grid {spec!r}: the range must go upwards with a positive step")
    n = int(math.floor((hi.si - lo.si) / step.si + 1e-9)) + 1
    if n > 10_000:
        raise SweepError(f"--grid {spec!r}: {n} values; more than 10 000 is surely a mistake")
    values = []
    for k in range(n):
        text = f"{(lo.si + k * step.si) / lo.scale:.9f}".rstrip("0").rstrip(".")
        values.append(f"{text}{lo.unit}")
    return path, values


@dataclass(frozen=True)
class _RangeEnd:
    si: float           # the value in SI units (core's unit parser)
    kind: str           # duration, rate, bytes, packets, number
    scale: float        # SI units per unit as written (1000 for kbps, 1 for a bare number)
    unit: str = ""      # the unit as written


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9


def _range_end(spec: str, text: str, which: str) -> _RangeEnd:
    m = _NUM_UNIT.match(text)
    if not m:
        raise SweepError(f"--grid {spec!r}: the range's {which} {text.strip()!r} is not a number with an optional "
                         "unit; valid: start..stop[:step], e.g. 14Mbps..22Mbps:2Mbps or 1..4")
    try:
        si, kind = _core.parse_quantity(text.strip())
    except ValueError as e:
        raise SweepError(f"--grid {spec!r}: the range's {which}: {e}") from None
    unit = m.group(2)
    scale = _core.parse_quantity("1" + unit)[0] if unit else 1.0
    return _RangeEnd(si, kind, scale, unit)


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: its grid point, seed and identity."""

    index: int
    params: tuple[tuple[str, str], ...]
    seed: int
    run_id: str

    @property
    def overrides(self) -> dict[str, str]:
        return {**dict(self.params), "simulation.seed": str(self.seed)}


def run_id_for(resolved: dict, seed: int) -> str:
    key = json.dumps({"scenario": resolved, "seed": seed, "version": _core.__version__}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def plan(scenario: Scenario, grids: list[tuple[str, list[str]]], seeds: int) -> list[RunSpec]:
    """Every grid point × seed, validated up front so that a bad value fails before any run."""
    if seeds < 1:
        raise SweepError("--seeds must be at least 1")
    total = math.prod(len(vals) for _, vals in grids) * seeds
    if total > MAX_RUNS:
        raise SweepError(f"{total} runs ({' × '.join(str(len(v)) for _, v in grids) or '1'} grid points × {seeds} seeds); "
                         f"valid: at most {MAX_RUNS}, more is surely a mistake")
    for path, values in grids:
        for v in values:
            _check_grid_value(scenario, path, v)
    base_seed = scenario.seed
    runs = []
    for combo in itertools.product(*[[(p, v) for v in vals] for p, vals in grids]) if grids else [()]:
        for k in range(seeds):
            seed = base_seed + k
            sc = scenario.with_overrides(**{**dict(combo), "simulation.seed": seed})
            runs.append(RunSpec(len(runs), tuple(combo), seed, run_id_for(sc.resolved, seed)))
    return runs


def _check_grid_value(scenario: Scenario, path: str, value: str) -> None:
    """A grid value the scenario refuses is reported as the grid's, not as an override."""
    try:
        scenario.with_overrides(**{path: value}).resolved
    except ValueError as e:
        msg = str(e).replace(f"--set {path}={value}", f"--grid {path}={value}")
        raise SweepError(msg) from None


def _execute(text: str, file: str, overrides: dict[str, str], wall_limit_s: float | None = None) -> dict:
    """Runs in a worker: one simulation, returned as plain data (no files: workers may be remote).
    `wall_limit_s` stops it cooperatively, also where the pool cannot kill (Dask)."""
    from lasthop.runner import run

    res = run(Scenario(text, file, overrides), wall_limit_s=wall_limit_s)
    return {"summary": res.summary, "intervals": res.table("intervals")}


class Executor(Protocol):
    """What a sweep needs from an executor: concurrent.futures' submit. ProcessPoolExecutor and
    dask.distributed's ``Client.get_executor()`` both provide it (Ray could, later)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future: ...


START_METHOD_ENV = "LASTHOP_START_METHOD"
MAIN_GUARD_ADVICE = ('worker processes are started with "{method}", which imports your script again in each of them: '
                     'put the code that calls lasthop.sweep() (or starts any other process pool) under '
                     '`if __name__ == "__main__":`')


def start_method() -> str:
    """How local workers start: ``fork`` where the platform has it (Linux, macOS: workers do not
    import the caller's script again, and the pool can limit their memory), else ``spawn``
    (Windows); the environment variable LASTHOP_START_METHOD chooses (fork, spawn, forkserver)."""
    import multiprocessing as mp

    available = mp.get_all_start_methods()
    chosen = os.environ.get(START_METHOD_ENV, "").strip()
    if not chosen:
        return "fork" if "fork" in available else "spawn"
    if chosen not in available:
        raise SweepError(f"{START_METHOD_ENV}={chosen!r}: not a start method of this platform; valid: {', '.join(available)}")
    return chosen


def _refuse_inside_a_worker_import() -> None:
    """A spawned worker imports the caller's script again; a script that calls sweep() outside its
    main guard would start a sweep from every worker. Stop that worker with the advice instead."""
    import multiprocessing as mp

    if getattr(mp.current_process(), "_inheriting", False):
        raise SystemExit(f"error: lasthop.sweep() called while a worker process was starting: "
                         f"{MAIN_GUARD_ADVICE.format(method=start_method())}")


def _limit_address_space(memory: int | None) -> None:
    """Initializer of spawned workers: the address-space limit LocalPool sets in forked ones."""
    if memory is None:
        return
    try:
        import resource
    except ImportError:  # Windows: no RLIMIT_AS; runs are limited by time only
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (memory if hard == resource.RLIM_INFINITY else min(memory, hard), hard))


def local_executor(workers: int | None, memory: int | None = None) -> cf.Executor:
    """A concurrent.futures pool of `workers` processes started by :func:`start_method`."""
    import multiprocessing as mp

    return cf.ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=mp.get_context(start_method()),
                                  initializer=_limit_address_space, initargs=(memory,))


def dask_executor(address: str):
    """An executor on an existing Dask distributed cluster (``tcp://host:8786``); SweepError, in one
    line, when distributed is missing, the address is not one, or no scheduler answers there."""
    try:
        from distributed import Client
    except ImportError:
        raise SweepError(f"--scheduler {address}: Dask distributed is not installed; pip install 'lasthop[cluster]'") from None
    try:
        client = Client(address, timeout=f"{DASK_CONNECT_TIMEOUT_S}s")
    except ValueError as e:  # an unknown scheme, a malformed address
        raise SweepError(f"--scheduler {address}: not a Dask scheduler address ({e}); e.g. tcp://host:8786") from None
    except OSError as e:  # refused, unreachable, timed out (TimeoutError is an OSError)
        raise SweepError(f"--scheduler {address}: no Dask scheduler answered ({e or type(e).__name__}); "
                         "start one there (dask scheduler) or check the address and port") from None
    return client, client.get_executor()


def _write_run(out: Path, spec: RunSpec, result: dict) -> None:
    runs = out / "runs"
    tmp = scratch_dir(runs, spec.run_id, "tmp")
    (tmp / "summary.json").write_text(json.dumps(result["summary"], indent=1) + "\n")
    pq.write_table(result["intervals"], tmp / "intervals.parquet")
    (tmp / "spec.json").write_text(json.dumps({"params": dict(spec.params), "seed": spec.seed}) + "\n")
    final = runs / spec.run_id
    if final.exists():  # a concurrent invocation finished it first
        shutil.rmtree(tmp)
        return
    os.rename(tmp, final)
    failed = out / "failed" / f"{spec.run_id}.json"
    if failed.exists():
        failed.unlink()


def failure_record(err: BaseException) -> dict:
    """The cause and message of a failed run: "timed out after 30 s", "worker killed by signal
    9 (SIGKILL)", "out of memory ..." for the pool's failures, "Type: message" for errors."""
    if isinstance(err, TaskFailed):
        return {"cause": err.cause, "error": str(err)}
    if isinstance(err, RunTimeout):
        return {"cause": "timeout", "error": str(err)}
    return {"cause": "memory" if isinstance(err, MemoryError) else "error", "error": f"{type(err).__name__}: {err}"}


def _record_failure(out: Path, spec: RunSpec, err: BaseException) -> None:
    replace_file(subdirectory(out, "failed") / f"{spec.run_id}.json", json.dumps({
        "params": dict(spec.params),
        "seed": spec.seed,
        **failure_record(err),
        "traceback": "".join(traceback.format_exception(type(err), err, err.__traceback__))[-4000:],
    }, indent=1) + "\n")


@dataclass
class SweepProgress:
    total: int
    cached: int
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.perf_counter)


def run_sweep(
    scenario: Scenario,
    grids: list[tuple[str, list[str]]],
    seeds: int,
    out: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    executor: Executor | None = None,
    run_timeout_s: float | None = DEFAULT_TIMEOUT_S,
    run_memory: int | None = DEFAULT_MEMORY,
    force: bool = False,
) -> "SweepResults":
    """Runs what is not cached yet on `executor` (default: `workers` local processes, or the Dask
    cluster at `scheduler`), then gathers the dataset. Each run gets `run_timeout_s` of wall
    clock and, on local workers, `run_memory` bytes of address space (None: no limit); a run
    past either, or whose worker dies, is recorded in failed/ and the others go on. `out` must
    be missing, empty or a sweep directory (`force` to write into another directory)."""
    _refuse_inside_a_worker_import()
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise SweepError(f"--workers {workers}: valid: 1 to {MAX_WORKERS}")
    if run_timeout_s is not None and not run_timeout_s > 0:
        raise SweepError(f"--run-timeout {run_timeout_s}: valid: a positive number of seconds")
    out = check_output(out, "sweep", force)
    specs = plan(scenario, grids, seeds)  # every value is checked before anything is written
    subdirectory(out, "runs")
    damaged = _set_aside_damaged_runs(out / "runs", specs)
    todo = [s for s in specs if not (out / "runs" / s.run_id).is_dir()]
    replace_file(out / "sweep.json", json.dumps({
        "format": SWEEP_FORMAT,
        "scenario_file": scenario.file,
        "scenario_name": scenario.name,
        "lasthop_version": _core.__version__,
        "grids": [{"path": p, "values": v, **swept_parameter(p, v).metadata()} for p, v in grids],
        "seeds": seeds,
        "base_seed": scenario.seed,
        "overrides": scenario.overrides,
        "runs": [{"run_id": s.run_id, "params": dict(s.params), "seed": s.seed} for s in specs],
    }, indent=1) + "\n")
    prog = SweepProgress(total=len(specs), cached=len(specs) - len(todo))
    client, owned = None, executor is None
    if todo and executor is None:  # before the progress bar: an unreachable scheduler is only an error
        if scheduler:
            client, executor = dask_executor(scheduler)
        else:
            executor = (LocalPool(workers, timeout_s=run_timeout_s, memory=run_memory) if start_method() == "fork"
                        else local_executor(workers, run_memory))
    if progress:
        progress(prog)
    if todo:
        task = functools.partial(_execute, wall_limit_s=run_timeout_s)
        try:
            futures = {executor.submit(task, scenario.text, scenario.file, {**scenario.overrides, **s.overrides}): s for s in todo}
            for fut in cf.as_completed(futures):
                spec = futures[fut]
                try:
                    _write_run(out, spec, fut.result())
                    prog.done += 1
                except cf.BrokenExecutor:  # concurrent.futures' pool lost a worker (LocalPool never breaks)
                    raise SweepError(
                        f"a worker process died and took its pool with it; the {prog.done} runs finished are kept and the "
                        f"next invocation resumes. If this is a script: {MAIN_GUARD_ADVICE.format(method=start_method())}"
                    ) from None
                except Exception as e:  # a failed run is recorded, never dropped
                    _record_failure(out, spec, e)
                    prog.failed += 1
                if progress:
                    progress(prog)
        except BaseException:
            # Interrupted (Ctrl-C): stop the runs in flight instead of waiting for every queued one.
            if owned and isinstance(executor, (LocalPool, cf.ProcessPoolExecutor)):
                executor.shutdown(wait=False, cancel_futures=True)
                owned = False
            raise
        finally:
            if owned and hasattr(executor, "shutdown"):
                executor.shutdown(wait=True)
            if client is not None:
                client.close()
    results = SweepResults.assemble(out, specs)
    results.rerun = damaged
    results.write()
    return results


def _set_aside_damaged_runs(runs: Path, specs: list[RunSpec]) -> dict[str, str]:
    """Removes every cached run directory of `specs` that is damaged (summary.json or
    intervals.parquet missing, truncated or foreign: lasthop.results.run_damage), so that the
    sweep runs it again; returns run id -> what was wrong. A symlink planted as a run
    directory is removed, never followed."""
    damaged = {}
    for s in specs:
        d = runs / s.run_id
        if d.is_symlink():
            damaged[s.run_id] = f"{d}: a symlink where lasthop writes a run directory"
        elif d.is_dir():
            why = run_damage(d)
            if why is None:
                continue
            damaged[s.run_id] = why
        else:
            continue
        aside = scratch_dir(runs, s.run_id, "old")
        os.replace(d, aside / "d")
        shutil.rmtree(aside, ignore_errors=True)
    return damaged


_RUN_ID = re.compile(r"^[0-9a-f]{1,64}$")


def read_sweep_meta(d: Path) -> dict:
    """sweep.json of sweep directory `d`, checked to hold what readers rely on: its runs (each a
    hexadecimal run id, which names a directory under runs/, its parameters and seed) and its
    grids; OutputError naming the file and the entry otherwise."""
    path = d / "sweep.json"
    meta = json_file(path, dict)
    damaged = "the sweep directory is damaged: run the sweep again into an empty --out"
    runs, grids = meta.get("runs"), meta.get("grids", [])
    if not isinstance(runs, list) or not isinstance(grids, list):
        raise OutputError(f"{path}: no list of runs and grids; {damaged}")
    for i, r in enumerate(runs):
        ok = (isinstance(r, dict) and isinstance(r.get("run_id"), str) and _RUN_ID.match(r["run_id"])
              and isinstance(r.get("params"), dict) and all(isinstance(v, str) for v in r["params"].values())
              and isinstance(r.get("seed"), int))
        if not ok:
            raise OutputError(f"{path}: runs[{i}] is not a run lasthop writes (a hexadecimal run_id, params, seed); {damaged}")
    for i, g in enumerate(grids):
        if not (isinstance(g, dict) and isinstance(g.get("path"), str) and isinstance(g.get("values", []), list)):
            raise OutputError(f"{path}: grids[{i}] is not a grid lasthop writes (a path and its values); {damaged}")
    return meta


class SweepResults:
    """A sweep's dataset: ``flows`` (one row per run × flow) and ``intervals`` as DataFrames;
    ``parameters`` types the swept parameters (kind, SI unit, SI value of each value)."""

    def __init__(self, directory: Path, flows: pd.DataFrame, intervals: pd.DataFrame, params: list[str], failed: pd.DataFrame,
                 parameters: dict[str, SweptParameter] | None = None):
        self.directory = directory
        self.flows = flows
        self.intervals = intervals
        self.params = params
        self.failed = failed
        self.parameters = parameters if parameters is not None else {}
        self.rerun: dict[str, str] = {}  # run id -> why its cached directory was damaged and run again

    @classmethod
    def assemble(cls, out: Path, specs: list[RunSpec]) -> "SweepResults":
        params = [p for p, _ in specs[0].params] if specs else []
        parameters = {p: swept_parameter(p, [dict(s.params)[p] for s in specs]) for p in params}
        flow_frames, interval_frames, failures = [], [], []
        for s in specs:
            d = out / "runs" / s.run_id
            if not d.is_dir() or d.is_symlink():
                f = out / "failed" / f"{s.run_id}.json"
                if f.exists():
                    rec = json_file(f, dict)
                    failures.append({**dict(s.params), "seed": s.seed, "run_id": s.run_id,
                                     "cause": str(rec.get("cause", "error")), "error": str(rec.get("error", "?"))})
                continue
            why = run_damage(d)
            if why is not None:
                raise OutputError(f"{why.split('; ')[0]}; the run is damaged: `lasthop sweep` with the same arguments runs it again")
            summary = read_summary(d)
            key = {**{p: v for p, v in s.params}, "seed": s.seed, "run_id": s.run_id,
                   **{parameters[p].column: parameters[p].si[v] for p, v in s.params}}
            ff = flows_frame(summary)
            for k, v in reversed(list(key.items())):
                ff.insert(0, k, v)
            flow_frames.append(ff)
            with reading(d / "intervals.parquet"):
                iv = pq.read_table(d / "intervals.parquet").to_pandas()
            for k, v in reversed(list(key.items())):
                iv.insert(0, k, v)
            interval_frames.append(iv)
        flows = pd.concat(flow_frames, ignore_index=True) if flow_frames else pd.DataFrame()
        intervals = pd.concat(interval_frames, ignore_index=True) if interval_frames else pd.DataFrame()
        failed = pd.DataFrame(failures, columns=[*params, "seed", "run_id", "cause", "error"])
        return cls(out, flows, intervals, params, failed, parameters)

    @classmethod
    def load(cls, directory: str | Path) -> "SweepResults":
        d = Path(directory)
        meta = read_sweep_meta(d)
        specs = [RunSpec(i, tuple(r["params"].items()), r["seed"], r["run_id"]) for i, r in enumerate(meta["runs"])]
        return cls.assemble(d, specs)

    def write(self) -> None:
        """flows.parquet and intervals.parquet, each replaced by a rename (readers never see half)."""
        for name, frame in [("flows.parquet", self.flows), ("intervals.parquet", self.intervals)]:
            if frame.empty:  # no run finished: no dataset, not an older one
                (self.directory / name).unlink(missing_ok=True)
                continue
            sink = pa.BufferOutputStream()
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
            replace_file(self.directory / name, sink.getvalue().to_pybytes())

    def aggregate(self, metric: str = "goodput_bps", by: Iterable[str] | None = None) -> pd.DataFrame:
        """Mean and 95 % confidence interval (Student t) of `metric` across seeds, per grid point
        and flow: columns mean, ci95 (half-width), n, std."""
        keys = [*(by if by is not None else self.params), "name"]
        g = self.flows.groupby(keys, sort=False)[metric]
        agg = g.agg(["mean", "std", "count"]).reset_index().rename(columns={"count": "n"})
        agg["ci95"] = [s * t975(n - 1) / math.sqrt(n) if n > 1 else float("nan") for s, n in zip(agg["std"], agg["n"])]
        return agg

    def seeds_without_effect(self) -> list[dict[str, str]]:
        """The grid points (parameter -> value) whose runs of two or more seeds gave identical
        results for every flow: nothing random is active there (no loss, no random errors, no
        random start), so their 95 % intervals have zero width and the extra seeds were wasted."""
        if self.flows.empty:
            return []
        metrics = self.flows.drop(columns=[*self.params, *(q.column for q in self.parameters.values()), "seed", "run_id"])
        rows = pd.util.hash_pandas_object(metrics, index=False)  # NaN-safe, unlike tuples of floats
        points = self.flows.groupby(self.params, sort=False) if self.params else [((), self.flows)]
        found = []
        for key, group in points:
            by_seed = {seed: tuple(rows[idx]) for seed, idx in group.groupby("seed", sort=True).groups.items()}
            if len(by_seed) >= 2 and len(set(by_seed.values())) == 1:
                values = key if isinstance(key, tuple) else (key,)
                found.append(dict(zip(self.params, (str(v) for v in values))))
        return found

    def seeds_warning(self) -> str | None:
        """One line saying where the seeds changed nothing (see seeds_without_effect), or None."""
        same = self.seeds_without_effect()
        if not same:
            return None
        seeds = sorted(set(self.flows["seed"]))
        n_points = len(self.flows.drop_duplicates(self.params)) if self.params else 1
        if not self.params:
            where = ""
        elif len(same) == n_points:
            where = " at every grid point"
        else:
            listed = "; ".join(", ".join(f"{k}={v}" for k, v in p.items()) for p in same[:3]) + ("; ..." if len(same) > 3 else "")
            where = f" at {len(same)} of {n_points} grid points ({listed})"
        return (f"seeds {seeds[0]}..{seeds[-1]} gave identical results{where}: nothing random is active "
                "(no loss, no random errors or start times), so the 95 % intervals have zero width and a single seed "
                "gives the same answer; a flow's start_jitter (e.g. --set flows.NAME.start_jitter=1s) randomizes its "
                "start per seed")

    def failed_warning(self) -> str | None:
        """One line saying how many runs failed, or None."""
        if self.failed.empty:
            return None
        total = len(self.failed) + self.flows["run_id"].nunique() if not self.flows.empty else len(self.failed)
        return (f"{len(self.failed)} of {total} runs failed (SweepResults.failed lists them, {self.directory}/failed/ "
                "keeps their errors); the next call retries them")

    def raise_if_failed(self) -> "SweepResults":
        """Raises SweepFailed if a run failed (so that a script exits non-zero), else returns self."""
        message = self.failed_warning()
        if message:
            raise SweepFailed(message)
        return self

    def __repr__(self) -> str:
        return f"<SweepResults {len(self.flows)} flow rows, params {self.params}, {len(self.failed)} failed>"


def sweep(scenario_or_path, grid: dict[str, Iterable[Any]] | list[str] | None = None, *, seeds: int = 1,
          out: str | Path = "results/sweep", workers: int | None = None, scheduler: str | None = None,
          run_timeout_s: float | None = DEFAULT_TIMEOUT_S, run_memory: int | None = DEFAULT_MEMORY,
          force: bool = False, **overrides: Any) -> SweepResults:
    """Python face of ``lasthop sweep``: ``grid`` maps dotted paths to values (or is a list of
    ``path=spec`` strings with the CLI's range syntax). Limits and `force` as in run_sweep.
    Failed runs and seeds that changed nothing are reported as warnings (RunsFailed,
    SeedsWithoutEffect); ``sweep(...).raise_if_failed()`` makes a script exit non-zero instead.
    Call it under ``if __name__ == "__main__":`` where workers start by spawn (Windows)."""
    from lasthop.runner import as_scenario

    _refuse_inside_a_worker_import()
    sc = as_scenario(scenario_or_path, **overrides)
    if grid is None:
        grids = []
    elif isinstance(grid, dict):
        grids = [(p, [str(v).lower() if isinstance(v, bool) else str(v) for v in vals]) for p, vals in grid.items()]
    else:
        grids = [parse_grid(g) for g in grid]
    res = run_sweep(sc, grids, seeds, out, workers=workers, scheduler=scheduler, run_timeout_s=run_timeout_s,
                    run_memory=run_memory, force=force)
    for message, category in [(res.failed_warning(), RunsFailed), (res.seeds_warning(), SeedsWithoutEffect)]:
        if message:
            warnings.warn(message, category, stacklevel=2)
    return res
