"""Reports: a self-contained ``report.html`` (SVG figures inline, no script, no CDN) and
``figures/*.svg`` (``*.png`` on request) for one run or for a sweep. Every figure's title
carries the scenario name, the seed and the overridden parameters; every axis its quantity and
unit, with numbers in engineering notation (12.2 Mb/s).

    run.py       one run: throughput, delay and jitter over time, delay CDF, TCP windows,
                 queues, WLAN MAC counters; tables per flow and per WLAN member
    sweep.py     a sweep: each metric against the first parameter, faceted by the second
    draw.py      the shared layout (aligned time axes, legends off the data): matplotlib
    envelope.py  min/max envelopes that keep long series cheap to draw
    text.py      names and numbers as text (engineering notation), for tables and figures
    page.py      the HTML page

matplotlib is optional (the ``plot`` extra) and imported only by draw.py, when a figure is
drawn. Without it a report is its tables and a note naming each figure it could not draw and
how to get them (PLOT_HINT); ``lasthop plot`` and the figures of ``lasthop compare`` say the same.
"""

from __future__ import annotations

PLOT_HINT = "pip install 'lasthop[plot]'"


def plotting_missing() -> str | None:
    """None when figures can be drawn; else one line saying why not and what to install."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return f"matplotlib is not installed: {PLOT_HINT} adds it"
    return None


from lasthop.report.run import run_report  # noqa: E402 (after what run.py and sweep.py import from here)
from lasthop.report.sweep import sweep_report  # noqa: E402

__all__ = ["run_report", "sweep_report", "plotting_missing", "PLOT_HINT"]
