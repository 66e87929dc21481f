"""D-ITG compatibility: ITGDec's decoder and D-ITG logs as lasthop results.

    decode(log)                       ITGDec's summary text, digit for digit (``ITGDec LOG``)
    decode(log, 100, "c.dat")         also its ``-c 100 c.dat`` time series (combined_stats.dat)
    import_logs(send, recv, out=DIR)  a results directory like ``lasthop run``'s, computed by the
                                      core's meters; with the sender's log, tail loss counted

Everything of substance is in Rust (lasthop-gen's ``ditg`` module): logs are streamed, so a
multi-GB log needs memory per flow, not per packet.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from lasthop import _core
from lasthop.results import Results, run_summary, tables_from_core

DitgLogError = _core.DitgLogError


def decode(log: str | Path, interval_ms: float | None = None, out: str | Path | None = None) -> str:
    """ITGDec's summary of `log` (what ``ITGDec LOG`` prints after its two banner lines).
    With `interval_ms`, also writes ITGDec's ``-c interval_ms`` series to `out` (default
    ``combined_stats.dat``). Raises DitgLogError (a ValueError) naming the file and offset."""
    if interval_ms is None:
        return _core.ditg_decode(str(log))
    return _core.ditg_decode(str(log), float(interval_ms), str(out if out is not None else "combined_stats.dat"))


def import_logs(
    sender: str | Path | None = None,
    receiver: str | Path | None = None,
    *,
    interval_s: float = 0.1,
    transport: str = "udp",
    out: str | Path | None = None,
    force: bool = False,
) -> Results:
    """D-ITG binary logs — the sender's (``ITGSend -l``), the receiver's (``-x``) or both — as
    lasthop results (summary, flows, intervals, delay CDF); written to `out` if given. The
    summary's ``scenario`` block names the logs used and how loss was counted."""
    if sender is None and receiver is None:
        raise DitgLogError("import needs a sender log, a receiver log or both")
    t0 = time.perf_counter()
    summary_json, raw = _core.ditg_import(
        None if sender is None else str(sender), None if receiver is None else str(receiver), interval_s, transport
    )
    wall = time.perf_counter() - t0
    core = json.loads(summary_json)
    logs = [str(p) for p in (sender, receiver) if p is not None]
    summary = run_summary(core, world="import", scenario_name="d-itg:" + "+".join(Path(p).name for p in logs),
                          scenario_file=logs[0], overrides={}, wall_s=wall)
    res = Results(summary, tables_from_core(raw))
    if out is not None:
        res.write(out, force=force)
    return res
