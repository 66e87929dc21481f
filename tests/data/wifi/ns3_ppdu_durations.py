"""Writes ns3_ppdu_durations.csv: ns-3's WifiPhy::CalculateTxDuration for HT-mixed, VHT SU and
HE SU PPDUs, the oracle of crates/lasthop-core/tests/ppdu_ns3.rs.

    .venv/bin/pip install 'ns3==3.44.post0'   # the `oracle` extra (make fidelity installs it)
    .venv/bin/python tests/data/wifi/ns3_ppdu_durations.py

Points: every amendment at each width, 1-4 streams, each guard interval, MCS 0 to its highest,
both bands where it runs, PSDUs from an ACK-sized 14 B to a 64 KiB A-MPDU (and 200 000 B for
VHT/HE), drawn from a fixed seed so that the file is the same on every run.
"""

import csv
import random
import sys
from pathlib import Path

from ns import ns

OUT = Path(__file__).with_name("ns3_ppdu_durations.csv")
PREAMBLE = {"ht": ns.WIFI_PREAMBLE_HT_MF, "vht": ns.WIFI_PREAMBLE_VHT_SU, "he": ns.WIFI_PREAMBLE_HE_SU}
MODE = {"ht": lambda mcs, nss: ns.HtPhy.GetHtMcs(8 * (nss - 1) + mcs), "vht": lambda mcs, nss: ns.VhtPhy.GetVhtMcs(mcs),
        "he": lambda mcs, nss: ns.HePhy.GetHeMcs(mcs)}
BAND = {"2.4": ns.WIFI_PHY_BAND_2_4GHZ, "5": ns.WIFI_PHY_BAND_5GHZ, "6": ns.WIFI_PHY_BAND_6GHZ}
SPACE = {
    "ht": dict(mcs=range(8), widths=[20, 40], gis=[800, 400], bands=["2.4", "5"], max_len=65535),
    "vht": dict(mcs=range(10), widths=[20, 40, 80, 160], gis=[800, 400], bands=["5"], max_len=200_000),
    "he": dict(mcs=range(12), widths=[20, 40, 80, 160], gis=[800, 1600, 3200], bands=["2.4", "5", "6"], max_len=200_000),
}
# VHT rates the standard leaves out (ns-3 refuses them too).
VHT_GAPS = {(6, 80, 3), (9, 20, 1), (9, 20, 2), (9, 20, 4), (9, 160, 3)}


def duration_ns(amendment, mcs, nss, width, gi, band, length):
    tv = ns.WifiTxVector()
    tv.SetMode(MODE[amendment](mcs, nss))
    tv.SetPreambleType(PREAMBLE[amendment])
    tv.SetNss(nss)
    tv.SetChannelWidth(width)
    tv.SetGuardInterval(ns.NanoSeconds(gi))
    return int(ns.WifiPhy.CalculateTxDuration(length, tv, BAND[band]).GetNanoSeconds())


def points(rng):
    for amendment, s in SPACE.items():
        for _ in range(40):
            mcs, nss, width = rng.choice(list(s["mcs"])), rng.randint(1, 4), rng.choice(s["widths"])
            band = rng.choice(s["bands"])
            if band == "2.4" and width > 40 or amendment == "vht" and (mcs, width, nss) in VHT_GAPS:
                continue
            length = rng.choice([14, 32, 1538, 3000, 11_454, 65_535, rng.randint(14, s["max_len"])])
            yield amendment, mcs, nss, width, rng.choice(s["gis"]), band, min(length, s["max_len"])


def main() -> int:
    rng = random.Random(20261127)
    rows = [(*p, duration_ns(*p)) for p in points(rng)]
    with OUT.open("w", newline="") as f:
        f.write("# ns-3 3.44 (PyPI ns3==3.44.post0) WifiPhy::CalculateTxDuration; made by ns3_ppdu_durations.py\n")
        w = csv.writer(f)
        w.writerow(["amendment", "mcs", "nss", "width_mhz", "gi_ns", "band_ghz", "psdu_bytes", "ns3_duration_ns"])
        w.writerows(rows)
    print(f"{len(rows)} points -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
