"""The game-jitter claims of `lasthop reproduce palazzi2006` checked on real Linux TCP (issue 13):
the reproduction's own configurations of scenarios/home.toml (Regular, MAC-Setting, SAP-LAW at
C = 14, 18, 22 Mb/s; the whole 180 s, FTP from 135 s) run by `lasthop emu run` and by `lasthop
run`, seeds 1..N, and the reproduction's ratios computed on each world.

    sudo .venv/bin/python bench/emu_palazzi.py [--runs 2] [--md FILE] [--json FILE]

Three columns: emulated (the kernel's NewReno-like reno, SACK off as the scenario says; the
reproduction's `tcp.ca_increase = "per_ack"` has no socket option and is reported as not
applied), simulated with the reproduction's overrides, and simulated with the six Linux-named
TCP settings of bench/emu_fidelity.py instead (what the kernel does). An emulated flow's jitter is
given twice: as the receiver measured it, and as the emulated network alone gave it
(`emulator.generator[].network`: without the hosts' scheduling, so without the machine's stalls).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from emu_fidelity import LINUX, write_run

from lasthop.reproduce.palazzi2006 import configs

CONFIGS = ["regular", "mac3q50", "sap14", "sap18", "sap22"]

# (label, numerator config, denominator config, metric, the reproduction's direction)
CLAIMS = [
    ("largest game jitter, Regular / SAP-LAW 18 (Fig. 4 against Fig. 10)", "regular", "sap18", "jitter_max", ">"),
    ("mean game jitter, SAP-LAW 18 / MAC-Setting (Fig. 11)", "sap18", "mac3q50", "jitter_mean", "<"),
    ("mean game jitter, SAP-LAW 22 / 14 (Fig. 8)", "sap22", "sap14", "jitter_mean", ">"),
    ("variance of the game jitter, SAP-LAW 22 / 14 (Fig. 8)", "sap22", "sap14", "jitter_var", ">"),
    ("FTP packets, SAP-LAW 14 / 18 (Fig. 8)", "sap14", "sap18", "ftp_packets", "<"),
    ("FTP packets, SAP-LAW 18 / MAC-Setting (Fig. 11)", "sap18", "mac3q50", "ftp_packets", ">"),
    # Not a claim of the reproduction: the mean with and without SAP-LAW.
    ("mean game jitter, SAP-LAW 18 / Regular (no claim)", "sap18", "regular", "jitter_mean", None),
]


def run(world: str, sets: dict, seed: int, out: Path) -> dict:
    write_run(world, "home", [f"{k}={v}" for k, v in sets.items()], seed, out)
    return measure(out)


def measure(out: Path) -> dict:
    """The reproduction's measures (palazzi2006._home), and an emulated game's network jitter."""
    import pyarrow.parquet as pq

    s = json.loads((out / "summary.json").read_text())
    flows = {f["name"]: f for f in s["flows"]}
    iv = pq.read_table(out / "intervals.parquet").to_pandas()
    g = iv[(iv.flow == "game-down") & (iv.t_start_s >= 135.0)]
    game = flows["game-down"]
    network = {x["flow"]: (x.get("network") or {}).get("jitter_ms") or {} for x in s.get("emulator", {}).get("generator", [])}
    nj = network.get("game-down", game["jitter_ms"])
    return {
        "ftp_packets": flows["ftp"]["received_packets"],
        "jitter_mean": game["jitter_ms"]["mean"],
        "jitter_max": game["jitter_ms"]["max"],
        "jitter_var": float(g.jitter_mean_ms.var()),
        "network_jitter_mean": nj["mean"],
        "network_jitter_max": nj["max"],
        "lateness": s.get("emulator", {}).get("release_lateness_us"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    cfg = configs(quick=True)
    linux = {f"flows.ftp.tcp.{k}": v for k, v in LINUX.items()}
    worlds = {"emu": lambda c: cfg[c], "sim": lambda c: cfg[c],
              "sim_linux": lambda c: {**{k: v for k, v in cfg[c].items() if ".tcp." not in k}, **linux}}
    res: dict[str, dict[str, list[dict]]] = {w: {c: [] for c in CONFIGS} for w in worlds}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="lh-pal-") as tmp:
        for seed in range(1, args.runs + 1):
            for c in CONFIGS:
                for w, sets in worlds.items():
                    res[w][c].append(run(w if w == "emu" else "sim", sets(c), seed, Path(tmp) / f"{w}-{c}-{seed}"))
                loads.append(os.getloadavg()[0])
                e = res["emu"][c][-1]
                print(f"seed {seed} {c}: emu game jitter mean {e['jitter_mean']:.2f} max {e['jitter_max']:.1f} ms "
                      f"(network {e['network_jitter_mean']:.2f} / {e['network_jitter_max']:.1f}), ftp {e['ftp_packets']}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(res))
    print(table(res, args.runs, loads))
    if args.md:
        args.md.write_text(table(res, args.runs, loads) + "\n")


def ratio(res: dict, num: str, den: str, metric: str) -> tuple[float, list[float]]:
    """Ratio of the means over seeds (the reproduction's), and the per-seed ratios."""
    n, d = [r[metric] for r in res[num]], [r[metric] for r in res[den]]
    return statistics.fmean(n) / statistics.fmean(d), [a / b for a, b in zip(n, d)]


def cell(res: dict, num: str, den: str, metric: str, want: str | None) -> str:
    x, per_seed = ratio(res, num, den, metric)
    seeds = ", ".join(f"{v:.2f}" for v in per_seed)
    if want is None:
        verdict = ""
    else:
        agree = (x > 1) if want == ">" else (x < 1)
        verdict = " ✓" if agree else " ✗"
    return f"{x:.2f}{verdict} ({seeds})"


def table(res: dict, runs: int, loads: list[float]) -> str:
    lines = [
        f"Seeds 1–{runs}; ratio of the means over seeds (per seed in brackets); ✓ = the reproduction's direction. "
        f"Load average (1 min) {min(loads):.2f}–{max(loads):.2f}.",
        "",
        "| claim (reproduce palazzi2006) | direction | emulated (Linux), measured | emulated, network | simulated | simulated, Linux settings |",
        "|---|---|---|---|---|---|",
    ]
    for label, num, den, metric, want in CLAIMS:
        net = {"jitter_mean": "network_jitter_mean", "jitter_max": "network_jitter_max"}.get(metric)
        cells = [cell(res["emu"], num, den, metric, want),
                 cell(res["emu"], num, den, net, want) if net else "—",
                 cell(res["sim"], num, den, metric, want),
                 cell(res["sim_linux"], num, den, metric, want)]
        lines.append(f"| {label} | {want or '—'} 1 | " + " | ".join(cells) + " |")
    lines += ["", "| configuration | world | game jitter mean (ms) | largest (ms) | FTP packets |", "|---|---|---|---|---|"]
    for c in CONFIGS:
        for w in ("emu", "sim", "sim_linux"):
            rs = res[w][c]
            net = f" (network {statistics.median(r['network_jitter_mean'] for r in rs):.2f})" if w == "emu" else ""
            netmax = f" (network {statistics.median(r['network_jitter_max'] for r in rs):.1f})" if w == "emu" else ""
            lines.append(f"| {c} | {w} | {statistics.median(r['jitter_mean'] for r in rs):.2f}{net} | "
                         f"{statistics.median(r['jitter_max'] for r in rs):.1f}{netmax} | {statistics.median(r['ftp_packets'] for r in rs):.0f} |")
    late = [r["lateness"] for rs in res["emu"].values() for r in rs if r["lateness"]]
    if late:
        lines += ["", "Release lateness p99 of the emulated runs (µs): " + ", ".join(f"{x['p99']:.0f}" for x in late) + "."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
