"""Paper 000's knobs on a real stack (`lasthop gen`): the file loop's send() size and Sleep at the
sender, its recv() size and Sleep at the receiver, and the sockets' buffers, all from the same
scenario keys the simulator reads (Hur & Hong, shared/papers/000: Tables 6 and 7's inter-packet
delays, Sect. 4.1's socket buffers, Sect. 4.2's application buffer). Over loopback: the transfer
times are the applications' own sleeps, counted by hand below."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_gen import LASTHOP, Receiver  # noqa: F401  (the receiver process helper)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def send(receiver, tmp_path: Path, flows: str, name: str = "r") -> dict:
    f = tmp_path / f"{name}.toml"
    f.write_text("[simulation]\nduration = \"20s\"\n" + flows)
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "--flows", str(f), "--out", str(tmp_path / name), "--no-report", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def file_flow(name: str, kib: int, *, message: int = 4096, app_buffer: int = 4096, send_delay: str = "0ms", receive_delay: str = "0ms",
              tcp: str = "") -> str:
    return (f'[[flows]]\nname = "{name}"\napp = {{ type = "file", bytes = "{kib}KiB", message = "{message}B", app_buffer = "{app_buffer}B", '
            f'send_delay = "{send_delay}", receive_delay = "{receive_delay}" }}\n' + (f"tcp = {{ {tcp} }}\n" if tcp else ""))


def test_a_slow_receivers_sleeps_set_the_transfer_time_and_small_buffers_block_the_sender(receiver, tmp_path):
    # 256 KiB read 4 096 B at a time with a 10 ms Sleep after each recv(): 64 reads, so the last
    # byte is read after 63 sleeps, at least 630 ms (hand count). With the kernel's autotuned
    # buffers the whole file fits in them at once: the sender never waits, every read is full
    # and the sleeps (each well under 1 ms late) are the whole time.
    s = send(receiver, tmp_path, file_flow("file", 256, receive_delay="10ms"))
    f = s["flows"][0]
    # Bytes as the simulator counts them: each 4 096 B message plus 40 B of TCP/IPv4 headers.
    assert f["received_bytes"] == 64 * (4096 + 40) and f["received_packets"] == 64, f
    assert 0.63 <= f["response_time_s"] < 0.80, f["response_time_s"]
    assert s["measure"]["flows"][0]["send_blocked_s"] < 0.1, s["measure"]["flows"][0]
    # Paper 000's small buffers (16 KiB receive, 8 KiB send; Linux holds about twice each): the
    # sender can be at most ~48 KiB ahead of the reader and waits in write() through at least
    # the ~50 reads after that (0.4 s; measured 0.59-0.61 s), while the reader, never starved on
    # loopback, still takes its 63 sleeps (measured 0.646 s). The receive buffer is the
    # listener's before the handshake (a buffer shrunk under a running connection made the
    # kernel drop queued segments: 1.1 s here).
    s = send(receiver, tmp_path, file_flow("file", 256, receive_delay="10ms", tcp='receive_buffer = "16KiB", send_buffer = "8KiB"'), name="small")
    assert s["measure"]["flows"][0]["send_blocked_s"] > 0.4, s["measure"]["flows"][0]
    assert 0.63 <= s["flows"][0]["response_time_s"] < 0.80, s["flows"][0]["response_time_s"]


def test_a_larger_application_buffer_halves_the_reads_and_the_time(receiver, tmp_path):
    # The same 256 KiB with 8 192 B recv()s: 32 reads, 31 sleeps, at least 310 ms (Sect. 4.2's
    # application buffer, here with nothing else slowing the reader).
    f = send(receiver, tmp_path, file_flow("file", 256, app_buffer=8192, receive_delay="10ms"))["flows"][0]
    assert 0.31 <= f["response_time_s"] < 0.45, f["response_time_s"]


def test_the_senders_inter_packet_delay_sets_the_transfer_time(receiver, tmp_path):
    # Tables 6-7's Sleep at the sender: 40 KiB in 4 096 B send()s with 10 ms after each, so the
    # tenth send() starts after nine sleeps: at least 90 ms (hand count).
    f = send(receiver, tmp_path, file_flow("file", 40, send_delay="10ms"))["flows"][0]
    assert f["received_packets"] == 10
    assert 0.09 <= f["response_time_s"] < 0.2, f["response_time_s"]


def test_socket_buffers_are_set_where_the_file_gives_them_and_autotuned_otherwise(receiver, tmp_path):
    # socket(7): Linux doubles the value given to SO_RCVBUF/SO_SNDBUF (bookkeeping overhead) and
    # getsockopt returns the doubled value. A flow without the keys keeps the kernel's buffers:
    # they start at tcp_rmem[1] and tcp_wmem[1] (net/ipv4 sysctls) and autotuning only grows them
    # (the send buffer at once, when the connection is established).
    s = send(receiver, tmp_path, file_flow("set", 64, tcp='receive_buffer = "16384B", send_buffer = "8192B"')
             + file_flow("unset", 64, tcp='variant = "cubic"'))
    m = {f["name"]: f for f in s["measure"]["flows"]}
    assert (m["set"]["so_rcvbuf_bytes"], m["set"]["so_sndbuf_bytes"]) == (2 * 16384, 2 * 8192), m["set"]
    rmem = int(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()[1])
    wmem = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[1])
    assert m["unset"]["so_rcvbuf_bytes"] >= rmem and m["unset"]["so_sndbuf_bytes"] >= wmem, m["unset"]
    assert [f["received_packets"] for f in s["flows"]] == [16, 16], s["flows"]


def test_a_variant_the_file_names_is_the_sockets_congestion_control(receiver, tmp_path):
    # tcp.variant = "newreno" is Linux's "reno"; a flow without it runs the host's default
    # (net.ipv4.tcp_congestion_control).
    default = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    s = send(receiver, tmp_path, file_flow("reno", 16, tcp='variant = "newreno"') + file_flow("host", 16))
    assert [f["tcp_congestion"] for f in s["measure"]["flows"]] == ["reno", default]
    # A variant the host lacks is refused before anything is sent (send.rs's unit test).


def _kernel_has_tcp_timer_options() -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.setsockopt(socket.IPPROTO_TCP, 45, 100_000)  # TCP_RTO_MIN_US, Linux 6.15+
            return True
        except OSError:
            return False


@pytest.mark.skipif(not _kernel_has_tcp_timer_options(), reason="this kernel predates Linux 6.15's TCP_RTO_MIN_US / TCP_DELACK_MAX_US")
def test_the_tcp_tables_socket_settings_reach_the_sockets_and_the_rest_is_named(receiver, tmp_path):
    # tcp.mss = 536 B is the sender's TCP_MAXSEG: the 64 KiB file (16 messages of 4 096 B plus
    # lasthop's header) leaves in at least 65 536 / 536 = 123 segments (hand count), where
    # loopback's 65 483 B MSS needs a handful. tcp.rto_min = 50 ms is its TCP_RTO_MIN_US: on
    # loopback (RTT ~50 µs) the RTO is its lower bound (RFC 6298 (2.4): max(RTO.min,
    # SRTT + 4·RTTVAR)), 50 ms rounded up to whole jiffies (at most 10 ms more), against Linux's
    # 200 ms by default. tcp.delayed_ack = 10 ms is the receiver's TCP_DELACK_MAX_US, read back
    # from its socket. tcp.sack has no socket option: the run says so instead of dropping it.
    flows = (file_flow("set", 64, tcp='mss = "536B", rto_min = "50ms", delayed_ack = "10ms", sack = true')
             + file_flow("unset", 64))
    f = tmp_path / "r.toml"
    f.write_text("[simulation]\nduration = \"20s\"\n" + flows)
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "--flows", str(f), "--out", str(tmp_path / "r"), "--no-report", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    tcp = {f["name"]: f["tcp"] for f in s["flows"]}
    m = {f["name"]: f for f in s["measure"]["flows"]}
    assert tcp["set"]["segments_sent"] >= 123 and tcp["unset"]["segments_sent"] < 40, (tcp["set"], tcp["unset"])
    assert 50 <= tcp["set"]["rto_ms"] <= 60 and tcp["unset"]["rto_ms"] >= 200, (tcp["set"]["rto_ms"], tcp["unset"]["rto_ms"])
    assert 10 <= m["set"]["receiver_delack_max_ms"] <= 20 and m["unset"]["receiver_delack_max_ms"] is None, m
    assert [w.split(":")[0] for w in m["set"]["tcp_not_applied"]] == ["tcp.sack"] and m["unset"]["tcp_not_applied"] == []
    assert "warning: flow 'set': tcp.sack: no socket option sets it; the host's sysctl net.ipv4.tcp_sack" in p.stderr, p.stderr
    # What Linux refuses is refused before anything is sent, naming the field and the range: a
    # socket may lower its minimum RTO, not raise it to the scenario's RFC 6298 default of 1 s.
    f.write_text("[simulation]\nduration = \"2s\"\n" + file_flow("slow", 16, tcp='rto_min = "1s"'))
    p = subprocess.run([*LASTHOP, "gen", "send", "--to", receiver.to, "--flows", str(f), "--out", str(tmp_path / "bad")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and 'flow "slow": tcp.rto_min = 1000ms cannot be set on a socket here' in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "bad").exists()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_reproduce_hur_hong_in_the_measure_world_puts_real_sockets_beside_the_simulator(tmp_path):
    # `lasthop reproduce hur-hong2006 --world measure`: the paper's transfers over real sockets.
    # Every measured time lies above its hand count of Sleeps (the slower end's calls × its
    # Sleep: e.g. 117 send()s of 4 096 B with Sleep(10) = 1 170 ms before the last) and within
    # 5 % + 0.5 ms per Sleep + 20 ms of it: nothing else is slow on loopback, but each Sleep
    # wakes late by Linux's timer slack (50 µs) and the scheduler's wake-up latency (measured
    # here: 151 ms for 117 Sleep(1), 0.29 ms late each; a shared machine adds more). The
    # simulator's modelled PDA is slower on every row (its CPU, flash and lazy window updates).
    import pandas as pd

    p = subprocess.run([*LASTHOP, "reproduce", "hur-hong2006", "--world", "measure", "--quick", "--seeds", "1", "-o", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    t = pd.read_csv(tmp_path / "measured_vs_simulated.csv")
    assert len(t) == 9, t
    floor = t.sleeps_floor_ms
    assert ((t.measured_ms_mean >= floor) & (t.measured_ms_mean <= 1.05 * floor + 0.5 * t.sleeps + 20)).all(), t.to_string()
    assert (t.simulated_ms_mean > t.measured_ms_mean).all(), t
    claims = pd.read_csv(tmp_path / "hur-hong2006.csv")
    assert claims.verdict.str.startswith("meets").sum() == 8, claims.verdict.tolist()
    p = subprocess.run([*LASTHOP, "reproduce", "koga2005", "--world", "measure", "-o", str(tmp_path / "k")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "runs only in the simulator" in p.stderr and "hur-hong2006" in p.stderr, p.stderr
