"""Reports: one self-contained ``report.html`` for one run or for a sweep, its tables and its
figures, and on request (``--png``) the same figures as files, ``figures/*.png`` and ``*.svg``.

The page's figures are data: each is a JSON-able dict (charts.py for a run, sweep.py for a
sweep) that the page embeds and draws when opened, with the vendored uPlot (vendor/, MIT,
51 kB; scripts/vendor-uplot.sh re-fetches it from the npm registry) and charts.js. No CDN,
nothing fetched: it works offline and can be mailed. Writing a report thus costs no matplotlib:
its import alone took as long as the rest of a short run, and drawing six figures twice that
(BENCHMARKS.md, "Reports and start-up"). Every figure's title carries the scenario name, the
seed and the overridden parameters; every axis its quantity and unit, with numbers in
engineering notation (12.2 Mb/s).

    run.py       one run: what each figure shows (rate groups, envelopes, log axes, captions)
                 as a chart, and the tables
    sweep.py     a sweep: each metric against the first parameter, faceted by the second
    charts.py    a run's charts, the data the page embeds (rounded to 4 significant digits)
    charts.js    draws the charts in the browser (aligned time axes, legends beside the plots)
    render.py    draws the same charts with matplotlib, for the --png files
    draw.py      matplotlib's layout and the processes that render files (also plot, compare)
    envelope.py  min/max envelopes that keep long series small
    text.py      names and numbers as text (engineering notation), for tables and figures
    page.py      the HTML page

matplotlib is optional (the ``plot`` extra) and imported only by draw.py and render.py, for
--png, ``lasthop plot`` and the figures of ``lasthop compare``. Without it the page is whole; --png leaves the
files out and says which and how to get them (PLOT_HINT), as ``lasthop plot`` does.
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
