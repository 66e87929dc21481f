"""lasthop — a laboratory for TCP and UDP over wireless last hops.

    >>> import lasthop
    >>> res = lasthop.run("scenarios/dumbbell.toml", seed=3)
    >>> res.flows[["name", "goodput_bps", "delay_ms_p99"]]

The simulator is written in Rust (``lasthop._core``); this package is its Python face: scenarios,
results as pandas DataFrames, the ``lasthop`` command line.
"""

from lasthop._core import __version__
from lasthop.errors import OutputError, ScenarioError, SimulationError
from lasthop import models
from lasthop.results import Results
from lasthop.scenario import Scenario
from lasthop.runner import run
from lasthop.sweep import SweepResults, sweep  # noqa: E402  (the function shadows the module name)

__all__ = ["run", "sweep", "Scenario", "Results", "SweepResults", "ScenarioError", "SimulationError", "OutputError",
           "models", "__version__"]
