"""Export to flent's .flent.gz: flent's own loader reads the file, its series are the run's
interval values, and flent draws its plots and batch combinations from it."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import lasthop
from lasthop.flent import FlentExportError, choose_test, export_flent

from conftest import lasthop_cli

resultset = pytest.importorskip("flent.resultset", reason="flent is not installed (pip install 'lasthop[dev]')")

STEP_S = 0.1  # the default simulation.interval
VOICE_KBPS = 5 * 160 * 8 / STEP_S / 1e3  # dumbbell's voice: 160 B every 20 ms = 5 packets of payload per 100 ms


@pytest.fixture(scope="module")
def dumbbell(tmp_path_factory):
    d = tmp_path_factory.mktemp("flent") / "run"
    lasthop.run("dumbbell", out=d, duration="12s", **{"probes.packets": ["voice"]})
    return d


def _flent(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("flent")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)


def test_flent_loads_the_series_of_the_run(dumbbell):
    (path,) = export_flent(dumbbell)
    assert path.name == "dumbbell-simulation_duration_12s-probes_packets__voice_-01.flent.gz"
    r = resultset.load(str(path))
    summary = json.loads((dumbbell / "summary.json").read_text())
    bulk, voice = summary["flows"]
    assert r.meta("NAME") == "voip-1up"  # flent's test of one TCP upload beside one VoIP stream
    # 12 s in 100 ms intervals, each value at its interval's start.
    assert r.x_values == pytest.approx([k * STEP_S for k in range(120)])
    # Goodput in Mbit/s integrates back to the bytes the bulk flow delivered.
    tcp = r.series("TCP upload")
    assert sum(tcp) * 1e6 * STEP_S / 8 == pytest.approx(bulk["delivered_bytes"], rel=1e-12)
    iv = lasthop.Results.load(dumbbell).intervals
    assert tcp == pytest.approx((iv[iv.flow == "bulk"].goodput_bps / 1e6).tolist())
    # The voice flow starts at 0.5 s: nothing before, then its 64 kb/s of payload (hand count above).
    bitrate = r.series("VoIP::bitrate")
    assert bitrate[:5] == [0.0] * 5 and bitrate[10:20] == [VOICE_KBPS] * 10
    assert r.series("VoIP::delay")[:5] == [None] * 5, "no delay where no packet arrived"
    assert sum(r.series("VoIP::loss")) == voice["lost_by_cause"]["queue_drop"] + voice["lost_by_cause"]["link_loss"]
    # The raw records are D-ITG's: one per packet, delay in ms.
    raw = list(r.raw_series("VoIP"))
    assert len(raw) == voice["received_packets"]
    assert sum(v for _, v in raw) / len(raw) == pytest.approx(voice["delay_ms"]["mean"], rel=1e-9)
    assert r.meta("SERIES_META")["VoIP"]["PACKET_LOSS_RATE"] == voice["loss_ratio"]


def test_the_file_is_flents_json_and_the_same_run_gives_the_same_bytes(dumbbell, tmp_path):
    (a,) = export_flent(dumbbell, tmp_path / "a")
    (b,) = export_flent(dumbbell, tmp_path / "b.flent.gz")  # a file name is taken as it is
    assert b == tmp_path / "b.flent.gz"
    assert a.read_bytes() == b.read_bytes()
    data = json.loads(gzip.decompress(a.read_bytes()))
    # flent's ResultSet.serialise(): these keys, format version 4, every series as long as x_values.
    assert sorted(data) == ["metadata", "raw_values", "results", "version", "x_values"]
    assert data["version"] == 4
    assert {len(v) for v in data["results"].values()} == {len(data["x_values"])}
    assert data["metadata"]["T0"] == "1970-01-01T00:00:00.000000Z"


def _assert_flent_draws(run_dir: Path, plot: str, tmp_path: Path) -> None:
    """flent draws `plot` from the export of `run_dir` without an error, into a real figure."""
    (path,) = export_flent(run_dir, tmp_path)
    png = tmp_path / f"{plot}.png"
    r = _flent("-i", str(path), "-p", plot, "-o", str(png))
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize("plot", ["totals_loss", "voip_delay_cdf", "voip_mos_combine"])
def test_flent_draws_its_plots_from_the_export(dumbbell, tmp_path, plot):
    _assert_flent_draws(dumbbell, plot, tmp_path)


def test_a_sweep_exports_one_file_per_run_named_for_flents_batch_grouping(tmp_path):
    sweep = tmp_path / "sweep"
    r = lasthop_cli("sweep", "dumbbell", "--grid", "links.bottleneck.queue=20p,100p", "--seeds", "2", "--no-report",
                    "--set", "simulation.duration=12s", "--set", "links.bottleneck.loss=0.001", "--out", str(sweep))
    assert r.returncode == 0, r.stderr
    r = lasthop_cli("export", str(sweep), "--format", "flent")
    assert r.returncode == 0, r.stderr
    files = sorted(Path(line) for line in r.stdout.split())
    assert [f.name.rsplit("-", 2)[-2:] for f in files] == [
        ["links_bottleneck_queue_100p", "01.flent.gz"], ["links_bottleneck_queue_100p", "02.flent.gz"],
        ["links_bottleneck_queue_20p", "01.flent.gz"], ["links_bottleneck_queue_20p", "02.flent.gz"]]
    # flent's combination plots group the files by name: the two seeds of each queue size go together,
    # and each file's point is the mean of its goodput series.
    from flent import combiners

    loaded = [resultset.load(str(f)) for f in files]
    groups = combiners.new("groups", print_n=True)(loaded, {"series": [{"data": "TCP upload", "combine_mode": "mean"}],
                                                            "cutoff": None})
    assert [g.meta("TITLE") for g in groups] == ["links_bottleneck_queue_100p (n=2)", "links_bottleneck_queue_20p (n=2)"]
    means = [sum(r.series("TCP upload")) / len(r.series("TCP upload")) for r in loaded]
    assert groups[0].series("TCP upload") == pytest.approx(means[:2]) and groups[1].series("TCP upload") == pytest.approx(means[2:])
    box = tmp_path / "box.png"
    r = _flent(*[a for f in files for a in ("-i", str(f))], "-p", "box_combine", "-o", str(box))
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr and box.stat().st_size > 10_000, r.stdout + r.stderr


def test_flows_flent_has_no_test_for_must_be_chosen():
    flows = [{"name": n, "transport": t} for n, t in [("video", "udp"), ("game", "udp"), ("ftp", "tcp")]]
    with pytest.raises(FlentExportError, match="choose the flows to export with --flows, e.g. --flows ftp,video"):
        choose_test(flows)
    assert choose_test(flows, ["ftp", "game"]).test == "voip-1up"
    assert choose_test(flows, ["game"]).test == "voip"
    assert choose_test(flows + [{"name": "b", "transport": "tcp"}], ["ftp", "b", "video"]).test == "tcp_nup"
    with pytest.raises(FlentExportError, match='no such flow; did you mean "game"'):
        choose_test(flows, ["gmae"])


RRUL_FLOWS = [f"tcp-{d}-{c}" for d in ("down", "up") for c in ("be", "bk", "cs5", "ef")] + \
    [f"udp-{d}-{c}" for c in ("ef", "bk", "be") for d in ("down", "up")]


@pytest.fixture(scope="module")
def rrul(tmp_path_factory):
    # The bundled RRUL, 8 s: the probes from 0 s, the eight TCP flows from 5 s.
    d = tmp_path_factory.mktemp("flent") / "rrul"
    lasthop.run("rrul", out=d, duration="8s")
    return d


def test_an_rrul_run_exports_as_flents_rrul_with_its_ping_series(rrul, tmp_path):
    (path,) = export_flent(rrul, tmp_path)
    r = resultset.load(str(path))
    summary = json.loads((rrul / "summary.json").read_text())
    flows = {f["name"]: f for f in summary["flows"]}
    iv = lasthop.Results.load(rrul).intervals
    assert r.meta("NAME") == "rrul"
    # flent runs on the client (the probes' echoing end) against the server.
    assert (r.meta("LOCAL_HOST"), r.meta("HOST"), r.meta("HOSTS")) == ("client", "server", ["server"])
    # Each TCP series is its flow's goodput (rrul.conf's markings: CS0 = BE, CS1 = BK, CS5, EF).
    for flent_name, flow in [("TCP download BE", "tcp-down-be"), ("TCP download CS5", "tcp-down-cs5"), ("TCP upload EF", "tcp-up-ef")]:
        assert r.series(flent_name) == pytest.approx((iv[iv.flow == flow].goodput_bps / 1e6).tolist()), flent_name
    # rrul.conf's sum runners, by hand: totals = every TCP series summed per step.
    tcp = [n for n in r.series_names if n.startswith("TCP ") and n.split()[-1] in ("BE", "BK", "CS5", "EF")]
    assert len(tcp) == 8
    step = 60
    assert r.series("TCP totals")[step] == pytest.approx(sum(r.series(n)[step] for n in tcp))
    assert r.series("TCP download avg")[step] == pytest.approx(sum(r.series(f"TCP download {c}")[step] for c in ("BE", "BK", "CS5", "EF")) / 4)
    # A UDP ping series is its probe flow's mean round trip per interval: weighted by the echoes
    # of each interval, the summary's mean round trip (the same echoes, one meter).
    table = lasthop.Results.load(rrul).trace("round_trips/udp-down-ef")
    rt = flows["udp-down-ef"]["round_trip"]
    # 64 B every 200 ms for 8 s: 40 requests (hand count), the last few still out at the end.
    assert table.echoes.sum() == rt["echoes"] and 35 <= rt["echoes"] + rt["echoes_lost"] <= 40
    weighted = (table.rtt_mean_ms.fillna(0) * table.echoes).sum() / table.echoes.sum()
    assert weighted == pytest.approx(rt["rtt_ms"]["mean"], rel=1e-9)
    ping_ef = r.series("Ping (ms) UDP EF")
    assert [v is None for v in ping_ef] == table.rtt_mean_ms.isna().tolist(), "null where no echo came back"
    assert [v for v in ping_ef if v is not None] == pytest.approx(table.rtt_mean_ms.dropna().tolist())
    assert r.series("Ping (ms) ICMP") == [None] * len(r.x_values), "lasthop sends no ICMP"
    # Under load (the TCP flows from 5 s) the round trip grows: the latency under load RRUL shows.
    ping = r.series("Ping (ms) UDP BE")
    assert max(v for v in ping[60:] if v) > 2 * min(v for v in ping[:40] if v)


@pytest.mark.parametrize("plot", ["all_scaled", "ping_cdf"])
def test_flent_draws_its_rrul_plots_from_the_export(rrul, tmp_path, plot):
    _assert_flent_draws(rrul, plot, tmp_path)


def test_rrul_with_every_flow_best_effort_exports_as_rrul_be(tmp_path):
    d = tmp_path / "rrul_be"
    lasthop.run("rrul", out=d, duration="6s", **{f"flows.{n}.dscp": 0 for n in RRUL_FLOWS})
    (path,) = export_flent(d, tmp_path)
    r = resultset.load(str(path))
    assert r.meta("NAME") == "rrul_be"
    # rrul_be.conf's names: BE, BE2..BE4 for the TCP flows, BE1..BE3 for the pings, in flow order.
    assert {"TCP download BE", "TCP download BE4", "TCP upload BE3", "Ping (ms) UDP BE1", "Ping (ms) UDP BE3"} <= set(r.series_names)
    assert r.meta("SERIES_META")["TCP download BE4"]["LASTHOP_FLOW"] == "tcp-down-ef"
