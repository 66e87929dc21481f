"""The command line and the results directory, including byte-for-byte determinism."""

import json
from pathlib import Path

import pytest

from conftest import lasthop_cli


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _summary_without_wall_clock(d: Path) -> dict:
    s = json.loads((d / "summary.json").read_text())
    s.pop("wall_clock")
    return s


def test_run_prints_a_summary_and_writes_the_results_directory(tmp_path):
    r = lasthop_cli("run", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "bulk" in r.stdout and "voice" in r.stdout and "goodput" in r.stdout
    files = _files(tmp_path / "out")
    assert {"summary.json", "flows.parquet", "intervals.parquet", "traces/tcp__bulk.parquet"} <= set(files)
    # Which world made the run, in summary.json, the console's title and the report's header.
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["world"] == "simulate"
    assert "30 s simulated in" in r.stdout, r.stdout  # the bundled dumbbell: 30 s
    assert "30 s simulated, " in (tmp_path / "out" / "report.html").read_text()


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path):
    args = ["run", "scenarios/dumbbell.toml", "--set", "links.bottleneck.loss=0.01", "--set", "simulation.duration=5s", "-q"]
    for name, seed in [("a", "7"), ("b", "7"), ("c", "8")]:
        r = lasthop_cli(*args, "--seed", seed, "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    a, b, c = (tmp_path / n for n in "abc")
    assert _summary_without_wall_clock(a) == _summary_without_wall_clock(b)
    fa, fb = _files(a), _files(b)
    for name in fa:
        if name != "summary.json":
            assert fa[name] == fb[name], f"{name} differs between two runs with the same seed"
    assert _summary_without_wall_clock(a)["flows"] != _summary_without_wall_clock(c)["flows"]


def test_bad_input_exits_2_with_the_file_field_and_valid_values(tmp_path):
    r = lasthop_cli("run", "--set", "links.bottleneck.rate=fast", "--out", str(tmp_path))
    assert r.returncode == 2
    assert 'invalid rate "fast"' in r.stderr and "Mbps" in r.stderr
    r = lasthop_cli("run", "--set", "nonsense", "--out", str(tmp_path))
    assert r.returncode == 2 and "dotted.path=value" in r.stderr


def test_schema_command_prints_json_schema():
    r = lasthop_cli("schema")
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    assert schema["title"] == "Scenario"
    assert "flows" in schema["properties"]


def test_version_is_the_package_version():
    import lasthop

    r = lasthop_cli("--version")
    assert r.returncode == 0 and r.stdout == f"lasthop {lasthop.__version__}\n"


def test_json_prints_exactly_summary_json_and_nothing_else_on_stdout(tmp_path):
    r = lasthop_cli("run", "--json", "--no-report", "--set", "simulation.duration=2s", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    printed = json.loads(r.stdout)  # the whole of stdout is one JSON document
    assert printed == json.loads((tmp_path / "o" / "summary.json").read_text())
    assert printed["format"] == "lasthop.run/1" and [f["name"] for f in printed["flows"]] == ["bulk", "voice"]


def test_show_prints_every_default_with_its_documentation():
    from lasthop import _core

    tcp = json.loads(_core.json_schema())["definitions"]["TcpParams"]["properties"]["delayed_ack"]
    assert tcp["default"] == "200ms"  # the schema's default, which show must report as such
    r = lasthop_cli("show", "dumbbell", "flows.bulk.tcp.delayed_ack")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ['flows.bulk.tcp.delayed_ack = "200ms"  [default]', f"    {tcp['description']}"]
    # An overridden value names the default it replaces.
    r = lasthop_cli("show", "dumbbell", "flows.bulk.tcp", "--set", "flows.bulk.tcp.delayed_ack=40ms")
    assert 'flows.bulk.tcp.delayed_ack = "40ms"  [default: "200ms"]' in r.stdout.splitlines()
    # dumbbell.toml sets the bottleneck to 10 Mb/s; the schema has no default for a link's rate.
    r = lasthop_cli("show", "dumbbell", "links.bottleneck.rate")
    assert r.stdout.splitlines()[0] == 'links.bottleneck.rate = "10Mbps"  [default: (unset)]'
    # A field the resolved scenario leaves out at its default (start_jitter, kept out of
    # summary.json while zero) is still listed, in the schema's place, with that default.
    lines = lasthop_cli("show", "dumbbell", "flows.voice").stdout.splitlines()
    assert lines.index('flows.voice.start_jitter = "0ns"  [default]') == lines.index('flows.voice.start = "500ms"  [default: "0ns"]') + 2


def test_show_lists_every_field_of_the_resolved_scenario():
    import lasthop
    from lasthop.show import parameters

    sc = lasthop.Scenario.bundled("home")
    params = {p.path: p.value for p in parameters(sc)}
    # Every leaf is there: 9 nodes, 4 links of 15 fields (name and traces unset), the WLAN's AP and queue.
    assert sum(1 for p in params if p.startswith("nodes.")) == 9  # device only; the name is the path
    assert sum(1 for p in params if p.startswith("links.")) == 4 * 15
    assert params["wlans.home.ap"] == "AP" and params["wlans.home.queue"] == "50p"
    assert params["flows.ftp.app.type"] == sc.resolved["flows"][5]["app"]["type"]


def test_show_a_misspelt_field_gets_did_you_mean():
    r = lasthop_cli("show", "dumbbell", "flows.bulk.tcp.delayed")
    assert r.returncode == 2
    assert r.stderr.startswith("error: 'flows.bulk.tcp.delayed': no parameter has this path; did you mean "
                               '"flows.bulk.tcp.delayed_ack"?')


def test_scenarios_export_writes_the_bundled_text_that_runs_the_same(tmp_path):
    import lasthop
    from lasthop import _core

    r = lasthop_cli("scenarios", "export", "home", str(tmp_path / "mine"))
    assert r.returncode == 0, r.stderr
    exported = tmp_path / "mine" / "home.toml"
    assert exported.read_text() == _core.bundled_scenario("home")
    assert lasthop.Scenario.from_toml(exported).resolved == lasthop.Scenario.bundled("home").resolved
    # An edited file is not silently overwritten.
    exported.write_text(exported.read_text() + "\n# mine\n")
    r = lasthop_cli("scenarios", "export", "home", str(tmp_path / "mine"))
    assert r.returncode == 2 and "differs from the bundled home; add --force" in r.stderr
    r = lasthop_cli("scenarios", "export", "hoem", str(tmp_path))
    assert r.returncode == 2 and 'did you mean "home"' in r.stderr
    assert lasthop_cli("scenarios").stdout.split() == _core.bundled_names()


def test_shell_completion_offers_commands_and_bundled_names():
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("lasthop")

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_LASTHOP_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split(" ")) - 1)}
        return subprocess.run([str(exe)], env=env, capture_output=True, text=True).stdout.split()

    assert complete("lasthop sh") == ["show"]
    assert complete("lasthop run h") == ["home", "hetperf", "home-ac", "home-ax"]


def test_misspelt_paths_names_and_choices_get_did_you_mean():
    r = lasthop_cli("run", "scenarios/dumbell.toml")
    assert r.returncode == 2
    assert r.stderr == ("error: scenarios/dumbell.toml: cannot read the file: No such file or directory; "
                        "did you mean scenarios/dumbbell.toml?\n")
    r = lasthop_cli("run", "scenaros/home")  # a missing directory and a missing suffix
    assert "did you mean scenarios/home.toml?" in r.stderr
    # The core lists the valid values; lasthop picks the closest (difflib, ratio >= 0.6).
    r = lasthop_cli("run", "--set", "flows.bulk.tcp.variant=cubci", "-q", "--no-report")
    assert "unknown variant `cubci`, expected one of `newreno`, `cubic`, `bbr`" in r.stderr
    assert r.stderr.rstrip().endswith('did you mean `cubic`?')
    r = lasthop_cli("run", "--set", "flows.bulk.dst=reciever", "-q", "--no-report")
    assert r.stderr.rstrip().endswith('did you mean "receiver"?')
    r = lasthop_cli("run", "--set", "links.bottleneck.rate=10Mbs", "-q", "--no-report")  # units: the core's own
    assert 'unknown unit "Mbs", did you mean "Mbps"?' in r.stderr


def test_errors_in_bundled_scenarios_cite_no_line_of_a_file_the_user_cannot_open():
    import lasthop

    # Values that break the TOML document the core builds from the compiled-in text: its errors
    # come with line numbers of that text, which lasthop must not pass on.
    for name in ("dumbbell", "home"):
        for path in ("flows.0.app", "simulation.duration", "links.0", "probes.tcp", "wlans"):
            for value in ("{", "[1,", '"""', "a=b", "[[x]]", "1 2"):
                with pytest.raises(lasthop.ScenarioError) as e:
                    lasthop.Scenario.bundled(name, **{path: value})
                message = str(e.value)
                assert message.startswith(f"bundled scenario {name}: --set {path}=")
                assert "line " not in message and "<bundled" not in message, message


def test_report_of_a_misspelt_directory_says_which_one_exists(tmp_path):
    (tmp_path / "results-db").mkdir()
    r = lasthop_cli("report", str(tmp_path / "results-bd"))
    assert r.returncode == 2
    assert r.stderr == f"error: {tmp_path / 'results-bd'}: no such directory; did you mean {tmp_path / 'results-db'}?\n"


def test_the_summary_fits_the_terminal_with_units_per_value(tmp_path):
    # Issue 30: at 80 columns the summary's numbers were cut ("9.0…", "voi…"). Now every
    # value is whole and carries its unit, scaled per value as iperf3 and flent print them; the
    # least wanted columns go, and the caption names them.
    from rich.console import Console

    import lasthop
    from lasthop.cli import summary_table

    s = lasthop.run("dumbbell", duration="5s").summary

    def lines(width: int) -> list[str]:
        c = Console(width=width, record=True, file=open("/dev/null", "w"), color_system=None)
        c.print(summary_table(s, width))
        return c.export_text().splitlines()

    narrow = lines(80)
    assert max(len(x) for x in narrow) <= 80 and not any("…" in x for x in narrow), "\n".join(narrow)
    bulk = next(x for x in narrow if x.lstrip("│ ").startswith("bulk"))
    goodput = s["flows"][0]["goodput_bps"] / 1e6
    assert f"{goodput:.3g} Mb/s" in bulk, bulk  # 3 significant digits, e.g. 9.07 Mb/s
    voice = next(x for x in narrow if x.lstrip("│ ").startswith("voice"))
    assert "kb/s" in voice and " ms" in voice, voice  # 64 kb/s of voice, delays in ms
    assert any(x.strip().startswith("left out at 80 columns:") for x in narrow)
    wide = lines(160)
    header = next(x for x in wide if "goodput" in x)
    assert all(h in header for h in ["proto", "rx", "sent", "recv", "lost", "loss", "delay p99", "jitter p99"]), header
    assert not any("left out" in x for x in wide)
    # A run ends by naming its report.
    r = lasthop_cli("run", "dumbbell", "--set", "simulation.duration=1s", "--out", str(tmp_path / "r"))
    assert r.stdout.splitlines()[-1] == f"report:  {tmp_path / 'r' / 'report.html'}", r.stdout


def test_an_echo_flow_shows_its_round_trips_and_rpm_in_the_console_the_report_and_compare(tmp_path):
    # A probe echoed across a 20 ms, 10 Mb/s link: every round trip 2 · (20 ms + 128 B at 10 Mb/s)
    # = 40.2048 ms on the idle path, so RPM = 60 000 / 40.2048 = 1492 (Good).
    scenario = tmp_path / "echo.toml"
    scenario.write_text('[simulation]\nduration = "5s"\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n'
                        '[[links]]\na = "a"\nb = "b"\nrate = "10Mbps"\ndelay = "20ms"\n'
                        '[[flows]]\nname = "probe"\nsrc = "a"\ndst = "b"\necho = true\n'
                        'app = { type = "cbr", size = "100B", interval = "100ms" }\n')
    r = lasthop_cli("run", str(scenario), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "round trips of probe: mean 40.2 ms" in r.stdout and "1492 RPM (Good" in r.stdout, r.stdout
    assert "Round trips of the echo flows" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # The report's round-trip figure: the probe's mean per interval, 40.2048 ms in each of the
    # 50 intervals (one probe per 100 ms interval), as the page's 3 significant digits show it.
    from conftest import report_charts

    rtt = {c["id"]: c for c in report_charts(tmp_path / "out" / "report.html")}["rtt"]
    (line,) = rtt["panels"][0]["series"]
    values = [y for y in line["y"] if y is not None]
    assert line["name"] == "probe" and len(values) >= 45 and all(y == 0.0402 for y in values), values[:5]
    c = lasthop_cli("compare", str(tmp_path / "out"), "--metric", "round_trip_rpm", "--out", str(tmp_path / "cmp"))
    assert c.returncode == 0 and "1.49 k" in c.stdout, c.stdout + c.stderr


def test_trace_synth_and_show_give_the_mean_and_the_capacity_over_time(tmp_path):
    # A synthetic trace of 10 ± 2 Mb/s for 60 s, shown in 2 s bins: the mean within 12 % (the
    # model keeps its mean; 60 s of a walk with 1 s of memory average about 30 independent
    # stretches, so the sample mean deviates by about 2 / √30 = 0.37 Mb/s: 12 % is over 3 of
    # those), 30 bins in the CSV, whose mean is the mean shown (every opportunity counted once).
    trace = tmp_path / "cell.down"
    r = lasthop_cli("trace", "synth", str(trace), "--mean", "10Mbps", "--std", "2Mbps", "--length", "60s", "--seed", "4")
    assert r.returncode == 0, r.stderr
    r = lasthop_cli("trace", "show", str(trace), "--bin", "2s", "--csv", str(tmp_path / "c.csv"))
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()[0]
    assert "opportunities in 60 s (looping), mean " in head, head
    mean = float(head.split("mean ")[1].split(" Mb/s")[0]) * 1e6
    assert abs(mean / 10e6 - 1) < 0.12, head
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0] == "time_s,capacity_bps" and len(rows) == 31
    assert sum(float(x.split(",")[1]) for x in rows[1:]) / 30 == pytest.approx(mean, rel=0.01)
    # The same seed gives the same trace; an existing file needs --force.
    again = lasthop_cli("trace", "synth", str(trace), "--mean", "10Mbps", "--std", "2Mbps", "--length", "60s", "--seed", "4")
    assert again.returncode == 2 and "exists; add --force" in again.stderr
    copy = tmp_path / "copy"
    assert lasthop_cli("trace", "synth", str(copy), "--mean", "10Mbps", "--std", "2Mbps", "--length", "60s", "--seed", "4").returncode == 0
    assert copy.read_bytes() == trace.read_bytes()


def test_trace_show_names_the_line_at_fault_and_knows_the_bundled_traces(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("1\n4\n2\n")
    r = lasthop_cli("trace", "show", str(bad))
    assert r.returncode == 2 and f"{bad} line 3: 2 comes after 4: timestamps must never decrease" in r.stderr, r.stderr
    r = lasthop_cli("trace", "show", "bundled:traces/lte-synthetic.down")
    assert r.returncode == 0 and "30303 opportunities in 30 s" in r.stdout, r.stdout + r.stderr
