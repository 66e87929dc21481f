#!/usr/bin/env python3
"""lasthop gen's rate accuracy, peak rate and cost on loopback, beside D-ITG in the same run
(issue 12's targets).

    .venv/bin/python bench/gen_rate.py [--runs 3] [--seconds 5] [--peak-seconds 3]
        [--spin-us US] [--realtime] [--no-ditg] [--cpus SENDER,RECEIVER]

Each measurement runs lasthop, then D-ITG (when Debian's d-itg is installed:
scripts/system-deps.sh), one after the other, `--runs` times, so both see the same load:

- Accuracy: one CBR flow of 64-byte UDP payloads at 100, 1 000 and 10 000 pkt/s for
  `--seconds` (D-ITG: `ITGSend -T UDP -C rate -c 64 -t ms -l send.log -x recv.log`): the share
  of the requested packets (rate × duration) the receiver got (D-ITG: ITGDec's "Total packets"
  of the receiver's log), and at 10 kpkt/s the error |IDT − 100 µs| of consecutive departures,
  from the send time each sender logged for each packet (lasthop: ns, read after the pacer's
  wait and before the packet's `sendmmsg`; D-ITG: µs). Targets: ≥ 99.9 % at every rate, p99 of
  the IDT error ≤ 10 µs.
- Peak: `--peak-flows` CBR flows (default 4) each asking for 1 Mpkt/s (a flow's interval is
  at least 1 µs) of 64-byte payloads for `--peak-seconds`, both ends logging every packet (D-ITG:
  the same flows in one ITGSend script): the packet rate actually sent (packets over the span
  of their send times) and the receiver's loss. Target: ≥ 600 k pkt/s with < 0.1 % loss.
  lasthop's peak is measured twice: as it runs towards a loopback address (batches leave as
  UDP GSO writes) and with `--no-gso` (`sendmmsg`, each datagram through the stack on its own,
  what it does towards any other address; one flow of 1 Mpkt/s asked, already beyond it).
- Cost: CPU time per packet of the sender (lasthop: its sending thread, `getrusage
  (RUSAGE_THREAD)`, reported as `send_thread_cpu_s`; D-ITG: the ITGSend process, `wait4`) and
  of the receiver process (`/proc/PID/stat` utime + stime over the run, 10 ms ticks: coarse at
  100 pkt/s), and the largest resident set (`VmHWM`) of each process. A fresh receiver serves each run, so its peak memory is that run's.

With `--cpus S,R` every sender runs on CPU S and every receiver on CPU R (lasthop's `--affinity`,
D-ITG's processes through `sched_setaffinity`), as on two hosts. Without it the kernel wakes a
loopback receiver on its sender's CPU (wake-affine), where it waits for the sender's spin or the
next scheduler tick, and the sender's next departure waits for it in turn.

Both senders are separate processes (`python -m lasthop gen send`, `ITGSend`); lasthop's
memory therefore includes its Python interpreter and the results it computes after sending.

Prints the median (and the range) of the runs, and a Markdown table to paste into
BENCHMARKS.md. The machine's load average is printed too: these are wall-clock measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RATES = (100, 1000, 10_000)
PEAK_FLOW = 1_000_000
SIZE = 64
TICK = os.sysconf("SC_CLK_TCK")
# (sender CPU, receiver CPU) from --cpus, or None: wherever the kernel puts them.
CPUS: tuple[int, int] | None = None
HAVE_DITG = all(shutil.which(t) for t in ("ITGSend", "ITGRecv", "ITGDec"))
# lasthop's 32-byte records (crates/lasthop-gen/src/records.rs): send time at offset 16.
LHR = np.dtype([("flow", "<u4"), ("seq", "<u4"), ("bytes", "<u4"), ("kind", "<u4"), ("tx", "<u8"), ("rx", "<u8")])
# D-ITG's 144-byte log records (../shared/reference/ditg.md): tx hour, minute at 16/20, seconds at 128.
DITG = np.dtype([("flow", "<u4"), ("seq", "<u4"), ("sport", "<u4"), ("dport", "<u4"), ("txh", "<u4"), ("txm", "<u4"),
                 ("rxh", "<u4"), ("rxm", "<u4"), ("size", "<u4"), ("src", "S46"), ("dst", "S46"), ("txs", "<f8"), ("rxs", "<f8")])


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a live process (all its threads, dead ones included), s."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def proc_hwm_mb(pid: int) -> float:
    m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def wait4(p: subprocess.Popen, timeout: float) -> tuple[int, float, float]:
    """Waits for a child: (exit status, CPU s, max RSS MiB). The RSS is the child's VmHWM,
    polled every 10 ms until it exits: wait4's ru_maxrss would count the bench's own memory
    (exec records the high-water mark of the image it replaces, here the bench's vfork)."""
    t_end = time.monotonic() + timeout
    hwm = 0.0
    while True:
        try:
            hwm = max(hwm, proc_hwm_mb(p.pid))
        except (OSError, ValueError):
            pass
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return p.returncode, ru.ru_utime + ru.ru_stime, hwm
        if time.monotonic() > t_end:
            p.kill()
            raise RuntimeError(f"{p.args[0]} did not finish in {timeout:.0f} s")
        time.sleep(0.01)


def affinity(end: int) -> list[str]:
    """lasthop's --affinity for the sender (0) or the receiver (1) under --cpus."""
    return [] if CPUS is None else ["--affinity", str(CPUS[end])]


def pin(end: int):
    """A preexec_fn that keeps a D-ITG process to its end's CPU under --cpus."""
    return None if CPUS is None else (lambda: os.sched_setaffinity(0, {CPUS[end]}))


def idt_err_us(tx_s: np.ndarray, rate: float) -> np.ndarray:
    return np.abs(np.diff(np.sort(tx_s)) - 1.0 / rate) * 1e6


def lasthop_run(rate: float, seconds: float, realtime: bool, spin_us: float | None, work: Path, flows_n: int = 1, gso: bool | None = None) -> dict:
    rt = ["--realtime"] if realtime else []
    recv = subprocess.Popen([sys.executable, "-m", "lasthop", "gen", "recv", "--listen", "127.0.0.1:0", *rt, *affinity(1)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r":(\d+)", recv.stderr.readline())
        assert m, "the receiver did not start"
        flows = work / "flows.toml"
        flows.write_text("".join(f'[[flows]]\nname = "f{i}"\napp = {{ type = "cbr", size = "{SIZE}B", interval = "{round(1e9 / rate)}ns" }}\n'
                                 for i in range(flows_n)))
        out = work / "lasthop"
        cpu0 = proc_cpu_s(recv.pid)
        stdout = open(work / "summary.json", "w+")  # a file: the process is watched while it runs (wait4)
        send = subprocess.Popen([sys.executable, "-m", "lasthop", "gen", "send", "--to", f"127.0.0.1:{m.group(1)}", "--flows", str(flows),
                                 "--duration", str(seconds), "--out", str(out), "--force", "--no-report", "--no-packets", "--json",
                                 "--loss-timeout", "1", *rt, *([] if spin_us is None else ["--spin-us", str(spin_us)]),
                                 *([] if gso is None else ["--gso" if gso else "--no-gso"]), *affinity(0)],
                                stdout=stdout, stderr=subprocess.DEVNULL)
        status, _, send_rss = wait4(send, seconds + 120)
        stdout.seek(0)
        assert status == 0, f"lasthop gen send failed ({status})"
        recv_cpu, recv_rss = proc_cpu_s(recv.pid) - cpu0, proc_hwm_mb(recv.pid)
    finally:
        stop(recv)
    s = json.load(stdout)
    stdout.close()
    mf = s["measure"]["flows"]
    tx = np.fromfile(out / "records" / "sender-udp.lhr", dtype=LHR)
    tx = tx[tx["kind"] == 0]["tx"].astype(np.float64) / 1e9
    sent, received = sum(int(m["sent_packets"]) for m in mf), sum(int(f["received_packets"]) for f in s["flows"])
    r = {
        "received_share": received / round(flows_n * rate * seconds),
        "sent_rate": sent / max(tx.max() - tx.min(), seconds) if len(tx) > 1 else 0.0,
        "loss": (sent - received) / max(sent, 1),
        "send_cpu_us": 1e6 * mf[0]["send_thread_cpu_s"] / max(sent, 1),  # one thread sends every UDP flow
        "recv_cpu_us": 1e6 * recv_cpu / max(received, 1),
        "send_rss_mb": send_rss,
        "recv_rss_mb": recv_rss,
        "late_mean_us": mf[0]["send_late_mean_us"],
    }
    if rate == 10_000:
        err = idt_err_us(tx, rate)
        r["idt_p99_err_us"], r["idt_within_10us"] = float(np.percentile(err, 99)), float((err <= 10).mean())
    shutil.rmtree(out, ignore_errors=True)
    return r


def ditg_total(log: Path) -> int:
    """ITGDec's "Total packets" of a log (0 for a log that does not exist)."""
    if not log.exists() or log.stat().st_size == 0:
        return 0
    text = subprocess.run(["ITGDec", str(log)], capture_output=True, text=True, timeout=600).stdout
    m = re.search(r"Total packets\s*=\s*(\d+)", text)
    return int(m.group(1)) if m else 0


def ditg_run(rate: float, seconds: float, work: Path, flows_n: int = 1) -> dict:
    d = Path(tempfile.mkdtemp(prefix="ditg-", dir=work))
    sig, port = free_port(), free_port()
    recv = subprocess.Popen(["ITGRecv", "-Si", "lo", "-a", "127.0.0.1", "-Sp", str(sig)], cwd=d, preexec_fn=pin(1),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until its signalling port listens
            try:
                socket.create_connection(("127.0.0.1", sig), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        cpu0 = proc_cpu_s(recv.pid)
        flow = f"-a 127.0.0.1 -Sdp {sig} -T UDP -C {int(rate)} -c {SIZE} -t {round(seconds * 1000)}"
        if flows_n == 1:
            args = [*flow.split(), "-rp", str(port)]
        else:  # a script: one flow per line, each to its own data port
            (d / "flows").write_text("".join(f"{flow} -rp {free_port()}\n" for _ in range(flows_n)))
            args = ["flows"]
        send = subprocess.Popen(["ITGSend", *args, "-l", "send.log", "-x", "recv.log"], preexec_fn=pin(0),
                                cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, send_cpu, send_rss = wait4(send, seconds + 120)
        time.sleep(0.5)  # ITGRecv closes the flow's log when the sender says it ended
        recv_cpu, recv_rss = proc_cpu_s(recv.pid) - cpu0, proc_hwm_mb(recv.pid)
    finally:
        stop(recv)
    slog = np.fromfile(d / "send.log", dtype=DITG) if (d / "send.log").exists() else np.zeros(0, DITG)
    tx = slog["txh"] * 3600.0 + slog["txm"] * 60.0 + slog["txs"]
    sent, received = ditg_total(d / "send.log"), ditg_total(d / "recv.log")
    r = {
        "received_share": received / round(flows_n * rate * seconds),
        "sent_rate": sent / max(tx.max() - tx.min(), 1e-9) if len(tx) > 1 else 0.0,
        "loss": (sent - received) / max(sent, 1),
        "send_cpu_us": 1e6 * send_cpu / max(sent, 1),
        "recv_cpu_us": 1e6 * recv_cpu / max(received, 1),
        "send_rss_mb": send_rss,
        "recv_rss_mb": recv_rss,
    }
    if rate == 10_000:
        err = idt_err_us(tx, rate)
        r["idt_p99_err_us"], r["idt_within_10us"] = float(np.percentile(err, 99)), float((err <= 10).mean())
    shutil.rmtree(d, ignore_errors=True)
    return r


def med(xs: list[float]) -> str:
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    f = (lambda x: f"{x / 1e3:.0f} k") if max(xs) >= 10_000 else (lambda x: f"{x:.4g}")
    return f"{f(statistics.median(xs))} ({f(min(xs))}–{f(max(xs))})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--peak-seconds", type=float, default=3.0)
    ap.add_argument("--realtime", action="store_true", help="lasthop's sender and receiver at SCHED_FIFO priority (gen send/recv --realtime)")
    ap.add_argument("--spin-us", type=float, default=None, help="lasthop gen send --spin-us (default: lasthop's own)")
    ap.add_argument("--no-ditg", action="store_true", help="lasthop only")
    ap.add_argument("--peak-flows", type=int, default=4, help="flows of 1 Mpkt/s each in the peak measurement")
    ap.add_argument("--cpus", default=None, help="SENDER,RECEIVER: run every sender on CPU SENDER and every receiver on CPU RECEIVER, as on two hosts")
    ap.add_argument("--rates", default="100,1000,10000,peak,peak-nogso", help="which measurements, comma-separated")
    a = ap.parse_args()
    global CPUS
    if a.cpus is not None:
        CPUS = tuple(int(c) for c in a.cpus.split(","))  # type: ignore[assignment]
    ditg = HAVE_DITG and not a.no_ditg
    if not ditg and not a.no_ditg:
        print("D-ITG is not installed (scripts/system-deps.sh installs Debian's d-itg): lasthop only", file=sys.stderr)
    tools = ["lasthop"] + (["D-ITG"] * ditg)
    rows: list[tuple[str, list[str]]] = []
    loads = [os.getloadavg()[0]]
    work = Path(tempfile.mkdtemp(prefix="lh-bench-gen-"))
    try:
        for which in a.rates.split(","):
            peak = which.startswith("peak")
            # Without GSO one flow asking 1 Mpkt/s is already beyond what it sends (a sender
            # behind its schedule sends until every requested packet is out).
            n = (1 if which == "peak-nogso" else a.peak_flows) if peak else 1
            rate, seconds = (PEAK_FLOW, a.peak_seconds) if peak else (float(which), a.seconds)
            gso = False if which == "peak-nogso" else None
            with_ditg = ditg and which != "peak-nogso"  # D-ITG has one way of sending: its row is "peak"
            runs: dict[str, list[dict]] = {t: [] for t in tools}
            for _ in range(a.runs):
                runs["lasthop"].append(lasthop_run(rate, seconds, a.realtime, a.spin_us, work, n, gso))
                loads.append(os.getloadavg()[0])
                if with_ditg:  # D-ITG's peak: one flow asking 1 Mpkt/s (its flows in one script do worse)
                    runs["D-ITG"].append(ditg_run(rate, seconds, work, 1))
                    loads.append(os.getloadavg()[0])
            col = lambda key, scale=1.0: [med([scale * r[key] for r in runs[t] if r.get(key) is not None]) for t in tools]  # noqa: E731
            label = (f"peak ({n} × 1 Mpkt/s asked{', --no-gso' if gso is False else ''})" if peak else f"{int(rate)} pkt/s")
            first = len(rows)
            if peak:
                rows.append((f"{label}: pkt/s sent (both logs)", col("sent_rate")))
                rows.append((f"{label}: receive loss, %", col("loss", 100)))
            else:
                rows.append((f"{label}: % of requested packets received", col("received_share", 100)))
            if rate == 10_000:
                rows.append((f"{label}: IDT p99 error, µs", col("idt_p99_err_us")))
                rows.append((f"{label}: IDTs within 10 µs of nominal, %", col("idt_within_10us", 100)))
            rows.append((f"{label}: sender CPU per packet, µs", col("send_cpu_us")))
            rows.append((f"{label}: receiver CPU per packet, µs", col("recv_cpu_us")))
            rows.append((f"{label}: sender / receiver max RSS, MiB", [f"{a_} / {b_}" for a_, b_ in zip(col("send_rss_mb"), col("recv_rss_mb"))]))
            for k, v in rows[first:]:
                print(k, v, flush=True)
        print(f"load average (1 min) over the runs: {min(loads):.2f}–{max(loads):.2f}")
        extra = ", ".join(x for x in (f"--spin-us {a.spin_us:g}" if a.spin_us is not None else "", "--realtime" if a.realtime else "",
                                      f"--cpus {a.cpus}" if a.cpus else "") if x)
        print(f"\n| measure ({a.runs} runs: median (min–max){', lasthop ' + extra if extra else ''}) | {' | '.join(tools)} |")
        print("|---|" + "---|" * len(tools))
        for k, v in rows:
            print(f"| {k} | {' | '.join(v)} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
