"""Results of one run: the summary (a dict, also ``summary.json``) and tables as pandas
DataFrames (also Parquet files). Layout of a results directory:

    summary.json          resolved scenario, versions, seed, wall time, per-flow and per-link metrics
    flows.parquet         one row per flow (the summary's flows, flattened with "_")
    intervals.parquet     per-flow time series (default 100 ms bins)
    traces/<name>.parquet requested traces: tcp/<flow>, tcp/<flow>/receiver, queue/<link>:<a>-><b>,
                          wlan/<wlan>/<node>, packets/<flow>, and delay_cdf (always)
    traces/index.json     file stem -> trace name (load reads exactly these)
    report.html, figures/ the report (lasthop report DIR regenerates them)
    <node>[-<peer>].pcap  captures requested with pcap=[...]

The directory is written by :func:`lasthop.files.write_atomically`: complete or not at all,
never mixed with an earlier run's files, and only where lasthop may write (see lasthop.files).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lasthop._lazy import LazyModule
from lasthop.errors import OutputError
from lasthop.files import RUN_FORMAT, name_digest, safe_name, write_atomically

np = LazyModule("numpy")
pd = LazyModule("pandas")
pa = LazyModule("pyarrow")
pq = LazyModule("pyarrow.parquet")

# Fields of summary.json that depend on the machine, not on the scenario and seed.
WALL_CLOCK_KEY = "wall_clock"


def trace_file_stem(name: str) -> str:
    """File name for a trace: ``queue/bottleneck:router->receiver`` -> ``queue__bottleneck__router-to-receiver``;
    names from the scenario that are not safe as a file name are made so (lasthop.files.safe_name)."""
    return safe_name(name.replace("->", "-to-").replace("/", "__").replace(":", "__"), max_len=150)


def _column(kind: str, data: Any, valid: bytes | None) -> pa.Array:
    if kind == "str":
        return pa.array(data, type=pa.string())
    arr = np.frombuffer(data, dtype="<f8" if kind == "f64" else "<u8")
    mask = None if valid is None else np.frombuffer(valid, dtype=np.uint8) == 0
    return pa.array(arr, mask=mask)


def tables_from_core(raw: list) -> dict[str, pa.Table]:
    out = {}
    for name, cols in raw:
        out[name] = pa.table({c: _column(kind, data, valid) for c, kind, data, valid in cols})
    return out


def flows_frame(summary: dict) -> pd.DataFrame:
    return pd.json_normalize(summary["flows"], sep="_")


class Results:
    """One run's results. ``summary`` is a dict; ``flows``, ``intervals`` and ``trace(name)`` are
    DataFrames."""

    def __init__(self, summary: dict, tables: dict[str, pa.Table], directory: Path | None = None):
        self.summary = summary
        self._tables = tables
        self.directory = directory
        # pcap captures requested with run(..., pcap=[...]): file name -> bytes
        self.pcaps: dict[str, bytes] = {}

    @property
    def flows(self) -> pd.DataFrame:
        return flows_frame(self.summary)

    @property
    def intervals(self) -> pd.DataFrame:
        return self._tables["intervals"].to_pandas()

    @property
    def traces(self) -> list[str]:
        return [n for n in self._tables if n != "intervals"]

    def trace(self, name: str) -> pd.DataFrame:
        """A requested trace by name (``"tcp/bulk"``, ``"queue/bottleneck:router->receiver"``)
        or by file stem; a link name alone (``"bottleneck"``) works when it is unambiguous."""
        if name in self._tables:
            return self._tables[name].to_pandas()
        matches = [n for n in self.traces if trace_file_stem(n) == name or n.startswith(f"queue/{name}:")]
        if len(matches) == 1:
            return self._tables[matches[0]].to_pandas()
        raise KeyError(f"no trace {name!r}; available: {', '.join(self.traces) or 'none (add [probes] to the scenario)'}")

    def flow(self, name: str) -> dict:
        for f in self.summary["flows"]:
            if f["name"] == name:
                return f
        raise KeyError(f"no flow {name!r}; flows: {', '.join(f['name'] for f in self.summary['flows'])}")

    def write(self, directory: str | Path, *, force: bool = False, report: bool = False, progress=None) -> Path:
        """Writes the results directory (and, with `report`, report.html and figures/ in it)
        atomically; see lasthop.files for where lasthop agrees to write and what `force` does.
        `progress(done, total, what)` is called as the report's figures are drawn."""

        def fill(d: Path) -> None:
            self._write_files(d)
            if report:
                from lasthop.report import run_report

                run_report(d, results=self, progress=progress)

        d = write_atomically(directory, "run", fill, force=force)
        self.directory = d
        return d

    def _write_files(self, d: Path) -> None:
        (d / "traces").mkdir()
        (d / "summary.json").write_text(json.dumps({"format": RUN_FORMAT, **self.summary}, indent=2) + "\n")
        pq.write_table(pa.Table.from_pandas(self.flows, preserve_index=False), d / "flows.parquet")
        pq.write_table(self._tables["intervals"], d / "intervals.parquet")
        index = {}
        for name in self.traces:
            stem = trace_file_stem(name)
            if stem in index:  # two names made the same by safe_name: the hash tells them apart
                stem = f"{stem}-{name_digest(name)}"
            index[stem] = name
            pq.write_table(self._tables[name], d / "traces" / f"{stem}.parquet")
        (d / "traces" / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        for name, data in self.pcaps.items():
            (d / safe_name(name)).write_bytes(data)

    @classmethod
    def load(cls, directory: str | Path) -> "Results":
        """A results directory written by :meth:`write`. Only the traces its index lists are
        read, so no file from another run can be mistaken for one of this run."""
        from lasthop.files import directory_kind

        d = Path(directory)
        if directory_kind(d) != "run":
            raise OutputError(f"{d}: not a lasthop run results directory (no summary.json written by lasthop run)")
        summary = json.loads((d / "summary.json").read_text())
        summary.pop("format", None)
        tables = {"intervals": pq.read_table(d / "intervals.parquet")}
        index_file = d / "traces" / "index.json"
        if index_file.exists():
            index = json.loads(index_file.read_text())
        else:  # written before the index existed: every trace file there
            index = {p.stem: p.stem for p in sorted((d / "traces").glob("*.parquet"))}
        for stem, name in index.items():
            tables[name] = pq.read_table(d / "traces" / f"{stem}.parquet")
        return cls(summary, tables, d)

    def __repr__(self) -> str:
        names = ", ".join(f["name"] for f in self.summary["flows"])
        return f"<Results {self.summary.get('scenario_name')!r} seed={self.summary.get('seed')} flows=[{names}]>"
