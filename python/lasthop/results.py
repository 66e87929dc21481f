"""Results of one run: the summary (a dict, also ``summary.json``) and tables as pandas
DataFrames (also Parquet files). Layout of a results directory:

    summary.json          resolved scenario, versions, seed, wall time, per-flow and per-link metrics
    flows.parquet         one row per flow: the summary's flows as columns (named as below)
    intervals.parquet     per-flow time series (default 100 ms bins)
    traces/<name>.parquet requested traces: tcp/<flow>, tcp/<flow>/receiver, queue/<link>:<a>-><b>,
                          wlan/<wlan>/<node>, packets/<flow>, and delay_cdf (always)
    traces/index.json     file stem -> trace name (load reads exactly these)
    report.html, figures/ the report (lasthop report DIR regenerates them)
    <node>[-<peer>].pcap  captures requested with pcap=[...]
    records/              a measured run's (lasthop gen) raw per-packet records of both ends

Column names, in every table lasthop writes (flows, intervals, traces, a sweep's dataset): what
is measured, then its qualifiers (statistic, direction, cause), then the unit last —
``throughput_rx_bps``, ``delay_mean_ms``, ``active_s``, ``cwnd_bytes``, ``sent_packets``. A
flow's column is its path in summary.json joined with ``_``, with the unit of a group moved to
the end: ``delay_ms.p99`` becomes ``delay_p99_ms``, ``reverse.delay_ms.mean``
``reverse_delay_mean_ms``, ``tcp.srtt_ms`` ``tcp_srtt_ms``; the per-cause loss counts, whose
group name carries no unit, end in theirs: ``lost_by_cause.queue_drop`` becomes
``lost_by_cause_queue_drop_packets``. summary.json keeps its own nesting and names.

Counters are integers in every table: a flow's columns take their types from the run report's
JSON Schema (``lasthop._core.run_schema()``), so an integer field is an int64 column whatever
the run, and one that can be missing (a UDP flow has no ``tcp_*``) holds nulls, read by pandas
as the nullable ``Int64`` (flows.parquet says so in its pandas metadata). Every flow table has
the same columns, TCP's included.

The directory is written by :func:`lasthop.files.write_atomically`: complete or not at all,
never mixed with an earlier run's files, and only where lasthop may write (see lasthop.files).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shutil
import stat
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasthop import _core
from lasthop._lazy import LazyModule
from lasthop.errors import OutputError
from lasthop.files import RUN_FORMAT, name_digest, safe_name, scratch_dir, write_atomically

np = LazyModule("numpy")
pd = LazyModule("pandas")
pa = LazyModule("pyarrow")
pq = LazyModule("pyarrow.parquet")

# Fields of summary.json that depend on the machine, not on the scenario and seed.
WALL_CLOCK_KEY = "wall_clock"

# The world that produced a run (summary.json's "world") and how the console and the report say it.
WORLDS = {"simulate": "simulated", "emulate": "emulated", "measure": "measured", "import": "imported"}


def run_summary(core: dict, *, world: str, scenario_name: str, scenario_file: str, overrides: dict, wall_s: float,
                emulator: dict | None = None, measure: dict | None = None) -> dict:
    """summary.json of a run of any world: lasthop's version, the scenario's name, file and
    overrides, the world, the seed, the wall clock, the emulator's section (emulated runs), the
    core's run report (`core`, parsed), the measure section (measured runs). The wall clock's
    rates are those the world has: events per second where events were processed, simulated (or
    emulated) seconds per wall second where time was modelled."""
    assert world in WORLDS, world
    core = dict(core)
    events = core.get("events_processed") if world in ("simulate", "import") else None
    modelled = world in ("simulate", "emulate")
    clock = {"wall_time_s": wall_s}
    if world != "measure":
        clock["events_per_s"] = events / wall_s if events is not None and wall_s > 0 else None
        clock["simulated_s_per_wall_s"] = core["simulated_s"] / wall_s if modelled and wall_s > 0 else None
    head = {"lasthop_version": _core.__version__, "scenario_name": scenario_name, "scenario_file": scenario_file,
            "overrides": overrides, "world": world, "seed": core.pop("seed"), WALL_CLOCK_KEY: clock}
    return {**head, **({"emulator": emulator} if emulator is not None else {}), **core,
            **({"measure": measure} if measure is not None else {})}


def world_of(summary: dict) -> str:
    """How a run's world is said: "simulated", "emulated", "measured" or "imported" (a run
    written before summary.json named its world: simulated)."""
    return WORLDS.get(summary.get("world", "simulate"), "simulated")


def trace_file_stem(name: str) -> str:
    """File name for a trace: ``queue/bottleneck:router->receiver`` -> ``queue__bottleneck__router-to-receiver``;
    names from the scenario that are not safe as a file name are made so (lasthop.files.safe_name)."""
    return safe_name(name.replace("->", "-to-").replace("/", "__").replace(":", "__"), max_len=150)


# Arrow arrays are made from their buffers, not with pa.array: pa.array imports pandas (0.4 s) to
# ask whether its input is a pandas object, and writing a run needs no pandas.

def _validity(valid: np.ndarray) -> pa.Buffer | None:
    """Arrow's validity bitmap (bit i set: value i present) of a boolean array; None when all are."""
    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())


def _strings(values: list[str | None]) -> pa.Array:
    data = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return pa.Array.from_buffers(pa.string(), len(data), [_validity(valid), pa.py_buffer(offsets.tobytes()),
                                                          pa.py_buffer(b"".join(data))])


def _repeated_strings(values: list[str]) -> pa.Array:
    """A long column of few distinct strings (a trace's event or outcome names): each distinct
    one encoded once, then taken by index (for 3 million values 0.35 s, against 1.1 s for
    _strings and 0.8 s for pa.array)."""
    distinct = {v: i for i, v in enumerate(dict.fromkeys(values))}
    index = np.fromiter(map(distinct.__getitem__, values), dtype=np.int32, count=len(values))
    return _strings(list(distinct)).take(pa.Array.from_buffers(pa.int32(), len(index), [None, pa.py_buffer(index)]))


def arrow_array(values: list, kind: str) -> pa.Array:
    """A column of Python values (None: missing) of `kind` "int" (int64), "float", "str" or
    "bool" as an Arrow array."""
    if kind == "str":
        return _strings(values)
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    if kind == "bool":
        bits = np.packbits(np.array([bool(v) for v in values], dtype=bool), bitorder="little").tobytes()
        return pa.Array.from_buffers(pa.bool_(), len(values), [_validity(valid), pa.py_buffer(bits)])
    dtype, arrow_type = (np.int64, pa.int64()) if kind == "int" else (np.float64, pa.float64())
    data = np.array([0 if v is None else v for v in values], dtype=dtype)
    return pa.Array.from_buffers(arrow_type, len(values), [_validity(valid), pa.py_buffer(data.tobytes())])


def _column(kind: str, data: Any, valid: bytes | None) -> pa.Array:
    """A column of the core's tables: a list of str (never missing), or the bytes of
    little-endian f64 or u64 values with one validity byte per value (0: missing)."""
    if kind == "str":
        return _repeated_strings(data)
    dtype, arrow_type = ("<f8", pa.float64()) if kind == "f64" else ("<u8", pa.uint64())
    n = len(data) // 8
    bitmap = None if valid is None else _validity(np.frombuffer(valid, dtype=np.uint8) != 0)
    return pa.Array.from_buffers(arrow_type, n, [bitmap, pa.py_buffer(data)])


def tables_from_core(raw: list) -> dict[str, pa.Table]:
    out = {}
    for name, cols in raw:
        out[name] = pa.Table.from_arrays([_column(kind, data, valid) for _, kind, data, valid in cols],
                                         names=[c for c, _, _, _ in cols])
    return out


# Units a name can end with (lasthop writes units in names: delay_ms, rate_bps, active_s).
UNITS = ("ms", "s", "bps", "bytes", "packets")
# Groups of summary.json whose name carries no unit: the unit of their members.
GROUP_UNITS = {"lost_by_cause": "packets"}


@dataclass(frozen=True)
class FlowColumn:
    """One column of the flows table: its name, where its value is in a flow of summary.json,
    its kind ("int", "float", "str" or "bool") and whether a flow may lack it."""

    name: str
    path: tuple[str, ...]
    kind: str
    nullable: bool


def _column_name(path: tuple[str, ...]) -> str:
    """The column of a summary path: joined with "_", the unit of a group moved to the end."""
    words, unit = [], None
    for i, key in enumerate(path):
        last = i == len(path) - 1
        stem, _, suffix = key.rpartition("_")
        if not last and stem and suffix in UNITS:
            words.append(stem)
            unit = suffix
        else:
            words.append(key)
            if not last and key in GROUP_UNITS:
                unit = GROUP_UNITS[key]
    return "_".join(words) + (f"_{unit}" if unit else "")


@functools.lru_cache(maxsize=1)
def flow_columns() -> tuple[FlowColumn, ...]:
    """Every column a flow can have, from the run report's JSON Schema (in the schema's order;
    flows_table puts them in summary.json's)."""
    schema = json.loads(_core.run_schema())
    definitions = schema.get("definitions", {})

    def resolve(node: dict) -> tuple[dict, bool]:
        """The object or leaf schema behind $ref/allOf/anyOf, and whether it admits null."""
        nullable = False
        while True:
            if "$ref" in node:
                node = definitions[node["$ref"].rsplit("/", 1)[-1]]
            elif "allOf" in node and len(node["allOf"]) == 1:
                node = node["allOf"][0]
            elif "anyOf" in node:
                options = [o for o in node["anyOf"] if o.get("type") != "null"]
                nullable |= len(options) < len(node["anyOf"])
                node = options[0]
            else:
                return node, nullable

    kinds = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}
    out: list[FlowColumn] = []

    def walk(node: dict, path: tuple[str, ...], nullable: bool) -> None:
        node, admits_null = resolve(node)
        nullable |= admits_null
        if "properties" in node:
            required = set(node.get("required", []))
            for key, child in node["properties"].items():
                walk(child, (*path, key), nullable or key not in required)
            return
        types = node.get("type", "string")
        types = [types] if isinstance(types, str) else list(types)
        kind = next((kinds[t] for t in types if t in kinds), "str")  # enums (transport) are strings
        out.append(FlowColumn(_column_name(path), path, kind, nullable or "null" in types))

    walk(schema["properties"]["flows"]["items"], (), False)
    return tuple(out)


def _paths_in_order(flows: list[dict]) -> dict[tuple[str, ...], None]:
    """Leaf paths of the flows in summary.json's order (first flow first)."""
    seen: dict[tuple[str, ...], None] = {}

    def walk(d: dict, path: tuple[str, ...]) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, (*path, k))
            else:
                seen.setdefault((*path, k), None)

    for f in flows:
        walk(f, ())
    return seen


def _value(flow: dict, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(flow, dict):
            return None
        flow = flow.get(key)
    return flow


def flows_table(summary: dict) -> pa.Table:
    """The flows of a summary as an Arrow table, one row per flow, the columns of flow_columns()
    (summary.json's order; columns no flow has, such as TCP's in a UDP-only run, at the end)."""
    columns = flow_columns()
    order = {p: i for i, p in enumerate(_paths_in_order(summary["flows"]))}
    columns = sorted(columns, key=lambda c: order.get(c.path, len(order)))
    flows = summary["flows"]
    arrays, fields = [], []
    for c in columns:
        arrays.append(arrow_array([_value(f, c.path) for f in flows], c.kind))
        fields.append(pa.field(c.name, arrays[-1].type, nullable=c.nullable))
    # pandas' own metadata (the format pandas writes): integer columns that may be missing are
    # its nullable Int64, so pd.read_parquet reads integers, not floats with NaN.
    meta = {"index_columns": [], "column_indexes": [],
            "columns": [{"name": c.name, "field_name": c.name, "pandas_type": "int64", "numpy_type": "Int64", "metadata": None}
                        for c in columns if c.kind == "int" and c.nullable]}
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={b"pandas": json.dumps(meta).encode()}))


def flows_frame(summary: dict) -> pd.DataFrame:
    """The flows table as a DataFrame (integer columns that may be missing as Int64)."""
    return flows_table(summary).to_pandas()


def parquet_options(schema: pa.Schema) -> dict:
    """How lasthop writes a table: dictionary encoding for its text columns only (flow names,
    TCP states: few distinct values), not for its numbers, whose dictionaries cost 2.4 times
    the writing time of a queue trace for a file 4 % smaller."""
    return {"use_dictionary": [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]}


class TableSpool:
    """Tables arriving in pieces (a long run's traces, a measurement's per-packet tables), each
    appended to a Parquet file of its own in `directory`: memory holds one piece at a time."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True)
        self.directory = directory
        self.files: dict[str, Path] = {}
        self._writers: dict[str, pq.ParquetWriter] = {}

    def add(self, name: str, table: pa.Table) -> None:
        w = self._writers.get(name)
        if w is None:
            self.files[name] = self.directory / f"{len(self.files)}.parquet"
            w = self._writers[name] = pq.ParquetWriter(self.files[name], table.schema, **parquet_options(table.schema))
        w.write_table(table)

    def add_core(self, raw: list) -> None:
        """Tables as the core hands them over (see tables_from_core)."""
        for name, table in tables_from_core(raw).items():
            self.add(name, table)

    def close(self) -> None:
        for w in self._writers.values():
            w.close()
        self._writers.clear()


class RunSpool:
    """A simulation's interval rows and traces as it hands them over (``Simulation.drain``),
    spooled to files in a scratch directory beside the results directory, so that a run's
    memory does not grow with simulated time. :meth:`finish` completes them with the tables of
    the run's end and gives the run's Results, those tables kept in files; :meth:`close` removes
    the scratch directory (after the Results were written elsewhere, or on failure)."""

    def __init__(self, out: str | Path):
        parent = Path(os.path.abspath(out)).parent
        parent.mkdir(parents=True, exist_ok=True)
        self.directory = scratch_dir(parent, Path(out).name or "results", "spool")
        # Removed when the Results that read from it are written elsewhere or forgotten.
        self._remove = weakref.finalize(self, shutil.rmtree, self.directory, True)
        self.traces = TableSpool(self.directory / "traces")
        self.intervals = TableSpool(self.directory / "intervals")  # one file per flow

    def add(self, drained: tuple[list, list]) -> None:
        intervals, traces = drained
        for raw in intervals:  # one "intervals" table per flow, keyed by its flow
            table = tables_from_core([raw])["intervals"]
            self.intervals.add(table.column("flow")[0].as_py(), table)
        self.traces.add_core(traces)

    def finish(self, summary: dict, tables: dict[str, pa.Table]) -> "Results":
        """The run's Results: each spooled table followed by the rows of the same name in
        `tables` (the core's output at the end); the intervals in the flows' order, as a run
        never drained has them."""
        tables = dict(tables)
        for name in list(tables):
            if name in self.traces.files:
                tail = tables.pop(name)
                if tail.num_rows:
                    self.traces.add(name, tail)
        self.traces.close()
        self.intervals.close()
        res = Results(summary, tables)
        res._spool = self  # the files live as long as the Results reads them
        res.trace_files = dict(self.traces.files)
        if self.intervals.files:  # from now on in a file (`tables` is the Results' own dict)
            res.trace_files["intervals"] = self._merge_intervals(tables.pop("intervals"), [f["name"] for f in summary["flows"]])
        return res

    def _merge_intervals(self, tail: pa.Table, flows: list[str]) -> Path:
        """One intervals file: per flow, its spooled rows, then its rows in `tail`."""
        import pyarrow.compute as pc

        path = self.directory / "intervals.parquet"
        with pq.ParquetWriter(path, tail.schema, **parquet_options(tail.schema)) as w:
            for flow in flows:
                if flow in self.intervals.files:
                    f = pq.ParquetFile(self.intervals.files[flow])
                    for g in range(f.metadata.num_row_groups):  # as spooled: bounded pieces
                        w.write_table(f.read_row_group(g, use_threads=False))
                w.write_table(tail.filter(pc.equal(tail.column("flow"), flow)))
        return path

    def close(self) -> None:
        self.traces.close()
        self.intervals.close()
        self._remove()


_MAX_JSON = 64 << 20  # a summary of 4 096 flows is ~10 MB


def json_file(path: Path, kind: type) -> Any:
    """A JSON file lasthop wrote, of top-level `kind`; OutputError naming it otherwise (also
    for a FIFO or device in its place, which is never opened, and a file over 64 MiB)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise OutputError(f"{path}: not a regular file; the directory is damaged: run the scenario again")
        with open(path, "rb") as f:
            data = f.read(_MAX_JSON + 1)
        if len(data) > _MAX_JSON:
            raise OutputError(f"{path}: over {_MAX_JSON >> 20} MiB, larger than any JSON lasthop writes; the directory is damaged")
        value = json.loads(data)
    except (OSError, ValueError) as e:
        if isinstance(e, OutputError):
            raise
        raise OutputError(f"{path}: not readable as the JSON lasthop writes ({e}); the directory is damaged: run the scenario again") from None
    if not isinstance(value, kind):
        raise OutputError(f"{path}: a JSON {type(value).__name__} where lasthop writes an object; the directory is damaged: run the scenario again")
    return value


@contextlib.contextmanager
def reading(path: Path | str, what: str = "table"):
    """Reading the `what` ("table", "summary") at `path` of a results directory: what a damaged
    file makes pyarrow, or the code using the values read, raise becomes one OutputError naming
    the file (and the exception, so that a bug of lasthop's own still shows as one)."""
    try:
        yield
    except OutputError:
        raise
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError, pa.ArrowException) as e:
        raise OutputError(f"{path}: unreadable as the {what} lasthop writes ({type(e).__name__}: {str(e)[:200]}); "
                          "the directory is damaged: run the scenario again") from None


# Top-level numbers of a summary that readers compute with.
_SUMMARY_NUMBERS = ("simulated_s",)


def read_summary(d: Path) -> dict:
    """summary.json of run directory `d`, checked to hold what readers rely on (a list of flows,
    each an object with a name); OutputError naming the file otherwise."""
    path = d / "summary.json"
    summary = json_file(path, dict)
    flows = summary.get("flows")
    if not isinstance(flows, list) or not all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in flows):
        raise OutputError(f"{path}: no list of named flows; the directory is damaged: run the scenario again")
    for key in _SUMMARY_NUMBERS:
        v = summary.get(key, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise OutputError(f"{path}: {key} is {v!r}, not a number of seconds; the directory is damaged: run the scenario again")
    try:  # every reader tabulates the flows: a value of the wrong type is named here
        flows_table(summary)
    except (ValueError, TypeError, AttributeError, OverflowError, pa.ArrowException) as e:
        raise OutputError(f"{path}: a flow's values are not of the types lasthop writes ({type(e).__name__}: "
                          f"{str(e)[:200]}); the directory is damaged: run the scenario again") from None
    return summary


def run_damage(d: Path) -> str | None:
    """What is wrong with the finished run in directory `d` (its summary.json or intervals.parquet
    missing, unreadable or foreign), None if nothing is."""
    try:
        read_summary(d)
        _check_table("intervals", d / "intervals.parquet")
    except OutputError as e:
        return str(e)
    return None


# Columns every table of a kind has (what readers rely on): by the table name's first part.
_REQUIRED_COLUMNS = {"intervals": ("flow", "t_start_s"), "delay_cdf": ("flow", "quantile", "delay_ms"),
                     "tcp": ("time_s",), "queue": ("time_s", "packets"), "wlan": ("time_s", "packets"),
                     "rates": ("time_s", "from", "to", "mcs", "rate_mbps"), "packets": ("pkt_seq", "sent_s")}
_TEXT_COLUMNS = {"flow", "from", "to"}



def table_files(d: Path) -> dict[str, Path]:
    """The tables of run directory `d` — its intervals and the traces its index lists — each
    checked to be a Parquet file with the columns lasthop writes; OutputError naming the file and
    what is wrong otherwise (a missing, truncated or foreign file, an unreadable index)."""
    index_file = d / "traces" / "index.json"
    if index_file.exists():
        index = json_file(index_file, dict)
    else:  # written before the index existed: every trace file there
        index = {p.stem: p.stem for p in sorted((d / "traces").glob("*.parquet"))}
    files = {}
    for stem, name in index.items():
        if not isinstance(name, str) or not isinstance(stem, str) or "/" in stem or stem.startswith("."):
            raise OutputError(f"{index_file}: entry {stem!r}: {name!r} is not a trace of this directory; the directory is damaged")
        files[name] = d / "traces" / f"{stem}.parquet"
    files["intervals"] = d / "intervals.parquet"
    for name, path in files.items():
        _check_table(name, path)
    return files


def _check_table(name: str, path: Path) -> None:
    damaged = "the directory is damaged: run the scenario again"
    if not path.is_file():
        listed = "the run writes it" if name == "intervals" else "traces/index.json lists it"
        what = "not a regular file" if path.exists() else "missing"
        raise OutputError(f"{path}: {what}, though {listed}; {damaged}")
    try:
        schema = pq.read_schema(path)
    except Exception as e:  # noqa: BLE001 - pyarrow's errors for a file that is no Parquet vary
        raise OutputError(f"{path}: not a Parquet file lasthop wrote ({type(e).__name__}); {damaged}") from None
    kind = name.split("/")[0]
    required = _REQUIRED_COLUMNS.get(kind, ())
    missing = [c for c in required if c not in schema.names]
    if missing:
        raise OutputError(f"{path}: lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} of the {kind} table; {damaged}")
    # The intervals table is numbers throughout but for its flow names.
    for c in schema.names if kind == "intervals" else required:
        t = schema.field(c).type
        text = c in _TEXT_COLUMNS
        if text != (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)) or \
                (not text and not (pa.types.is_integer(t) or pa.types.is_floating(t))):
            raise OutputError(f"{path}: column {c} is {t}, not the {'text' if text else 'numbers'} of the {kind} table; {damaged}")


class Results:
    """One run's results. ``summary`` is a dict; ``flows``, ``intervals`` and ``trace(name)`` are
    DataFrames."""

    def __init__(self, summary: dict, tables: dict[str, pa.Table], directory: Path | None = None):
        self.summary = summary
        self._tables = tables
        self.directory = directory
        # pcap captures requested with run(..., pcap=[...]): file name -> bytes
        # pcap files: their bytes, or the file a streamed capture was written to.
        self.pcaps: dict[str, bytes | Path] = {}
        # files copied in as they are (a measured run's records): relative name -> source path
        self.files: dict[str, Path] = {}
        # traces kept in Parquet files rather than in memory (a measured run's per-packet
        # tables, streamed as they were computed): trace name -> file
        self.trace_files: dict[str, Path] = {}
        self._spool: RunSpool | None = None  # where trace_files are, until written elsewhere

    @property
    def flows(self) -> pd.DataFrame:
        return flows_frame(self.summary)

    @property
    def intervals(self) -> pd.DataFrame:
        return self.table("intervals").to_pandas()

    @property
    def traces(self) -> list[str]:
        return [n for n in self._tables if n != "intervals"] + [n for n in self.trace_files if n not in self._tables and n != "intervals"]

    def table(self, name: str) -> pa.Table:
        """The Arrow table `name` ("intervals" or a trace's name), read from its file if it is
        kept in one."""
        if name in self._tables:
            return self._tables[name]
        with reading(self.trace_files[name]):
            return pq.read_table(self.trace_files[name])

    def table_columns(self, name: str) -> list[str]:
        """The column names of table `name`, without reading its rows."""
        if name in self._tables:
            return self._tables[name].schema.names
        with reading(self.trace_files[name]):
            return pq.read_schema(self.trace_files[name]).names


    def trace(self, name: str) -> pd.DataFrame:
        """A requested trace by name (``"tcp/bulk"``, ``"queue/bottleneck:router->receiver"``)
        or by file stem; a link name alone (``"bottleneck"``) works when it is unambiguous."""
        if name in self._tables or name in self.trace_files:
            return self.table(name).to_pandas()
        matches = [n for n in self.traces if trace_file_stem(n) == name or n.startswith(f"queue/{name}:")]
        if len(matches) == 1:
            return self.table(matches[0]).to_pandas()
        raise KeyError(f"no trace {name!r}; available: {', '.join(self.traces) or 'none (add [probes] to the scenario)'}")

    def flow(self, name: str) -> dict:
        for f in self.summary["flows"]:
            if f["name"] == name:
                return f
        raise KeyError(f"no flow {name!r}; flows: {', '.join(f['name'] for f in self.summary['flows'])}")

    def write(self, directory: str | Path, *, force: bool = False, report: bool = False, png: bool = False,
              progress=None) -> Path:
        """Writes the results directory (and, with `report`, report.html in it; with `png` also
        figures/*.png and *.svg, drawn with matplotlib) atomically; see lasthop.files for where
        lasthop agrees to write and what `force` does. `progress(done, total, what)` is called as
        the report's figures are prepared."""

        placed: dict[str, str] = {}

        def fill(d: Path) -> None:
            placed.update(self._write_files(d))
            if report:
                from lasthop.report import run_report

                run_report(d, results=self, progress=progress, png=png)

        d = write_atomically(directory, "run", fill, force=force)
        self.directory = d
        # The tables kept in files are read from the results directory from now on (the files
        # they were spooled to may go).
        self.trace_files = {name: Path(d) / rel for name, rel in placed.items() if name in self.trace_files}
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        return d

    def _write_files(self, d: Path) -> dict[str, str]:
        """Writes the run's files into `d`; returns each table's file relative to `d`."""
        (d / "traces").mkdir()
        (d / "summary.json").write_text(json.dumps({"format": RUN_FORMAT, **self.summary}, indent=2) + "\n")
        pq.write_table(flows_table(self.summary), d / "flows.parquet")
        self._write_table("intervals", d / "intervals.parquet")
        placed = {"intervals": "intervals.parquet"}
        index = {}
        for name in self.traces:
            stem = trace_file_stem(name)
            if stem in index:  # two names made the same by safe_name: the hash tells them apart
                stem = f"{stem}-{name_digest(name)}"
            index[stem] = name
            placed[name] = f"traces/{stem}.parquet"
            self._write_table(name, d / placed[name])
        (d / "traces" / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        for name, data in self.pcaps.items():
            if isinstance(data, Path):
                shutil.copyfile(data, d / safe_name(name))
            else:
                (d / safe_name(name)).write_bytes(data)
        for rel, src in self.files.items():
            dest = d.joinpath(*(safe_name(part) for part in rel.split("/")))
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        return placed

    def _write_table(self, name: str, dest: Path) -> None:
        """Table `name` as the Parquet file `dest`: written from memory, or its file linked (the
        same data, no copy, when both are on one file system) or copied."""
        if name in self._tables:
            pq.write_table(self._tables[name], dest, **parquet_options(self._tables[name].schema))
            return
        try:
            os.link(self.trace_files[name], dest)
        except OSError:
            shutil.copyfile(self.trace_files[name], dest)

    @classmethod
    def load(cls, directory: str | Path) -> "Results":
        """A results directory written by :meth:`write`. Only the traces its index lists are
        read, so no file from another run can be mistaken for one of this run."""
        from lasthop.files import directory_kind

        d = Path(directory)
        if directory_kind(d) != "run":
            raise OutputError(f"{d}: not a lasthop run results directory (no summary.json written by lasthop run)")
        summary = read_summary(d)
        summary.pop("format", None)
        res = cls(summary, {}, d)
        # Read when asked for (a long run's traces can be larger than memory wants); checked
        # now, so that a damaged file is named here rather than failing a reader later.
        res.trace_files = table_files(d)
        return res

    def __repr__(self) -> str:
        names = ", ".join(f["name"] for f in self.summary["flows"])
        return f"<Results {self.summary.get('scenario_name')!r} seed={self.summary.get('seed')} flows=[{names}]>"
