"""D-ITG compatibility: `lasthop ditg-dec` against the real ITGDec, `lasthop import-ditg` against
hand counts and ITGDec, and bad logs.

Expected values come from three places, named in each test: ITGDec's output stored beside the
golden logs of tests/data/ditg (README.md there has the commands that made them), counts done
by hand on tiny logs built here with Python's struct (independent of lasthop's writer), and the
real ITGSend/ITGRecv/ITGDec run live on loopback when Debian's d-itg is installed
(scripts/system-deps.sh installs it for `make test`).
"""

from __future__ import annotations

import json
import lzma
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, lasthop_cli
from lasthop.ditg import DitgLogError, decode, import_logs
from lasthop.results import Results

DATA = ROOT / "tests" / "data" / "ditg"
REC = struct.Struct("<9I46s46sdd")
GOLDEN = sorted(p.name for p in DATA.glob("*.log"))
HAVE_DITG = all(shutil.which(t) for t in ("ITGSend", "ITGRecv", "ITGDec"))
NEED_DITG = pytest.mark.skipif(not HAVE_DITG, reason="Debian's d-itg (ITGSend/ITGRecv/ITGDec) is not installed: scripts/system-deps.sh installs it as root")


def itgdec_text(path: Path) -> str:
    """ITGDec's stdout without its two banner lines."""
    return path.read_text().split("\n", 2)[2]


def rec(flow, seq, tx_s, rx_s, size=100, sport=40000, dport=8999):
    """A record sent at 12:00:tx_s and received at 12:00:rx_s."""
    return REC.pack(flow, seq, sport, dport, 12, 0, 12, 0, size, b"10.0.0.1", b"10.0.0.2", tx_s, rx_s)


# Receiver log: sequence numbers 1, 2, 4, 5 (3 lost), delays 10, 12, 11, 15 ms. The sender's
# log has 1..6: 3 is lost in the middle, 6 after the last received packet.
TINY_RECV = [rec(1, 1, 1.0, 1.010), rec(1, 2, 1.1, 1.112), rec(1, 4, 1.3, 1.311), rec(1, 5, 1.4, 1.415)]
TINY_SEND = [rec(1, s, t, t) for s, t in [(1, 1.0), (2, 1.1), (3, 1.2), (4, 1.3), (5, 1.4), (6, 1.5)]]


def numbers(text: str) -> dict[str, str]:
    """'Label = value' lines of the first block of an ITGDec summary (first occurrence wins)."""
    out: dict[str, str] = {}
    for label, value in re.findall(r"^([A-Za-z -]+?)\s*=\s*(.+)$", text, re.M):
        out.setdefault(label.strip(), value.strip())
    return out


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_logs_decode_as_itgdec_printed_them(name, tmp_path):
    log = DATA / name
    assert decode(log) == itgdec_text(DATA / f"{name}.itgdec.txt")
    expected = expected_combined(name)
    if expected is not None:  # edge-ports has none: ITGDec mixes that log's per-flow files
        decode(log, 100, tmp_path / "c.dat")
        assert (tmp_path / "c.dat").read_text() == expected


def expected_combined(name: str) -> str | None:
    """ITGDec's -c 100 output for a golden log; stored xz-compressed when large (the midnight
    log's series covers a whole day of 100 ms lines: 42 MB, 0.3 MB compressed)."""
    plain = DATA / f"{name}.combined_100.dat"
    if plain.exists():
        return plain.read_text()
    packed = DATA / f"{name}.combined_100.dat.xz"
    return lzma.decompress(packed.read_bytes()).decode() if packed.exists() else None


def test_tiny_log_counted_by_hand(tmp_path):
    log = tmp_path / "tiny.log"
    log.write_bytes(b"".join(TINY_RECV))
    n = numbers(decode(log))  # the flow's block comes first
    assert n["Total time"] == "0.405000 s"  # 1.415 - 1.010
    assert n["Total packets"] == "4"
    assert n["Minimum delay"] == "0.010000 s"
    assert n["Maximum delay"] == "0.015000 s"
    assert n["Average delay"] == "0.012000 s"  # (10+12+11+15)/4 ms
    assert n["Average jitter"] == "0.002333 s"  # (2+1+4)/3 ms
    assert n["Delay standard deviation"] == "0.001871 s"  # sqrt((4+0+1+9)/4) ms
    assert n["Bytes received"] == "400"
    assert n["Average bitrate"] == "7.901235 Kbit/s"  # 400*8/1000/0.405
    assert n["Average packet rate"] == "9.876543 pkt/s"  # 4/0.405
    assert n["Packets dropped"] == "1 (20.00 %)"  # max seq 5 - 4 received
    assert n["Average loss-burst size"] == "1.000000 pkt"
    # -c 200: intervals from rx 1.010: [1.010, 1.210) holds 1 and 2, [1.210, 1.410) holds 4
    # (which reveals the loss of 3), [1.410, 1.610) holds 5. Bitrate: bytes*8/200 ms; jitter:
    # the |ΔD| of the interval's records over their number (a flow's first record adds no term).
    decode(log, 200, tmp_path / "c.dat")
    assert (tmp_path / "c.dat").read_text().splitlines() == [
        "0.000000 8.000000 0.011000 0.002000 0.000000",  # |12-10| / 1
        "0.200000 4.000000 0.011000 0.001000 1.000000",
        "0.400000 4.000000 0.015000 0.004000 0.000000",
    ]


def test_import_counts_tail_loss_with_the_senders_log(tmp_path):
    send, recv = tmp_path / "send.log", tmp_path / "recv.log"
    send.write_bytes(b"".join(TINY_SEND))
    recv.write_bytes(b"".join(TINY_RECV))
    both = import_logs(send, recv, out=tmp_path / "both")
    f = both.summary["flows"][0]
    assert (f["name"], f["src"], f["dst"]) == ("flow1", "10.0.0.1:40000", "10.0.0.2:8999")
    assert (f["sent_packets"], f["received_packets"], f["lost_packets"]) == (6, 4, 2)  # 3 and 6
    assert f["loss_ratio"] == pytest.approx(2 / 6)
    assert f["delay_ms"]["mean"] == pytest.approx(12.0, abs=1e-6)
    assert f["jitter_ms"]["ditg"] == pytest.approx(7 / 3, abs=1e-6)  # D-ITG's jitter, as above
    # RFC 3393 IPDV pairs consecutive sequence numbers only: (1,2) and (4,5): |2| and |4| ms.
    assert f["jitter_ms"]["mean"] == pytest.approx(3.0, abs=1e-6)
    # Bytes: 100 B payload + UDP 8 + IPv4 20; goodput counts the payload.
    assert f["received_bytes"] == 4 * 128 and f["delivered_bytes"] == 400
    sc = both.summary["scenario"]
    assert sc["tail_loss_counted"] is True and sc["sender_log"] == str(send)
    # The receiver's log alone: ITGDec's count, the tail unseen (and said so).
    alone = import_logs(None, recv)
    g = alone.summary["flows"][0]
    assert (g["sent_packets"], g["received_packets"], g["lost_packets"]) == (5, 4, 1)
    assert alone.summary["scenario"]["tail_loss_counted"] is False
    # The directory has the layout of `lasthop run` and its summary the run schema's keys.
    loaded = Results.load(tmp_path / "both")
    assert list(loaded.flows["name"]) == ["flow1"]
    assert set(loaded.intervals["flow"]) == {"flow1"}
    assert loaded.intervals["rx_packets"].sum() == 4 and loaded.intervals["lost_packets"].sum() == 2
    schema = json.loads((ROOT / "schema" / "run.schema.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "both" / "summary.json").read_text()), schema)


def test_import_of_golden_logs_agrees_with_itgdec_and_adds_the_tail():
    for name in ("loss", "tail", "multi"):
        res = import_logs(DATA / f"{name}-send.log", DATA / f"{name}-recv.log")
        text = itgdec_text(DATA / f"{name}-recv.log.itgdec.txt")
        blocks = text.split("Flow number: ")[1:]
        sent_by_flow = {b.split("\n")[0]: int(numbers(b)["Total packets"])
                        for b in itgdec_text(DATA / f"{name}-send.log.itgdec.txt").split("Flow number: ")[1:]}
        by_name = {f["name"]: f for f in res.summary["flows"]}
        assert len(by_name) == len(blocks)
        for block in blocks:
            n, number = numbers(block), block.split("\n")[0]
            f, sent = by_name[f"flow{number}"], sent_by_flow[number]
            assert f["received_packets"] == int(n["Total packets"])
            assert f["sent_packets"] == sent  # ITGDec on the sender's log
            itgdec_dropped = int(n["Packets dropped"].split()[0])
            # lasthop: sent - received; ITGDec: only gaps below the highest received.
            assert f["lost_packets"] == sent - f["received_packets"] >= itgdec_dropped
            # Same delays: the mean to ITGDec's printed µs.
            assert f["delay_ms"]["mean"] / 1e3 == pytest.approx(float(n["Average delay"].split()[0]), abs=1e-6)
            assert f["jitter_ms"]["ditg"] / 1e3 == pytest.approx(float(n["Average jitter"].split()[0]), abs=1e-6)
    tail = import_logs(DATA / "tail-send.log", DATA / "tail-recv.log").summary["flows"][0]
    assert tail["lost_packets"] > 0  # ITGDec printed 0 dropped for this log
    assert "Packets dropped          =             0 (0.00 %)" in itgdec_text(DATA / "tail-recv.log.itgdec.txt")


def test_a_round_trip_log_alone_reads_as_itgdec_reads_it():
    # rtt-send.log: the real ITGSend -m rttm (make_golden.sh): one record per echo, rx = the
    # echo's arrival. Alone, it imports as ITGDec reads it: the delay is the round trip, to
    # ITGDec's printed µs.
    res = import_logs(DATA / "rtt-send.log")
    n = numbers(itgdec_text(DATA / "rtt-send.log.itgdec.txt"))
    f = res.flow("flow1")
    assert res.summary["scenario"]["meter"] == "rttm" and res.summary["scenario"]["delay"].startswith("round trip")
    assert f["received_packets"] == f["sent_packets"] == int(n["Total packets"]) == 563
    for key, ours in [("Minimum delay", f["delay_ms"]["min"]), ("Maximum delay", f["delay_ms"]["max"]),
                      ("Average delay", f["delay_ms"]["mean"]), ("Average jitter", f["jitter_ms"]["ditg"])]:
        assert ours / 1e3 == pytest.approx(float(n[key].split()[0]), abs=1e-6), key
    # One-way sender logs are not taken for round-trip ones: their receive times are their send times.
    assert import_logs(DATA / "multi-send.log").summary["scenario"]["meter"] == "owdm"


def _tx_by_seq(path: Path) -> dict[int, float]:
    """Sequence number -> the record's tx (seconds within the hour), read with struct."""
    data = path.read_bytes()
    out: dict[int, float] = {}
    for i in range(len(data) // REC.size):
        r = REC.unpack_from(data, i * REC.size)
        out.setdefault(r[1], r[5] * 60 + r[11])
    return out


def test_a_round_trip_log_beside_the_receivers_gives_both_delays_and_mends_ditgs_round_trips():
    # With ITGRecv's log too, the flow is the one-way one (ITGDec on rtt-recv.log) and its round
    # trip is reported beside it. make_golden.sh stopped ITGRecv for 200 ms: the round trips of
    # the packets queued meanwhile exceed the 2 ms inter-departure time, and D-ITG's sender log
    # then pairs the echoed seconds with the µs of its latest packet (shared/reference/ditg.md,
    # weakness 2): ITGDec prints a 0.155 ms mean round trip where the one-way mean alone is
    # 18.4 ms. lasthop keeps ITGDec's reading (round_trip_ms_itgdec, to its printed µs) and
    # measures the round trip from the send time the packet carried (the receiver's log).
    res = import_logs(DATA / "rtt-send.log", DATA / "rtt-recv.log")
    one_way = numbers(itgdec_text(DATA / "rtt-recv.log.itgdec.txt"))
    itgdec_rtt = numbers(itgdec_text(DATA / "rtt-send.log.itgdec.txt"))
    f = res.flow("flow1")
    assert f["delay_ms"]["mean"] / 1e3 == pytest.approx(float(one_way["Average delay"].split()[0]), abs=1e-6)
    note = res.summary["scenario"]["flows"]["flow1"]
    assert note["echoes"] == 563
    for key, label in [("mean", "Average delay"), ("min", "Minimum delay"), ("max", "Maximum delay")]:
        assert note["round_trip_ms_itgdec"][key] / 1e3 == pytest.approx(float(itgdec_rtt[label].split()[0]), abs=1e-6), key
    # The records D-ITG got wrong, counted with struct: the sender log's tx differs from the
    # tx the packet carried (the receiver's log) by more than 1 µs.
    logged, carried = _tx_by_seq(DATA / "rtt-send.log"), _tx_by_seq(DATA / "rtt-recv.log")
    wrong = sum(1 for seq, t in logged.items() if seq in carried and abs(t - carried[seq]) > 1.5e-6)
    assert wrong > 50 and note["echoes_with_wrong_send_time"] == wrong, (wrong, note)
    # Mended, every round trip is at least its one-way delay: the mean too, and the longest
    # spans the stall (the one-way maximum, 207 ms, plus the way back).
    assert note["round_trip_ms"]["mean"] >= f["delay_ms"]["mean"] > 10 * note["round_trip_ms_itgdec"]["mean"]
    assert note["round_trip_ms"]["max"] >= f["delay_ms"]["max"] > 200


def test_a_round_trip_log_counted_by_hand(tmp_path):
    # Echoes of 1, 2, 4, 5 came back (3 lost out or back; 6 and later are not known): round
    # trips 20, 24, 22, 30 ms. Hand count: 4 received of 5 known, 1 lost; mean 24 ms; D-ITG
    # jitter (|4| + |2| + |8|) / 3 = 4.667 ms.
    log = tmp_path / "rtt.log"
    log.write_bytes(b"".join(rec(1, s, t, t + d) for s, t, d in [(1, 1.0, 0.020), (2, 1.1, 0.024), (4, 1.3, 0.022), (5, 1.4, 0.030)]))
    res = import_logs(log)
    f = res.flow("flow1")
    assert (f["sent_packets"], f["received_packets"], f["lost_packets"]) == (5, 4, 1)
    assert f["delay_ms"]["mean"] == pytest.approx(24.0, abs=1e-6)
    assert f["jitter_ms"]["ditg"] == pytest.approx(14 / 3, abs=1e-6)
    assert "echoes missing" in res.summary["scenario"]["loss"]


def test_cli_ditg_dec_prints_itgdec_text_and_writes_the_series(tmp_path):
    r = lasthop_cli("ditg-dec", str(DATA / "multi-recv.log"))
    assert r.returncode == 0 and r.stdout == itgdec_text(DATA / "multi-recv.log.itgdec.txt")
    # -c alone prints no summary, as ITGDec; the file defaults to combined_stats.dat.
    r = lasthop_cli("ditg-dec", str(DATA / "multi-recv.log"), "-c", "100", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert (tmp_path / "combined_stats.dat").read_text() == (DATA / "multi-recv.log.combined_100.dat").read_text()
    r = lasthop_cli("import-ditg", str(DATA / "loss-send.log"), str(DATA / "loss-recv.log"), "--out", str(tmp_path / "imp"))
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "imp" / "summary.json").read_text())
    assert summary["scenario"]["receiver_log"].endswith("loss-recv.log")
    # An import is neither simulated nor measured by lasthop: summary.json and the console say so.
    assert summary["world"] == "import" and f"{summary['simulated_s']:g} s imported in" in r.stdout, r.stdout
    assert "simulated" not in r.stdout


def test_bad_logs_give_one_clear_error(tmp_path):
    cut = tmp_path / "cut.log"
    cut.write_bytes((DATA / "multi-recv.log").read_bytes()[: 144 * 3 + 50])
    with pytest.raises(DitgLogError, match=r"cut\.log: truncated record at byte 432: 50 of the 144 bytes"):
        decode(cut)
    with pytest.raises(DitgLogError, match="cut.log: truncated record at byte 432"):
        import_logs(None, cut)
    r = lasthop_cli("ditg-dec", str(cut))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "byte 432" in r.stderr and "Traceback" not in r.stderr
    r = lasthop_cli("ditg-dec", str(tmp_path / "missing.log"))
    assert r.returncode == 2 and "missing.log" in r.stderr
    # A FIFO would block the reader forever and /dev/zero never end (issue 24): refused by kind.
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device")):
        with pytest.raises(DitgLogError, match=f"{path}: .*is {kind}, not a regular file"):
            decode(path)
    with pytest.raises(DitgLogError, match="no record to import"):
        import_logs(None, DATA / "edge-empty.log")


def test_fuzzed_logs_never_crash(tmp_path):
    """Random bytes, random records and cut-off golden logs: a summary or a DitgLogError."""
    rng = random.Random(12)
    golden = (DATA / "loss-recv.log").read_bytes()
    for i in range(150):
        kind = i % 3
        if kind == 0:
            data = rng.randbytes(rng.randrange(0, 3000))
        elif kind == 1:  # well-formed records with random fields, times often valid
            data = b"".join(
                REC.pack(rng.randrange(4), rng.randrange(1 << 32), rng.randrange(3), 9, rng.randrange(26), rng.randrange(61),
                         rng.randrange(26), rng.randrange(61), rng.randrange(1 << 32), rng.randbytes(46), b"x" * 46,
                         rng.choice([rng.uniform(-1, 61), float("nan"), float("inf")]), rng.uniform(0, 60))
                for _ in range(rng.randrange(1, 20))
            )
        else:
            start = rng.randrange(0, 144) * rng.randrange(2)
            data = golden[start:start + rng.randrange(0, 2000)]
        log = tmp_path / f"f{i}.log"
        log.write_bytes(data)
        # Random times span up to a day: one-minute intervals keep the series and tables short.
        ms = 50 if kind == 2 else 60000
        calls = (lambda: decode(log), lambda: decode(log, ms, tmp_path / "c.dat"),
                 lambda: import_logs(log, log, interval_s=ms / 1000), lambda: import_logs(None, log, interval_s=ms / 1000))
        for call in calls:
            try:
                call()
            except DitgLogError as e:
                assert str(log) in str(e)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@NEED_DITG
def test_live_ditg_on_loopback_matches_itgdec(tmp_path):
    """Fresh logs from the real ITGSend/ITGRecv on loopback, decoded by ITGDec and lasthop."""
    sig = _free_port()
    recv = subprocess.Popen(["ITGRecv", "-Si", "lo", "-a", "127.0.0.1", "-Sp", str(sig)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        flows = tmp_path / "flows"
        p1, p2 = _free_port(), _free_port()
        flows.write_text(f"-a 127.0.0.1 -Sdp {sig} -rp {p1} -T UDP -C 300 -c 200 -t 800\n"
                         f"-a 127.0.0.1 -Sdp {sig} -rp {p2} -T TCP -E 100 -u 100 900 -t 800\n")
        subprocess.run(["ITGSend", str(flows), "-l", "send.log", "-x", "recv.log"], cwd=tmp_path, check=True,
                       capture_output=True, timeout=30)
    finally:
        recv.kill()
        recv.wait()
    for log in ("send.log", "recv.log"):
        out = subprocess.run(["ITGDec", log], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        assert "Number of flows          =             2" in out
        assert decode(tmp_path / log) == out.split("\n", 2)[2]
        subprocess.run(["ITGDec", log, "-c", "50", "itg.dat"], cwd=tmp_path, capture_output=True, check=True)
        decode(tmp_path / log, 50, tmp_path / "lh.dat")
        assert (tmp_path / "lh.dat").read_text() == (tmp_path / "itg.dat").read_text()


def test_import_unwraps_midnight_and_counts_duplicates_once():
    # edge-midnight (make_edge_logs.py): delays 10, 10, 10.5, 10 ms, the last two received
    # after 00:00 UTC; ITGDec prints a minimum delay of -86399.989500 s for it.
    f = import_logs(None, DATA / "edge-midnight.log").summary["flows"][0]
    assert f["delay_ms"]["min"] == pytest.approx(10.0) and f["delay_ms"]["max"] == pytest.approx(10.5)
    assert f["delay_ms"]["mean"] == pytest.approx(10.125)
    assert "-86399.989500" in (DATA / "edge-midnight.log.itgdec.txt").read_text()
    # edge-seq, flow 1: records 1 2 4 3 3 6 7 9 10 10 12 (13 is an error line): 9 distinct,
    # 2 duplicates, 5, 8 and 11 lost below the highest; ITGDec counts the 11 records.
    res = import_logs(None, DATA / "edge-seq.log")
    f1 = res.flow("flow1")
    assert (f1["received_packets"], f1["lost_packets"], f1["sent_packets"]) == (9, 3, 12)
    assert res.summary["scenario"]["flows"]["flow1"]["duplicates"] == 2
    assert "Total packets            =            11" in (DATA / "edge-seq.log.itgdec.txt").read_text()


def test_an_interval_too_fine_for_the_logs_span_is_refused_with_the_smallest_that_fits(tmp_path):
    # loss-recv.log: 3 flows over ~0.91 s (ITGDec's total time); at 1 µs that is ~2.7·10^6
    # interval rows, above the scenario's budget of 10^6 (a day-long log asked for 8.6·10^10).
    r = lasthop_cli("import-ditg", str(DATA / "loss-recv.log"), "--interval", "1us", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "--interval 1us gives" in r.stderr and "× 3 flows), above the budget of 1000000" in r.stderr, r.stderr
    smallest = int(re.search(r"valid: an interval of at least (\d+)ns", r.stderr).group(1))
    assert 2_700 < smallest < 2_800, smallest
    # The interval it names is the smallest that fits: 1 ns less does not.
    import_logs(None, DATA / "loss-recv.log", interval_s=smallest * 1e-9)
    with pytest.raises(DitgLogError, match="above the budget"):
        import_logs(None, DATA / "loss-recv.log", interval_s=(smallest - 1) * 1e-9)
