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


def _records(pcap: bytes) -> list[tuple[int, int, str]]:
    """(timestamp ns, original length, IPv4 destination) of every record of a nanosecond pcap file
    of raw IPv4 (libpcap format: a 24-byte file header, then per record ts_sec, ts_nsec,
    incl_len, orig_len and the bytes; the destination address is at bytes 16..20 of the header)."""
    import struct

    out, at = [], 24
    while at < len(pcap):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", pcap, at)
        dst = ".".join(str(b) for b in pcap[at + 16 + 16:at + 16 + 20])
        out.append((sec * 1_000_000_000 + nsec, orig, dst))
        at += 16 + incl
    return out


def test_a_capture_shows_what_the_link_sent_at_the_rate_it_sent_it(tmp_path):
    # The bundled dumbbell drops at the 10 Mb/s bottleneck's queue. A capture on the router's
    # interface towards the receiver records packets when serialization starts: exactly the
    # link's transmitted packets (queue drops never reach the wire), each at least one
    # serialization time (8 · length / 10 Mb/s) after the one before it.
    r = lasthop_cli("run", "--pcap", "router:receiver", "--out", str(tmp_path), "-q", "--no-report")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    link = next(l for l in summary["links"] if l["name"] == "bottleneck:router->receiver")
    assert link["queue_drops"] > 0, "the scenario must drop at the queue for this test to mean anything"
    # The capture holds both directions of the interface; the receiver (node 3) is 10.0.0.3.
    recs = [r for r in _records((tmp_path / "router-receiver.pcap").read_bytes()) if r[2] == "10.0.0.3"]
    # tx_packets counts finished serializations: a packet on the wire when the run ends is
    # captured but not counted.
    assert len(recs) - link["tx_packets"] in (0, 1)
    gaps_ok = [t1 - t0 >= 8 * n0 * 100 for (t0, n0, _), (t1, _, _) in zip(recs, recs[1:])]  # 100 ns per bit
    assert all(gaps_ok), f"{gaps_ok.count(False)} packets start before the previous one is serialized"
