"""The comparison no other tool makes (issue 28): on scenarios/home-ax.toml, the game's and the
video call's delay, jitter and loss and the downloads' goodput under each way the access point
can queue — a deep FIFO (legacy), mac80211's FQ-CoDel, airtime fairness, AQL, SAP-LAW (paper
001) and SAP-LAW with airtime fairness — simulated, and with --emulate also emulated (real
Linux CUBIC and BBR downloads through the emulated AP, `lasthop emu run`).

    .venv/bin/python bench/home_ax_queues.py                 # simulated, seeds 1-3, into EMULATION.md
    sudo .venv/bin/python bench/home_ax_queues.py --emulate  # and emulated (real time: ~40 min)
    .venv/bin/python bench/home_ax_queues.py --print         # print the section instead

With --emulate both worlds run the WLAN at 20 MHz with one stream (`wlans.home.width=20`,
`wlans.home.streams=1`: ~80 Mb/s in all, what the emulator carries in real time on two cores,
EMULATION.md); without it, the scenario's 80 MHz and two streams. The
section goes between markers in EMULATION.md with a figure in docs/figures/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from md_sections import markers, write_section

ROOT = Path(__file__).resolve().parent.parent
def owner(emulate: bool) -> str:
    """The section's owner in EMULATION.md: one section per mode."""
    return "bench/home_ax_queues.py" + (" --emulate" if emulate else "")


def lasthop() -> str:
    return str(Path(sys.executable).with_name("lasthop"))


def one_run(world: str, sets: list[str], seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        cmd = [lasthop()] + (["emu", "run"] if world == "emu" else ["run"]) + ["home-ax", "--seed", str(seed), "--out", d,
                                                                                "-q", "--force", "--no-report"]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        s = json.loads((Path(d) / "summary.json").read_text())
    f = {x["name"]: x for x in s["flows"]}

    def udp(name: str) -> dict:
        d, j = f[name]["delay_ms"], f[name]["jitter_ms"]
        return {"mean": d["mean"], "p99": d["p99"], "jitter": j["rfc3550"], "loss": 100 * (f[name]["loss_ratio"] or 0.0)}

    return {"download": f["download"]["goodput_bps"] / 1e6, "old": f["old-download"]["goodput_bps"] / 1e6,
            "game": udp("game-down"), "call": udp("call-down"),
            "jain": s["wlans"][0].get("airtime_fairness")}


def measure(worlds: list[tuple[str, str]], width: int | None, seeds: list[int]) -> dict:
    """{(option, world label): [run per seed]}."""
    base = [f"wlans.home.width={width}", "wlans.home.streams=1"] if width else []
    cap = CAPACITY[width or 80]
    out = {}
    for option, sets in OPTIONS.items():
        sets = [SAP_LAW % cap if s == "SAP" else s for s in sets]
        for world, variant in worlds:
            tcp = [f"flows.download.tcp.variant={variant}", f"flows.old-download.tcp.variant={variant}"]
            label = f"{'emulated' if world == 'emu' else 'simulated'}, {variant.upper() if variant == 'bbr' else 'CUBIC'}"
            out[(option, label)] = [one_run(world, base + sets + tcp, s) for s in seeds]
            print(f"{option:26} {label:20} done", file=sys.stderr)
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def section(results: dict, width: int | None, seeds: list[int], emulate: bool) -> str:
    mhz = width or 80
    begin, end = markers(owner(emulate))
    figure_name = figure_file(emulate).name
    lines = [begin, "## Today's home: which AP queue helps the game and the call (`home-ax`"
             + (", simulated and emulated)" if emulate else ")"), "",
             f"Made by `bench/home_ax_queues.py{' --emulate' if any('emulated' in k[1] for k in results) else ''}`: "
             f"`scenarios/home-ax.toml` (an 802.11ax AP at {mhz} MHz{', one stream' if width else ''}, a download to a laptop, another to an "
             "old 802.11n laptop 25 m away, a 25 Mb/s 4K stream, a game, an AF41 video call), each AP option "
             f"below, medians over seeds {seeds[0]}-{seeds[-1]}. Game and call: the downlink flows' one-way delay "
             "(mean / p99, ms; 10 and 20 ms of it are their wires), RFC 3550 jitter (ms) and loss (%); downloads: "
             f"goodput (Mb/s); Jain: the stations' airtime fairness. SAP-LAW's C = {CAPACITY[mhz]}.", "",
             "| AP queueing | world | download | old laptop | game delay | game jitter | game loss | call delay | call jitter | call loss | Jain |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (option, label), runs in results.items():
        g = lambda k, m: med([r[k][m] for r in runs])  # noqa: E731
        jain = [r["jain"] for r in runs if r["jain"] is not None]
        jain_cell = f"{med(jain):.2f}" if jain else "—"
        lines.append(f"| {option} | {label} | {med([r['download'] for r in runs]):.1f} | {med([r['old'] for r in runs]):.1f} | "
                     f"{g('game', 'mean'):.1f} / {g('game', 'p99'):.1f} | {g('game', 'jitter'):.2f} | {g('game', 'loss'):.2f} | "
                     f"{g('call', 'mean'):.1f} / {g('call', 'p99'):.1f} | {g('call', 'jitter'):.2f} | {g('call', 'loss'):.2f} | "
                     f"{jain_cell} |")
    lines += ["", f"![home-ax: the game's p99 delay and the download's goodput per AP option](docs/figures/{figure_name})", "",
              end]
    return "\n".join(lines) + "\n"


def figure(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({k[1] for k in results})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for k, label in enumerate(labels):
        xs = [i + (k - (len(labels) - 1) / 2) * 0.8 / len(labels) for i in range(len(OPTIONS))]
        p99 = [med([r["game"]["p99"] for r in results[(o, label)]]) for o in OPTIONS]
        dl = [med([r["download"] for r in results[(o, label)]]) for o in OPTIONS]
        axes[0].bar(xs, p99, width=0.8 / len(labels), label=label)
        axes[1].bar(xs, dl, width=0.8 / len(labels), label=label)
    for ax, what in zip(axes, ("game's p99 one-way delay (ms)", "laptop's download (Mb/s)")):
        ax.set_xticks(range(len(OPTIONS)), list(OPTIONS), rotation=20, fontsize=7, ha="right")
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("home-ax: the AP's queueing", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def figure_file(emulate: bool) -> Path:
    return ROOT / "docs" / "figures" / ("home_ax_queues_emulated.png" if emulate else "home_ax_queues.png")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--emulate", action="store_true", help="also `lasthop emu run` (root; real time) with CUBIC and BBR")
    ap.add_argument("--width", type=int, default=None, help="the WLAN's width (default 80; 20 with --emulate)")
    ap.add_argument("--print", action="store_true", help="print the section instead of writing EMULATION.md")
    args = ap.parse_args()
    width = args.width or (20 if args.emulate else None)
    worlds = [("sim", "cubic")] + ([("emu", "cubic"), ("sim", "bbr"), ("emu", "bbr")] if args.emulate else [])
    seeds = list(range(1, args.seeds + 1))
    results = measure(worlds, width, seeds)
    text = section(results, width, seeds, args.emulate)
    if args.print:
        sys.stdout.write(text)
        return
    figure(results, figure_file(args.emulate))
    write_section(ROOT / "EMULATION.md", text, owner(args.emulate))


if __name__ == "__main__":
    main()
