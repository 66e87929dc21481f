"""Local worker processes with a wall-clock limit per task and an address-space limit per
worker: the executor of local sweeps (and of bench/fuzz_scenarios.py).

concurrent.futures' ProcessPoolExecutor cannot stop one task, and one worker that dies breaks
the whole pool without saying which task killed it. Here each worker runs one task at a time
over its own pipe, so the pool knows what every worker is doing: a task past its deadline has
its worker killed (SIGKILL) and fails with ``timed out after N s``; a worker that dies fails
its own task only (``worker killed by signal 9``, ``out of memory``), is replaced, and the
other tasks go on. The memory limit is RLIMIT_AS, set in each worker: an allocation beyond it
fails (MemoryError in Python; the Rust core aborts, which the pool reports as out of memory from
the worker's stderr).

Workers are forked (POSIX only, as RLIMIT_AS is), so tasks must be picklable callables;
``submit`` returns a concurrent.futures.Future, as the sweep's Executor protocol asks.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import pickle
import re
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Callable

DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_MEMORY = 4 << 30
# A task that raises TaskFailed itself (the runner's cooperative wall-clock check) does so at
# its deadline; the pool kills it only this much later.
KILL_GRACE_S = 2.0

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB)?\s*$")
_UNITS = {None: 1, "B": 1, "kB": 10**3, "KB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20,
          "GB": 10**9, "GiB": 2**30, "TB": 10**12, "TiB": 2**40}


def parse_memory(text: str) -> int | None:
    """``"4GB"`` -> 4e9 bytes; ``"0"`` or ``"none"`` -> None (no limit)."""
    if text.strip().lower() in ("0", "none", "unlimited"):
        return None
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"--run-memory {text!r}: expected a size such as 4GB, 512MiB, or none")
    n = int(float(m.group(1)) * _UNITS[m.group(2)])
    if n < 64 << 20:
        raise ValueError(f"--run-memory {text!r}: at least 64MiB (a worker needs that much to start)")
    return n


class TaskFailed(RuntimeError):
    """A task its worker could not finish. ``cause`` is "timeout", "signal", "memory" or "exit";
    the message says it the way failed/<run>.json records it."""

    def __init__(self, message: str, cause: str):
        super().__init__(message)
        self.cause = cause

    def __reduce__(self):
        return (type(self), (str(self), self.cause))


def _stderr_tail(fd: int, n: int = 4000) -> str:
    """The end of what a worker wrote to its stderr (an unlinked file shared by fd)."""
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, n, max(0, size - n)).decode("utf-8", "replace")
    except OSError:
        return ""


def _out_of_memory_in(tail: str) -> bool:
    return "memory allocation of" in tail or "MemoryError" in tail or "out of memory" in tail.lower()


def _peak_near(limit: int | None, slack: int = 64 << 20) -> bool:
    """Whether this process's address space has come within `slack` of `limit` (VmPeak, Linux)."""
    if limit is None:
        return False
    try:
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmPeak"))
    except (OSError, StopIteration, ValueError):
        return False
    return peak >= limit - slack


def _as_failure(e: BaseException, stderr_fd: int, memory: int | None = None) -> BaseException:
    """What a worker sends back for `e`: out of memory as the pool reports it (MemoryError,
    pyarrow's ArrowMemoryError, or a Rust panic over a failed allocation: the core says so on
    stderr, or the address space reached the limit), a panic as a plain picklable error,
    anything else as it is."""
    panic = type(e).__name__ == "PanicException"
    oom_panic = panic and (_out_of_memory_in(_stderr_tail(stderr_fd)) or _peak_near(memory))
    if isinstance(e, MemoryError) or "MemoryError" in type(e).__name__ or oom_panic:
        return TaskFailed("out of memory", "memory")
    if panic:
        return RuntimeError(f"panic in lasthop's Rust core: {e}")
    return e


def _worker_main(conn: Connection, memory: int | None, stderr_fd: int) -> None:
    # Own process group is not needed: the pool kills by pid. Ctrl-C goes to the parent, which
    # shuts the pool down; a worker ignoring SIGINT avoids a traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker's stderr goes to a file the pool reads when it dies (e.g. the Rust core's
    # "memory allocation of N bytes failed"); faulthandler (on under pytest) would write past it.
    import faulthandler

    faulthandler.disable()
    # A backtrace needs memory: printed while out of memory, it can deadlock the worker.
    os.environ["RUST_BACKTRACE"] = "0"
    os.dup2(stderr_fd, 2)
    # Python's own messages too (sys.stderr may not be fd 2: pytest's capture replaces it).
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
    if memory is not None:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        fn, args, kwargs = task
        try:
            reply = ("ok", fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
            reply = ("err", _as_failure(e, stderr_fd, memory))
        # Pickled whole before anything is sent: a message cut short by a failed allocation
        # would leave the parent waiting for the rest of it.
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:  # noqa: BLE001 - unpicklable, or no memory left to pickle it
            err = _as_failure(e, stderr_fd, memory)
            if err is e:
                err = RuntimeError(f"{type(reply[1]).__name__}: {reply[1]!s} (could not be sent back: {e})")
            data = pickle.dumps(("err", err))
        conn.send_bytes(data)


@dataclass
class _Task:
    fn: Callable
    args: tuple
    kwargs: dict
    future: cf.Future


@dataclass
class _Worker:
    process: Any
    conn: Connection
    stderr: Any  # an unlinked temporary file: nothing is left behind, even after SIGKILL
    task: _Task | None = None
    deadline: float = field(default=float("inf"))
    started: float = 0.0


class LocalPool:
    """``workers`` processes; each task gets `timeout_s` of wall clock, each worker `memory`
    bytes of address space (None: no limit)."""

    def __init__(self, workers: int | None = None, *, timeout_s: float | None = DEFAULT_TIMEOUT_S,
                 memory: int | None = DEFAULT_MEMORY, kill_grace_s: float = KILL_GRACE_S):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout_s = timeout_s
        self.memory = memory
        self.kill_grace_s = kill_grace_s
        # Fork: the worker inherits its stderr file by descriptor (and tests' monkeypatches).
        self._ctx = mp.get_context("fork")
        self._queue: deque[_Task] = deque()
        self._busy: list[_Worker] = []
        self._idle: list[_Worker] = []
        self._lock = threading.RLock()  # futures' callbacks may submit again
        self._wake_r, self._wake_w = self._ctx.Pipe(duplex=False)
        self._closing = False
        self._thread = threading.Thread(target=self._supervise, name="lasthop-pool", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        fut: cf.Future = cf.Future()
        with self._lock:
            if self._closing:
                raise RuntimeError("the pool is shut down")
            self._queue.append(_Task(fn, args, kwargs, fut))
        self._wake()
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stops the pool. `wait`: let running tasks finish (queued ones too unless
        `cancel_futures`); otherwise running tasks' workers are killed now."""
        with self._lock:
            self._closing = True
            if cancel_futures or not wait:
                while self._queue:
                    self._queue.popleft().future.cancel()
            if not wait:
                for w in self._busy:
                    self._kill(w)
        self._wake()
        self._thread.join()

    def __enter__(self) -> "LocalPool":
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown(wait=exc[0] is None, cancel_futures=exc[0] is not None)

    # ------------------------------------------------------------------ supervisor

    def _wake(self) -> None:
        try:
            self._wake_w.send_bytes(b"x")
        except OSError:
            pass

    def _start_worker(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        stderr = tempfile.TemporaryFile(prefix="lasthop-worker-")
        p = self._ctx.Process(target=_worker_main, args=(child, self.memory, stderr.fileno()), daemon=True)
        p.start()
        child.close()
        return _Worker(p, parent, stderr)

    def _kill(self, w: _Worker) -> None:
        if w.process.is_alive():
            try:
                os.kill(w.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _assign(self) -> None:
        with self._lock:
            while self._queue and (self._idle or len(self._busy) < self.workers):
                task = self._queue.popleft()
                if not task.future.set_running_or_notify_cancel():
                    continue
                w = self._idle.pop() if self._idle else self._start_worker()
                try:
                    w.conn.send((task.fn, task.args, task.kwargs))
                except Exception as e:  # unpicklable task
                    task.future.set_exception(e)
                    self._idle.append(w)
                    continue
                w.task, w.started = task, time.monotonic()
                w.deadline = w.started + self.timeout_s + self.kill_grace_s if self.timeout_s is not None else float("inf")
                self._busy.append(w)

    def _finish(self, w: _Worker, ok: bool, value: Any) -> None:
        task, w.task = w.task, None
        self._busy.remove(w)
        if task is not None:
            if ok:
                task.future.set_result(value)
            else:
                task.future.set_exception(value)

    def _out_of_memory(self) -> TaskFailed:
        limit = f" (over the worker's address-space limit of {self.memory / 2**30:.3g} GiB, --run-memory)" if self.memory else ""
        return TaskFailed(f"out of memory{limit}", "memory")

    def _death_cause(self, w: _Worker, timed_out: bool) -> TaskFailed:
        code = w.process.exitcode
        tail = _stderr_tail(w.stderr.fileno())
        # Out of memory first: a worker that ran out can also hang (a Rust panic whose backtrace
        # needs memory waits forever on the backtrace lock) until its deadline.
        if _out_of_memory_in(tail):
            return self._out_of_memory()
        if timed_out:
            return TaskFailed(f"timed out after {self.timeout_s:g} s", "timeout")
        if code is not None and code < 0:
            sig = -code
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = "?"
            last = tail.strip().splitlines()[-1][:300] if tail.strip() else ""
            return TaskFailed(f"worker killed by signal {sig} ({name})" + (f": {last}" if last else ""), "signal")
        return TaskFailed(f"worker exited with status {code}", "exit")

    def _supervise(self) -> None:
        try:
            self._loop()
        finally:
            for w in self._idle + self._busy:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
            for w in self._idle + self._busy:
                w.process.join(timeout=5)
                if w.process.is_alive():
                    self._kill(w)
                    w.process.join()
                w.conn.close()
                w.stderr.close()

    def _loop(self) -> None:
        killed: set[int] = set()
        while True:
            self._assign()
            with self._lock:
                if self._closing and not self._queue and not self._busy:
                    return
                busy = list(self._busy)
            now = time.monotonic()
            for w in busy:
                if now >= w.deadline and id(w) not in killed:
                    killed.add(id(w))
                    self._kill(w)
            timeout = min((w.deadline for w in busy if id(w) not in killed), default=now + 60.0) - now
            ready = wait([self._wake_r] + [w.conn for w in busy] + [w.process.sentinel for w in busy],
                         timeout=max(0.0, min(timeout, 60.0)))
            if self._wake_r in ready:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
            for w in busy:
                if w.conn in ready:
                    try:
                        status, value = pickle.loads(w.conn.recv_bytes())
                    except (EOFError, OSError):
                        status = None  # died while answering: the sentinel tells why
                    except Exception as e:  # an answer that cannot be unpickled here
                        status, value = "err", RuntimeError(f"the worker's answer could not be read: {e}")
                    if status is not None and id(w) not in killed:
                        if isinstance(value, TaskFailed) and value.cause == "memory":
                            value = self._out_of_memory()
                        with self._lock:
                            self._finish(w, status == "ok", value)
                            self._idle.append(w)
                        continue
                if w.process.sentinel in ready or (w.conn in ready and not w.process.is_alive()):
                    w.process.join()
                    cause = self._death_cause(w, timed_out=id(w) in killed)
                    killed.discard(id(w))
                    w.conn.close()
                    w.stderr.close()
                    with self._lock:
                        if w in self._busy:
                            self._finish(w, False, cause)
