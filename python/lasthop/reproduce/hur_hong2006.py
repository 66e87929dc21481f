"""Hur & Hong, "Improving performance of multimedia data downstream with PDA in an infrastructure
network" (shared/papers/000): a desktop PC (fast sender) and an iPAQ PDA (slow receiver) on
802.11b, with the PDA's CPU, flash and timer modelled by the `pda-ipaq3660` device preset."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import lasthop  # noqa: E402
from lasthop.reproduce import Reproduction, finish_figure, register  # noqa: E402

# Table 3: file size (KB) -> receive/send time ratio for the PDA client (PC client: 1.0).
PAPER_RATIO = {235: 1.53, 469: 1.63, 938: 1.66, 2344: 1.70, 4688: 1.70}
# Table 6: inter-packet delay (ms, None = no Sleep) -> (upstream, downstream) ms, 469 KB.
PAPER_IPD = {None: (13_656, 4_622), 1: (8_163, 12_559), 10: (2_249, 12_629), 100: (13_004, 21_460)}
# Table 7: downstream receive time without / with the proposed method (ms).
PAPER_METHOD = (11_993, 4_622)

# Table 4's windows: the PDA advertises 32 581 B, the PC 17 520 B (12 × 1460, Windows 2000's
# rounding of 16 KiB); send buffers are Windows' 8 KiB default (Table 1).
PDA_RCVBUF, PC_RCVBUF, DEFAULT_BUF = 32_581, 17_520, 8_192


def scenario(direction: str, kb: int, *, receive_buffer: int | None = None, send_buffer: int = DEFAULT_BUF,
             app_buffer: int = 8192, send_delay: int | None = None, receive_delay: int | None = None,
             client: str = "pda", probe: bool = False) -> str:
    """PC -(100 Mb/s Ethernet)- AP ~~ 802.11b, 11 Mb/s, error-free (the paper's PDA is 5 m from
    the AP, PER < 0.001) ~~ client. "down" sends a `kb` KB file (4096-byte send()s) to the
    client, "up" from it. A `client = "pc"` is a second desktop on the same AP."""
    client_dev = "pda-ipaq3660" if client == "pda" else "pc-windows2000"
    src, dst = ("server", "client") if direction == "down" else ("client", "server")
    pda_receives = dst == "client" and client == "pda"
    rcv = receive_buffer or (PDA_RCVBUF if pda_receives else PC_RCVBUF)
    # The PDA's stack announces reopened windows with its delayed ACKs (Sect. 4.1, Fig. 9).
    lazy = "delayed" if pda_receives else "immediate"
    delays = ""
    if send_delay is not None:
        delays += f', send_delay = "{send_delay}ms"'
    if receive_delay is not None:
        delays += f', receive_delay = "{receive_delay}ms"'
    return f"""[simulation]
name = "hur-hong2006"
duration = "600s"
[[nodes]]
name = "server"
device = {{ preset = "pc-windows2000" }}
[[nodes]]
name = "ap"
[[nodes]]
name = "client"
device = {{ preset = "{client_dev}" }}
[[links]]
a = "server"
b = "ap"
preset = "ethernet"
[[wlans]]
name = "wlan"
standard = "802.11b"
ap = "ap"
stations = ["client"]
data_rate = "11Mbps"
[[flows]]
name = "file"
src = "{src}"
dst = "{dst}"
app = {{ type = "file", bytes = "{kb * 1024}B", message = "4096B", app_buffer = "{app_buffer}B"{delays} }}
tcp = {{ receive_buffer = "{rcv}B", send_buffer = "{send_buffer}B", window_scale = false, window_update = "{lazy}" }}
{"[probes]" + chr(10) + 'tcp = ["file"]' if probe else ""}
"""


def transfer(direction: str, kb: int, **kw) -> dict:
    res = lasthop.run(lasthop.Scenario.from_str(scenario(direction, kb, **kw)))
    f = res.flow("file")
    out = {"time_s": f["response_time_s"], "min_rx_window": f["tcp"]["receiver_min_open_window_bytes"],
           "min_tx_window": f["tcp"]["sender_min_open_window_bytes"], "results": res}
    if out["time_s"] is None:
        raise RuntimeError(f"the {direction} transfer of {kb} KB did not complete")
    return out


@register("hur-hong2006", "Slow PDA receiver on 802.11b: windows, buffers, flash, inter-packet delay (paper 000)")
def run(out: Path, quick: bool = False) -> Reproduction:
    rows, data = [], {}
    sizes = [235, 938, 4688] if quick else list(PAPER_RATIO)

    # Table 3: receive (downstream) / send (upstream) time by file size, PDA and PC clients.
    ratios = {}
    for kb in sizes:
        up, down = transfer("up", kb), transfer("down", kb)
        pc_up, pc_down = transfer("up", kb, client="pc"), transfer("down", kb, client="pc")
        ratios[kb] = (down["time_s"] / up["time_s"], pc_down["time_s"] / pc_up["time_s"])
        rows.append({"experiment": "Table 3: receive/send time", "setting": f"{kb} KB",
                     "ours": f"PDA {ratios[kb][0]:.2f} (send {up['time_s']:.2f} s, receive {down['time_s']:.2f} s), PC {ratios[kb][1]:.2f}",
                     "paper": f"PDA {PAPER_RATIO[kb]:.2f}, PC 1.0"})
    data["ratio"] = ratios

    # Table 4: the least windows seen in the 469 KB transfers.
    up, down = transfer("up", 469), transfer("down", 469, probe=True)
    data["windows"] = {"pc_up": up["min_rx_window"], "pc_down": down["min_tx_window"],
                       "pda_up": up["min_tx_window"], "pda_down": down["min_rx_window"]}
    # Both ends of a flow share its tcp table, so a sender advertises the flow's receive buffer;
    # what the paper's Table 4 shows is that the senders' windows stay put and the PDA's collapses.
    rows.append({"experiment": "Table 4: least window (B)", "setting": "469 KB: receiver up (PC) / down (PDA); senders",
                 "ours": "{pc_up:,} / {pda_down:,}; senders stay at their buffers ({pda_up:,} up, {pc_down:,} down)".format(**data["windows"]),
                 "paper": "PC 17,520 up / PDA 686 down; PC 17,453 down, PDA 32,581 up"})
    window_trace = down["results"].trace("tcp/file")

    # Sect. 4.1: larger socket buffers (PDA receive, PC send) shorten the receive time.
    buffers = {}
    for rcv in [8192, 16384, PDA_RCVBUF, 65535]:
        for snd in [8192, 65535]:
            buffers[(rcv, snd)] = transfer("down", 469, receive_buffer=rcv, send_buffer=snd)["time_s"]
    data["buffers"] = buffers
    for (rcv, snd), t in buffers.items():
        rows.append({"experiment": "Sect. 4.1: socket buffers", "setting": f"PDA receive {rcv} B, PC send {snd} B",
                     "ours": f"receive {t:.2f} s", "paper": "larger is faster"})

    # Sect. 4.2: application buffer (recv() and flash write size) 512 B - 10 KiB.
    app = {b: transfer("down", 469, app_buffer=b)["time_s"] for b in [512, 1024, 2048, 3072, 4096, 8192, 10240]}
    data["app_buffer"] = app
    rows.append({"experiment": "Sect. 4.2: application buffer", "setting": "512 / 1K / 2K / 3K / 4K / 8K / 10K",
                 "ours": " / ".join(f"{t:.2f}" for t in app.values()) + " s",
                 "paper": "8 KiB fastest, 10 % faster than 3 KiB (file access time)"})

    # Table 6: the same inter-packet delay at both ends.
    ipd = {}
    for d in [None, 1, 10, 100]:
        u = transfer("up", 469, send_delay=d, receive_delay=d)["time_s"]
        w = transfer("down", 469, send_delay=d, receive_delay=d)["time_s"]
        ipd[d] = (u, w)
        pu, pd_ = PAPER_IPD[d]
        rows.append({"experiment": "Table 6: inter-packet delay", "setting": "none" if d is None else f"{d} ms",
                     "ours": f"up {u * 1e3:,.0f} ms, down {w * 1e3:,.0f} ms", "paper": f"up {pu:,} ms, down {pd_:,} ms"})
    data["ipd"] = ipd

    # Table 7: downstream without the method (Windows' 8 KiB buffers, a 4 KiB application buffer,
    # Sleep(1) at the PC and Sleep(10) at the PDA) and with it (32 581 B receive and 64 KiB send
    # buffers, 8 KiB application buffer, no Sleep).
    without = transfer("down", 469, receive_buffer=8192, send_buffer=8192, app_buffer=4096, send_delay=1, receive_delay=10)["time_s"]
    with_ = transfer("down", 469, receive_buffer=PDA_RCVBUF, send_buffer=65535, app_buffer=8192)["time_s"]
    data["method"] = (without, with_)
    rows.append({"experiment": "Table 7: downstream, without / with the method", "setting": "469 KB",
                 "ours": f"{without * 1e3:,.0f} / {with_ * 1e3:,.0f} ms ({100 * (1 - with_ / without):.0f} % shorter)",
                 "paper": f"{PAPER_METHOD[0]:,} / {PAPER_METHOD[1]:,} ms (61 % shorter)"})
    table = pd.DataFrame(rows)

    figures = []
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(sizes, [ratios[k][0] for k in sizes], marker="o", label="PDA client, lasthop")
    ax.plot(list(PAPER_RATIO), list(PAPER_RATIO.values()), marker="s", linestyle="--", label="PDA client, paper (Table 3)")
    ax.plot(sizes, [ratios[k][1] for k in sizes], marker="^", label="PC client, lasthop (paper: 1.0)")
    ax.set_xscale("log")
    figures.append(finish_figure(fig, ax, out / "hur_hong_ratio.png", "file size (KB)", "receiving time / sending time",
                                 "hur-hong2006 — Table 3: receive/send time ratio"))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.step(window_trace["time_s"], window_trace["peer_window_bytes"], where="post", label="window advertised by the PDA")
    figures.append(finish_figure(fig, ax, out / "hur_hong_window.png", "time (s)", "bytes",
                                 "hur-hong2006 — the PDA's window collapses (469 KB download)"))
    fig, ax = plt.subplots(figsize=(7, 4))
    for snd in [8192, 65535]:
        rcvs = sorted({r for r, _ in buffers})
        ax.plot(rcvs, [buffers[(r, snd)] for r in rcvs], marker="o", label=f"PC send buffer {snd} B")
    ax.set_xscale("log", base=2)
    figures.append(finish_figure(fig, ax, out / "hur_hong_buffers.png", "PDA receive buffer (B)", "receive time of 469 KB (s)",
                                 "hur-hong2006 — socket buffers"))

    r_small, r_large = ratios[sizes[0]][0], ratios[sizes[-1]][0]
    notes = [
        f"Table 3's shape follows: the PDA's receive/send ratio is {r_small:.2f} at {sizes[0]} KB and {r_large:.2f} at "
        f"{sizes[-1]} KB (paper 1.53 -> 1.70), the PC client's stays at 1.0. Receiving costs the PDA more than "
        "sending: three data packets of interrupt-level processing per 4 KiB instead of 1.5 ACKs, and a flash "
        "write at half the read rate; the growth comes from the flash write cost rising 7 % per MiB already in "
        "the file, which is the fit of Table 5's growing write/read ratio. The device's absolute rates are "
        "calibrated (469 KB downstream in Table 6's 4.6 s, the ratio's start near 1.53); Table 5's own "
        "milliseconds (6 MB/s flash writes) would make storage negligible and contradict the paper's attribution "
        "of the slowdown to file access, so only its ratios are used.",
        "The window collapse of Table 4 emerges: packets are processed at interrupt level while the application "
        "writes to flash, so the socket buffer fills and the last ACKs before a read advertise a few hundred bytes. "
        "The PC's windows stay at its buffer.",
        "Socket buffers matter only because the PDA announces reopened windows with its delayed ACK (up to 200 ms; "
        "the paper's Fig. 9 shows ~115 ms): with an 8 KiB buffer the application runs dry while the PC waits. A "
        "receiver that announces at once (Linux) would make the buffer size irrelevant for this CPU-bound PDA — "
        "the test suite checks both.",
        "The application buffer effect is small here (8 KiB fastest among 512 B-8 KiB; 10 KiB ties): our flash has "
        "a fixed 1 ms cost per operation and no block-size effects, so the paper's 10 % between 3 KiB and 8 KiB "
        "(file access time alone, not transfer time) and its 10 KiB slowdown are not reproduced.",
        "Inter-packet delay: the downstream is fastest without Sleep, as in Table 6, and Windows 2000's 10 ms tick "
        "makes the PC's Sleep(1) a 10 ms sleep. The paper's upstream anomaly (13.7 s without Sleep, 2.2 s with "
        "10 ms) is not reproduced: the authors attribute it to the PC's 8 KiB receive buffer being smaller than "
        "the PDA's send buffer, which in a standard TCP only limits the window; our upstream gets slower with "
        "every added delay. Table 7's 61 % gain combines all three remedies; ours combines the same ones.",
    ]
    return Reproduction("hur-hong2006", "Slow PDA receiver on 802.11b", table, notes, figures, data)
