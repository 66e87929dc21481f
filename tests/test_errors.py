"""Issue 10: every bad input a clear error — no hang, no runaway memory, no file written where it
should not be. Each test reproduces a reported case through the CLI or the Python API and
asserts the one clear error line (or the correct result)."""

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lasthop
from lasthop import OutputError, Results, ScenarioError, SimulationError, _core
from lasthop.errors import clarify
from lasthop.files import directory_kind, safe_name
from lasthop.results import trace_file_stem

from conftest import lasthop_cli

SHORT = ["--set", "simulation.duration=2s", "-q", "--no-report"]
DUMBBELL = _core.bundled_scenario("dumbbell")


def _one_error_line(r) -> str:
    """The command failed with exit code 2 and said so in exactly one line, no traceback."""
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def _tree(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def _bytes(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- 1. results directories


def test_a_write_that_fails_midway_leaves_the_previous_results_and_no_partial_directory(tmp_path, monkeypatch):
    out = tmp_path / "out"
    lasthop.run(duration="2s", out=out)
    before = _bytes(out)
    second = lasthop.run(duration="2s", seed=2)
    original = Results._write_files

    def disk_full_after_writing(self, d):
        original(self, d)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Results, "_write_files", disk_full_after_writing)
    with pytest.raises(OSError, match="No space"):
        second.write(out)
    assert _bytes(out) == before, "the earlier run's directory is untouched"
    with pytest.raises(OSError, match="No space"):
        second.write(tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no partial or temporary directory is left"


def test_a_second_run_in_the_same_directory_leaves_no_file_of_the_first(tmp_path):
    out = tmp_path / "out"
    first = lasthop.run(duration="2s", out=out, pcap=["router"], **{"probes.packets": ["bulk", "voice"]})
    assert {"packets/bulk", "tcp/bulk"} <= set(first.traces) and (out / "router.pcap").exists()
    second = lasthop.run(duration="2s", out=out, **{"probes.tcp": [], "probes.queues": []})
    files = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert not [f for f in files if f.endswith(".pcap") or "packets__" in f or "tcp__" in f], files
    # A stray trace file (copied in by hand, or left by a lasthop before the index) is not read.
    (out / "traces" / "tcp__bulk.parquet").write_bytes((out / "traces" / "delay_cdf.parquet").read_bytes())
    assert set(Results.load(out).traces) == set(second.traces) == {"delay_cdf"}


def test_out_into_a_foreign_directory_is_refused_unless_forced(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "summary.json").write_text('{"accounts": 3}\n')
    (foreign / "notes.txt").write_text("mine\n")
    line = _one_error_line(lasthop_cli("run", "--out", str(foreign), *SHORT))
    assert str(foreign) in line and "not a lasthop results directory" in line and "--force" in line
    assert (foreign / "summary.json").read_text() == '{"accounts": 3}\n'
    r = lasthop_cli("run", "--out", str(foreign), "--force", *SHORT)
    assert r.returncode == 0, r.stderr
    assert (foreign / "notes.txt").read_text() == "mine\n", "--force writes beside the files already there"
    assert directory_kind(foreign) == "run"
    # A run does not replace a sweep directory (nor a sweep a run directory) without --force.
    sweep_dir = tmp_path / "sweep"
    sweep_dir.mkdir()
    (sweep_dir / "sweep.json").write_text(json.dumps({"format": "lasthop.sweep/1", "runs": []}))
    with pytest.raises(OutputError, match="is a lasthop sweep directory"):
        lasthop.run(duration="2s", out=sweep_dir)
    with pytest.raises(OutputError, match="is a lasthop run directory"):
        lasthop.sweep("dumbbell", out=foreign, duration="2s")


def test_out_pointing_at_a_file_is_a_clear_error(tmp_path):
    f = tmp_path / "results.txt"
    f.write_text("keep\n")
    for cmd in (["run", "--out", str(f), *SHORT], ["sweep", "dumbbell", "--out", str(f), "--no-report"]):
        line = _one_error_line(lasthop_cli(*cmd))
        assert str(f) in line and "is a file, not a directory" in line
    assert f.read_text() == "keep\n"


# ---------------------------------------------------------------- 2. names become safe file names


def _hostile_scenario() -> str:
    """The default scenario whose names try to leave the results directory: `..`, an absolute
    path, a NUL, 300 characters, mathtext and rich markup."""
    long = "$\\frac{$" + "f" * 292
    return (DUMBBELL.replace('name = "dumbbell"', 'name = "../../escape"')
            .replace('"sender"', '"../../x"')
            .replace('"bottleneck"', '"/tmp/abs-link"')
            .replace('name = "bulk"', f"name = '{long}'")
            .replace('name = "voice"', 'name = "[/red]a\\u0000b"')
            .replace('tcp = ["bulk"]', f"tcp = ['{long}']\npackets = ['{long}', \"[/red]a\\u0000b\"]")
            .replace('duration = "30s"', 'duration = "2s"'))


def test_names_from_a_scenario_never_lead_outside_the_results_directory(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (tmp_path / "hostile.toml").write_text(_hostile_scenario())
    before = _tree(tmp_path)
    r = lasthop_cli("run", "../../hostile.toml", "--pcap", "../../x", "--pcap", "../../x:router", cwd=work)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    created = _tree(tmp_path) - before
    results = work / "results"
    assert created and all(p == results or results in p.parents for p in created), sorted(created)
    (run_dir,) = results.iterdir()
    assert run_dir.name == safe_name("../../escape") and not run_dir.name.startswith(".")
    assert {p.name for p in run_dir.glob("*.pcap")} == {f"{safe_name('../../x')}.pcap", f"{safe_name('../../x')}-router.pcap"}
    assert max(len(p.name) for p in created) <= 200, "every name fits a file system's 255-byte limit"
    res = Results.load(run_dir)
    assert len(res.trace("tcp/" + "$\\frac{$" + "f" * 292)) > 0, "the trace is found by its flow's name"
    assert len(res.trace("packets/[/red]a\x00b")) > 0
    # An absolute simulation.name through --set, and an explicit --out: still nothing outside.
    before = _tree(tmp_path)
    r = lasthop_cli("run", "../../hostile.toml", "--set", f"simulation.name={tmp_path}/abs", "-q", cwd=work)
    assert r.returncode == 0, r.stderr
    assert all(results in p.parents for p in _tree(tmp_path) - before)
    before = _tree(tmp_path)
    r = lasthop_cli("run", "../../hostile.toml", "--out", "out", "--pcap", "../../x", "-q", cwd=work)
    assert r.returncode == 0, r.stderr
    assert all(p == work / "out" or work / "out" in p.parents for p in _tree(tmp_path) - before)


def test_safe_names_keep_ordinary_names_and_separate_the_others():
    for ordinary in ["bulk", "chat-down", "saturation-802.11g-n16-1500B", "N0"]:
        assert safe_name(ordinary) == ordinary
    assert trace_file_stem("queue/bottleneck:router->receiver") == "queue__bottleneck__router-to-receiver"
    made = [safe_name(n) for n in ["..", "../x", "/x", "a\x00b", "a b", "a_b", "", "é", "x" * 300, "x" * 301]]
    assert len(set(made)) == len(made), "two names never share a file"
    for m in made:
        assert "/" not in m and "\x00" not in m and not m.startswith(".") and len(m) <= 111


# ---------------------------------------------------------------- 3. tracebacks become one line


def test_a_scenario_file_that_is_not_utf8_is_one_line_naming_the_place(tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[simulation]\nduration = "2s"\nname = "caf\xe9"\n')
    line = _one_error_line(lasthop_cli("run", str(bad), "--out", str(tmp_path / "out")))
    assert f"{bad}: line 3, column 12: byte 0xe9 is not UTF-8" in line
    assert not (tmp_path / "out").exists()


def test_a_fifo_given_as_a_scenario_is_refused_not_waited_on(tmp_path):
    # open() of a FIFO blocks until a writer comes (issue 24: `lasthop run FIFO` hung).
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "lasthop", "run", str(fifo), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=30)
    line = _one_error_line(r)
    assert f"{fifo}: is a FIFO, not a regular file" in line, line


def test_a_damaged_results_directory_is_one_line_naming_the_file(tmp_path):
    # Results directories are read as untrusted input (issue 24: each of these ended in
    # "internal error"): an empty index, a file that is no Parquet, a foreign table, and an
    # intervals table without rows under a log-scaled CCDF.
    import pyarrow as pa
    import pyarrow.parquet as pq
    import shutil

    good = tmp_path / "good"
    lasthop.run("dumbbell", out=good, duration="2s")

    def damaged(name, harm):
        d = tmp_path / name
        shutil.copytree(good, d)
        harm(d)
        return d

    a = damaged("index", lambda d: (d / "traces" / "index.json").write_text(""))
    line = _one_error_line(lasthop_cli("plot", str(a), "--metric", "goodput_bps", "-o", str(tmp_path / "a.png")))
    assert f"{a / 'traces' / 'index.json'}: not readable as the JSON lasthop writes" in line, line
    b = damaged("garbage", lambda d: (d / "traces" / "tcp__bulk.parquet").write_bytes(b"garbage"))
    line = _one_error_line(lasthop_cli("report", str(b)))
    assert f"{b / 'traces' / 'tcp__bulk.parquet'}: not a Parquet file lasthop wrote" in line, line
    c = damaged("foreign", lambda d: pq.write_table(pa.table({"x": [1]}), d / "intervals.parquet"))
    with pytest.raises(OutputError, match=r"intervals.parquet: lacks the columns flow, t_start_s of the intervals table"):
        Results.load(c)
    e = damaged("empty", lambda d: pq.write_table(pq.read_table(d / "intervals.parquet").slice(0, 0), d / "intervals.parquet"))
    line = _one_error_line(lasthop_cli("plot", str(e), "--metric", "goodput_bps", "--ccdf", "--log", "-o", str(tmp_path / "e.png")))
    assert "--metric goodput_bps: nothing to draw" in line, line


@pytest.mark.parametrize("harm", ["empty-object", "truncated", "empty-intervals", "symlink"])
def test_a_sweep_reruns_a_damaged_cached_run_and_says_so(tmp_path, harm):
    # Issue 24: a sweep resumed over a cached run whose summary.json is {} or truncated, or whose
    # intervals.parquet is empty, died with KeyError: 'flows'. It must run that run again.
    out = tmp_path / "sweep"
    args = ("sweep", "dumbbell", "--grid", "links.bottleneck.rate=5Mbps,10Mbps", "--set", "simulation.duration=1s",
            "--workers", "1", "--no-report", "--out", str(out))
    assert lasthop_cli(*args).returncode == 0
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    victim, kept = runs
    kept_summary = (kept / "summary.json").read_bytes()
    first = json.loads((victim / "summary.json").read_text())
    outside = tmp_path / "outside"
    if harm == "empty-object":
        (victim / "summary.json").write_text("{}")
    elif harm == "truncated":
        (victim / "summary.json").write_bytes((victim / "summary.json").read_bytes()[:100])
    elif harm == "empty-intervals":
        (victim / "intervals.parquet").write_bytes(b"")
    else:  # a run directory replaced by a link to a directory outside the sweep
        import shutil

        shutil.move(victim, outside)
        victim.symlink_to(outside, target_is_directory=True)
    r = lasthop_cli(*args)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("the cached run was damaged and ran again") == 1, r.stderr
    assert str(victim) in r.stderr and "Traceback" not in r.stderr
    assert victim.is_dir() and not victim.is_symlink()
    assert json.loads((victim / "summary.json").read_text())["flows"] == first["flows"], "the same run, run again"
    assert (kept / "summary.json").read_bytes() == kept_summary, "the intact run was not rerun"
    if harm == "symlink":
        assert (outside / "summary.json").exists(), "nothing outside the sweep was removed"
    import pandas as pd

    assert len(pd.read_parquet(out / "flows.parquet")["run_id"].unique()) == 2


def test_a_damaged_sweep_directory_is_one_line_naming_the_file(tmp_path):
    out = tmp_path / "sweep"
    assert lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.rate=5Mbps,10Mbps", "--set", "simulation.duration=1s",
                       "--workers", "1", "--no-report", "--out", str(out)).returncode == 0
    victim = sorted((out / "runs").iterdir())[0]
    (victim / "summary.json").write_text('{"flows": 3}')
    line = _one_error_line(lasthop_cli("report", str(out)))
    assert f"{victim / 'summary.json'}: no list of named flows" in line and "lasthop sweep" in line, line
    meta = json.loads((out / "sweep.json").read_text())
    meta["runs"][0]["run_id"] = "../../../etc"
    (out / "sweep.json").write_text(json.dumps(meta))
    for command in (["report", str(out)], ["compare", str(out), "--out", str(tmp_path / "c")], ["export", str(out)]):
        line = _one_error_line(lasthop_cli(*command))
        assert f"{out / 'sweep.json'}: runs[0] is not a run lasthop writes" in line, (command, line)


def test_writes_replace_a_symlink_planted_in_a_results_directory_never_follow_it(tmp_path):
    # Issue 24: with DIR/report.html linked to an outside file, `lasthop report DIR` overwrote
    # that file; export and report --png likewise.
    d = tmp_path / "run"
    assert lasthop_cli("run", "dumbbell", *SHORT, "--out", str(d)).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (d / "report.html").symlink_to(victim)
    r = lasthop_cli("report", str(d))
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious" and not (d / "report.html").is_symlink()
    assert (d / "report.html").stat().st_mode & 0o777 == 0o666 & ~_umask(), "the mode a plain open gives"
    # A planted figures/ directory link is refused by name, and nothing is written or removed there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.png").write_bytes(b"png")
    (d / "figures").symlink_to(elsewhere, target_is_directory=True)
    line = _one_error_line(lasthop_cli("report", str(d), "--png"))
    assert f"{d / 'figures'}: is a symlink" in line, line
    assert [p.name for p in elsewhere.iterdir()] == ["keep.png"]
    # export into the run directory: the flent file's name planted as a link.
    r = lasthop_cli("export", str(d))
    assert r.returncode == 0, r.stderr
    (written,) = [p for p in d.iterdir() if p.name.endswith(".flent.gz")]
    written.unlink()
    written.symlink_to(victim)
    assert lasthop_cli("export", str(d)).returncode == 0
    assert victim.read_text() == "precious" and not written.is_symlink()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_the_scratch_files_of_a_killed_run_are_removed_by_the_next_run_beside_them(tmp_path):
    # Issue 24's "killed runs leave files", for the results side: a long run spools its traces to
    # .<out>.lasthop-spool-<pid>-* beside the results (GBs for a day simulated); after SIGKILL
    # the next run writing into the same parent directory removes it, and nothing else there.
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "lasthop", "run", "home", "--set", "simulation.duration=3600s", "-o", str(out), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    spools = lambda: sorted(tmp_path.glob(f".r.lasthop-spool-{proc.pid}-*"))  # noqa: E731
    try:
        deadline = time.time() + 60
        while not (spools() and any(p.is_file() for p in spools()[0].rglob("*"))) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (spool,) = spools()
    assert any(p.is_file() for p in spool.rglob("*")), "a spooled table"
    keep = tmp_path / ".r.lasthop-spool-1-looks_alike_but_is_a_file_link"
    keep.symlink_to(tmp_path / "nowhere")
    alive = tmp_path / f".r.lasthop-tmp-{os.getpid()}-abc"  # this process's: alive
    alive.mkdir()
    assert lasthop_cli("run", "dumbbell", *SHORT, "--out", str(tmp_path / "next")).returncode == 0
    assert not spool.exists()
    assert keep.is_symlink() and alive.is_dir(), "a symlink and a live process's directory stay"


def test_an_unknown_bundled_scenario_gets_did_you_mean():
    line = _one_error_line(lasthop_cli("run", "hoem"))
    assert 'did you mean "home"' in line and "bundled: dumbbell, home" in line
    with pytest.raises(ScenarioError, match='did you mean "wcdma"'):
        lasthop.Scenario.bundled("wcmda")


def test_set_value_errors_cite_the_set_argument_not_a_line_of_a_rewritten_document():
    line = _one_error_line(lasthop_cli("run", "--set", "flows.bulk.tcp.sack=maybe", "--out", "/nonexistent/never"))
    assert line == 'error: bundled scenario dumbbell: --set flows.bulk.tcp.sack=maybe: invalid type: string "maybe", expected a boolean'
    for path, value, expected in [
        ("links.bottleneck.rate", "fast", '--set links.bottleneck.rate=fast: invalid rate "fast"'),
        ("flows.nope.start", "1s", 'no element named "nope" (flows: bulk, voice)'),
        ("flows.vocie.start", "1s", 'did you mean "voice"?'),
        ("flow.bulk.start", "1s", "--set flow.bulk.start=1s: unknown field `flow`"),
        ("flows.bulk.strat", "1s", "did you mean `start`?"),
        ("links.bottleneck.aqm", "codle", "did you mean `codel`?"),
    ]:
        with pytest.raises(ScenarioError) as e:
            lasthop.Scenario.bundled("dumbbell", **{path: value})
        msg = str(e.value)
        assert expected in msg and "\n" not in msg, msg
        assert "line " not in msg and "<bundled" not in msg, f"a bundled scenario has no lines to cite: {msg}"


def test_a_files_own_error_keeps_its_own_line_when_overrides_shift_the_document():
    text = DUMBBELL.replace('start = "0s"\n', 'start = "0s"\nstrat = "1s"\n', 1)
    line = text.split("\n").index('strat = "1s"') + 1
    # The override adds a key above the bad line: the core's rewritten document is one line
    # longer there, the user's file is not.
    with pytest.raises(ScenarioError) as e:
        lasthop.Scenario(text, "mine.toml", {"links.bottleneck.loss": "0.01"})
    msg = str(e.value)
    assert msg.startswith(f"mine.toml: line {line}: ") and "unknown field `strat`" in msg and "--set" not in msg, msg


def test_bundled_scenario_messages_quote_the_line_instead_of_numbering_it():
    home = _core.bundled_scenario("home")
    n = home.split("\n").index("retry_short = 7") + 1
    msg = clarify(f'<bundled:home>: line {n}: invalid type: string "abc", expected u32', home, "<bundled:home>")
    assert msg == 'bundled scenario home: at `retry_short = 7`: invalid type: string "abc", expected u32'


def test_a_tiny_duration_answers_promptly(tmp_path):
    t0 = time.monotonic()
    r = lasthop_cli("run", "--set", "simulation.duration=50ns", "-q", "--no-report", "--out", str(tmp_path / "out"))
    assert time.monotonic() - t0 < 60
    assert "Traceback" not in r.stderr
    # This build either refuses the duration (a range check) or runs the 50 ns.
    assert r.returncode == 0 or "simulation.duration" in _one_error_line(r)


class _FrozenSimulation:
    """A simulation whose time never advances: the progress loop must not spin on it."""

    def __init__(self, *args):
        self.now_s, self.end_s = 0.0, 5e-8

    def run_until(self, t_s):
        pass


def test_the_progress_loop_stops_when_simulated_time_does_not_advance(monkeypatch):
    monkeypatch.setattr(_core, "Simulation", _FrozenSimulation)
    t0 = time.monotonic()
    with pytest.raises(SimulationError, match=r"did not advance past 0\.000000000 s"):
        lasthop.run()
    assert time.monotonic() - t0 < 5


def test_an_unexpected_exception_is_one_line_asking_for_a_report(monkeypatch, capsys):
    from lasthop import cli

    def broken(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(cli, "run_scenario", broken)
    monkeypatch.setattr("sys.argv", ["lasthop", "run", "-q"])
    monkeypatch.delenv("LASTHOP_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "KeyError" in err and "Traceback" not in err


# ---------------------------------------------------------------- 4. sweeps: time and memory limits


def test_a_run_past_its_time_limit_is_recorded_and_the_sweep_exits_non_zero(tmp_path):
    out = tmp_path / "sweep"
    t0 = time.monotonic()
    # One day of simulated dumbbell takes ~35 s of wall clock: far past the 1 s limit.
    r = lasthop_cli("sweep", "dumbbell", "--grid", "simulation.duration=1s,1440min", "--set", "simulation.interval=1s",
                    "--run-timeout", "1",
                    "--workers", "2", "--no-report", "--out", str(out))
    assert time.monotonic() - t0 < 30, "the long run was stopped at its limit"
    assert r.returncode == 1, r.stderr
    assert "timed out after 1 s" in r.stdout and "Traceback" not in r.stderr
    (failed,) = [json.loads(p.read_text()) for p in (out / "failed").glob("*.json")]
    assert failed["cause"] == "timeout" and failed["params"] == {"simulation.duration": "1440min"}
    assert len(list((out / "runs").glob("*/summary.json"))) == 1, "the other run finished"


SWEEP_MODULE = importlib.import_module("lasthop.sweep")  # `lasthop.sweep` is also the function's name
_execute = SWEEP_MODULE._execute


def test_a_sweep_too_large_to_be_meant_is_refused_before_anything_is_written(tmp_path):
    from lasthop.sweep import SweepError

    # 10 000 rates × 2 × 10 seeds = 200 000 runs: planning them alone would take minutes.
    grid = ["links.bottleneck.rate=1Mbps..10000Mbps:1Mbps", "flows.bulk.tcp.sack=false,true"]
    with pytest.raises(SweepError, match="200000 runs .*valid: at most 100000"):
        lasthop.sweep("dumbbell", grid, seeds=10, out=tmp_path / "a")
    with pytest.raises(SweepError, match="--workers 100000: valid: 1 to 256"):
        lasthop.sweep("dumbbell", seeds=1, out=tmp_path / "b", workers=100_000)
    line = _one_error_line(lasthop_cli("sweep", "dumbbell", "--run-timeout", "nan", "--out", str(tmp_path / "c")))
    assert "--run-timeout nan: valid: a positive number of seconds" in line
    assert not list(tmp_path.iterdir())


def _execute_sleeping_on_seed_2(text, file, overrides, wall_limit_s=None):
    if overrides["simulation.seed"] == "2":
        time.sleep(60)  # no cooperative check reaches here: the pool must kill the worker
    return _execute(text, file, overrides, wall_limit_s)


def _execute_killing_its_worker_on_seed_2(text, file, overrides, wall_limit_s=None):
    if overrides["simulation.seed"] == "2":
        os.kill(os.getpid(), signal.SIGKILL)
    return _execute(text, file, overrides, wall_limit_s)


@pytest.mark.parametrize("task, cause, message", [
    (_execute_sleeping_on_seed_2, "timeout", "timed out after 1 s"),
    (_execute_killing_its_worker_on_seed_2, "signal", "worker killed by signal 9 (SIGKILL)"),
])
def test_a_run_that_hangs_or_kills_its_worker_fails_alone(tmp_path, monkeypatch, task, cause, message):
    monkeypatch.setattr(SWEEP_MODULE, "_execute", task)
    t0 = time.monotonic()
    res = lasthop.sweep("dumbbell", seeds=3, out=tmp_path, workers=2, run_timeout_s=1, duration="1s")
    assert time.monotonic() - t0 < 20
    assert list(res.failed.seed) == [2] and list(res.failed.cause) == [cause] and list(res.failed.error) == [message]
    assert set(res.flows.seed) == {1, 3}, "the other runs go on"


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize"))


def test_a_run_past_its_memory_limit_is_recorded_as_out_of_memory(tmp_path):
    # Per-packet records of a 1 Gb/s transfer with 64 MiB windows for 60 s: about 470 000
    # packets of some 100 bytes of records each, far more than the 30 MB of address space the
    # worker gets beyond what it inherits (20 s of it came within a few MB of the limit).
    heavy = {"links.bottleneck.rate": "1Gbps", "links.access.rate": "1Gbps", "flows.bulk.tcp.receive_buffer": "64MiB",
             "flows.bulk.tcp.send_buffer": "64MiB", "probes.packets": ["bulk"], "duration": "60s"}
    res = lasthop.sweep("dumbbell", out=tmp_path, workers=1, run_memory=_vm_size() + (30 << 20), run_timeout_s=30, **heavy)
    assert list(res.failed.cause) == ["memory"], res.failed.to_dict("records")
    assert res.failed.error[0].startswith("out of memory")



# ---------------------------------------------------------------- 5. regressions found by fuzzing


def test_a_set_value_with_a_newline_is_still_one_line():
    # bench/fuzz_scenarios.py / tests/test_fuzz.py: `--set "error_generators=<newline>"` gave a
    # message whose second line did not name the scenario.
    with pytest.raises(ScenarioError) as e:
        lasthop.Scenario.bundled("dumbbell", **{"error_generators": "\n", "simulation.duration": "2s"})
    assert str(e.value) == 'bundled scenario dumbbell: --set error_generators=\\n: invalid type: string "\\n", expected a sequence'


def test_a_file_that_is_not_toml_is_blamed_not_the_set_argument():
    # bench/fuzz_scenarios.py: a DEL character inside a string of the file, run with
    # `--set simulation.duration=2s`, was reported as the --set argument's fault, with the TOML
    # parser's five-line report of the rewritten document.
    text = _core.bundled_scenario("hetperf").replace('"umts-host"', '"um\x7fts-host"', 1)
    line = next(i for i, t in enumerate(text.split("\n"), 1) if "\x7f" in t)
    with pytest.raises(ScenarioError) as e:
        lasthop.Scenario(text, "mine.toml", {"simulation.duration": "2s"})
    assert str(e.value) == f"mine.toml: line {line}: invalid basic string"


def test_results_do_not_depend_on_the_progress_steps():
    # The runner sizes its steps by wall clock; the engine runs every event up to and including
    # each step's end, so one run_until to the end gives the same summary.
    res = lasthop.run("home", duration="5s")
    sim = _core.Simulation(_core.bundled_scenario("home"), "<bundled:home>", [("simulation.duration", "5s")])
    sim.run_until(sim.end_s)
    whole = json.loads(sim.output()[0])
    assert whole["flows"] == res.summary["flows"] and whole["events_processed"] == res.summary["events_processed"]


def test_a_run_the_engine_stops_is_one_line_with_exit_code_2(monkeypatch, capsys):
    from lasthop import cli

    class Stalling(_FrozenSimulation):
        def run_until(self, t_s):
            raise SimulationError("simulated time stopped advancing at 0.000000000 s: more than 10000000 events at that instant")

    monkeypatch.setattr(_core, "Simulation", Stalling)
    monkeypatch.setattr("sys.argv", ["lasthop", "run", "-q", "--no-report"])
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 2
    assert capsys.readouterr().err == ("error: bundled scenario dumbbell: simulated time stopped advancing at 0.000000000 s: "
                                       "more than 10000000 events at that instant\n")


def _run_briefly(name, overrides):
    try:
        lasthop.run(name, duration="2s", wall_limit_s=10, **overrides)
    except (ScenarioError, SimulationError) as e:
        return type(e).__name__, str(e)
    return "ran", ""


@pytest.mark.parametrize("name, overrides", [
    # Found by bench/fuzz_scenarios.py before the core had ranges: 0.12 s simulated in 5 s ...
    ("saturation", {"flows.up7.app.interval": "10ns"}),
    # ... and no answer at all within one progress step.
    ("hetperf", {"flows.eth.app.interval": "0.000001ms", "wlans.adhoc.retry_long": "65536"}),
])
def test_values_that_made_the_engine_crawl_answer_promptly(name, overrides):
    from lasthop.pool import LocalPool

    with LocalPool(1, timeout_s=15) as pool:
        outcome, message = pool.submit(_run_briefly, name, overrides).result()
    assert outcome in ("ran", "ScenarioError", "SimulationError") and "\n" not in message, message


def test_damaged_values_in_a_results_directory_are_named_or_drawn_as_gaps(tmp_path):
    # Found by bench/fuzz_inputs.py: a FIFO as summary.json hung the reader; a flow value of
    # the wrong type, a NaN or an infinity in a trace ended in tracebacks (int() of a string,
    # JSON without NaN) in report, export and compare.
    import shutil

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = tmp_path / "good"
    lasthop.run("dumbbell", out=good, duration="1s")

    def damaged(name):
        d = tmp_path / name
        shutil.copytree(good, d)
        return d

    fifo = damaged("fifo")
    (fifo / "summary.json").unlink()
    os.mkfifo(fifo / "summary.json")
    with pytest.raises(OutputError, match="summary.json: not a regular file"):
        lasthop.results.json_file(fifo / "summary.json", dict)
    wrong = damaged("wrong")
    s = json.loads((wrong / "summary.json").read_text())
    s["flows"][0]["lost_packets"] = "é"
    (wrong / "summary.json").write_text(json.dumps(s))
    line = _one_error_line(lasthop_cli("export", str(wrong)))
    assert f"{wrong / 'summary.json'}: a flow's values are not of the types lasthop writes" in line, line
    nan = damaged("nan")
    (queue,) = (nan / "traces").glob("queue__bottleneck__router-to-receiver.parquet")
    t = pq.read_table(queue)
    values = t.column("packets").to_numpy().astype(float)
    values[1] = np.inf
    pq.write_table(t.set_column(t.schema.get_field_index("packets"), "packets", pa.array(values)), queue)
    line = _one_error_line(lasthop_cli("report", str(nan)))  # an infinite queue length: the file named
    assert f"{queue}: unreadable as the table lasthop writes (OverflowError" in line, line
    # A NaN delay is a gap in its chart (JSON has no NaN): the page is written.
    iv = pq.read_table(nan / "intervals.parquet")
    delays = iv.column("delay_mean_ms").to_numpy().copy()
    delays[:3] = np.nan
    pq.write_table(iv.set_column(iv.schema.get_field_index("delay_mean_ms"), "delay_mean_ms", pa.array(delays)), nan / "intervals.parquet")
    shutil.copyfile(good / "traces" / queue.name, queue)
    assert lasthop_cli("report", str(nan)).returncode == 0
    import re

    assert not re.search(r"[,\[:](NaN|-?Infinity)[,\]}]", (nan / "report.html").read_text()), "JSON has no NaN"
