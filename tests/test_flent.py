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


@pytest.mark.parametrize("plot", ["totals_loss", "voip_delay_cdf", "voip_mos_combine"])
def test_flent_draws_its_plots_from_the_export(dumbbell, tmp_path, plot):
    (path,) = export_flent(dumbbell, tmp_path)
    png = tmp_path / f"{plot}.png"
    r = _flent("-i", str(path), "-p", plot, "-o", str(png))
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert png.stat().st_size > 10_000


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
