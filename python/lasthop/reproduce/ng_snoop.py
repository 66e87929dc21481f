"""Ng, Chow, Trajkovic, "Performance evaluation of TCP over WLAN 802.11 with the Snoop performance
enhancing proxy" (shared/papers/003): 100 000-byte transfers over a 1 Mb/s 802.11 hop with the
packet error generator, with and without Snoop."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import lasthop  # noqa: E402
from lasthop.reproduce import Reproduction, finish_figure, register  # noqa: E402

TCP = ('{ mss = "2264B", receive_buffer = "8760B", send_buffer = "8760B", delayed_ack = "200ms", '
       'rto_initial = "1s", rto_min = "500ms", rto_max = "64s", window_scale = false }')


def scenario(per: float, snoop: list[str], mobiles: list[str], upload: bool = False) -> str:
    """FH -(10 Mb/s, 5 ms)- BS ~~ 802.11 at 1 Mb/s ~~ mobiles; generator on every mobile's link."""
    lines = ['[simulation]', 'name = "ng-snoop"', 'duration = "900s"', '[[nodes]]', 'name = "FH"', '[[nodes]]', 'name = "BS"']
    for m in mobiles:
        lines += ['[[nodes]]', f'name = "{m}"']
    lines += ['[[links]]', 'a = "FH"', 'b = "BS"', 'rate = "10Mbps"', 'delay = "5ms"', 'mtu = "2304B"',
              '[[wlans]]', 'name = "w"', 'standard = "802.11b"', 'ap = "BS"',
              f'stations = [{", ".join(repr(m).replace(chr(39), chr(34)) for m in mobiles)}]',
              'data_rate = "1Mbps"', 'mtu = "2304B"']
    for m in mobiles:
        src, dst = (m, "FH") if upload else ("FH", m)
        lines += ['[[error_generators]]', f'node = "{m}"', 'peer = "BS"', f'rate = {per}',
                  '[[flows]]', f'name = "{m}"', f'src = "{src}"', f'dst = "{dst}"',
                  'app = { type = "file", bytes = "100000B" }', f'tcp = {TCP}']
    for m in snoop:
        # Snoop sits where data enters the wireless hop: the base station for a download,
        # the mobile for an upload.
        node, peer = (m, "BS") if upload else ("BS", m)
        lines += ['[[snoop]]', f'node = "{node}"', f'peer = "{peer}"']
    return "\n".join(lines) + "\n"


def _response(text: str, flow: str) -> float:
    return lasthop.run(lasthop.Scenario.from_str(text)).flow(flow)["response_time_s"]


@register("ng-snoop", "Snoop and the packet error generator on a 1 Mb/s 802.11 hop (paper 003)")
def run(out: Path, quick: bool = False) -> Reproduction:
    pers = [0.0, 0.1, 0.3] if quick else [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    rows = []
    curves = {"download": ([], []), "upload": ([], [])}
    for direction in ["download", "upload"]:
        up = direction == "upload"
        for per in pers:
            plain = _response(scenario(per, [], ["MH"], up), "MH")
            snoop = _response(scenario(per, ["MH"], ["MH"], up), "MH")
            curves[direction][0].append(plain)
            curves[direction][1].append(snoop)
            rows.append({"transfer": f"MH {direction}", "packet_error_rate": per, "response_s_plain": plain,
                         "response_s_snoop": snoop, "speed_up": plain / snoop if snoop else None,
                         "paper_speed_up": "~68x" if per == 0.3 and direction == "download" else None})
    mobiles = ["MH1", "MH2"]
    both_plain = lasthop.run(lasthop.Scenario.from_str(scenario(0.3, [], mobiles)))
    both_snoop = lasthop.run(lasthop.Scenario.from_str(scenario(0.3, mobiles, mobiles)))
    mixed = lasthop.run(lasthop.Scenario.from_str(scenario(0.3, ["MH1"], mobiles)))
    for m in mobiles:
        rows.append({"transfer": f"two downloads at 30 %, {m}", "packet_error_rate": 0.3,
                     "response_s_plain": both_plain.flow(m)["response_time_s"],
                     "response_s_snoop": both_snoop.flow(m)["response_time_s"],
                     "speed_up": both_plain.flow(m)["response_time_s"] / both_snoop.flow(m)["response_time_s"],
                     "paper_speed_up": "both benefit"})
        rows.append({"transfer": f"Snoop for MH1 only, {m}", "packet_error_rate": 0.3,
                     "response_s_plain": both_plain.flow(m)["response_time_s"],
                     "response_s_snoop": mixed.flow(m)["response_time_s"],
                     "speed_up": both_plain.flow(m)["response_time_s"] / mixed.flow(m)["response_time_s"],
                     "paper_speed_up": "coexist"})
    table = pd.DataFrame(rows)

    figures = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for direction, (plain, snoop) in curves.items():
        ax.plot([p * 100 for p in pers], plain, marker="o", label=f"{direction}, plain TCP")
        ax.plot([p * 100 for p in pers], snoop, marker="s", label=f"{direction}, Snoop")
    figures.append(finish_figure(fig, ax, out / "ng_snoop_response.png", "packet error rate (%)",
                                 "response time of 100 000 B (s)",
                                 "ng-snoop — response time vs packet error rate, seed 1", logy=True, legend_size=8))

    d30 = next(r for r in rows if r["transfer"] == "MH download" and r["packet_error_rate"] == 0.3)
    notes = [
        f"At 30 % packet errors Snoop makes the download {d30['speed_up']:.0f}x faster (paper: about 68x). "
        "Two things keep ours smaller: with an 8 760-byte window (3.9 segments of 2 264 B) most losses leave no "
        "duplicate ACK for Snoop to act on, so its fixed 1 s timer does the work, and the sender's own RTO "
        "(0.5 s minimum) often fires first and backs off; the paper's OPNET agent and TCP timers may interact "
        "differently. Without Snoop, exponential backoff to the 64 s ceiling dominates, as in the paper.",
        "For uploads the agent sits on the mobile's own interface (the data sender's side of the wireless hop); "
        "the Snoop paper's NACK scheme for mobile senders is not modelled.",
        "Between 0 and 20 % a single seed can make Snoop slower than plain TCP (its timer and the sender's RTO "
        "both retransmit); sweep seeds (lasthop sweep --seeds) for a mean with confidence intervals.",
    ]
    return Reproduction("ng-snoop", "Snoop on a 1 Mb/s 802.11 hop", table, notes, figures,
                        {"pers": pers, "curves": curves})
