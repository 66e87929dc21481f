"""The Python API, tested the way users call it."""

import json
import tomllib

import jsonschema
import pandas as pd
import pytest

import lasthop
from lasthop import Scenario, ScenarioError

from conftest import ROOT


@pytest.fixture(scope="module")
def default_run():
    return lasthop.run()


def test_summary_has_the_fields_the_issue_promises(default_run):
    s = default_run.summary
    assert s["lasthop_version"] == lasthop.__version__
    assert s["seed"] == 1
    assert s["scenario"]["links"][1]["rate"] == "10Mbps", "the resolved scenario is embedded"
    assert s["events_processed"] > 100_000
    assert s["wall_clock"]["wall_time_s"] > 0
    for f in s["flows"]:
        for key in ["name", "goodput_bps", "throughput_rx_bps", "sent_packets", "received_packets", "lost_packets"]:
            assert key in f, key
        assert set(f["delay_ms"]) >= {"mean", "p50", "p99", "max"}
        assert set(f["jitter_ms"]) >= {"mean", "p99", "max"}
    bulk = default_run.flow("bulk")
    # 10 Mb/s bottleneck: payload capacity 10 × 1460/1500 = 9.73 Mb/s, minus the voice flow and
    # slow start; anything above capacity would be a bug in accounting.
    assert 8.5e6 < bulk["goodput_bps"] <= 9.74e6
    voice = default_run.flow("voice")
    # 160 B every 20 ms from 0.5 s to 30 s: 1475 packets; goodput 64 kb/s of payload.
    assert voice["sent_packets"] == 1475
    assert abs(voice["goodput_bps"] - 64_000) < 1_000
    # One-way delay is at least the propagation (1 + 24 ms) plus serialization of 188 B.
    assert voice["delay_ms"]["min"] >= 25.0


def test_dataframes(default_run):
    flows = default_run.flows
    assert list(flows["name"]) == ["bulk", "voice"]
    assert "delay_p99_ms" in flows.columns and "lost_by_cause_queue_drop_packets" in flows.columns
    iv = default_run.intervals
    # 30 s in 100 ms bins = 300 rows per flow.
    assert (iv.groupby("flow").size() == 300).all()
    # Interval goodput integrates to the total delivered bytes.
    bulk = iv[iv.flow == "bulk"]
    delivered = (bulk.goodput_bps * 0.1 / 8).sum()
    assert delivered == pytest.approx(default_run.flow("bulk")["delivered_bytes"], rel=1e-9)
    tcp = default_run.trace("tcp/bulk")
    assert {"cwnd_bytes", "ssthresh_bytes", "peer_window_bytes", "rtt_sample_ms", "rto_ms"} <= set(tcp.columns)
    q = default_run.trace("queue__bottleneck__router-to-receiver")
    assert q.packets.max() <= 100
    with pytest.raises(KeyError, match="available"):
        default_run.trace("nope")


def test_overrides_as_keywords_change_the_run():
    fast = lasthop.run(**{"links.bottleneck.rate": "20Mbps", "duration": "10s"})
    assert fast.summary["scenario"]["simulation"]["duration"] == "10s"
    assert fast.flow("bulk")["goodput_bps"] > 10e6, "a 20 Mb/s bottleneck carries more than 10 Mb/s"


def test_progress_callback_reaches_the_end():
    seen = []
    lasthop.run(duration="2s", progress=lambda now, end: seen.append((now, end)))
    assert seen[-1] == (2.0, 2.0)
    assert len(seen) >= 100


def test_scenario_errors_raise_with_the_message(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[simulation]\nduration = "10s"\nseeed = 3\n')
    with pytest.raises(ScenarioError, match=r"bad.toml: line 3: simulation.seeed: unknown field `seeed`"):
        Scenario.from_toml(bad)
    with pytest.raises(ScenarioError, match="cannot read the file"):
        Scenario.from_toml(tmp_path / "missing.toml")
    with pytest.raises(ScenarioError, match="no bundled scenario 'nope'"):
        Scenario.bundled("nope")


def test_scenario_from_toml_matches_the_bundled_default(root):
    from_file = Scenario.from_toml(root / "scenarios" / "dumbbell.toml")
    assert from_file.resolved == Scenario.bundled().resolved
    assert from_file.name == "dumbbell"


def test_published_schema_is_current_and_accepts_the_bundled_scenario(root):
    published = json.loads((root / "schema" / "scenario.schema.json").read_text())
    assert published == json.loads(lasthop._core.json_schema()), "run `make schema` to refresh it"
    doc = tomllib.loads((root / "scenarios" / "dumbbell.toml").read_text())
    jsonschema.validate(doc, published)
    doc["links"][0]["rate"] = "fast"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, published)


@pytest.mark.parametrize("name", lasthop._core.bundled_names())
def test_every_bundled_scenario_loads_runs_and_matches_its_file(name, root):
    # The compiled-in copy is the file in scenarios/ (include_str!), and it runs.
    assert lasthop._core.bundled_scenario(name) == (root / "scenarios" / f"{name}.toml").read_text()
    res = lasthop.run(name, duration="3s")
    assert res.summary["simulated_s"] == 3.0
    assert len(res.flows) == len(res.summary["scenario"]["flows"])


def test_flow_and_interval_columns_name_things_alike(default_run, tmp_path):
    # The naming rule of lasthop.results: summary path joined with "_", the unit last; the
    # per-interval series of a flow metric carries the same name in intervals.parquet.
    flows, iv = default_run.flows, default_run.intervals
    for column in ["delay_mean_ms", "delay_max_ms", "jitter_mean_ms", "jitter_max_ms", "goodput_bps", "lost_packets"]:
        assert column in flows.columns and column in iv.columns, column
    voice = default_run.flow("voice")
    row = flows.set_index("name").loc["voice"]
    assert row["delay_p99_ms"] == voice["delay_ms"]["p99"]
    assert pd.isna(row["reverse_delay_mean_ms"])  # UDP: nothing comes back
    assert row["lost_by_cause_in_flight_at_end_packets"] == voice["lost_by_cause"]["in_flight_at_end"]
    assert not [c for c in flows.columns if "_ms_" in c or c.endswith("_by_cause")]


def test_counters_are_integers_in_every_table(default_run, tmp_path):
    # bulk is TCP and voice UDP: voice has no tcp_* values, and those columns stay integers
    # (pandas' nullable Int64) instead of becoming floats with NaN.
    flows = default_run.flows
    assert str(flows["sent_packets"].dtype) == "int64"
    assert str(flows["tcp_timeouts"].dtype) == "Int64"
    assert flows.set_index("name")["tcp_timeouts"].isna().to_dict() == {"bulk": False, "voice": True}
    out = default_run.write(tmp_path / "r")
    on_disk = pd.read_parquet(out / "flows.parquet")
    assert on_disk.dtypes.to_dict() == flows.dtypes.to_dict()
    assert on_disk.equals(flows)
    iv = pd.read_parquet(out / "intervals.parquet")
    counters = [c for c in [*flows.columns, *iv.columns] if c.endswith(("_packets", "_bytes"))]
    for c in counters:
        column = flows[c] if c in flows else iv[c]
        assert pd.api.types.is_integer_dtype(column.dtype), (c, column.dtype)
