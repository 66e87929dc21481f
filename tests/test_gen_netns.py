"""lasthop gen across a real bottleneck: two network namespaces this test creates and removes
(lh-<pid>-a, lh-<pid>-b), a veth pair between them with documentation addresses (192.0.2.0/24,
RFC 5737), and a TBF qdisc on the sender's side (this kernel has no netem).

Expected values: the packets lost are exactly those TBF dropped (its own counter, `tc -s qdisc`):
UDP sends into a full qdisc return no error without IP_RECVERR, so the sender counts them sent
and the receiver never sees them; one-way delay with a standing queue ≈ queue / rate (TBF's
`limit` bytes drained at `rate`), here 30 000 B at 10 Mbit/s = 24 ms."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"),
                                reason="needs root, ip and tc (network namespaces)")

A, B = f"lh-{os.getpid()}-a", f"lh-{os.getpid()}-b"
ADDR_A, ADDR_B = "192.0.2.1", "192.0.2.2"
RATE_BPS, LIMIT_B, BURST_B = 10_000_000, 30_000, 5_000


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def testbed():
    try:
        sh("ip", "netns", "add", A)
        sh("ip", "netns", "add", B)
    except subprocess.CalledProcessError as e:
        for ns in (A, B):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        pytest.skip(f"cannot create network namespaces here: {e.stderr.strip()}")
    try:
        sh("ip", "link", "add", "lhveth-a", "netns", A, "type", "veth", "peer", "name", "lhveth-b", "netns", B)
        for ns, dev, addr in ((A, "lhveth-a", ADDR_A), (B, "lhveth-b", ADDR_B)):
            sh("ip", "netns", "exec", ns, "sysctl", "-q", f"net.ipv6.conf.{dev}.disable_ipv6=1")
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", A, "tc", "qdisc", "add", "dev", "lhveth-a", "root", "tbf",
           "rate", f"{RATE_BPS // 1000}kbit", "burst", str(BURST_B), "limit", str(LIMIT_B))
        yield
    finally:
        for ns in (A, B):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def tbf_dropped() -> int:
    out = sh("ip", "netns", "exec", A, "tc", "-s", "qdisc", "show", "dev", "lhveth-a")
    m = re.search(r"dropped (\d+)", out)
    assert m, out
    return int(m.group(1))


def test_loss_is_tbfs_drop_count_and_delay_is_queue_over_rate(testbed, tmp_path):
    recv = subprocess.Popen(["ip", "netns", "exec", B, sys.executable, "-m", "lasthop", "gen", "recv",
                             "--listen", f"{ADDR_B}:9000", "--token", "t", "--once"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in recv.stderr.readline()
        before = tbf_dropped()
        # 1000-byte payloads at 2000 pkt/s = 16.6 Mbit/s of IP into a 10 Mbit/s bucket, for 3 s.
        out = tmp_path / "r"
        p = subprocess.run(["ip", "netns", "exec", A, sys.executable, "-m", "lasthop", "gen", "send", "--to", f"{ADDR_B}:9000",
                            "--token", "t", "-C", "2000", "-c", "1000", "-t", "3000", "--out", str(out), "--no-report"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        dropped = tbf_dropped() - before
    finally:
        try:
            recv.wait(timeout=30)
        except subprocess.TimeoutExpired:  # the sender never reached it: do not leave it running
            recv.kill()
            recv.wait()
    s = json.loads((out / "summary.json").read_text())
    f = s["flows"][0]
    print(f"tbf dropped {dropped}, lost {f['lost_packets']}, received {f['received_packets']}, delay {f['delay_ms']}")
    assert f["sent_packets"] == 6000
    assert dropped > 1000, "the bucket overflowed"
    assert f["lost_packets"] == f["lost_by_cause"]["unattributed"] == dropped
    assert f["received_packets"] == 6000 - dropped
    # A standing queue of LIMIT_B bytes drained at RATE_BPS: 24 ms (± 15 %: the bucket's burst
    # and the packets' own serialization).
    expected_ms = LIMIT_B * 8 / RATE_BPS * 1e3
    assert abs(f["delay_ms"]["p50"] - expected_ms) < 0.15 * expected_ms, (f["delay_ms"], expected_ms)
