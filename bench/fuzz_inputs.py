"""Fuzzes the inputs other than scenarios — D-ITG logs, results directories, D-ITG traffic
(distribution) files and the receiver's control protocol — and writes the counts to FUZZING.md
(after bench/fuzz_scenarios.py's table, which it keeps).

    .venv/bin/python bench/fuzz_inputs.py --cases 2000 --seed 1

A case is (surface, seed): everything it feeds lasthop is drawn from the seed, so
``--surface S --replay SEED`` runs one case again and prints what happened.

- **ditg-log**: a D-ITG 2.8.1 log of tests/data/ditg (real ITGSend/ITGRecv logs and hand-made
  edge cases) mutated — bytes flipped, cut at any byte, records duplicated, shuffled, times set
  to extremes (hours 0..2^32, NaN and infinite seconds), fields zeroed, random bytes, two logs
  joined, an empty file, a FIFO or a directory in its place — then decoded as ITGDec does
  (``decode``, with and without ``-c`` at intervals from 1 µs to a day) or imported
  (``import_logs``, sender, receiver or both, intervals from 1 µs to 1 h).
- **results-dir**: a run directory (the dumbbell, 1 s, with TCP traces) or a sweep directory (two
  runs) with 1-3 of its files damaged — cut, bytes flipped, emptied, removed, replaced by random
  bytes, by a directory, a FIFO, a symlink to /dev/zero, /etc/passwd or nowhere; a JSON file with
  one value replaced (null, {}, [], a huge number, a string, a path out of the directory) or one
  key dropped; a Parquet table with no rows, another schema, a column dropped or turned into
  text, or NaN/inf/negative values — then read by a reader: ``Results.load`` and every table,
  ``run_report``, ``plot``, ``compare``, ``export`` (flent), or for a sweep also a resumed sweep.
- **traffic-file**: the IDT (``-Ft``) and size (``-Fs``) files of a stochastic flow, with
  generated lines — numbers of every magnitude and sign, NaN, infinities, units, blank lines,
  CRLF, comments, garbage and non-UTF-8 bytes, 0 to 100 000 lines, a FIFO or /dev/zero in its
  place — run for 1 s simulated.
- **receiver**: control connections to one ``lasthop gen recv`` (hello 1 s, handshake 1 s):
  sequences of 1-4 lines — hello, clock probes, setup, stop, done and unknown types, with
  fields mutated (wrong types, huge and negative numbers, privileged and zero data ports, 0 to
  70 000 flows, long names), invalid JSON and UTF-8, lines over 64 KiB, a line cut midway — and
  the connection closed or held. After every case the receiver must still serve a real
  sender's session whole and stop cleanly on SIGTERM with no panic.

Outcomes: **result** (the reader or run finished), **clear error** (lasthop's own error type,
one non-empty line naming what is wrong, no panic or traceback text), and for the receiver
**answered** (an error line or the protocol's reply) or **closed** (the connection ended after
the case's last line, as a limit or a refusal ends it). Anything else is a failure: an unclear
error (the rule is :func:`unclear`), a traceback (another Python exception), a panic, a hang (no
answer within the case's limit: the worker was killed), a memory blow-up (past ``--memory`` of
address space), a crash (a worker killed by a signal). The script exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DITG = ROOT / "tests" / "data" / "ditg"
SURFACES = ("ditg-log", "results-dir", "traffic-file", "receiver")
FAILURES = ("unclear_error", "traceback", "panic", "hang", "memory", "crash")
# ITGDec -c lines and import flows at most in a case: the limits' own refusal is then the
# outcome of a case that would otherwise write for minutes.
CASE_ENV = {"LASTHOP_MAX_DITG_LINES": "1000000"}
RECORD = 144  # bytes of a D-ITG log record (lasthop_gen::ditg::record)


# ---------------------------------------------------------------- outcomes

def lasthop_errors() -> tuple[type, ...]:
    """lasthop's own error types: what a user sees as one `error:` line."""
    import lasthop
    from lasthop.compare import CompareError
    from lasthop.ditg import DitgLogError
    from lasthop.flent import FlentExportError
    from lasthop.sweep import SweepError

    return (lasthop.ScenarioError, lasthop.SimulationError, lasthop.OutputError, CompareError, DitgLogError,
            FlentExportError, SweepError)


def unclear(message: str) -> str | None:
    """Why an error message is not a clear one, or None: it must say something, in at most a
    few lines of reasonable length, without a panic's or a traceback's text."""
    if not message.strip():
        return "empty message"
    if len(message) > 3000:
        return "over 3000 characters"
    if "panicked" in message or "Traceback" in message or "RUST_BACKTRACE" in message:
        return "a panic or traceback in the message"
    return None


def classify(call) -> tuple[str, str]:
    """Runs `call()`: ("result", "") or ("clear_error", message) or a failure and its detail."""
    try:
        call()
    except lasthop_errors() as e:
        why = unclear(str(e))
        return ("unclear_error", f"{why}: {type(e).__name__}: {e}"[:2000]) if why else ("clear_error", str(e)[:300])
    except BaseException as e:  # noqa: BLE001 - the point is to see everything
        kind = "panic" if type(e).__name__ == "PanicException" else "traceback"
        return kind, f"{type(e).__name__}: {e}"[:2000]
    return "result", ""


# ---------------------------------------------------------------- files of every kind

def _flip(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 12)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def damage_file(rng: random.Random, path: Path, data: bytes) -> str:
    """Replaces the file at `path` (whose good content is `data`) by a damaged one; returns
    what was done."""
    op = rng.choice(["cut", "flip", "empty", "remove", "random", "directory", "fifo", "devzero", "passwd", "dangling"])
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if op == "cut":
        path.write_bytes(data[:rng.randrange(len(data) + 1)])
    elif op == "flip":
        path.write_bytes(_flip(rng, data))
    elif op == "empty":
        path.write_bytes(b"")
    elif op == "random":
        path.write_bytes(rng.randbytes(rng.choice([1, 8, 100, 4096, 100_000])))
    elif op == "directory":
        path.mkdir()
    elif op == "fifo":
        os.mkfifo(path)
    elif op == "devzero":
        path.symlink_to("/dev/zero")
    elif op == "passwd":
        path.symlink_to("/etc/passwd")
    elif op == "dangling":
        path.symlink_to(path.parent / "nowhere" / "at-all")
    return op


JSON_VALUES = [None, {}, [], "", "x", -1, 0, 2**64, 1e308, -1e308, True, "../../../etc/passwd", "/etc/passwd",
               [[[[[]]]]], {"flows": None}, "é\u0000"]


def damage_json(rng: random.Random, value):
    """`value` with one nested value replaced by a hostile one, or one key dropped."""
    if not isinstance(value, (dict, list)) or not value or rng.random() < 0.15:
        return rng.choice(JSON_VALUES)
    if isinstance(value, dict):
        key = rng.choice(list(value))
        if rng.random() < 0.3:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: damage_json(rng, value[key])}
    i = rng.randrange(len(value))
    return [*value[:i], damage_json(rng, value[i]), *value[i + 1:]]


def damage_parquet(rng: random.Random, path: Path) -> str:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    op = rng.choice(["no-rows", "foreign", "drop-column", "as-text", "hostile-values"])
    if op == "no-rows" or table.num_columns == 0:
        table = table.slice(0, 0)
    elif op == "foreign":
        table = pa.table({"x": list(range(rng.randint(0, 10)))})
    elif op == "drop-column":
        table = table.drop_columns([rng.choice(table.column_names)])
    elif op == "as-text":
        i = rng.randrange(table.num_columns)
        table = table.set_column(i, table.field(i).name, pa.array([str(v) for v in table.column(i).to_pylist()]))
    else:
        numeric = [i for i, f in enumerate(table.schema) if pa.types.is_floating(f.type)]
        if numeric and table.num_rows:
            i = rng.choice(numeric)
            values = table.column(i).to_numpy(zero_copy_only=False).astype(float).copy()
            for _ in range(rng.randint(1, 5)):
                values[rng.randrange(len(values))] = rng.choice([np.nan, np.inf, -np.inf, -1.0, 1e300, -1e300])
            table = table.set_column(i, table.field(i).name, pa.array(values))
    pq.write_table(table, path)
    return op


# ---------------------------------------------------------------- surface: D-ITG logs

def _ditg_logs() -> list[Path]:
    return sorted(p for p in DITG.glob("*.log") if p.stat().st_size > 0)


def mutate_log(rng: random.Random, data: bytes, other: bytes) -> tuple[bytes, str]:
    records = [data[i:i + RECORD] for i in range(0, len(data) - len(data) % RECORD, RECORD)]
    op = rng.choice(["flip", "cut", "duplicate", "shuffle", "times", "zero", "random", "join", "empty", "hours"])
    if op == "flip":
        return _flip(rng, data), op
    if op == "cut":
        return data[:rng.randrange(len(data) + 1)], op
    if op == "duplicate" and records:
        i = rng.randrange(len(records))
        return b"".join(records[:i + 1] + [records[i]] * rng.randint(1, 50) + records[i + 1:]), op
    if op == "shuffle":
        rng.shuffle(records)
        return b"".join(records), op
    if op in ("times", "hours") and records:
        out = []
        for r in records:
            if rng.random() < 0.2:
                b = bytearray(r)
                if op == "hours":  # tx/rx hour and minute words: anything a u32 holds
                    at = rng.choice([16, 20, 24, 28])
                    b[at:at + 4] = struct.pack("<I", rng.choice([0, 23, 24, 59, 60, 1 << 16, 2**32 - 1]))
                else:  # tx/rx seconds: anything an f64 holds
                    at = rng.choice([128, 136])
                    b[at:at + 8] = struct.pack("<d", rng.choice([0.0, -1.0, 59.999999, 60.0, 1e300, float("nan"), float("inf"), -0.0]))
                r = bytes(b)
            out.append(r)
        return b"".join(out), op
    if op == "zero" and records:
        i = rng.randrange(len(records))
        at = rng.randrange(0, 36, 4)
        b = bytearray(records[i])
        b[at:at + 4] = b"\0\0\0\0"
        records[i] = bytes(b)
        return b"".join(records), op
    if op == "random":
        return rng.randbytes(RECORD * rng.randint(1, 200)), op
    if op == "join":
        return data + other, op
    return b"", "empty"


def ditg_case(seed: int, work: Path) -> tuple[str, str]:
    from lasthop import ditg

    rng = random.Random(seed)
    logs = _ditg_logs()
    a, b = rng.choice(logs), rng.choice(logs)
    paths = []
    for i, src in enumerate((a, b)):
        p = work / f"log{i}.log"
        kind = rng.random()
        if kind < 0.04:
            os.mkfifo(p)
        elif kind < 0.06:
            p.mkdir()
        else:
            data, _ = mutate_log(rng, src.read_bytes(), b.read_bytes())
            p.write_bytes(data)
        paths.append(p)
    target = rng.choice(["decode", "decode-c", "import"])
    if target == "decode":
        return classify(lambda: ditg.decode(paths[0]))
    if target == "decode-c":
        ms = rng.choice([1e-3, 0.5, 1.0, 100.0, 1000.0, 86_400_000.0, 0.0, -1.0, float("nan")])
        return classify(lambda: ditg.decode(paths[0], ms, work / "combined.dat"))
    interval = rng.choice([1e-6, 1e-3, 0.1, 1.0, 3600.0])
    which = rng.choice(["sender", "receiver", "both"])
    send = paths[0] if which in ("sender", "both") else None
    recv = paths[1] if which in ("receiver", "both") else None
    return classify(lambda: ditg.import_logs(send, recv, interval_s=interval, out=work / "imported"))


# ---------------------------------------------------------------- surface: results directories

_BASE: dict[str, Path] = {}


def _bases() -> dict[str, Path]:
    """A good run directory and a good sweep directory, made once per worker process."""
    if not _BASE:
        import concurrent.futures as cf

        import lasthop
        from lasthop.sweep import run_sweep

        # lh-<pid>-gen-*: left when the pool's worker exits, and removed by the next start of a
        # sender or receiver (lasthop_gen::workdir), as a killed sender's would be.
        root = Path(tempfile.mkdtemp(prefix=f"lh-{os.getpid()}-gen-fuzzbase"))
        lasthop.run("dumbbell", out=root / "run", duration="1s")
        with cf.ThreadPoolExecutor(1) as ex:
            run_sweep(lasthop.Scenario.bundled("dumbbell", **{"simulation.duration": "0.5s"}),
                      [("links.bottleneck.rate", ["5Mbps", "10Mbps"])], 1, root / "sweep", executor=ex)
        _BASE.update(run=root / "run", sweep=root / "sweep")
    return _BASE


def results_case(seed: int, work: Path) -> tuple[str, str]:
    rng = random.Random(seed)
    kind = rng.choice(["run", "run", "sweep"])
    d = work / kind
    shutil.copytree(_bases()[kind], d, symlinks=True)
    files = sorted(p for p in d.rglob("*") if p.is_file() and p.name != "report.html")
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(files)
        if path.is_symlink() or not path.is_file():  # damaged by an earlier step already
            continue
        data = path.read_bytes()
        r = rng.random()
        if path.suffix == ".json" and r < 0.5:
            try:
                path.write_text(json.dumps(damage_json(rng, json.loads(data))))
            except ValueError:
                damage_file(rng, path, data)
        elif path.suffix == ".parquet" and r < 0.5:
            try:
                damage_parquet(rng, path)
            except Exception:  # noqa: BLE001 - an earlier step left no Parquet file to edit
                damage_file(rng, path, data)
        else:
            damage_file(rng, path, data)
    return classify(lambda: read_results(rng, kind, d, work))


def read_results(rng: random.Random, kind: str, d: Path, work: Path) -> None:
    import lasthop
    from lasthop.compare import metric_table, open_sources
    from lasthop.flent import export_flent
    from lasthop.plot import plot
    from lasthop.report import run_report, sweep_report

    target = rng.choice(["load", "report", "plot", "compare", "export"] + (["resume"] if kind == "sweep" else []))
    if target == "load":
        if kind == "run":
            res = lasthop.Results.load(d)
            _ = res.flows, res.intervals
            for name in res.traces:
                res.trace(name)
        else:
            from lasthop.sweep import SweepResults

            SweepResults.load(d)
    elif target == "report":
        (run_report if kind == "run" else sweep_report)(d)
    elif target == "plot":
        metric = rng.choice(["goodput_bps", "delay_ms", "cwnd_bytes", "loss_ratio", "queue_packets", "nope"])
        plot([d], metric, work / rng.choice(["p.svg", "p.png"]), cdf=rng.random() < 0.3, log=rng.random() < 0.2)
    elif target == "compare":
        metric_table(open_sources([d, _bases()[kind]]))
    elif target == "export":
        export_flent(d, work / "flent")
    else:
        import concurrent.futures as cf

        from lasthop.sweep import run_sweep

        with cf.ThreadPoolExecutor(1) as ex:
            run_sweep(lasthop.Scenario.bundled("dumbbell", **{"simulation.duration": "0.5s"}),
                      [("links.bottleneck.rate", ["5Mbps", "10Mbps"])], 1, d, executor=ex)


# ---------------------------------------------------------------- surface: traffic files

TRAFFIC_WORDS = ["0", "1", "-1", "0.001", "1e-9", "1e9", "1e308", "nan", "inf", "-inf", "10ms", "100B", "", " ", "#x",
                 "1,5", "0x10", "1_000", "65536", "65537", "1.5", "abc", "é", "\u0000"]


def traffic_lines(rng: random.Random, role: str) -> bytes:
    """An IDT (ms) or size (bytes) file: mostly valid values with a few hostile lines, or
    hostile throughout, or random bytes."""
    op = rng.random()
    if op < 0.05:
        return rng.randbytes(rng.randint(1, 5000))
    n = rng.choice([0, 1, 2, 3, 10, 100, 1000, 100_000])
    value = (lambda: f"{rng.uniform(0.01, 50):.3f}") if role == "idt" else (lambda: str(rng.randint(1, 1500)))
    words = [value() for _ in range(n)]
    if words and rng.random() < 0.4:  # a few hostile lines among valid ones
        for _ in range(rng.randint(1, 3)):
            words[rng.randrange(n)] = rng.choice(TRAFFIC_WORDS)
    sep = rng.choice(["\n", "\r\n", "\n\n", " "])
    text = sep.join(words).encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        text += b"\xff\xfe"
    return text


def traffic_case(seed: int, work: Path) -> tuple[str, str]:
    import lasthop

    rng = random.Random(seed)
    paths = {}
    for role in ("idt", "size"):
        p = work / f"{role}.txt"
        r = rng.random()
        if r < 0.03:
            os.mkfifo(p)
        elif r < 0.05:
            p.symlink_to("/dev/zero")
        elif r < 0.07:
            p.mkdir()
        else:
            p.write_bytes(traffic_lines(rng, role))
        paths[role] = p.name
    text = (
        '[simulation]\nduration = "1s"\n'
        '[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n'
        '[[links]]\nname = "l"\na = "a"\nb = "b"\nrate = "10Mbps"\ndelay = "5ms"\n'
        '[[flows]]\nname = "f"\nsrc = "a"\ndst = "b"\n'
        f'app = {{ type = "stochastic", idt = {{ dist = "file", path = "{paths["idt"]}" }}, '
        f'size = {{ dist = "file", path = "{paths["size"]}" }} }}\n'
    )
    (work / "s.toml").write_text(text)
    return classify(lambda: lasthop.run(str(work / "s.toml"), wall_limit_s=10))


# ---------------------------------------------------------------- surface: the receiver's protocol

GARBAGE_LINES = [b"{", b"not json", b"\xff\xfe\n", b"[]", b"null", b"{}" * 40_000, b"{\"type\":\"hello\"", b""]


def control_lines(rng: random.Random) -> list[bytes]:
    """Control lines of one connection. Half the cases follow the protocol (hello, clock probes,
    setup of 1-3 flows, stop), cut short anywhere, with one message mutated or a garbage line
    put in; the others are 1-4 messages of any type with mutated fields, or garbage."""
    def number():
        return rng.choice([0, 1, 7, 80, 1023, 1024, 65535, 65536, -1, 2**32, 2**64, 1.5, "1", None, True])

    def flows(n=None):
        n = rng.choice([0, 1, 2, 3, 300, 70_000]) if n is None else n
        return [{"id": i if rng.random() < 0.95 else number(), "name": "f" * rng.choice([1, 10, 1000]),
                 "proto": rng.choice(["udp", "tcp", "sctp", 1]),
                 **({"receive_buffer": number()} if rng.random() < 0.3 else {}),
                 **({"paced_reads": [number(), number()]} if rng.random() < 0.1 else {}),
                 **({"file_reads": [number(), number()]} if rng.random() < 0.1 else {})} for i in range(n)]

    messages = {
        "hello": lambda: {"type": "hello", "version": rng.choice([1, 1, 1, 0, 2, -1, "1"]), "session": rng.randrange(2**32),
                          "token": rng.choice([None, None, "", "x" * 100]),
                          **({"data_port": number()} if rng.random() < 0.5 else {})},
        "clock_probe": lambda: {"type": "clock_probe", "t1": number()},
        "setup": lambda: {"type": "setup", "clock": rng.choice(["monotonic", "realtime", "tai"]), "meter": rng.choice(["owd", "rtt", "x"]),
                          "flows": flows(), "loss_timeout_ns": number()},
        "stop": lambda: {"type": "stop", "sent": [number() for _ in range(rng.choice([0, 1, 3]))]},
        "done": lambda: {"type": "done", "counts": [], "malformed": 0, "control_errors": 0, "records_bytes": number(), "interrupted": False},
        "other": lambda: {"type": rng.choice(["welcome", "error", "ready", "nope", ""]), "message": "x"},
    }
    if rng.random() < 0.5:
        n = rng.randint(1, 3)
        script = [{"type": "hello", "version": 1, "session": rng.randrange(2**32), "token": None}]
        script += [{"type": "clock_probe", "t1": rng.randrange(2**62)} for _ in range(rng.randint(0, 3))]
        script += [{"type": "setup", "clock": "monotonic", "meter": rng.choice(["owd", "rtt"]),
                    "flows": [{"id": i, "name": f"f{i}", "proto": rng.choice(["udp", "tcp"])} for i in range(n)],
                    "loss_timeout_ns": rng.choice([1, 100_000_000])},
                   {"type": "stop", "sent": [rng.randint(0, 5) for _ in range(n)]}]
        script = script[:rng.randint(1, len(script))]
        lines = [json.dumps(m).encode() + b"\n" for m in script]
        r, at = rng.random(), rng.randrange(len(lines))
        if r < 0.4:  # one message with one field mutated (a flow list of any length among them)
            m = dict(script[at])
            key = rng.choice([k for k in m if k != "type"] or ["type"])
            m[key] = flows() if key == "flows" else number() if rng.random() < 0.7 else rng.choice(JSON_VALUES)
            lines[at] = json.dumps(m).encode() + b"\n"
        elif r < 0.6:
            lines.insert(at, rng.choice(GARBAGE_LINES) + b"\n")
        return lines
    lines = []
    hello_first = rng.random() < 0.7
    for i in range(rng.randint(1, 4)):
        r = rng.random()
        if i == 0 and hello_first:
            msg = messages["hello"]()
        elif r < 0.75:
            msg = messages[rng.choice(list(messages))]()
        else:
            lines.append(rng.choice(GARBAGE_LINES))
            continue
        if rng.random() < 0.1 and isinstance(msg, dict):  # an unknown field
            msg["extra"] = 1
        lines.append(json.dumps(msg).encode())
    return [line if line.endswith(b"\n") or rng.random() < 0.1 else line + b"\n" for line in lines]


def _asked_wait_s(lines: list[bytes]) -> float:
    """How long the receiver may rightly wait after a stop: the loss timeout the setup asked
    for (the receiver caps it at 60 s)."""
    wait = 0.0
    for line in lines:
        try:
            m = json.loads(line)
            if isinstance(m, dict) and m.get("type") == "setup" and isinstance(m.get("loss_timeout_ns"), int):
                wait = min(60.0, max(0, m["loss_timeout_ns"]) / 1e9)
        except ValueError:
            pass
    return wait


def receiver_case(seed: int, to: tuple[str, int], limit_s: float) -> tuple[str, str]:
    """One connection: its lines, then what comes back until the receiver closes it or the
    case holds it past `limit_s` (a hang)."""
    rng = random.Random(seed)
    lines = control_lines(rng)
    try:
        s = socket.create_connection(to, timeout=limit_s)
    except OSError as e:
        return "crash", f"could not connect: {e}"
    with s:
        try:
            for line in lines:
                s.sendall(line)
            if rng.random() < 0.4:  # the sender hangs up (or vanishes) after its last line
                s.shutdown(socket.SHUT_WR)
        except OSError:  # the receiver closed it while the case was still writing
            pass
        return _replies(s, lines, limit_s + _asked_wait_s(lines))


def _replies(s: socket.socket, lines: list[bytes], limit_s: float) -> tuple[str, str]:
    """What comes back on `s` until the receiver closes it, or "hang" past `limit_s`."""
    kinds: set[str] = set()
    deadline, buf = time.monotonic() + limit_s, b""
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except OSError:  # reset by the receiver
            chunk = b""
        if not chunk:
            return ("refused" if "error" in kinds else "answered" if kinds else "closed"), ""
        *complete, buf = (buf + chunk).split(b"\n")
        for line in complete:
            try:
                kind = json.loads(line).get("type")
            except (ValueError, AttributeError):
                return "garbled", repr(line[:200])
            if kind in ("error", "welcome", "clock_reply", "ready", "done"):
                kinds.add(kind)
    return "hang", f"connection still open {limit_s:g} s after the case's last line; lines: {lines!r}"[:2000]


class ReceiverUnderTest:
    """`lasthop gen recv` on loopback with 1 s hello and handshake limits (6 s idle: above a sender's 5 s keepalive)."""

    def __init__(self) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "lasthop", "gen", "recv", "--listen", "127.0.0.1:0", "--max-sessions", "64",
                                   "--handshake-timeout", "1", "--idle-timeout", "6"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.p.stderr.readline())
        if not m:
            raise RuntimeError("the receiver did not start")
        self.to = ("127.0.0.1", int(m.group(1)))
        self.err: list[str] = []
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()

    def serves_a_sender(self) -> str | None:
        """None if a real sender's 0.3 s CBR session arrives whole, else what went wrong."""
        from lasthop import gen

        with tempfile.TemporaryDirectory() as t:
            flows = Path(t) / "f.toml"
            flows.write_text('[[flows]]\nname = "v"\napp = { type = "cbr", size = "100B", interval = "10ms" }\n')
            try:
                f = gen.send(f"{self.to[0]}:{self.to[1]}", flows, duration=0.3, loss_timeout=0.3).flow("v")
            except Exception as e:  # noqa: BLE001
                return f"the sender failed: {type(e).__name__}: {e}"
            if f["received_packets"] != 30:
                return f"{f['received_packets']} of 30 packets arrived"
        return None

    def stop(self) -> str | None:
        """None if SIGTERM stops it with exit 0 and no panic, else what went wrong."""
        self.p.terminate()
        try:
            out, _ = self.p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return "no exit within 30 s of SIGTERM"
        text = "".join(self.err)
        if self.p.returncode != 0 or "panicked" in text:
            return f"exit {self.p.returncode}: {text[-2000:]}"
        return None


# ---------------------------------------------------------------- running cases

def run_file_case(surface: str, seed: int) -> tuple[str, str]:
    """Runs in a worker: one case of a file surface in a scratch directory of its own."""
    os.environ.update(CASE_ENV)
    work = Path(tempfile.mkdtemp(prefix=f"lh-{os.getpid()}-gen-fuzz"))
    try:
        return {"ditg-log": ditg_case, "results-dir": results_case, "traffic-file": traffic_case}[surface](seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def file_cases(surface: str, seeds: list[int], workers: int, timeout_s: float, memory: int) -> list[tuple[int, str, str]]:
    from lasthop.pool import LocalPool, TaskFailed

    out = []
    with LocalPool(workers, timeout_s=timeout_s, memory=memory) as pool:
        futures = [(s, pool.submit(run_file_case, surface, s)) for s in seeds]
        for seed, fut in futures:
            try:
                outcome, detail = fut.result()
            except TaskFailed as e:
                outcome = {"timeout": "hang", "memory": "memory"}.get(e.cause, "crash")
                if "panicked" in str(e):
                    outcome = "panic"
                detail = str(e)[:2000]
            out.append((seed, outcome, detail))
    return out


def receiver_cases(seeds: list[int], limit_s: float = 8.0, concurrent: int = 8) -> list[tuple[int, str, str]]:
    """Every case against one receiver, `concurrent` connections at a time, each given
    `limit_s` (the receiver's 6 s idle limit ends a session the case leaves running, + 2 s);
    then a real session and a clean stop (each a row of its own: "healthy" or "crash")."""
    rx = ReceiverUnderTest()
    try:
        with ThreadPoolExecutor(concurrent) as ex:
            out = [(s, *r) for s, r in zip(seeds, ex.map(lambda s: receiver_case(s, rx.to, limit_s), seeds))]
        problem = rx.serves_a_sender()
    finally:
        stopped = rx.stop()
    for what, why in (("serves a sender afterwards", problem), ("stops cleanly", stopped)):
        out.append((-1, "crash" if why else "healthy", f"{what}: {why}" if why else what))
    return out


def run_surface(surface: str, seeds: list[int], workers: int, timeout_s: float, memory: int) -> list[tuple[int, str, str]]:
    if surface == "receiver":
        return receiver_cases(seeds)
    return file_cases(surface, seeds, workers, timeout_s, memory)


OUTCOME_TEXT = {
    "result": "the reader or run finished",
    "clear_error": "lasthop's own error, one clear message",
    "refused": "the receiver answered with an error line and closed the connection",
    "answered": "the receiver replied as the protocol says (welcome, clock reply, ready) until the case hung up",
    "closed": "the connection closed with no reply (the case hung up first)",
    "healthy": "after all cases, the receiver served a real sender's session whole / stopped cleanly on SIGTERM",
    "unclear_error": "lasthop's error failing the rule of `unclear()`",
    "traceback": "any other Python exception",
    "panic": "a Rust panic",
    "hang": "no answer within the case's limit",
    "memory": "past the address-space limit",
    "crash": "a worker killed by a signal, or the receiver failing its health check",
    "garbled": "a reply that is not a JSON line",
}


def write_report(out: Path, cmd: str, results: dict[str, list[tuple[int, str, str]]], wall: float, workers: int) -> str:
    import lasthop

    lines = ["## Files and peers other than scenarios (bench/fuzz_inputs.py)", "", f"`{cmd}`", "",
             f"lasthop {lasthop.__version__}; {sum(len(v) for v in results.values())} cases in {wall:.0f} s on {workers} workers. "
             "See the script's docstring for what a case of each surface is; `--surface S --replay SEED` reruns one.", "",
             "| surface | cases | " + " | ".join(OUTCOME_TEXT) + " |", "|---|---:|" + "---:|" * len(OUTCOME_TEXT)]
    for surface, rows in results.items():
        c = Counter(o for _, o, _ in rows)
        lines.append(f"| {surface} | {len(rows)} | " + " | ".join(str(c[o]) for o in OUTCOME_TEXT) + " |")
    lines += ["", *[f"- **{k}**: {v}" for k, v in OUTCOME_TEXT.items()], ""]
    failed = [(s, seed, o, d) for s, rows in results.items() for seed, o, d in rows if o in FAILURES or o == "garbled"]
    if failed:
        lines += ["### Failures (first 30)", ""]
        for s, seed, o, d in failed[:30]:
            lines += [f"- **{o}** ({s}, seed {seed}): {d[:400]}",
                      f"  `.venv/bin/python bench/fuzz_inputs.py --surface {s} --replay {seed}`"]
        lines.append("")
    section = "\n".join(lines)
    text = out.read_text() if out.exists() else ""
    head = text.split("\n## Files and peers other than scenarios")[0].rstrip("\n")
    out.write_text((head + "\n\n" if head else "") + section + "\n")
    return section


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000, help="cases per surface")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--surface", choices=SURFACES, action="append", help="only these surfaces (default: all)")
    ap.add_argument("--replay", type=int, help="run the case of this seed once and print its outcome")
    ap.add_argument("--case-timeout", type=float, default=20.0, help="wall-clock limit per file case, seconds")
    ap.add_argument("--memory", default="4GiB", help="address-space limit per worker (a sweep's default --run-memory)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "FUZZING.md")
    args = ap.parse_args()
    from lasthop.pool import parse_memory

    surfaces = args.surface or list(SURFACES)
    if args.replay is not None:
        for s in surfaces:
            rows = receiver_cases([args.replay]) if s == "receiver" else [(args.replay, *run_file_case(s, args.replay))]
            for seed, outcome, detail in rows:
                print(f"{s} seed {seed}: {outcome} {detail}")
        return 0
    base = args.seed * 1_000_000
    t0 = time.perf_counter()
    results = {}
    for s in surfaces:
        results[s] = run_surface(s, list(range(base, base + args.cases)), args.workers, args.case_timeout, parse_memory(args.memory))
        print(f"{s}: {dict(Counter(o for _, o, _ in results[s]))} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    cmd = (f".venv/bin/python bench/fuzz_inputs.py --cases {args.cases} --seed {args.seed} --case-timeout {args.case_timeout:g} "
           f"--memory {args.memory} --workers {args.workers}")
    print(write_report(args.out, cmd, results, time.perf_counter() - t0, args.workers))
    broken = sum(1 for rows in results.values() for _, o, _ in rows if o in FAILURES or o == "garbled")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
