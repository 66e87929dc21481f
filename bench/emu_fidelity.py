"""Cross-world fidelity (issue 13): `lasthop emu run` (real Linux TCP across the emulated hops)
against `lasthop run` (the simulator) on the same scenario, overrides and seeds.

For each case, N emulated runs (seeds 1..N, real time) and the simulator on the same seeds, twice:
with the scenario's TCP as it is ("sim") and with the three Linux-named settings of the
simulator's NewReno/CUBIC that Linux's TCP follows ("sim, Linux settings": tcp.abc_limit = 2,
tcp.partial_ack_timer = "slow_but_steady", tcp.recovery_exit = "ssthresh", tcp.window_edge = "linux",
tcp.recovery_window = "prr", tcp.receive_window = "linux"). Prints a Markdown
table of medians (min–max) and the difference of the medians, and the load average.

    sudo .venv/bin/python bench/emu_fidelity.py [--runs 3] [--first-seed 1] [--cases dumbbell-reno,...] [--md FILE] [--json FILE]
    .venv/bin/python bench/emu_fidelity.py --merge A.json B.json   # the table of saved runs, pooled

Metrics, per TCP flow: goodput over the whole run and after `warm` seconds (intervals table);
queueing delay = mean − minimum one-way delay of its data packets (the delay the bottleneck's
queue and MAC add; both worlds stamp a packet as it enters the first hop and as it leaves the
last); lost packets. Per UDP flow: mean one-way delay and mean jitter (|IPDV|), an emulated
flow's also as the emulated network alone gave it (`emulator.generator[].network`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# EMULATION.md's tables up to 2026-11-26 were made with the first three; window_edge,
# recovery_window and receive_window since.
LINUX = {"abc_limit": "2", "partial_ack_timer": "slow_but_steady", "recovery_exit": "ssthresh", "window_edge": "linux",
         "recovery_window": "prr", "receive_window": "linux"}

HOME60 = ["simulation.duration=60s", "flows.game-down.start=1s", "flows.game-up.start=1s",
          "flows.chat-down.start=2s", "flows.chat-up.start=2s", "flows.ftp.start=3s"]
HOME180 = ["simulation.duration=180s"] + HOME60[1:]

# name -> (scenario, overrides for both worlds, TCP flow, UDP flows, warm-up s)
CASES: dict[str, tuple[str, list[str], str, list[str], float]] = {
    "dumbbell-reno": ("dumbbell", [], "bulk", ["voice"], 10.0),
    "dumbbell-cubic": ("dumbbell", ["flows.bulk.tcp.variant=cubic"], "bulk", ["voice"], 10.0),
    "home-reno": ("home", HOME60, "ftp", ["game-down", "chat-down"], 20.0),
    "home-cubic": ("home", HOME60 + ["flows.ftp.tcp.variant=cubic"], "ftp", ["game-down", "chat-down"], 20.0),
    # 180 s with the same start times: one slow-start overshoot weighs less than in 60 s, where
    # CUBIC's goodput spreads 4.9-8.7 Mb/s over seeds in the simulator alone.
    "home-reno-180": ("home", HOME180, "ftp", ["game-down", "chat-down"], 20.0),
    "home-cubic-180": ("home", HOME180 + ["flows.ftp.tcp.variant=cubic"], "ftp", ["game-down", "chat-down"], 20.0),
    "home-saplaw": ("home", HOME60 + ["wlans.home.sap_law.capacity=18Mbps"], "ftp", ["game-down", "chat-down"], 20.0),
    # SACK on both sides (the downloads then match), with and without SAP-LAW.
    "home-sack": ("home", HOME60 + ["flows.ftp.tcp.sack=true"], "ftp", ["game-down", "chat-down"], 20.0),
    "home-saplaw-sack": ("home", HOME60 + ["flows.ftp.tcp.sack=true", "wlans.home.sap_law.capacity=18Mbps"], "ftp", ["game-down", "chat-down"], 20.0),
    # The same with PSH cleared on the kernel's segments, so
    # its receiver ACKs as the simulator's (EMULATION.md): with and without SAP-LAW.
    "home-sack-clear-psh": ("home", HOME60 + ["flows.ftp.tcp.sack=true"], "ftp", ["game-down", "chat-down"], 20.0),
    "home-saplaw-clear-psh": ("home", HOME60 + ["flows.ftp.tcp.sack=true", "wlans.home.sap_law.capacity=18Mbps"], "ftp", ["game-down", "chat-down"], 20.0),
    # Today's home (scenarios/home-ac.toml): 802.11ac, Minstrel-HT, CUBIC with SACK beside a game
    # and an EF call; the channel at 20 MHz (~60 Mb/s of goodput), within what the emulator
    # carries on two cores.
    "home-ac-cubic": ("home-ac", ["simulation.duration=60s", "wlans.home.width=20"], "download", ["game-down", "call-down"], 10.0),
    # Today's home on 802.11ax (scenarios/home-ax.toml) with mac80211's FQ-CoDel and airtime
    # fairness at the AP (issue 28): 20 MHz and one stream (~80 Mb/s in all, what the emulator
    # carries on two cores), CUBIC downloads to a laptop and an old 802.11n one, a 4K stream.
    "home-ax-airtime": ("home-ax", ["wlans.home.width=20", "wlans.home.streams=1", "wlans.home.ap_queueing=airtime"], "download",
                        ["game-down", "call-down"], 5.0),
}

# Flags of `lasthop emu run` only, per case.
EMU_FLAGS: dict[str, tuple[str, ...]] = {"home-sack-clear-psh": ("--clear-psh",), "home-saplaw-clear-psh": ("--clear-psh",)}


def lasthop() -> str:
    return str(Path(sys.executable).with_name("lasthop"))


def run(world: str, scenario: str, sets: list[str], seed: int, out: Path, flags: tuple[str, ...] = ()) -> dict:
    write_run(world, scenario, sets, seed, out, flags)
    return measure(out)


def write_run(world: str, scenario: str, sets: list[str], seed: int, out: Path, flags: tuple[str, ...] = ()) -> None:
    """`lasthop emu run` (world "emu") or `lasthop run` of the scenario into `out`."""
    cmd = [lasthop()] + (["emu", "run"] if world == "emu" else ["run"]) + [scenario, "--seed", str(seed), "--out", str(out), "-q", "--force", *flags]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def measure(out: Path) -> dict:
    import pyarrow.parquet as pq

    s = json.loads((out / "summary.json").read_text())
    iv = pq.read_table(out / "intervals.parquet").to_pandas()
    flows = {}
    # An emulated UDP flow's jitter as the emulated network alone gave it (no host scheduling,
    # no release lateness); a simulated flow's is that already.
    network = {g["flow"]: g.get("network") or {} for g in s.get("emulator", {}).get("generator", [])}
    for f in s["flows"]:
        d = f.get("delay_ms") or {}
        j = f.get("jitter_ms") or {}
        nj = (network[f["name"]].get("jitter_ms") or {}) if f["name"] in network else j
        flows[f["name"]] = {
            "goodput": f["goodput_bps"] / 1e6,
            "lost": f["lost_packets"],
            "queue_delay": (d["mean"] - d["min"]) if d else None,
            "delay": d.get("mean"),
            "jitter": j.get("mean"),
            "jitter_max": j.get("max"),
            "network_jitter": nj.get("mean"),
            "intervals": iv[iv.flow == f["name"]][["t_start_s", "goodput_bps"]].values.tolist(),
        }
    return {"flows": flows, "emulator": s.get("emulator", {}).get("release_lateness_us")}


def after(r: dict, flow: str, warm: float) -> float:
    rows = [g for t, g in r["flows"][flow]["intervals"] if t >= warm]
    return statistics.fmean(rows) / 1e6 if rows else float("nan")


def med(xs: list[float]) -> tuple[float, float, float]:
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3


def fmt(m: tuple[float, float, float], digits: int) -> str:
    return f"{m[0]:.{digits}f} ({m[1]:.{digits}f}–{m[2]:.{digits}f})"


def diff(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f} %" if b else "—"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=1, help="seeds first..first+runs-1")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--md", type=Path, help="also write the table to this file")
    ap.add_argument("--json", type=Path, help="write every run's measures to this file")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="run nothing: the table of the runs saved by earlier --json files, pooled per case")
    args = ap.parse_args()
    if args.merge:
        results = merge([json.loads(p.read_text()) for p in args.merge])
        n = {len(res["emu"]) for res in results.values()}
        head = f"{'/'.join(map(str, sorted(n)))} runs per world, pooled from {', '.join(p.name for p in args.merge)}"
    else:
        results, loads = measure_cases(args.cases.split(","), args.first_seed, args.runs)
        head = (f"{args.runs} runs per world (seeds {args.first_seed}–{args.first_seed + args.runs - 1}). "
                f"Load average (1 min) before and after the emulated runs: {min(loads):.2f}–{max(loads):.2f}")
    text = table(results, head)
    print(text)
    if args.md:
        args.md.write_text(text + "\n")
    if args.json:
        args.json.write_text(json.dumps(results))


def measure_cases(cases: list[str], first_seed: int, runs: int) -> tuple[dict[str, dict[str, list[dict]]], list[float]]:
    """Every case on seeds first_seed.., in the three worlds; and the load averages seen."""
    loads = [os.getloadavg()[0]]
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="lh-fid-") as tmp:
        for case in cases:
            scenario, sets, tcp, udp, warm = CASES[case]
            variant_sets = [f"flows.{tcp}.tcp.{k}={v}" for k, v in LINUX.items()]
            res = results.setdefault(case, {"emu": [], "sim": [], "sim_linux": []})
            for seed in range(first_seed, first_seed + runs):
                t0 = time.time()
                res["emu"].append(run("emu", scenario, sets, seed, Path(tmp) / f"{case}-emu-{seed}", EMU_FLAGS.get(case, ())))
                loads.append(os.getloadavg()[0])
                res["sim"].append(run("sim", scenario, sets, seed, Path(tmp) / f"{case}-sim-{seed}"))
                res["sim_linux"].append(run("sim", scenario, sets + variant_sets, seed, Path(tmp) / f"{case}-simlx-{seed}"))
                print(f"{case} seed {seed}: {time.time() - t0:.0f} s, emu goodput {res['emu'][-1]['flows'][tcp]['goodput']:.2f} Mb/s, "
                      f"sim {res['sim'][-1]['flows'][tcp]['goodput']:.2f}, sim Linux {res['sim_linux'][-1]['flows'][tcp]['goodput']:.2f}",
                      file=sys.stderr)
    return results, loads


def merge(saved: list[dict[str, dict[str, list[dict]]]]) -> dict[str, dict[str, list[dict]]]:
    """Runs of the same case from several --json files, in file order."""
    out: dict[str, dict[str, list[dict]]] = {}
    for results in saved:
        for case, res in results.items():
            pooled = out.setdefault(case, {"emu": [], "sim": [], "sim_linux": []})
            for world, runs in res.items():
                pooled[world] += runs
    return out


def table(results: dict[str, dict[str, list[dict]]], head: str) -> str:
    lines = [
        f"{head}; medians (min–max); difference = emulated median / simulated median − 1.",
        "",
        "| case | flow, metric | emulated (Linux) | simulated | diff | simulated, Linux settings | diff |",
        "|---|---|---|---|---|---|---|",
    ]
    for case, res in results.items():
        scenario, sets, tcp, udp, warm = CASES[case]
        metrics = [
            (f"{tcp} goodput, whole run (Mb/s)", lambda r: r["flows"][tcp]["goodput"], 2),
            (f"{tcp} goodput from {warm:.0f} s (Mb/s)", lambda r: after(r, tcp, warm), 2),
            (f"{tcp} queueing delay, mean − min (ms)", lambda r: r["flows"][tcp]["queue_delay"], 1),
            (f"{tcp} lost packets", lambda r: r["flows"][tcp]["lost"], 0),
        ]
        for u in udp:
            metrics.append((f"{u} delay mean (ms)", lambda r, u=u: r["flows"][u]["delay"], 1))
            metrics.append((f"{u} jitter mean / max (ms)", lambda r, u=u: r["flows"][u]["jitter"], 2))
            metrics.append((f"{u} network jitter mean (ms)", lambda r, u=u: r["flows"][u]["network_jitter"], 2))
        for label, get, digits in metrics:
            e, s, sl = (med([get(r) for r in res[w]]) for w in ("emu", "sim", "sim_linux"))
            if "jitter mean / max" in label:
                jm = lambda w: med([r["flows"][label.split()[0]]["jitter_max"] for r in res[w]])[0]
                cells = [f"{fmt(x, digits)} / {jm(w):.1f}" for x, w in ((e, "emu"), (s, "sim"), (sl, "sim_linux"))]
            else:
                cells = [fmt(x, digits) for x in (e, s, sl)]
            lines.append(f"| {case} | {label} | {cells[0]} | {cells[1]} | {diff(e[0], s[0])} | {cells[2]} | {diff(e[0], sl[0])} |")
    lateness = [r["emulator"] for res in results.values() for r in res["emu"] if r["emulator"]]
    if lateness:
        lines += ["", "Release lateness of the emulated runs, p50 / p99 / p99.9 (µs, bucket upper edges): "
                  + "; ".join(f"{x['p50']:.0f} / {x['p99']:.0f} / {x['p999']:.0f}" for x in lateness) + "."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
