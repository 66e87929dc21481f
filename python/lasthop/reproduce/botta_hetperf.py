"""Botta, Emma, Guadagno, Pescapè, "Performance evaluation of heterogeneous network scenarios"
(shared/papers/002): D-ITG-style constant packet size / inter-departure time flows over Ethernet
and 802.11b (infrastructure and ad hoc), at the paper's low / medium / high loads, with
Bianchi's saturation throughput as the 802.11b upper bound."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import lasthop  # noqa: E402
from lasthop.models import bianchi  # noqa: E402
from lasthop.reproduce import Reproduction, finish_figure, register  # noqa: E402

SIZES = [64, 128, 256, 512, 1024, 1500]  # IP packet sizes, as D-ITG's PS
LOADS = {"low": "10ms", "medium": "1ms", "high": "100us"}  # IDT 1/100, 1/1000, 1/10000 s

CONFIGS = {
    # wired2wired: two hosts on 100 Mb/s Ethernet.
    "wired2wired": ("sender", "receiver", '[[links]]\na = "sender"\nb = "receiver"\npreset = "ethernet"\n'),
    # wireless2wired through an access point: 802.11b up, Ethernet down.
    "wireless2wired (AP)": ("sender", "receiver",
                            '[[wlans]]\nname = "w"\nstandard = "802.11b"\nap = "ap"\nstations = ["sender"]\n'
                            '[[links]]\na = "ap"\nb = "receiver"\npreset = "ethernet"\n'),
    # wireless2wireless through the AP: the packet crosses the channel twice.
    "wireless2wireless (AP)": ("sender", "receiver",
                               '[[wlans]]\nname = "w"\nstandard = "802.11b"\nap = "ap"\nstations = ["sender", "receiver"]\n'),
    # wireless2wireless in ad hoc mode.
    "wireless2wireless (ad hoc)": ("sender", "receiver",
                                   '[[wlans]]\nname = "w"\nstandard = "802.11b"\nstations = ["sender", "receiver"]\n'),
}


def _text(config: str, size: int, idt: str) -> str:
    src, dst, net = CONFIGS[config]
    return (f'[simulation]\nname = "hetperf"\nduration = "10s"\n[[nodes]]\nname = "sender"\n[[nodes]]\nname = "receiver"\n'
            f'[[nodes]]\nname = "ap"\n{net}'
            f'[[flows]]\nname = "ditg"\nsrc = "{src}"\ndst = "{dst}"\n'
            f'app = {{ type = "cbr", size = "{size - 28}B", interval = "{idt}" }}\n')


@register("botta-hetperf", "D-ITG service conditions over Ethernet and 802.11b, Bianchi as the bound (paper 002)")
def run(out: Path, quick: bool = False) -> Reproduction:
    sizes = [64, 512, 1500] if quick else SIZES
    rows = []
    for config in CONFIGS:
        for load, idt in LOADS.items():
            for size in sizes:
                f = lasthop.run(lasthop.Scenario.from_str(_text(config, size, idt))).flow("ditg")
                rows.append({"configuration": config, "load": load, "packet_size": size,
                             "tx_mbps": f["throughput_tx_bps"] / 1e6, "rx_mbps": f["throughput_rx_bps"] / 1e6,
                             "delay_ms": f["delay_ms"]["mean"], "jitter_ms": f["jitter_ms"]["ditg"],
                             "loss": f["loss_ratio"],
                             "bianchi_n1_mbps": bianchi(1, size, "802.11b", llc_snap=True).throughput_bps / 1e6})
    table = pd.DataFrame(rows)

    figures = []
    fig, ax = plt.subplots(figsize=(7, 4))
    high = table[table.load == "high"]
    for config in CONFIGS:
        sub = high[high.configuration == config]
        ax.plot(sub.packet_size, sub.rx_mbps, marker="o", label=config)
    bound = [bianchi(1, s, "802.11b", llc_snap=True).throughput_bps / 1e6 for s in sizes]
    ax.plot(sizes, bound, "k--", label="Bianchi, 802.11b, n = 1 (upper bound)")
    figures.append(finish_figure(fig, ax, out / "botta_hetperf_high_load.png", "packet size (bytes)",
                                 "receiver-side throughput (Mb/s)",
                                 "botta-hetperf — high load (IDT 1/10000 s), UDP, seed 1", logy=True, legend_size=7))

    notes = [
        "Bianchi's single-station saturation throughput bounds every 802.11b configuration from above, as the "
        "paper states for UDP (its Fig. 8); the bound counts the IP packet as payload, with LLC/SNAP on air.",
        "Through the AP, a wireless-to-wireless packet occupies the channel twice (the paper's 'double channel "
        "occupation'), so it gets about half of the ad hoc throughput at high load.",
        "The paper's devices (PDAs, Windows drivers) and their CPU limits are not modelled; its palmtop results, "
        "GPRS and UMTS measurements depend on operators' networks and are represented here only by the access "
        "presets of scenarios/hetperf.toml.",
    ]
    return Reproduction("botta-hetperf", "D-ITG service conditions", table, notes, figures, {"table": table})
