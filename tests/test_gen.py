"""lasthop gen end to end on loopback: a receiver process, the sender in this process (the API)
or as the CLI. Expected values are hand counts of the flows given (a CBR flow of interval T over
D seconds sends D/T packets) and the simulator's own summary keys."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lasthop import gen

LASTHOP = [sys.executable, "-m", "lasthop"]
CBR = '[[flows]]\nname = "voice"\napp = { type = "cbr", size = "160B", interval = "10ms" }\n'
BULK = '[[flows]]\nname = "bulk"\napp = { type = "bulk", bytes = "2MiB" }\n'


class Receiver:
    """`lasthop gen recv` on an ephemeral loopback port, as a process of its own."""

    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen([*LASTHOP, "gen", "recv", "--listen", "127.0.0.1:0", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, f"no listening line: {line!r}"
        self.to = f"127.0.0.1:{m.group(1)}"

    def stop(self) -> str:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        out, _ = self.p.communicate(timeout=20)
        return out


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def flow_keys(flow: dict, prefix: str = "") -> set[str]:
    keys = set()
    for k, v in flow.items():
        keys.add(prefix + k)
        if isinstance(v, dict):
            keys |= flow_keys(v, prefix + k + ".")
    return keys


SIM = """
[simulation]
duration = "1s"
[[nodes]]
name = "sender"
[[nodes]]
name = "receiver"
[[links]]
a = "sender"
b = "receiver"
rate = "100Mbps"
delay = "1ms"
[[flows]]
name = "voice"
src = "sender"
dst = "receiver"
app = { type = "cbr", size = "160B", interval = "10ms" }
[[flows]]
name = "bulk"
src = "sender"
dst = "receiver"
app = { type = "bulk", bytes = "2MiB" }
"""


def test_a_cbr_flow_arrives_whole_with_small_positive_delays_and_the_simulators_keys(receiver, tmp_path):
    # 10 ms interval over 2 s: packets at 0, 10, ..., 1990 ms = 200 (hand count).
    flows = tmp_path / "flows.toml"
    flows.write_text(CBR)
    res = gen.send(receiver.to, flows, duration=2.0, out=tmp_path / "out", loss_timeout=0.5)
    f = res.flow("voice")
    assert (f["sent_packets"], f["received_packets"], f["lost_packets"]) == (200, 200, 0)
    assert f["lost_by_cause"]["unattributed"] == 0 and f["loss_ratio"] == 0.0
    assert 0 < f["delay_ms"]["min"] <= f["delay_ms"]["p50"] <= f["delay_ms"]["max"] < 50
    m = res.summary["measure"]
    assert m["clock"] == "monotonic" and m["clock_offset_ns"] == 0, "one kernel: its monotonic clock, exact"
    assert m["flows"][0]["requested_packets"] == 200 and m["flows"][0]["shortfall"] == 0.0
    # The same keys as the simulator's report of the same flow.
    sim = _simulated(tmp_path)
    assert flow_keys(f) == flow_keys(sim.flow("voice"))
    assert set(res.summary) >= set(sim.summary) - {"wall_clock"}
    # The results directory: lasthop run's layout, both ends' packets and records.
    d = tmp_path / "out"
    for name in ["summary.json", "flows.parquet", "intervals.parquet", "records/receiver.lhr", "records/sender-udp.lhr"]:
        assert (d / name).is_file(), name
    assert (d / "records" / "receiver.lhr").stat().st_size == 200 * 32, "one 32-byte record per packet received"
    index = json.loads((d / "traces" / "index.json").read_text())
    assert {"packets/voice", "packets/voice/receiver", "delay_cdf"} <= set(index.values())
    assert len(res.trace("packets/voice")) == 200
    assert res.trace("packets/voice")["outcome"].eq("received").all()


def _simulated(tmp_path):
    import lasthop

    p = tmp_path / "sim.toml"
    p.write_text(SIM)
    return lasthop.run(p)


def test_a_tcp_bulk_transfer_completes_with_the_simulators_tcp_keys(receiver, tmp_path):
    flows = tmp_path / "bulk.toml"
    flows.write_text(BULK)
    res = gen.send(receiver.to, flows, duration=10.0)
    f = res.flow("bulk")
    # 2 MiB in 16 KiB messages = 128 messages, every byte delivered.
    assert (f["sent_packets"], f["received_packets"], f["delivered_bytes"]) == (128, 128, 2 << 20)
    assert 0 < f["response_time_s"] < 10
    assert f["tcp"]["bytes_read"] == 2 << 20
    assert res.summary["measure"]["flows"][0]["send_blocked_s"] >= 0
    assert flow_keys(f) == flow_keys(_simulated(tmp_path).flow("bulk"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_receiver_keeps_every_logged_packet(tmp_path, sig):
    # A 5 s flow at 100 pkt/s; a signal after about 1 s: the receiver stops, flushes, and both the
    # sender's results and the receiver's own directory hold exactly what it logged.
    r = Receiver("--out", str(tmp_path / "recv"))
    flows = tmp_path / "flows.toml"
    flows.write_text(CBR)
    out = {}

    def sender() -> None:
        out["res"] = gen.send(r.to, flows, duration=5.0)

    t = threading.Thread(target=sender)
    t.start()
    time.sleep(1.2)
    r.p.send_signal(sig)
    t.join(timeout=30)
    assert "stopped by a signal" in r.stop()
    res = out["res"]
    f = res.flow("voice")
    assert res.summary["measure"]["interrupted"] is True
    (session,) = (tmp_path / "recv").iterdir()
    counts = json.loads((session / "counts.json").read_text())
    logged = (session / "recv-udp.lhr").stat().st_size // 32
    assert counts["interrupted"] is True
    assert counts["flows"][0]["received"] == logged == f["received_packets"]
    assert 50 < logged < 500, logged
    # What was neither received nor waited for is in flight, not lost.
    assert f["lost_packets"] == 0
    assert f["lost_by_cause"]["in_flight_at_end"] == f["sent_packets"] - f["received_packets"]


def test_the_cli_sends_ditg_flags_and_prints_one_line_errors(receiver, tmp_path):
    out = tmp_path / "r"
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "-T", "UDP", "-C", "500", "-c", "64", "-t", "1000",
                        "--out", str(out), "--no-report", "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["world"] == "measure"
    assert (s["flows"][0]["sent_packets"], s["flows"][0]["received_packets"]) == (500, 500), "500 pkt/s for 1 s"
    assert s["flows"][0]["sent_bytes"] == 500 * (64 + 28), "64-byte payloads and the UDP/IPv4 headers"
    for args, wanted in [
        (["-T", "SCTP"], "UDP or TCP"),
        (["-C", "0"], "-C"),
        (["--flows", str(tmp_path / "missing.toml")], "cannot read the flows file"),
        (["-m", "both"], "owd"),
        # Out of the integer types the bindings take (u16 port, u64 seed): refused as the flag's.
        (["-rp", "70000"], "-rp"),
        (["-c", "-1"], "-c"),
        (["-t", "-5"], "-t"),
        (["--seed", "-1"], "--seed"),
    ]:
        p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, *args, "--out", str(tmp_path / "x")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and wanted in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", "127.0.0.1:1", "-t", "100"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "cannot reach a receiver" in p.stderr
    # Kept in memory (the API without `out`), 10 kpkt/s for 500 s: 5 M packets' tables (~2.5 GB)
    # are refused before sending (plan.rs); written to a directory they stream instead.
    with pytest.raises(gen.GenError, match="give the results a directory to stream them to"):
        gen.send(receiver.to, text=gen.ditg_flows(rate=10_000, duration_ms=500_000))


def test_affinity_keeps_the_sender_to_the_cpus_given_and_names_the_valid_ones(receiver, tmp_path):
    # iperf3's -A: the sender runs on the CPUs given, and says so in its measure block.
    cpus = sorted(os.sched_getaffinity(0))
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "-C", "100", "-c", "64", "-t", "200", "--affinity", str(cpus[-1]),
                        "--out", str(tmp_path / "r"), "--no-report", "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["measure"]["sender_cpus"] == [cpus[-1]]
    beyond = max(cpus) + 1
    for spec, wanted in [(str(beyond), f"{beyond} is not a CPU this process may use"), ("x", "'x' is not a CPU number"), ("1-0", "1-0 is not a CPU")]:
        p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "-t", "100", "-A", spec, "--out", str(tmp_path / "x")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and wanted in p.stderr and "valid: CPU numbers or ranges among" in p.stderr and "Traceback" not in p.stderr, (spec, p.stderr)
    assert gen.cpu_set(f"{cpus[0]}-{cpus[-1]}") == set(cpus), "a range holds both ends"


def test_a_receiver_beyond_loopback_needs_a_token():
    p = subprocess.run([*LASTHOP, "gen", "recv", "--listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--token" in p.stderr


def test_a_flows_file_error_names_the_file_line_and_field(receiver, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[flows]]\nname = "v"\napp = { type = "cbr", size = "160B", interval = "fast" }\n')
    with pytest.raises(gen.GenError, match=r"bad\.toml: line 3: flows\.v\.app\.interval: invalid duration \"fast\""):
        gen.send(receiver.to, bad)


TWO_FLOWS = CBR + '[[flows]]\nname = "ctl"\ntransport = "tcp"\napp = { type = "cbr", size = "200B", interval = "20ms" }\n'


def _itgdec_flows(text: str) -> dict[int, dict[str, float]]:
    """ITGDec's per-flow blocks: flow number -> {"Total packets": ..., "Minimum delay": ...}."""
    flows: dict[int, dict[str, float]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("Flow number:"):
            current = flows.setdefault(int(line.split(":")[1]), {})
        elif "****" in line:
            current = None
        elif current is not None and " = " in line:
            key, value = (s.strip() for s in line.split(" = ", 1))
            current[key] = float(value.split()[0])
    return flows


def test_ditg_logs_of_both_ends_read_the_same_in_itgdec_ditg_dec_and_the_runs_summary(tmp_path):
    # Both ends write D-ITG logs of a UDP flow (100 pkt/s) and a TCP one (50 msg/s) over 1 s.
    from lasthop.ditg import decode

    send_log, recv_log = tmp_path / "send.log", tmp_path / "recv.log"
    r = Receiver("--ditg-log", str(recv_log))
    flows = tmp_path / "flows.toml"
    flows.write_text(TWO_FLOWS)
    res = gen.send(r.to, flows, duration=1.0, loss_timeout=0.5, ditg_log=send_log)
    r.stop()  # the receiver's log is complete once its session has ended
    sent, received = _itgdec_flows(decode(send_log)), _itgdec_flows(decode(recv_log))
    # D-ITG's flow ids count from 1: voice is flow 1, ctl flow 2.
    for fid, name in [(1, "voice"), (2, "ctl")]:
        f = res.flow(name)
        assert sent[fid]["Total packets"] == f["sent_packets"] == {1: 100, 2: 50}[fid]
        rx = received[fid]
        assert rx["Total packets"] == f["received_packets"] and rx["Packets dropped"] == f["lost_packets"] == 0
        assert rx["Bytes received"] == f["delivered_bytes"], "D-ITG's size is the payload after the UDP/TCP header"
        # The log's times are µs (truncated), ITGDec prints s to 6 decimals: delays agree to 1.5 µs,
        # D-ITG's jitter (mean |difference of consecutive delays|) to 2.5 µs.
        d = f["delay_ms"]
        for key, ours in [("Minimum delay", d["min"]), ("Maximum delay", d["max"]), ("Average delay", d["mean"])]:
            assert abs(rx[key] * 1e3 - ours) <= 1.5e-3, (name, key, rx[key], ours)
        assert abs(rx["Average jitter"] * 1e3 - f["jitter_ms"]["ditg"]) <= 2.5e-3, (name, rx["Average jitter"], f["jitter_ms"])
    itgdec = shutil.which("ITGDec")
    if itgdec is None:
        pytest.skip("Debian's d-itg is not installed (scripts/system-deps.sh installs it): ITGDec itself not compared")
    for log in (send_log, recv_log):
        out = subprocess.run([itgdec, str(log)], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        assert out.split("\n", 2)[2] == decode(log), f"ITGDec and lasthop ditg-dec differ on {log.name}"


def test_a_round_trip_runs_sender_log_holds_its_echoes_as_itgsend_m_rttm_logs_them(tmp_path):
    # With the RTT meter the sender's D-ITG log is ITGSend's in -m rttm: one record per echo, its
    # receive time the echo's arrival, so ITGDec prints the round trip as the delay; TCP flows
    # are not echoed and keep one-way records (their "delay" 0). Expected: the run's own
    # round-trip statistics (measure.flows[].rtt_ms), to the log's µs truncation.
    from lasthop.ditg import decode, import_logs

    send_log = tmp_path / "send.log"
    r = Receiver()
    flows = tmp_path / "flows.toml"
    flows.write_text(TWO_FLOWS)
    res = gen.send(r.to, flows, duration=1.0, loss_timeout=0.5, meter="rtt", ditg_log=send_log)
    r.stop()
    logged = _itgdec_flows(decode(send_log))
    rtt = {m["name"]: m for m in res.summary["measure"]["flows"]}["voice"]["rtt_ms"]
    echoes = res.flow("voice")["received_packets"] - {m["name"]: m for m in res.summary["measure"]["flows"]}["voice"]["echo_lost"]
    assert logged[1]["Total packets"] == echoes == 100, "one record per echo (loopback loses none)"
    for key, ours in [("Minimum delay", rtt["min"]), ("Maximum delay", rtt["max"]), ("Average delay", rtt["mean"])]:
        assert abs(logged[1][key] * 1e3 - ours) <= 1.5e-3, (key, logged[1][key], ours)
    assert logged[1]["Minimum delay"] > 0, "a round trip, not the one-way sender record's 0"
    assert logged[2]["Total packets"] == 50 and logged[2]["Maximum delay"] == 0, "the TCP flow's records stay one-way"
    # The flow's round_trip (as an echo flow's in the simulator): the same round trips, and
    # RPM = 60 000 / the mean of the best 95 % of them, which lies at or below the mean.
    rt = res.flow("voice")["round_trip"]
    assert rt["echoes"] == 100 and rt["rtt_ms"]["mean"] == rtt["mean"]
    assert rt["trimmed_mean_ms"] <= rt["rtt_ms"]["mean"] and abs(rt["rpm"] - 60_000 / rt["trimmed_mean_ms"]) < 1e-9
    assert "round_trip" not in res.flow("ctl"), "TCP flows are not echoed"
    # Per interval (round_trips/<flow>, as an echo flow's in the simulator): the same 100 echoes,
    # and their mean weighted by the echoes of each interval is the run's mean round trip.
    table = res.trace("round_trips/voice")
    assert table.echoes.sum() == 100
    assert (table.rtt_mean_ms.fillna(0) * table.echoes).sum() / 100 == pytest.approx(rt["rtt_ms"]["mean"], rel=1e-9)
    assert "round_trips/ctl" not in res.traces
    # And lasthop import-ditg reads it back as a round-trip log.
    back = import_logs(send_log)
    assert back.summary["scenario"]["meter"] == "rttm"
    assert abs(back.flow("flow1")["delay_ms"]["mean"] - rtt["mean"]) <= 1.5e-3


def test_the_receivers_session_limits_are_options_and_a_silent_peer_is_closed_at_the_handshake_limit():
    import socket

    r = Receiver("--handshake-timeout", "0.5")
    try:
        host, port = r.to.split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            t0 = time.monotonic()
            line = s.makefile().readline()
            waited = time.monotonic() - t0
        assert '"type":"error"' in line and "no hello within 500ms" in line, line
        assert 0.4 < waited < 5, waited
    finally:
        r.stop()
    for args, wanted in [(["--idle-timeout", "2"], "more than the 5 s"), (["--max-sessions", "0"], "--max-sessions"),
                         (["--handshake-timeout", "0"], "--handshake-timeout")]:
        p = subprocess.run([*LASTHOP, "gen", "recv", "--listen", "127.0.0.1:0", *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and wanted in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)


def test_what_a_killed_sender_and_receiver_leave_the_next_start_removes(tmp_path):
    # Issue 24: a SIGKILLed `gen send` left <tmp>/lasthop-gen-* with its records (453 MB after
    # 30 s) and a receiver <tmp>/lh-recv-*, which nothing cleaned. Both are now
    # lh-<pid>-{gen,recv}-*, and the next sender or receiver to start removes those whose
    # process is gone. A TMPDIR of the test's own keeps other tests' starts out of it.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    flows = tmp_path / "flows.toml"
    flows.write_text(CBR)
    rx = subprocess.Popen([*LASTHOP, "gen", "recv", "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    to = "127.0.0.1:" + re.search(r"listening on 127\.0\.0\.1:(\d+)", rx.stderr.readline()).group(1)
    tx = subprocess.Popen([*LASTHOP, "gen", "send", "--to", to, "--flows", str(flows), "--duration", "60", "-o", str(tmp_path / "out")],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ours = {"gen": f"lh-{tx.pid}-gen-", "recv": f"lh-{rx.pid}-recv-"}

    def records(kind: str) -> int:
        """The record files in the kind's working directories (written through 1 MiB buffers:
        their sizes lag)."""
        return sum(1 for d in tmp.glob(ours[kind] + "*") for f in d.rglob("*") if f.is_file())

    try:
        deadline = time.time() + 30
        while not (records("gen") > 0 and records("recv") > 0) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        for p in (tx, rx):
            p.send_signal(signal.SIGKILL)
            p.wait()
    assert records("gen") > 0 and records("recv") > 0, sorted(p.name for p in tmp.iterdir())
    # The next start (a receiver, and a sender of one short session) removes both.
    again = subprocess.Popen([*LASTHOP, "gen", "recv", "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        to = "127.0.0.1:" + re.search(r"listening on 127\.0\.0\.1:(\d+)", again.stderr.readline()).group(1)
        sent = subprocess.run([*LASTHOP, "gen", "send", "--to", to, "--flows", str(flows), "--duration", "0.2", "-o", str(tmp_path / "out2")],
                              env=env, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=20)
    assert not list(tmp.glob(ours["gen"] + "*")) and not list(tmp.glob(ours["recv"] + "*")), sorted(p.name for p in tmp.iterdir())


def test_a_fifo_given_as_the_flows_file_is_refused_not_waited_on(tmp_path):
    # Issue 24: "a FIFO given as any input file hangs its reader"; gen send's flows file did.
    fifo = tmp_path / "flows.toml"
    os.mkfifo(fifo)
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", "127.0.0.1:9", "--flows", str(fifo)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and f"{fifo}: is a FIFO, not a regular file" in p.stderr, p.stderr
