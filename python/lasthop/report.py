"""Reports: figures (PNG and SVG files) and a self-contained ``report.html`` (the SVGs are inline,
no CDN, no script), for one run or for a sweep. Every figure's title carries the scenario name,
the seed and the key parameters; every axis has a unit."""

from __future__ import annotations

import html
import io
import json
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from lasthop.files import safe_name  # noqa: E402
from lasthop.results import Results  # noqa: E402

# Deterministic SVG output (no random ids, no timestamps).
plt.rcParams["svg.hashsalt"] = "lasthop"
plt.rcParams["svg.fonttype"] = "none"
METADATA_SVG = {"Date": None}
METADATA_PNG = {"Software": None}


class _Figures:
    def __init__(self, directory: Path):
        self.dir = directory / "figures"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.items: list[tuple[str, str, str]] = []  # (name, caption, inline svg)

    def add(self, fig, name: str, caption: str) -> None:
        # `name` may carry flow and link names: safe_name keeps the files inside figures/.
        name = safe_name(name)
        with warnings.catch_warnings():
            # Missing glyphs and margins too small for a long name: the figure is still right.
            warnings.simplefilter("ignore", UserWarning)
            fig.tight_layout()
            fig.savefig(self.dir / f"{name}.png", dpi=110, metadata=METADATA_PNG)
            fig.savefig(self.dir / f"{name}.svg", metadata=METADATA_SVG)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata=METADATA_SVG)
        plt.close(fig)
        svg = buf.getvalue()
        svg = svg[svg.index("<svg"):]
        self.items.append((name, caption, svg))


def _label(text: object) -> str:
    """A name from a scenario as matplotlib text: literal (``$`` is not mathtext), printable,
    and shown in legends even when it starts with ``_``."""
    t = "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in str(text)).replace("$", r"\$")
    return f" {t}" if t.startswith("_") else t


def _title(summary: dict, what: str) -> str:
    params = summary.get("overrides") or {}
    key = ", ".join(f"{k}={v}" for k, v in params.items() if k != "simulation.seed")
    return _label(f"{summary.get('scenario_name', 'run')} (seed {summary.get('seed')}) — {what}" + (f"\n{key}" if key else ""))


def _page(title: str, intro: str, figures: _Figures, tables_html: str) -> str:
    figs = "\n".join(
        f'<figure id="{html.escape(n)}">{svg}<figcaption>{html.escape(c)}</figcaption></figure>' for n, c, svg in figures.items
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1100px; }}
figure {{ margin: 1.5em 0; }} figure svg {{ max-width: 100%; height: auto; }}
figcaption {{ color: #444; font-size: 0.9em; }}
table {{ border-collapse: collapse; font-size: 0.85em; }} td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{intro}</p>
{tables_html}
{figs}
</body></html>
"""


def run_report(directory: str | Path) -> Path:
    """report.html and figures/ for a `lasthop run` results directory."""
    d = Path(directory)
    res = Results.load(d)
    s = res.summary
    figs = _Figures(d)
    iv = res.intervals
    flows = list(dict.fromkeys(iv["flow"])) if len(iv) else []

    def per_flow(column: str, ylabel: str, scale: float, name: str, what: str) -> None:
        fig, ax = plt.subplots(figsize=(9, 3.6))
        for f in flows:
            sub = iv[iv.flow == f]
            ax.plot(sub.t_start_s, sub[column] * scale, label=_label(f), linewidth=1)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.set_title(_title(s, what))
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        figs.add(fig, name, what)

    per_flow("throughput_rx_bps", "throughput at receiver (Mb/s)", 1e-6, "throughput", "throughput per flow over time")
    per_flow("delay_mean_ms", "one-way delay, interval mean (ms)", 1.0, "delay", "one-way delay over time")
    per_flow("jitter_mean_ms", "mean |IPDV| (ms)", 1.0, "jitter", "jitter (RFC 3393 IPDV) over time")

    if "delay_cdf" in res.traces:
        cdf = res.trace("delay_cdf")
        fig, ax = plt.subplots(figsize=(6, 4))
        for f in dict.fromkeys(cdf["flow"]):
            sub = cdf[cdf.flow == f]
            ax.plot(sub["delay_ms"], sub["quantile"], label=_label(f))
        ax.set_xlabel("one-way delay (ms)")
        ax.set_ylabel("fraction of packets")
        ax.set_title(_title(s, "one-way delay CDF"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        figs.add(fig, "delay_cdf", "one-way delay CDF")

    for t in res.traces:
        if t.startswith("tcp/") and not t.endswith("/receiver"):
            tr = res.trace(t)
            fig, ax = plt.subplots(figsize=(9, 3.6))
            ax.plot(tr.time_s, tr.cwnd_bytes / 1e3, label="cwnd", linewidth=1)
            ax.plot(tr.time_s, tr.ssthresh_bytes / 1e3, label="ssthresh", linewidth=1)
            ax.plot(tr.time_s, tr.peer_window_bytes / 1e3, label="advertised window", linewidth=1)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("kB")
            ax.set_title(_title(s, f"TCP windows of {t[4:]}"))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
            figs.add(fig, "tcp_" + t[4:].replace("/", "_"), f"cwnd, ssthresh and advertised window of {t[4:]}")
        if t.startswith("queue/") or t.startswith("wlan/"):
            tr = res.trace(t)
            fig, ax = plt.subplots(figsize=(9, 3))
            ax.step(tr.time_s, tr.packets, where="post", linewidth=1)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("queue length (packets)")
            ax.set_title(_title(s, f"queue {t}"))
            ax.grid(alpha=0.3)
            safe = t.replace("/", "_").replace(":", "_").replace("->", "-to-")
            figs.add(fig, safe, f"queue occupancy of {t}")

    table = res.flows[[c for c in ["name", "transport", "goodput_bps", "throughput_rx_bps", "sent_packets", "received_packets",
                                    "lost_packets", "delay_ms_mean", "delay_ms_p99", "jitter_ms_mean", "jitter_ms_p99"] if c in res.flows]]
    intro = (f"{html.escape(str(s.get('scenario_file')))}, lasthop {html.escape(str(s.get('lasthop_version')))}, "
             f"{s['simulated_s']:g} s simulated, {s['events_processed']} events.")
    page = _page(f"lasthop — {s.get('scenario_name')} (seed {s.get('seed')})", intro, figs,
                 table.to_html(index=False, float_format=lambda x: f"{x:.4g}"))
    out = d / "report.html"
    out.write_text(page)
    return out


METRICS = [("goodput_bps", "goodput (Mb/s)", 1e-6), ("delay_ms_p99", "one-way delay p99 (ms)", 1.0),
           ("jitter_ms_mean", "mean |IPDV| (ms)", 1.0), ("loss_ratio", "loss ratio", 1.0)]


def _numeric(values: pd.Series) -> pd.Series:
    """Grid values as numbers for an x axis ("14Mbps" -> 14.0), or NaN."""
    return pd.to_numeric(values.astype(str).str.extract(r"^\s*([-+]?\d+(?:\.\d+)?)")[0], errors="coerce")


def sweep_report(directory: str | Path) -> Path:
    """report.html and figures/ for a sweep: each metric against the first swept parameter, one
    line per flow (and per value of a second parameter), mean ± 95 % CI across seeds."""
    from lasthop.sweep import SweepResults

    d = Path(directory)
    res = SweepResults.load(d)
    meta = json.loads((d / "sweep.json").read_text())
    figs = _Figures(d)
    name = meta.get("scenario_name", "sweep")
    if not res.flows.empty and res.params:
        x = res.params[0]
        series = res.params[1:2]
        for metric, label, scale in METRICS:
            if metric not in res.flows:
                continue
            agg = res.aggregate(metric, by=res.params)
            fig, ax = plt.subplots(figsize=(8, 4))
            groups = agg.groupby(["name", *series], sort=False) if series else agg.groupby(["name"], sort=False)
            for key, sub in groups:
                key = key if isinstance(key, tuple) else (key,)
                xs = _numeric(sub[x])
                xs = xs if xs.notna().all() else pd.Series(range(len(sub)), index=sub.index)
                lab = " ".join(str(k) for k in key)
                ax.errorbar(xs, sub["mean"] * scale, yerr=(sub["ci95"].fillna(0) * scale), marker="o", capsize=3, label=_label(lab))
                if not _numeric(sub[x]).notna().all():
                    ax.set_xticks(list(xs), [_label(v) for v in sub[x]])
            unit = agg[x].astype(str).str.extract(r"^\s*[-+]?\d+(?:\.\d+)?\s*(\S*)$")[0].dropna()
            unit = unit.iloc[0] if len(unit) and unit.iloc[0] else ""
            ax.set_xlabel(_label(f"{x} ({unit})" if unit else x))
            ax.set_ylabel(label)
            ax.set_title(_label(f"{name} — {label} vs {x}\nmean ± 95 % CI over {meta['seeds']} seed(s), base seed {meta['base_seed']}"))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
            figs.add(fig, f"sweep_{metric}", f"{label} against {x}")
    grids = ", ".join(f"{g['path']} ∈ {{{', '.join(g['values'])}}}" for g in meta["grids"]) or "no grid"
    intro = html.escape(f"{meta['scenario_file']}: {grids}; {meta['seeds']} seed(s); {len(res.flows)} flow rows; "
                        f"{len(res.failed)} failed runs.")
    table = res.failed.to_html(index=False) if len(res.failed) else ""
    out = d / "report.html"
    out.write_text(_page(f"lasthop sweep — {name}", intro, figs, table))
    return out
