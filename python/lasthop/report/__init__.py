"""Reports: a self-contained ``report.html`` (SVG figures inline, no script, no CDN) and
``figures/*.svg|png`` for one run or for a sweep. Every figure's title carries the scenario
name, the seed and the overridden parameters; every axis its quantity and unit, with numbers in
engineering notation (12.2 Mb/s).

    run.py       one run: throughput, delay and jitter over time, delay CDF, TCP windows,
                 queues, WLAN MAC counters; tables per flow and per WLAN member
    sweep.py     a sweep: each metric against the first parameter, faceted by the second
    draw.py      the shared layout (aligned time axes, legends off the data) and formatting
    envelope.py  min/max envelopes that keep long series cheap to draw
    page.py      the HTML page

matplotlib is imported only here, so commands that draw nothing do not pay for it.
"""

from lasthop.report.run import run_report
from lasthop.report.sweep import sweep_report

__all__ = ["run_report", "sweep_report"]
