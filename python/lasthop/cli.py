"""The ``lasthop`` command line (typer + rich).

Whatever the input, a command ends with its results or with one line per problem, ``error:``
and a message naming the file or argument, the field, the value and what is valid, and exit
code 2 (1: a sweep some of whose runs failed). A Python traceback is a bug: :func:`main` turns
one into a single line asking for a report (LASTHOP_TRACEBACK=1 shows it).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from lasthop import _core
from lasthop.errors import OutputError, ScenarioError, SimulationError
from lasthop.files import check_output, directory_kind, replace_file, safe_name
from lasthop.results import world_of
from lasthop.runner import as_scenario, run as run_scenario

app = typer.Typer(no_args_is_help=True, help="lasthop: TCP and UDP over wireless last hops.")
console = Console()
if not console.is_terminal:
    # Piped output (CI logs, files): wide enough for the summary table not to be truncated.
    console = Console(width=160)
err = Console(stderr=True, soft_wrap=True)

# The errors a user's input can cause; anything else reaching main() is a bug.
USER_ERRORS = (ScenarioError, SimulationError, OutputError)


def _error(message: object, code: int = 2) -> typer.Exit:
    """Prints `message` as error lines (names from scenarios are shown literally, never as rich
    markup) and returns the Exit to raise."""
    for line in str(message).split("\n"):
        err.print(f"[red]error:[/red] {escape(line)}", highlight=False)
    return typer.Exit(code)


def _parse_sets(sets: List[str]) -> dict[str, str]:
    out = {}
    for s in sets:
        if "=" not in s:
            raise _error(f"--set {s!r}: expected dotted.path=value, e.g. links.bottleneck.rate=20Mbps")
        k, v = s.split("=", 1)
        out[k.strip()] = v.strip()
    return out


class _SinceColumn(ProgressColumn):
    """Time since the command started (rich's elapsed column restarts with each phase)."""

    def __init__(self, t0: float) -> None:
        super().__init__()
        self.t0 = t0

    def render(self, task) -> Text:
        s = int(time.perf_counter() - self.t0)
        return Text(f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}", style="progress.elapsed")


class _LazyProgress:
    """One progress bar for a whole command (simulating, writing the results, drawing the
    report), shown once the command has taken more than a second: short runs print nothing
    more. The bar and the estimate of time left are per phase (simulated seconds, figures);
    the elapsed time is the command's."""

    def __init__(self, t0: float | None = None) -> None:
        self.t0 = time.perf_counter() if t0 is None else t0
        self.bar: Progress | None = None
        self.task = None
        self.phase: str | None = None

    def __call__(self, now: float, end: float) -> None:  # the runner's progress(now_s, end_s)
        if now < end:
            self.update("simulating", now, end, f"{now:.1f}/{end:.1f} s simulated")
        else:  # the last step: the engine hands over its tables
            self.update("collecting results", 0, None, f"{end:.1f} s simulated")

    def writing(self) -> None:
        self.update("writing results", 0, None, "")

    def report(self, done: int, total: int, what: str) -> None:  # the report's progress(done, total, what)
        self.update(what, done, total, f"figure {done}/{total}")

    def update(self, phase: str, completed: float, total: float | None, detail: str) -> None:
        if self.bar is None:
            if time.perf_counter() - self.t0 < 1.0:
                return
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                                _SinceColumn(self.t0), TimeRemainingColumn(), console=err, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(phase, total=total, detail=detail)
        if phase != self.phase:  # a new phase: its own bar and estimate
            self.bar.reset(self.task, total=total, completed=completed, description=phase, detail=detail)
            self.phase = phase
        self.bar.update(self.task, completed=completed, detail=detail)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _complete_bundled(incomplete: str) -> list[str]:
    """Shell completion of a scenario argument: bundled names (the shell completes file names when none match)."""
    return [n for n in _core.bundled_names() if n.startswith(incomplete)]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"lasthop {_core.__version__}")
        raise typer.Exit()


@app.callback()
def _lasthop(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print lasthop's version and exit."),
) -> None:
    """lasthop: TCP and UDP over wireless last hops."""


def _fmt(v, scale=1.0, digits=2) -> str:
    return "–" if v is None else f"{v * scale:.{digits}f}"


def _ms(v) -> str:
    from lasthop.report.text import eng

    return "–" if v is None else eng(v / 1e3, "s")


def _bps(v) -> str:
    from lasthop.report.text import eng

    return eng(v, "b/s")


# The summary's columns, most wanted first: a narrower terminal drops them from the end of
# this list (summary.json and `--json` keep every value). (header, justify, value of a flow)
SUMMARY_COLUMNS = [
    ("flow", "left", lambda f: f["name"]),
    ("goodput", "right", lambda f: _bps(f["goodput_bps"])),
    ("loss", "right", lambda f: _fmt(f["loss_ratio"], 100.0, 2) + " %"),
    ("delay", "right", lambda f: _ms(f["delay_ms"]["mean"])),
    ("jitter", "right", lambda f: _ms(f["jitter_ms"]["mean"])),
    ("delay p99", "right", lambda f: _ms(f["delay_ms"]["p99"])),
    ("proto", "left", lambda f: f["transport"]),
    ("lost", "right", lambda f: str(f["lost_packets"])),
    ("sent", "right", lambda f: str(f["sent_packets"])),
    ("recv", "right", lambda f: str(f["received_packets"])),
    ("jitter p99", "right", lambda f: _ms(f["jitter_ms"]["p99"])),
    ("rx", "right", lambda f: _bps(f["throughput_rx_bps"])),
]
# The order they are shown in.
SUMMARY_ORDER = ["flow", "proto", "goodput", "rx", "sent", "recv", "lost", "loss", "delay", "delay p99", "jitter", "jitter p99"]


def _padded_width(header: str, cells: list[str]) -> int:
    """A column's width in a rich table: its widest cell or header, with padding and border."""
    return max([len(header), *(len(c) for c in cells)]) + 3


def _columns_that_fit(widths: list[int], width: int, at_least: int) -> int:
    """How many of the columns (their widths, most wanted first) fit in `width` terminal
    columns; never fewer than `at_least`."""
    kept = len(widths)
    while kept > at_least and 1 + sum(widths[:kept]) > width:
        kept -= 1
    return kept


def _left_out(width: int, names: list[str], where: str) -> str | None:
    """A table's caption naming the columns left out at `width`, and where they are."""
    return f"left out at {width} columns: {', '.join(names)} ({where} has them)" if names else None


def summary_table(s: dict, width: int) -> Table:
    """The per-flow summary of run summary `s` in at most `width` columns: units scaled per
    value (9.08 Mb/s, 64 kb/s, 101 ms, 550 µs, as iperf3 and flent print them), and the least
    wanted columns left out (and named in the caption) when the table would not fit."""
    headers = [h for h, _, _ in SUMMARY_COLUMNS]
    cells = {h: [get(f) for f in s["flows"]] for h, _, get in SUMMARY_COLUMNS}
    fit = _columns_that_fit([_padded_width(h, cells[h]) for h in headers], width, 2)
    kept, left_out = headers[:fit], headers[fit:]
    wall = s["wall_clock"]
    caption = _left_out(width, left_out, "summary.json")
    t = Table(title=Text(f"{s['scenario_name']} — seed {s['seed']}, {s['simulated_s']:g} s {world_of(s)} in {wall['wall_time_s']:.3f} s"),
              caption=caption)
    justify = {h: j for h, j, _ in SUMMARY_COLUMNS}
    shown = [h for h in SUMMARY_ORDER if h in kept]
    for h in shown:
        t.add_column(h, justify=justify[h], no_wrap=True)
    for row in range(len(s["flows"])):
        t.add_row(*(Text(cells[h][row]) for h in shown))
    return t


def sweep_table(res, width: int) -> Table:
    """Per grid point and flow of a sweep: the seeds' mean of goodput (± the 95 % interval's
    half-width), loss and delay, units scaled per value; `n` runs behind each mean. The grid's
    parameters lead (long paths shortened to their last part); columns that do not fit in
    `width` are left out from the end and named."""
    metrics = [("goodput", "goodput_bps", _bps), ("loss", "loss_ratio", lambda v: _fmt(v, 100.0, 2) + " %"),
               ("delay", "delay_mean_ms", _ms), ("delay p99", "delay_p99_ms", _ms)]
    by = list(res.params)
    agg = {column: res.aggregate(column) for _, column, _ in metrics}
    base = agg["goodput_bps"]
    headers = [p.rsplit(".", 1)[-1] for p in by] + ["flow", "n"] + [h for h, _, _ in metrics]
    rows = []
    for i in range(len(base)):
        row = [str(base[p].iloc[i]) for p in by] + [str(base["name"].iloc[i]), str(int(base["n"].iloc[i]))]
        for h, column, fmt in metrics:
            a = agg[column].iloc[i]
            value = None if math.isnan(a["mean"]) else float(a["mean"])
            cell = fmt(value)
            if h == "goodput" and value is not None and not math.isnan(a["ci95"]) and a["ci95"] > 0:
                cell += f" ± {_bps(float(a['ci95']))}"
            row.append(cell)
        rows.append(row)
    kept = _columns_that_fit([_padded_width(h, [r[k] for r in rows]) for k, h in enumerate(headers)], width, len(by) + 2)
    t = Table(title=Text(f"{res.directory.name}: mean over seeds per grid point"), caption=_left_out(width, headers[kept:], "flows.parquet"))
    for k, h in enumerate(headers[:kept]):
        t.add_column(h, justify="left" if k < len(by) + 1 else "right", no_wrap=True)
    for r in rows:
        t.add_row(*(Text(c) for c in r[:kept]))
    return t


def wlan_lines(s: dict) -> list[str]:
    """One line per 802.11n/ac/ax WLAN of run summary `s`: how busy the medium was, each
    station's share of the airtime (its frames and the AP's to it) and Jain's index of them."""
    lines = []
    for w in s.get("wlans", []):
        shares = [(m["node"], m["aggregation"]["station_airtime_share"]) for m in w["members"]
                  if m.get("aggregation") and m["aggregation"]["station_airtime_share"] > 0]
        if not shares:
            continue
        parts = ", ".join(f"{node} {100 * share:.1f} %" for node, share in shares)
        jain = w.get("airtime_fairness")
        lines.append(f"WLAN {w['name']}: busy {100 * w['busy_share']:.1f} % of the time; airtime per station {parts}"
                     + (f"; Jain's fairness index {jain:.3f}" if jain is not None else ""))
    return lines


def round_trip_lines(s: dict) -> list[str]:
    """One line per echo flow of run summary `s`: its round trips and responsiveness."""
    from lasthop.stats import rpm_category

    lines = []
    for f in s["flows"]:
        rt = f.get("round_trip")
        if not rt or rt["rpm"] is None:
            continue
        d = rt["rtt_ms"]
        lines.append(f"round trips of {f['name']}: mean {_ms(d['mean'])}, p95 {_ms(d['p95'])}, p99 {_ms(d['p99'])}; "
                     f"responsiveness {rt['rpm']:.0f} RPM ({rpm_category(rt['rpm'])}; 60 000 / the best 95 %'s mean "
                     f"{_ms(rt['trimmed_mean_ms'])}); {rt['echoes_lost']} lost")
    return lines


def print_summary(res) -> None:
    console.print(summary_table(res.summary, console.width))
    for line in round_trip_lines(res.summary) + wlan_lines(res.summary):
        console.print(Text(line))


@app.command()
def run(
    file: Optional[str] = typer.Argument(None, help="Scenario TOML file or bundled name (default: the bundled dumbbell).",
                                         autocompletion=_complete_bundled),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Results directory (default: results/<scenario>)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Overrides simulation.seed."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: dotted.path=value (repeatable)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the summary table."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html (figures drawn by the browser, offline)."),
    png: bool = typer.Option(False, "--png", help="The figures also as files, figures/*.png and *.svg, drawn with matplotlib (for slides and papers)."),
    pcap: List[str] = typer.Option([], "--pcap", help="Capture what crosses NODE (or NODE:NEIGHBOUR) into <out>/<node>.pcap (repeatable)."),
    force: bool = typer.Option(False, "--force", help="Write into --out even if it is a non-empty directory that is not a lasthop run directory."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout and nothing else there (like iperf3 -J)."),
) -> None:
    """Run one scenario: print a per-flow summary and write a results directory."""
    overrides = _parse_sets(set_)
    if seed is not None:
        overrides["simulation.seed"] = str(seed)
    progress = _LazyProgress()
    try:
        sc = as_scenario(file, **overrides)
        directory = out or Path("results") / safe_name(sc.name)
        check_output(directory, "run", force)  # before the run, not after it
        try:
            res = run_scenario(sc, progress=progress, pcap=pcap, spool_beside=directory)
            progress.writing()
            res.write(directory, force=force, report=report, png=png, progress=progress.report)
        finally:
            progress.close()
    except USER_ERRORS as e:
        raise _error(e)
    if json_out:  # the file itself, so that stdout and summary.json never differ
        sys.stdout.write((directory / "summary.json").read_text(encoding="utf-8"))
        return
    if not quiet:
        print_summary(res)
    extra = "".join(f", {n}" for n in res.pcaps)
    n = len(res.traces)
    console.print(Text(f"results: {directory}/ (summary.json, flows, intervals, {n} trace{'' if n == 1 else 's'}{extra})"))
    if report:
        console.print(Text(f"report:  {directory / 'report.html'}"))
    if report and png:
        _warn_if_not_drawn("no figure files (--png)")


def _warn_if_not_drawn(what: str = "report without figures") -> None:
    """One line on stderr when figures that need matplotlib were asked for and it is missing
    (report.html draws its own figures in the browser: only --png and `lasthop compare` need it)."""
    from lasthop.report import plotting_missing

    missing = plotting_missing()
    if missing is not None:
        err.print(f"[yellow]warning:[/yellow] {what}: {escape(missing)}", highlight=False)


def _int_range(text: str) -> list[int]:
    if ".." in text:
        lo, hi = text.split("..", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(x) for x in text.split(",")]


@app.command()
def bianchi(
    phy: str = typer.Option("802.11b", "--phy", help="802.11b or 802.11g."),
    stations: str = typer.Option("1..50", "--stations", help="A range (1..50) or a list (1,5,10)."),
    size: int = typer.Option(1500, "--size", help="MSDU size in bytes."),
    rts: bool = typer.Option(False, "--rts", help="RTS/CTS access instead of basic access."),
    tc: str = typer.Option("bianchi", "--tc", help="Collision time: 'bianchi' (DATA + DIFS, the paper) or 'eifs' (DATA + EIFS)."),
    preamble: str = typer.Option("long", "--preamble", help="802.11b preamble: long or short."),
    slot: str = typer.Option("short", "--slot", help="802.11g slot: short or long."),
) -> None:
    """Bianchi's analytic saturation throughput and collision probability (JSAC 2000)."""
    from lasthop.models import bianchi as model, phy_timing

    try:
        ns = _int_range(stations)
        timing = phy_timing(phy, preamble=preamble, slot=slot)
        if tc not in ("bianchi", "eifs"):
            raise ValueError(f"--tc {tc!r}: valid are 'bianchi' and 'eifs'")
        if not ns or min(ns) < 1:
            raise ValueError(f"--stations {stations!r}: give positive counts such as 1..50")
    except ValueError as e:
        raise _error(e)
    t = Table(title=f"Bianchi saturation, {phy} {'RTS/CTS' if rts else 'basic access'}, {size} B MSDU, Tc={tc}")
    for col in ["n", "tau", "p (collision)", "S Mb/s"]:
        t.add_column(col, justify="right")
    for n in ns:
        r = model(n, size, timing, rts=rts, tc=tc)
        t.add_row(str(n), f"{r.tau:.5f}", f"{r.p:.4f}", f"{r.throughput_bps / 1e6:.3f}")
    console.print(t)


@app.command()
def sweep(
    file: str = typer.Argument(..., help="Scenario TOML file or bundled name.", autocompletion=_complete_bundled),
    grid: List[str] = typer.Option([], "--grid", help="path=v1,v2,... or path=start..stop:step (repeatable)."),
    seeds: int = typer.Option(1, "--seeds", help="Seeds per grid point (the scenario's seed and the next ones)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Sweep directory (default: results/<scenario>-sweep)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Local worker processes (default: one per core)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask distributed scheduler, e.g. tcp://host:8786."),
    set_: List[str] = typer.Option([], "--set", help="Override a field for every run: dotted.path=value."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html and figures."),
    run_timeout: float = typer.Option(3600.0, "--run-timeout", help="Wall-clock limit of one run in seconds; a run past it is recorded as failed."),
    run_memory: str = typer.Option("4GiB", "--run-memory", help="Address-space limit of each local worker (e.g. 4GiB, 512MB, none)."),
    force: bool = typer.Option(False, "--force", help="Write into --out even if it is a non-empty directory that is not a lasthop sweep directory."),
) -> None:
    """Run the cartesian product of the grids × seeds; cached and resumable."""
    started = time.perf_counter()
    from lasthop.pool import parse_memory
    from lasthop.sweep import SweepError, parse_grid, run_sweep

    try:
        memory = parse_memory(run_memory)
        sc = as_scenario(file, **_parse_sets(set_))
        grids = [parse_grid(g) for g in grid]
        directory = out or Path("results") / f"{safe_name(sc.name)}-sweep"
        check_output(directory, "sweep", force)
    except (*USER_ERRORS, SweepError, ValueError) as e:
        raise _error(e)
    bar = Progress(
        TextColumn("sweep"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} runs"),
        TextColumn("[red]{task.fields[failed]} failed"),
        TextColumn("{task.fields[cached]} cached"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
    )

    def progress(p) -> None:
        if not bar.tasks:  # the bar appears once the sweep is planned: a bad sweep prints only its error
            bar.start()
            bar.add_task("sweep", total=p.total, completed=p.cached, failed=0, cached=p.cached)
        bar.update(bar.tasks[0].id, completed=p.cached + p.done + p.failed, failed=p.failed)

    try:
        res = run_sweep(sc, grids, seeds, directory, workers=workers, scheduler=scheduler, progress=progress,
                        run_timeout_s=run_timeout, run_memory=memory, force=force)
    except (*USER_ERRORS, SweepError) as e:
        raise _error(e)
    finally:
        if bar.tasks:  # stopping a bar never started prints an empty line after the error
            bar.stop()
    if report:
        from lasthop.report import sweep_report

        report_progress = _LazyProgress(started)
        try:
            sweep_report(directory, progress=report_progress.report)
        finally:
            report_progress.close()
    for why in res.rerun.values():
        err.print(f"[yellow]warning:[/yellow] {escape(why.split('; ')[0])}; the cached run was damaged and ran again", highlight=False)
    if len(res.flows):
        console.print(sweep_table(res, console.width))
    console.print(Text(f"sweep: {directory}/ ({len(res.flows)} flow rows, {len(res.failed)} failed runs)"))
    seeds_warning = res.seeds_warning()
    if seeds_warning:
        err.print(f"[yellow]warning:[/yellow] {escape(seeds_warning)}", highlight=False)
    if len(res.failed):
        console.print(Text(res.failed.drop(columns=["run_id"]).to_string(index=False)))
        raise typer.Exit(1)


@app.command()
def report(directory: Path = typer.Argument(..., help="A results directory of `lasthop run` or `lasthop sweep`."),
           png: bool = typer.Option(False, "--png", help="The figures also as files, figures/*.png and *.svg, drawn with matplotlib (for slides and papers).")) -> None:
    """Regenerate report.html of a results directory (with --png the figure files too)."""
    from lasthop.report import run_report, sweep_report

    kind = directory_kind(_results_dir(directory))  # a missing or foreign directory: one error line
    progress = _LazyProgress()
    try:
        if kind == "sweep":
            path = sweep_report(directory, progress=progress.report, png=png)
        elif kind == "run":
            path = run_report(directory, progress=progress.report, png=png)
    finally:
        progress.close()
    if kind not in ("sweep", "run"):
        raise _error(f"{directory}: not a lasthop results directory: neither summary.json (a run) nor sweep.json (a sweep) "
                     "written by lasthop is there")
    console.print(Text(f"report: {path}"))
    if png:
        _warn_if_not_drawn("no figure files (--png)")


@app.command()
def compare(
    directories: List[Path] = typer.Argument(..., help="Results directories of lasthop run or lasthop sweep."),
    metric: List[str] = typer.Option([], "--metric", "-m", help="A flow metric (a column of flows.parquet), repeatable; "
                                     "default goodput_bps, delay_p99_ms, jitter_p99_ms, loss_ratio."),
    flow: List[str] = typer.Option([], "--flow", help="Only this flow (repeatable)."),
    out: Path = typer.Option(Path("results") / "compare", "--out", "-o", help="Where compare.html and figures/ go."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write the table (one row per directory, grid point, flow and metric) as CSV."),
) -> None:
    """Runs and sweeps side by side: a table of flow metrics (sweeps: mean ± 95 % interval over
    seeds) and overlay figures, like flent's plots of several data files."""
    from lasthop.compare import CompareError, metric_table, open_sources, wide_rows, write_figures

    if csv is not None:
        c, o = csv.resolve(), out.resolve()
        if c == o or c == o / "compare.html" or o / "figures" in c.parents:
            raise _error(f"--csv {csv}: --out {out} writes there (compare.html, figures/); give the table a path of its own, "
                         f"e.g. --csv {o.parent / 'compare.csv'}")
    try:
        sources = open_sources(directories)
        table = metric_table(sources, metric or None, flow or None)
    except CompareError as e:
        raise _error(e)
    columns, rows = wide_rows(table)
    t = Table(title=Text("compare: " + " vs ".join(s.label for s in sources)))
    for i, c in enumerate(columns):
        t.add_column(Text(c), justify="right" if i >= len(columns) - len(set(table["metric"])) else "left")
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    console.print(t)
    if csv is not None:
        replace_file(csv, lambda f: table.to_csv(f, index=False))
    page = write_figures(sources, table, out)
    console.print(Text(f"figures: {page} ({out}/figures/)" + (f", table: {csv}" if csv else "")))
    _warn_if_not_drawn()


@app.command()
def plot(
    directories: List[Path] = typer.Argument(..., help="Results directories of lasthop run (several: overlaid)."),
    metric: str = typer.Option(..., "--metric", "-m", help="An interval column (goodput_bps, delay_mean_ms, ...), delay_ms "
                               "(per packet) or a TCP trace column (cwnd_bytes, srtt_ms, ...)."),
    flow: List[str] = typer.Option([], "--flow", help="Only this flow (repeatable)."),
    cdf: bool = typer.Option(False, "--cdf", help="The distribution of the values (CDF) instead of the time series."),
    ccdf: bool = typer.Option(False, "--ccdf", help="The complementary CDF, on a log probability axis."),
    log: bool = typer.Option(False, "--log", help="A logarithmic value axis."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="The figure: .png, .svg or .pdf (default: results/plots/<metric>.png)."),
) -> None:
    """One metric of one or more runs over time, or its CDF/CCDF (like flent's plots)."""
    from lasthop.compare import CompareError
    from lasthop.plot import default_output, plot as draw_plot

    try:
        path = draw_plot(directories, metric, out or default_output(metric, cdf, ccdf), flow or None, cdf=cdf, ccdf=ccdf, log=log)
    except CompareError as e:  # PlotError is one
        raise _error(e)
    console.print(Text(f"figure: {path}"))


EXPORT_FORMATS = {"flent": "flent's .flent.gz (flent -i FILE -p totals plots it)"}


@app.command()
def export(
    directory: Path = typer.Argument(..., help="A results directory of `lasthop run` or `lasthop sweep`."),
    format_: str = typer.Option("flent", "--format", help="flent: flent's .flent.gz data files."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File or directory (default: the run directory; <sweep>/flent/)."),
    flows: Optional[str] = typer.Option(None, "--flows", help="Comma-separated flows to export (default: all, when flent has a test of that shape)."),
) -> None:
    """Export a run, or every run of a sweep, for another tool: flent's .flent.gz, so flent's plots
    and comparisons (flent -i a.flent.gz -i b.flent.gz -p box_combine) work on lasthop data."""
    from lasthop.errors import did_you_mean

    if format_ not in EXPORT_FORMATS:
        raise _error(f"--format {format_!r}: unknown{did_you_mean(format_, EXPORT_FORMATS)}; valid: {', '.join(EXPORT_FORMATS)}")
    from lasthop.flent import FlentExportError, export_flent

    chosen = [f.strip() for f in flows.split(",") if f.strip()] if flows is not None else None
    try:
        written = export_flent(_results_dir(directory), out, chosen)
    except (*USER_ERRORS, FlentExportError) as e:
        raise _error(f"{directory}: {e}" if isinstance(e, FlentExportError) else e)
    for path in written:
        typer.echo(str(path))
    if not written:
        console.print(Text(f"{directory}: no finished run to export"))


@app.command("ditg-dec")
def ditg_dec(
    log: Path = typer.Argument(..., help="A D-ITG binary log (ITGSend -l, ITGRecv -x, ITGLog)."),
    out_file: Optional[Path] = typer.Argument(None, help="With -c: the time-series file (default: combined_stats.dat)."),
    interval: Optional[float] = typer.Option(None, "-c", help="Write ITGDec's combined time series (Time Bitrate Delay Jitter Loss) every MS milliseconds.", metavar="MS"),
    verbose: bool = typer.Option(False, "-v", help="Print the summary also with -c (as ITGDec -v)."),
) -> None:
    """Decode a D-ITG log as ITGDec 2.8.1 does: its summary, every printed number identical
    (its banner lines left out); `-c MS [OUT]` writes its combined_stats.dat. As with ITGDec, -c
    alone prints no summary."""
    from lasthop.ditg import DitgLogError, decode

    if out_file is not None and interval is None:
        raise _error(f"{out_file}: an output file is for the -c time series; give -c MS")
    try:
        text = decode(log, interval, out_file)
    except DitgLogError as e:
        raise _error(e)
    if interval is None or verbose:
        sys.stdout.write(text)


@app.command("import-ditg")
def import_ditg(
    logs: List[Path] = typer.Argument(..., help="SEND.log [RECV.log]: the sender's log (ITGSend -l; a round-trip one of -m rttm is recognised) and the receiver's (-x)."),
    out: Path = typer.Option(..., "--out", "-o", help="Results directory (the layout of `lasthop run`)."),
    receiver_only: bool = typer.Option(False, "--receiver-only", help="The one log given is the receiver's (loss only from sequence gaps, no tail loss)."),
    interval: str = typer.Option("100ms", "--interval", help="Interval of intervals.parquet."),
    transport: str = typer.Option("udp", "--transport", help="The flows' protocol, udp or tcp (D-ITG's log does not record it)."),
    force: bool = typer.Option(False, "--force", help="Write into --out even if it is a non-empty directory that is not a lasthop run directory."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the summary table."),
) -> None:
    """Turn D-ITG binary logs into a lasthop results directory (summary.json, flows.parquet,
    intervals.parquet) computed by lasthop's own meters. With both logs, packets lost after the
    last one received count too (ITGDec never counts them)."""
    from lasthop.ditg import DitgLogError, import_logs

    if not 1 <= len(logs) <= 2 or (receiver_only and len(logs) != 1):
        raise _error("give SEND.log RECV.log, SEND.log alone, or RECV.log with --receiver-only")
    if transport not in ("udp", "tcp"):
        raise _error(f"--transport {transport!r}: expected udp or tcp")
    try:
        value, kind = _core.parse_quantity(interval)
    except ValueError as e:
        raise _error(f"--interval: {e}")
    if kind != "duration":
        raise _error(f"--interval {interval!r}: expected a duration such as 100ms")
    sender, receiver = (None, logs[0]) if receiver_only else (logs[0], logs[1] if len(logs) == 2 else None)
    try:
        check_output(out, "run", force)
        res = import_logs(sender, receiver, interval_s=value, transport=transport, out=out, force=force)
    except (*USER_ERRORS, DitgLogError) as e:
        raise _error(e)
    if not quiet:
        print_summary(res)
    if receiver is None and res.summary["scenario"].get("meter") == "rttm":
        console.print(Text("a round-trip log (ITGSend -m rttm): delays are round trips, as ITGDec reads them"))
    elif receiver is None:
        console.print(Text("sender log only: nothing is known to have been received; give the receiver's log (-x) too"))
    console.print(Text(f"results: {out}/ (summary.json, flows.parquet, intervals.parquet)"))


def _results_dir(directory: Path) -> Path:
    """`directory` if lasthop wrote it (a run or a sweep), else the error: what it is, and the
    directory meant if the name is misspelt."""
    from lasthop.errors import did_you_mean_path

    if directory_kind(directory) is None:
        if not directory.exists():
            raise _error(f"{directory}: no such directory{did_you_mean_path(directory)}")
        raise _error(f"{directory}: not a lasthop results directory: neither summary.json (a run) nor sweep.json (a sweep) "
                     "written by lasthop is there")
    return directory


@app.command()
def reproduce(
    name: Optional[str] = typer.Argument(None, help="A reproduction (see --list)."),
    list_: bool = typer.Option(False, "--list", help="List the reproductions."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Where figures go (default: results/reproduce/<name>)."),
    quick: bool = typer.Option(False, "--quick", help="Fewer variants and seeds (for tests)."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1, help="Run seeds 1..N (default: the reproduction's own)."),
    world: str = typer.Option("sim", "--world", help="sim: the simulator; measure: real Linux sockets on this host (hur-hong2006), each seed one repetition."),
) -> None:
    """Reproduce a paper's result: every number it states beside ours (mean and 95 % interval over
    the seeds), a verdict, figures, and why they differ."""
    from lasthop.reproduce import REGISTRY, display_rows, reproduce as run_repro, world_problem

    if list_ or name is None:
        for n, entry in sorted(REGISTRY.items()):
            worlds = "".join(f", --world {w}" for w in entry.worlds)
            console.print(f"{n:16} {entry.title} (seeds: {entry.seeds}, --quick {entry.quick_seeds}{worlds})")
        return
    if name not in REGISTRY:
        from lasthop.errors import did_you_mean

        raise _error(f"no reproduction {name!r}{did_you_mean(name, REGISTRY)} (available: {', '.join(sorted(REGISTRY))})")
    problem = world_problem(name, world)
    if problem:
        raise _error(problem)
    directory = out or Path("results") / "reproduce" / (name if world == "sim" else f"{name}-{world}")
    r = run_repro(name, directory, quick=quick, seeds=seeds, world=world)
    n = len(r.seeds)
    seeds_text = f"seed {r.seeds[0]}, so no interval (n = 1)" if n == 1 else f"seeds {r.seeds[0]}-{r.seeds[-1]} (n = {n})"
    t = Table(title=f"{r.name}: {r.title} — {seeds_text}", show_lines=True)
    for col, justify, ratio in [("case", "left", 4), ("metric", "left", 2), ("paper", "right", 1), ("ours (mean)", "right", 1),
                                ("95 % interval", "right", 1), ("ours / paper", "right", 1), ("verdict", "left", 2)]:
        t.add_column(col, justify=justify, ratio=ratio, overflow="fold")
    for cells in display_rows(r.table):
        style = "red" if cells[-1].startswith(("opposite", "misses")) else None
        t.add_row(*cells, style=style)
    console.print(t)
    for note in r.notes:
        console.print(f"• {note}")
    replace_file(directory / f"{name}.csv", lambda f: r.table.to_csv(f, index=False))
    console.print(f"figures and table: {directory}/")


@app.command()
def schema(out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to a file instead of stdout.")) -> None:
    """Print the JSON Schema of scenario files."""
    text = _core.json_schema() + "\n"
    if out:
        replace_file(out, text)
    else:
        typer.echo(text, nl=False)


from lasthop.emu_cli import emu_app  # noqa: E402  (the emulate world: lasthop emu run/shell/clean)

app.add_typer(emu_app, name="emu")

trace_app = typer.Typer(no_args_is_help=True, help="Link traces (Mahimahi's mm-link format): show one, or draw a synthetic one.")
app.add_typer(trace_app, name="trace")

SPARK = " ▁▂▃▄▅▆▇█"


def _quantity(text: str, kind: str, option: str) -> float:
    try:
        value, got = _core.parse_quantity(text)
    except ValueError as e:
        raise _error(f"{option} {text!r}: {e}") from None
    if got != kind:
        raise _error(f"{option} {text!r}: a {got}; valid: a {kind}")
    return value


@trace_app.command("show")
def trace_show(
    file: str = typer.Argument(..., help="A trace file (one delivery opportunity of 1504 B per line, in ms), or bundled:traces/NAME."),
    bin_: str = typer.Option("1s", "--bin", help="Width of each capacity bin, e.g. 100ms or 1s."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write time_s,capacity_bps per bin to this file."),
) -> None:
    """A trace's mean capacity and its capacity over one period (what a link following it offers)."""
    from lasthop.report.text import eng

    bin_s = _quantity(bin_, "duration", "--bin")
    if bin_s <= 0:
        raise _error(f"--bin {bin_!r}: valid: a positive duration")
    try:
        n, period_s, mean, capacity = _core.link_trace_summary(file, bin_s)
    except ScenarioError as e:
        raise _error(e) from None
    top = max(capacity) if capacity else 0.0
    console.print(Text(f"{file}: {n} opportunities in {eng(period_s, 's')} (looping), mean {eng(mean, 'b/s')}; "
                       f"per {eng(bin_s, 's')}: min {eng(min(capacity), 'b/s')}, max {eng(top, 'b/s')}"))
    bars = "".join(SPARK[min(len(SPARK) - 1, round(c / top * (len(SPARK) - 1)))] if top > 0 else " " for c in capacity)
    width = max(20, console.width - 2)
    for start in range(0, len(bars), width):
        console.print(Text(bars[start:start + width]))
    if csv is not None:
        rows = "".join(f"{i * bin_s:.9g},{c:.9g}\n" for i, c in enumerate(capacity))
        replace_file(csv, ("time_s,capacity_bps\n" + rows).encode("utf-8"))
        console.print(Text(f"wrote {csv}"))


@trace_app.command("synth")
def trace_synth(
    out: Path = typer.Argument(..., help="The trace file to write."),
    mean: str = typer.Option("12Mbps", "--mean", help="Mean capacity."),
    std: str = typer.Option("4Mbps", "--std", help="Standard deviation of the capacity."),
    correlation: str = typer.Option("1s", "--correlation", help="How long the capacity takes to forget where it was (1/θ)."),
    length: str = typer.Option("30s", "--length", help="The trace's period (it loops)."),
    seed: int = typer.Option(1, "--seed", help="The same seed gives the same trace."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
) -> None:
    """Draw a synthetic cellular trace: a random-walk capacity pulled to its mean (Sprout's model of a
    cellular link, made stationary), Poisson opportunities each millisecond (README, "Trace-driven links")."""
    m, sd = _quantity(mean, "rate", "--mean"), _quantity(std, "rate", "--std")
    corr, span = _quantity(correlation, "duration", "--correlation"), _quantity(length, "duration", "--length")
    if not (1e3 <= m <= 10e9) or not (0 <= sd <= 10 * m) or not (1e-3 <= corr <= 3600) or not (1e-3 <= span <= 86400):
        raise _error("valid: --mean 1kbps..10Gbps, --std 0..10 x the mean, --correlation 1ms..1h, --length 1ms..24h")
    if out.exists() and not force:
        raise _error(f"{out}: exists; add --force to replace it")
    replace_file(out, _core.synthetic_link_trace(m, sd, corr, span, seed).encode("ascii"))
    n, period_s, got, _ = _core.link_trace_summary(str(out), 1.0)
    console.print(Text(f"wrote {out}: {n} opportunities in {period_s:g} s, mean {got / 1e6:.2f} Mb/s (lasthop trace show {out})"))


scenarios_app = typer.Typer(help="The bundled scenarios: list them, or export one as an editable file.")
app.add_typer(scenarios_app, name="scenarios")


@scenarios_app.callback(invoke_without_command=True)
def scenarios(ctx: typer.Context) -> None:
    """List the bundled scenarios, one name a line (`lasthop scenarios export NAME DIR` writes one as a file)."""
    if ctx.invoked_subcommand is None:
        for n in _core.bundled_names():
            typer.echo(n)


@scenarios_app.command("export")
def scenarios_export(
    name: str = typer.Argument(..., help="A bundled scenario (lasthop scenarios lists them).", autocompletion=_complete_bundled),
    directory: Path = typer.Argument(..., help="Where <name>.toml goes (created if missing)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file of that name."),
) -> None:
    """Write a bundled scenario as an editable TOML file, comments and all: run it with `lasthop run DIR/NAME.toml`."""
    from lasthop.errors import did_you_mean

    text = _core.bundled_scenario(name)
    if text is None:
        names = _core.bundled_names()
        raise _error(f"no bundled scenario {name!r}{did_you_mean(name, names)} (bundled: {', '.join(names)})")
    target = directory / f"{name}.toml"
    if directory.exists() and not directory.is_dir():
        raise _error(f"{directory}: is a file, not a directory; give the directory <name>.toml goes into")
    if target.exists() and not force and target.read_bytes() != text.encode("utf-8"):
        raise _error(f"{target}: exists and differs from the bundled {name}; add --force to replace it")
    directory.mkdir(parents=True, exist_ok=True)
    replace_file(target, text.encode("utf-8"))
    console.print(Text(f"wrote {target} (lasthop run {target})"))


@app.command()
def show(
    file: Optional[str] = typer.Argument(None, help="Scenario TOML file or bundled name (default: the bundled dumbbell).",
                                         autocompletion=_complete_bundled),
    field: Optional[str] = typer.Argument(None, help="Only the parameters under this path, e.g. flows.bulk.tcp."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Overrides simulation.seed."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: dotted.path=value (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON list of {path, value, default, doc} instead."),
) -> None:
    """Every parameter of a scenario as it will run, with its default and its doc (like ns-3's --PrintAttributes)."""
    import json

    from lasthop.errors import did_you_mean
    from lasthop.show import format_parameter, parameters

    overrides = _parse_sets(set_)
    if seed is not None:
        overrides["simulation.seed"] = str(seed)
    try:
        params = parameters(as_scenario(file, **overrides))
    except USER_ERRORS as e:
        raise _error(e)
    if field:
        prefix = field.rstrip(".")
        params = [p for p in params if p.path == prefix or p.path.startswith(prefix + ".")]
        if not params:
            paths = [p.path for p in parameters(as_scenario(file, **overrides))]
            heads = sorted({".".join(q.split(".")[:k]) for q in paths for k in range(1, q.count(".") + 2)})
            raise _error(f"{field!r}: no parameter has this path{did_you_mean(prefix, heads)}; "
                         f"the scenario's top-level paths: {', '.join(dict.fromkeys(q.split('.')[0] for q in paths))}")
    if json_out:
        rows = [{"path": p.path, "value": p.value, **({"default": p.default} if p.has_default else {}), "doc": p.doc}
                for p in params]
        typer.echo(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    for p in params:
        for line in format_parameter(p):
            typer.echo(line)


gen_app = typer.Typer(no_args_is_help=True, help="The measure world: send flows over real sockets and measure them (D-ITG style).")
app.add_typer(gen_app, name="gen")


AFFINITY_HELP = ("Run on these CPUs (e.g. 1, 0,2 or 0-1; iperf3's -A): a sender and a receiver on one host keep to different "
                 "CPUs as on two hosts, or the kernel runs the receiver on the sender's CPU and delays departures.")


def _gen_affinity(gen, affinity: Optional[str]) -> None:
    if affinity is not None:
        try:
            gen.set_affinity(affinity)
        except ValueError as e:
            raise _error(e)


@gen_app.command("recv")
def gen_recv(
    listen: str = typer.Option("127.0.0.1:9000", "--listen", help="ADDR:PORT to listen on for senders (loopback by default)."),
    token: Optional[str] = typer.Option(None, "--token", help="Shared secret senders must give; required beyond loopback."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Keep each session's records and counts in OUT/<session>/."),
    once: bool = typer.Option(False, "--once", help="Serve one session, then exit."),
    kernel_timestamps: bool = typer.Option(False, "--kernel-timestamps", help="Use SO_TIMESTAMPNS receive times (across hosts, where the clock is realtime)."),
    realtime: bool = typer.Option(False, "--realtime", help="Receive UDP at SCHED_FIFO priority where permitted, with idle CPUs held at 0 µs wake-up latency (PM QoS) meanwhile."),
    ditg_log: Optional[Path] = typer.Option(None, "--ditg-log", help="Also log the packets received to FILE as a D-ITG binary log (ITGRecv's -l; ITGDec reads it)."),
    max_sessions: int = typer.Option(16, "--max-sessions", min=1, max=1024, help="Sessions served at once; beyond, a sender is told the receiver is busy."),
    handshake_timeout: float = typer.Option(30.0, "--handshake-timeout", help="A connection must say hello and set up within this, s."),
    idle_timeout: float = typer.Option(30.0, "--idle-timeout", help="A running session that hears nothing for this long is over, s (a sender probes every 5 s)."),
    affinity: Optional[str] = typer.Option(None, "--affinity", "-A", help=AFFINITY_HELP),
) -> None:
    """Receive and log what `lasthop gen send` sends, until Ctrl-C or SIGTERM (D-ITG's ITGRecv)."""
    from lasthop import gen

    _gen_affinity(gen, affinity)

    def ready(port: int) -> None:
        host = listen.rsplit(":", 1)[0] if ":" in listen else listen
        err.print(Text(f"listening on {host}:{port} (Ctrl-C to stop)"))

    try:
        summary = gen.recv(listen, token=token, out=out, sessions=1 if once else None, kernel_timestamps=kernel_timestamps, on_ready=ready, realtime=realtime,
                           ditg_log=ditg_log, max_sessions=max_sessions, handshake_timeout=handshake_timeout, idle_timeout=idle_timeout)
    except gen.GenError as e:
        raise _error(e)
    except KeyboardInterrupt:
        summary = {"interrupted": True}
    console.print(Text(f"served {summary.get('sessions', 0)} session(s); {summary.get('malformed', 0)} malformed datagrams dropped"
                       + ("; stopped by a signal" if summary.get("interrupted") else "")))


@gen_app.command("send")
def gen_send(
    to: Optional[str] = typer.Option(None, "--to", help="The receiver, HOST[:PORT] (port 9000 by default)."),
    flows: Optional[Path] = typer.Option(None, "--flows", "-f", help="Flows file: a scenario's flows tables (flows as in a scenario; or a whole scenario)."),
    protocol: Optional[str] = typer.Option(None, "-T", help="D-ITG-like flags for one flow: protocol UDP or TCP (default UDP)."),
    rate: Optional[float] = typer.Option(None, "-C", min=0.001, max=10_000_000, help="Packets per second (default 1000)."),
    size: Optional[int] = typer.Option(None, "-c", min=0, max=65_507, help="Payload bytes (default 512; below 40 raised to the 40-byte header)."),
    duration_ms: Optional[int] = typer.Option(None, "-t", min=1, max=2**40, help="Duration, ms (default 10000)."),
    dest: Optional[str] = typer.Option(None, "-a", help="Destination host (D-ITG's -a), instead of --to."),
    data_port: Optional[int] = typer.Option(None, "-rp", "--data-port", min=1024, max=65_535, help="The receiver's data port (D-ITG's -rp), 1024 to 65535 (the receiver refuses privileged ports); ephemeral by default."),
    duration: Optional[float] = typer.Option(None, "--duration", min=0.001, help="Run length, s (overrides the flows file's)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Results directory (default: results/<flows>)."),
    meter: str = typer.Option("owd", "--meter", "-m", help="owd: one-way delay; rtt: also round trip, the receiver echoing each UDP datagram."),
    token: Optional[str] = typer.Option(None, "--token", help="The receiver's shared secret."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, max=2**64 - 1, help="Seed of the flows' random streams (overrides the file's)."),
    loss_timeout: float = typer.Option(1.0, "--loss-timeout", min=0.0, help="A packet not received this long after the end is lost, s."),
    packets: bool = typer.Option(True, "--packets/--no-packets", help="Write per-packet tables of both ends."),
    realtime: bool = typer.Option(False, "--realtime", help="Pace at SCHED_FIFO priority where permitted (steadier on a busy machine), with idle CPUs held at 0 µs wake-up latency (PM QoS, /dev/cpu_dma_latency; root) meanwhile: a halted virtual CPU wakes the pacer late."),
    ditg_log: Optional[Path] = typer.Option(None, "--ditg-log", help="Also log the packets sent to FILE as a D-ITG binary log (ITGSend's -l; ITGDec reads it)."),
    spin_us: Optional[float] = typer.Option(None, "--spin-us", min=0.0, max=10_000.0, help="Spin this long on the clock before each departure instead of sleeping, µs (default 50): more CPU, fewer late departures."),
    gso: Optional[bool] = typer.Option(None, "--gso/--no-gso", help="Send batches of equal-size UDP datagrams as one segmented write (UDP GSO): several times the packet rate, but a qdisc on the way sees a batch as one packet. Default: only towards a loopback address."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html and figures."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the summary table."),
    force: bool = typer.Option(False, "--force", help="Write into --out even if it is a non-empty directory that is not a lasthop run directory."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout and nothing else there."),
    affinity: Optional[str] = typer.Option(None, "--affinity", "-A", help=AFFINITY_HELP),
) -> None:
    """Send flows to a `lasthop gen recv` and measure them; results in the layout of `lasthop run` (D-ITG's ITGSend)."""
    from lasthop import gen

    _gen_affinity(gen, affinity)

    flags = {k: v for k, v in {"protocol": protocol, "rate": rate, "size": size, "duration_ms": duration_ms}.items() if v is not None}
    target = to or dest
    if target is None:
        raise _error("--to HOST[:PORT] (or -a HOST): where `lasthop gen recv` listens")
    if to and dest:
        raise _error("give the receiver once: --to HOST[:PORT] or -a HOST")
    if flows is not None and flags:
        raise _error("--flows FILE or D-ITG-like flags (-T -C -c -t), not both")
    progress = _LazyProgress()

    def show(elapsed: float, total: float, sent: int, planned) -> None:
        if elapsed < total:
            detail = f"{sent} packets" + (f" of {planned}" if planned is not None else "")
            progress.update("sending", elapsed, total, detail)
        else:
            progress.update("waiting for the receiver's records", 0, None, f"{sent} packets sent")

    try:
        text = None if flows is not None else gen.ditg_flows(**flags)
        name = safe_name(flows.stem) if flows is not None else "ditg-flags"
        directory = out or Path("results") / name
        check_output(directory, "run", force)
        try:
            res = gen.send(target, flows, text=text, out=directory, meter=meter, token=token, duration=duration, seed=seed,
                           loss_timeout=loss_timeout, packets=packets, data_port=data_port, realtime=realtime, ditg_log=ditg_log, spin_us=spin_us, gso=gso, progress=show, force=force,
                           report=report, writing=progress.writing, report_progress=progress.report)
        finally:
            progress.close()
    except (gen.GenError, *USER_ERRORS) as e:
        raise _error(e)
    for f in res.summary["measure"]["flows"]:
        for why in f.get("tcp_not_applied", []):
            sys.stderr.write(f"warning: flow {f['name']!r}: {why}\n")
    if json_out:
        sys.stdout.write((directory / "summary.json").read_text(encoding="utf-8"))
        return
    if not quiet:
        print_summary(res)
        m = res.summary["measure"]
        unc = m["clock_offset_uncertainty_ns"] / 1e3
        clock = "one kernel's monotonic clock (exact)" if m["clock"] == "monotonic" else f"realtime clocks, offset {m['clock_offset_ns'] / 1e3:.1f} ± {unc:.1f} µs"
        console.print(Text(f"clock: {clock}; {m['receiver_malformed']} malformed datagrams at the receiver"
                           + ("; interrupted" if m["interrupted"] else "")))
    console.print(Text(f"results: {directory}/ (summary.json, flows.parquet, intervals.parquet, {len(res.traces)} traces, records/"
                       + (", report.html" if report else "") + ")"))


def main() -> None:
    try:
        app()
    except USER_ERRORS as e:  # raised outside a command's own handling
        _error(e)
        sys.exit(2)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        _error(f"{where}{e.strerror or e}")
        sys.exit(2)
    except Exception as e:
        if os.environ.get("LASTHOP_TRACEBACK"):
            raise
        _error(f"internal error, a bug in lasthop ({type(e).__name__}: {e}); please report it with the command "
               "(LASTHOP_TRACEBACK=1 shows the traceback)")
        sys.exit(70)


if __name__ == "__main__":
    main()
