"""pcap captures: Wireshark's tshark reads them, and what it sees matches the run's records."""

import json
import shutil
import subprocess

import pytest

from conftest import lasthop_cli

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed (make test installs it with apt-get as root)")


def _fields(pcap, *fields, display_filter=None):
    cmd = [TSHARK, "-r", str(pcap), "-T", "fields", "-o", "ip.check_checksum:TRUE", *sum((["-e", f] for f in fields), [])]
    if display_filter:
        cmd += ["-Y", display_filter]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines() if line]


@needs_tshark
def test_tshark_reads_the_capture_and_agrees_with_the_run(tmp_path):
    # A 200 000-byte transfer plus the voice flow, captured at the sender (all its interfaces).
    r = lasthop_cli("run", "--set", "simulation.duration=3s", "--set", "flows.bulk.app.bytes=200000B",
                    "--pcap", "sender", "--out", str(tmp_path), "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    bulk = next(f for f in summary["flows"] if f["name"] == "bulk")
    voice = next(f for f in summary["flows"] if f["name"] == "voice")
    pcap = tmp_path / "sender.pcap"
    rows = _fields(pcap, "ip.proto", "ip.checksum.status", "tcp.srcport", "tcp.seq_raw", "tcp.len", "tcp.flags.syn", "ip.len", "ip.src")
    # Every packet the sender sent, and every ACK that reached it.
    expected = bulk["sent_packets"] + bulk["reverse"]["received_packets"] + voice["sent_packets"]
    assert len(rows) == expected
    assert all(r[1] == "1" for r in rows), "every IPv4 header checksum verifies"
    assert sum(r[0] == "17" for r in rows) == voice["sent_packets"]
    data = [r for r in rows if r[2] == "10000" and r[4] not in ("", "0")]
    isn = int(next(r for r in rows if r[2] == "10000" and r[5] == "1")[3])
    # Sequence numbers: the data covers ISN + 1 ... ISN + 200 000 (retransmissions repeat).
    first = min(int(r[3]) for r in data)
    last_end = max((int(r[3]) - isn - 1) % 2**32 + int(r[4]) for r in data)
    assert first == isn + 1
    assert last_end == 200_000 == bulk["delivered_bytes"]
    # IP total lengths of what the sender (10.0.0.1) sent = the bytes the run says it sent.
    sent = sum(int(r[6]) for r in rows if r[7] == "10.0.0.1")
    assert sent == bulk["sent_bytes"] + voice["sent_bytes"]


def test_bad_capture_point_is_rejected(tmp_path):
    r = lasthop_cli("run", "--pcap", "nowhere", "--out", str(tmp_path), "-q")
    assert r.returncode == 2 and 'no such node' in r.stderr
    r = lasthop_cli("run", "--pcap", "sender:receiver", "--out", str(tmp_path), "-q")
    assert r.returncode == 2 and "is not a neighbour" in r.stderr
