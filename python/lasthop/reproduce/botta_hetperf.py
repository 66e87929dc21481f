"""Botta, Emma, Guadagno, Pescapè, "Performance evaluation of heterogeneous network scenarios"
(shared/papers/002): D-ITG-style constant packet size / inter-departure time UDP flows over
Ethernet and 802.11b (infrastructure and ad hoc) at the paper's three loads (Sect. 1: low,
IDT 1/100 s, PS 64-1500 B; medium, 1/1000 s, PS 64-512 B; high, 1/10000 s, PS 64-128 B), with
Bianchi's saturation throughput as the 802.11b upper bound (Sect. 2.1.5). The paper measured
laptops, workstations and palmtops; only the laptop/workstation configurations are modelled."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lasthop  # noqa: E402
from lasthop.models import bianchi  # noqa: E402
from lasthop.reproduce import (  # noqa: E402
    Reproduction, bound, claims_table, compare, finish_figure, mean_ci, register, run_jobs, seeds_label, value,
)

# The paper's loads: IDT and the packet sizes (IP bytes, D-ITG's PS) used at each (Sect. 1).
LOADS = {"low": ("10ms", [64, 128, 256, 512, 1024, 1500]),
         "medium": ("1ms", [64, 128, 256, 512]),
         "high": ("100us", [64, 128])}
IDT_LABEL = {"low": "1/100 s", "medium": "1/1000 s", "high": "1/10000 s"}
LOADS_QUICK = {"low": ("10ms", [64, 512, 1500]), "medium": ("1ms", [64, 512]), "high": ("100us", [64, 128])}

CONFIGS = {
    # wired2wired: two hosts on 100 Mb/s Ethernet.
    "wired2wired": '[[links]]\na = "sender"\nb = "receiver"\npreset = "ethernet"\n',
    # wired2wireless: Ethernet to the access point, 802.11b down to the receiver.
    "wired2wireless (AP)": ('[[wlans]]\nname = "w"\nstandard = "802.11b"\nap = "ap"\nstations = ["receiver"]\n'
                            '[[links]]\na = "sender"\nb = "ap"\npreset = "ethernet"\n'),
    # wireless2wired through an access point: 802.11b up, Ethernet down.
    "wireless2wired (AP)": ('[[wlans]]\nname = "w"\nstandard = "802.11b"\nap = "ap"\nstations = ["sender"]\n'
                            '[[links]]\na = "ap"\nb = "receiver"\npreset = "ethernet"\n'),
    # wireless2wireless through the AP: the packet crosses the channel twice.
    "wireless2wireless (AP)": '[[wlans]]\nname = "w"\nstandard = "802.11b"\nap = "ap"\nstations = ["sender", "receiver"]\n',
    # wireless2wireless in ad hoc mode.
    "wireless2wireless (ad hoc)": '[[wlans]]\nname = "w"\nstandard = "802.11b"\nstations = ["sender", "receiver"]\n',
}
WIRELESS = [c for c in CONFIGS if c != "wired2wired"]
WITH_AP = [c for c in CONFIGS if "(AP)" in c]

# The paper's statements (Sect. 2.1.3 jitter, 2.1.4 loss).
PAPER_LOSS_MEDIUM_AP = 70.0   # "UDP packet loss for IDT = 1/1000 s up to 70%" (Fig. 17)
PAPER_LOSS_HIGH_AP = 95.0     # "UDP packet loss for IDT = 1/10000 s up to 95%" (Fig. 18)
PAPER_JITTER_MS = {"low": 4.0, "medium": 8.0, "high": 4.0}  # worst case "under" (Figs. 13-15)
PAPER_LOSS_LOW = 0.5          # low load: "under the 0.5% and substantially equal to 0" (Fig. 16)


def _text(config: str, size: int, idt: str, seed: int) -> str:
    return (f'[simulation]\nname = "hetperf"\nduration = "10s"\nseed = {seed}\n[[nodes]]\nname = "sender"\n'
            f'[[nodes]]\nname = "receiver"\n[[nodes]]\nname = "ap"\n{CONFIGS[config]}'
            f'[[flows]]\nname = "ditg"\nsrc = "sender"\ndst = "receiver"\n'
            f'app = {{ type = "cbr", size = "{size - 28}B", interval = "{idt}" }}\n')


def _measure(config: str, size: int, idt: str, seed: int) -> dict:
    f = lasthop.run(lasthop.Scenario.from_str(_text(config, size, idt, seed))).flow("ditg")
    return {"tx_mbps": f["throughput_tx_bps"] / 1e6, "rx_mbps": f["throughput_rx_bps"] / 1e6,
            "delay_ms": f["delay_ms"]["mean"], "jitter_ms": f["jitter_ms"]["ditg"], "loss_pct": 100 * f["loss_ratio"]}


@register("botta-hetperf", "D-ITG service conditions over Ethernet and 802.11b, Bianchi as the bound (paper 002)", seeds=3, quick_seeds=2)
def run(out: Path, quick: bool = False, seeds: list[int] | None = None, workers: int | None = None) -> Reproduction:
    seeds = seeds or [1]
    loads = LOADS_QUICK if quick else LOADS
    keys = [(c, load, size) for c in CONFIGS for load, (_, sizes) in loads.items() for size in sizes]
    jobs = [(c, size, loads[load][0], s) for c, load, size in keys for s in seeds]
    got = iter(run_jobs(_measure, jobs, workers))
    res = {k: [next(got) for _ in seeds] for k in keys}

    def per_seed(metric: str, configs: list[str], load: str, reduce=max) -> list[float]:
        """Per seed, `reduce` of `metric` over the configurations and the load's packet sizes."""
        return [reduce(res[(c, load, size)][i][metric] for c in configs for size in loads[load][1]) for i in range(len(seeds))]

    def bianchi_ratio(load: str) -> list[float]:
        return [max(res[(c, load, size)][i]["rx_mbps"] / bianchi(1, size, "802.11b", llc_snap=True).throughput_bps * 1e6
                    for c in WIRELESS for size in loads[load][1]) for i in range(len(seeds))]

    rows = []
    for c in CONFIGS:
        rows.append(value(f"Low load (IDT 1/100 s, PS {loads['low'][1][0]}-{loads['low'][1][-1]} B), {c} (Sect. 2.1.1, Figs. 4-5: "
                          "sent throughput equals received for laptops)", "received / sent throughput, least over PS",
                          [min(res[(c, 'low', size)][i]["rx_mbps"] / res[(c, 'low', size)][i]["tx_mbps"] for size in loads["low"][1])
                           for i in range(len(seeds))], 1.0))
    rows.append(bound("Low load (IDT 1/100 s), every configuration and PS (Sect. 2.1.4, Fig. 16)", "UDP loss, largest (%)",
                      per_seed("loss_pct", list(CONFIGS), "low"), "<", PAPER_LOSS_LOW, "< 0.5, ~0"))
    rows.append(value("Medium load (IDT 1/1000 s, PS 64-512 B), configurations with the access point (Sect. 2.1.4, Fig. 17)",
                      "UDP loss, largest over configurations and PS (%)", per_seed("loss_pct", WITH_AP, "medium"), PAPER_LOSS_MEDIUM_AP,
                      "up to 70"))
    rows.append(value("High load (IDT 1/10000 s, PS 64-128 B), configurations with the access point (Sect. 2.1.4, Fig. 18)",
                      "UDP loss, largest over configurations and PS (%)", per_seed("loss_pct", WITH_AP, "high"), PAPER_LOSS_HIGH_AP,
                      "up to 95"))
    for load in ("medium", "high"):
        ap = [sum(res[("wireless2wireless (AP)", load, size)][i]["loss_pct"] for size in loads[load][1]) for i in range(len(seeds))]
        adhoc = [sum(res[("wireless2wireless (ad hoc)", load, size)][i]["loss_pct"] for size in loads[load][1]) for i in range(len(seeds))]
        rows.append(compare(f"{load.capitalize()} load, wireless2wireless with the AP against ad hoc (Sect. 2.1.4: the AP "
                            "configuration has the worst loss)", "UDP loss summed over PS, AP / ad hoc (x)", ap, adhoc, ">"))
    for load in LOADS:
        rows.append(bound(f"{load.capitalize()} load (IDT {IDT_LABEL[load]}), every configuration and PS (Sect. 2.1.3, Figs. 13-15)",
                          "D-ITG jitter, largest (ms)", per_seed("jitter_ms", list(CONFIGS), load), "<", PAPER_JITTER_MS[load]))
    for load in ("medium", "high"):
        rows.append(bound(f"{load.capitalize()} load, every 802.11b configuration and PS (Sect. 2.1.5, Figs. 6-9: Bianchi bounds UDP)",
                          "received throughput / Bianchi's n = 1 saturation throughput, largest", bianchi_ratio(load), "<", 1.0,
                          "≤ 1 (upper bound)"))
    table = claims_table(rows)

    figures = []
    fig, ax = plt.subplots(figsize=(7, 4))
    sizes = loads["low"][1]
    for c in CONFIGS:
        stats = [mean_ci([x["rx_mbps"] for x in res[(c, "low", s)]]) for s in sizes]
        ax.plot(sizes, [s[0] for s in stats], marker="o", label=c)
    ax.plot(sizes, [bianchi(1, s, "802.11b", llc_snap=True).throughput_bps / 1e6 for s in sizes], "k--",
            label="Bianchi, 802.11b, n = 1 (upper bound)")
    figures.append(finish_figure(fig, ax, out / "botta_hetperf_low_load.png", "packet size (bytes)",
                                 "receiver-side throughput (Mb/s)",
                                 f"botta-hetperf — low load (IDT 1/100 s), UDP, {seeds_label(seeds)}", logy=True, legend_size=7))
    fig, ax = plt.subplots(figsize=(7, 4))
    for c in WIRELESS:
        for load, marker in [("medium", "o"), ("high", "s")]:
            sz = loads[load][1]
            ax.plot(sz, [mean_ci([x["rx_mbps"] for x in res[(c, load, s)]])[0] for s in sz], marker=marker,
                    label=f"{c}, {load}")
    allsz = sorted({s for _, (_, sz) in loads.items() if _ != "low" for s in sz})
    ax.plot(allsz, [bianchi(1, s, "802.11b", llc_snap=True).throughput_bps / 1e6 for s in allsz], "k--", label="Bianchi, n = 1")
    figures.append(finish_figure(fig, ax, out / "botta_hetperf_saturation.png", "packet size (bytes)",
                                 "receiver-side throughput (Mb/s)",
                                 f"botta-hetperf — medium and high load, UDP, {seeds_label(seeds)}", legend_size=6))

    notes = [
        "Bianchi's single-station saturation throughput bounds every 802.11b configuration from above, as the "
        "paper states for UDP (Sect. 2.1.5); the bound counts the IP packet as payload, with LLC/SNAP on air.",
        "Through the AP, a wireless-to-wireless packet occupies the channel twice (the paper's 'double channel "
        "occupation'), so it gets about half of the ad hoc throughput and loses more at medium and high load.",
        "The paper's loss and jitter figures are maxima over measured service conditions that include palmtops "
        "(Windows CE and Linux Familiar on slow CPUs) and mobility at 5-15 m, which are not modelled; our channel is "
        "error-free, so the jitter bounds are met with room and the loss is set by saturation alone. GPRS and UMTS "
        "measurements depend on operators' networks and are represented only by scenarios/hetperf.toml's presets.",
        "The paper's RTT figures (e.g. ~500 ms at PS 1500 B with the AP, Sect. 2.1.2) come from its devices and "
        "drivers; this one-way UDP reproduction does not compare them.",
    ]
    return Reproduction("botta-hetperf", "D-ITG service conditions", table, notes, figures, {"results": res, "loads": loads})
