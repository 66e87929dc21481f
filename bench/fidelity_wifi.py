"""802.11n/ac/ax against ns-3 (issue 27): FIDELITY.md's section of that name, from the ns-3
results kept in tests/data/wifi/ (made by the scripts beside them; no ns-3 run here) and
lasthop runs of the same configurations (a few seconds).

    .venv/bin/python bench/fidelity_wifi.py            # rewrites the section in FIDELITY.md
    .venv/bin/python bench/fidelity_wifi.py --print    # prints it

`bench/fidelity.py` (make fidelity) appends the same section when it rewrites the file.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from md_sections import markers, write_section

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "wifi"
OWNER = "bench/fidelity_wifi.py"
BEGIN, END = markers(OWNER)
TOLERANCE = 0.05  # the issue's: saturation within 5 % of ns-3
MCS = {"HtMcs7": 7, "VhtMcs9": 9, "HeMcs11": 11}


def rows(name: str) -> list[dict]:
    with (DATA / name).open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def saturation_scenario(standard: str, width: int, mcs: int, n: int) -> str:
    """The configuration of tests/data/wifi/ns3_ampdu_saturation.py in lasthop: n stations 1 m
    from the AP sending 1500 B IP packets at twice the channel, 500-packet queues, ns-3's
    BlockAckRequest after a missed Block Ack (crates/lasthop-sim/tests/model/wlan_aggregating.rs)."""
    s = '[simulation]\nduration = "10s"\n[[nodes]]\nname = "AP"\n'
    s += "".join(f'[[nodes]]\nname = "S{i}"\n' for i in range(1, n + 1))
    stations = ", ".join(f'"S{i}"' for i in range(1, n + 1))
    s += (f'[[wlans]]\nname = "bss"\nap = "AP"\nstations = [{stations}]\nqueue = "500p"\nstandard = "{standard}"\n'
          f"width = {width}\nmcs = {mcs}\nbar_after_missed_block_ack = true\n")
    for i in range(1, n + 1):
        s += f'[[flows]]\nname = "u{i}"\nsrc = "S{i}"\ndst = "AP"\napp = {{ type = "cbr", size = "1472B", interval = "{15 * n}us" }}\n'
    return s


def section() -> str:
    import lasthop
    from lasthop.models import bianchi_ampdu

    lines = [BEGIN, "## 802.11n/ac/ax against ns-3", "",
             "Made by `.venv/bin/python bench/fidelity_wifi.py` (also part of `make fidelity`): ns-3 3.44's results kept in "
             "`tests/data/wifi/` (their scripts beside them; `tests/data/wifi/README.md` explains each setting), lasthop "
             "run here on the same configurations. The tests that assert these rows are named in each table's caption.", "",
             "### Saturation throughput, A-MPDUs (`saturation_throughput_is_ns3s_within_five_percent`)", "",
             "UDP from 1 or 10 stations to their AP, 1500 B IP packets, AC_BE, A-MPDUs of at most 65 535 B, one stream, "
             "800 ns GI, 24 Mb/s Block Acks, 500-packet queues, a BlockAckRequest after each missed Block Ack (ns-3's "
             "behaviour; `bar_after_missed_block_ack`). Mb/s of IP bytes; *chain* is Bianchi's chain with A-MPDU "
             "airtime (`lasthop.models.bianchi_ampdu`), which has no BlockAckRequests.", "",
             "| configuration | stations | ns-3 | lasthop | ratio | within 5 % | chain |", "|---|---:|---:|---:|---:|---|---:|"]
    ok = 0
    sat = rows("ns3_ampdu_saturation.csv")
    for r in sat:
        std, width, mode, n, ns3 = r["standard"], int(r["width_mhz"]), r["data_mode"], int(r["stations"]), float(r["ns3_mbps"])
        res = lasthop.run(lasthop.Scenario.from_str(saturation_scenario(std, width, MCS[mode], n)))
        mbps = sum(f["goodput_bps"] for f in res.summary["flows"]) * 1500 / 1472 / 1e6
        chain = bianchi_ampdu(n, std, mcs=MCS[mode], width=width).throughput_bps / 1e6
        good = abs(mbps / ns3 - 1) <= TOLERANCE
        ok += good
        lines.append(f"| {std} {mode} {width} MHz | {n} | {ns3:.2f} | {mbps:.2f} | {mbps / ns3:.3f} | {'yes' if good else 'no'} | {chain:.2f} |")
    lines += ["", f"**{ok} of {len(sat)} within ±5 %.**", ""]
    edca = DATA / "ns3_edca.csv"
    if edca.exists():
        lines += edca_lines()
    lines.append(END)
    return "\n".join(lines) + "\n"


def edca_lines() -> list[str]:
    """The EDCA comparison's table (tests/data/wifi/ns3_edca.csv and README.md's section)."""
    readme = (DATA / "README.md").read_text()
    marker = "## EDCA"
    if marker not in readme:
        return []
    part = readme[readme.index(marker):]
    part = part[: part.find("\n## ", 3)] if "\n## " in part[3:] else part
    body = part.splitlines()[1:]
    return ["### EDCA: AC_VO beside AC_BE (`crates/lasthop-sim/tests/model/wlan_edca.rs`)", "",
            "From `tests/data/wifi/README.md`:", *body, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the section instead of writing FIDELITY.md")
    ap.add_argument("--out", type=Path, default=ROOT / "FIDELITY.md")
    args = ap.parse_args()
    text = section()
    if args.print:
        sys.stdout.write(text)
        return
    write_section(args.out, text, OWNER)


if __name__ == "__main__":
    main()
