"""lasthop — a laboratory for TCP and UDP over wireless last hops.

    >>> import lasthop
    >>> res = lasthop.run("scenarios/dumbbell.toml", seed=3)
    >>> res.flows[["name", "goodput_bps", "delay_p99_ms"]]

The simulator is written in Rust (``lasthop._core``); this package is its Python face: scenarios,
results as pandas DataFrames, the ``lasthop`` command line.

``run``, ``sweep``, ``Scenario``, ``Results``, ``SweepResults`` and ``models`` load on first use
(PEP 562): ``lasthop --help`` and commands that run nothing do not import the sweep machinery.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

from lasthop._core import __version__
from lasthop.errors import OutputError, ScenarioError, SimulationError

if TYPE_CHECKING:  # what the names are, for readers and type checkers
    from lasthop import models
    from lasthop.results import Results
    from lasthop.runner import run
    from lasthop.scenario import Scenario
    from lasthop.sweep import SweepResults, sweep

_LAZY = {"run": "lasthop.runner", "sweep": "lasthop.sweep", "SweepResults": "lasthop.sweep", "Scenario": "lasthop.scenario",
         "Results": "lasthop.results"}

__all__ = ["run", "sweep", "Scenario", "Results", "SweepResults", "ScenarioError", "SimulationError", "OutputError",
           "models", "__version__"]


def __getattr__(name: str):
    if name == "models":
        return importlib.import_module("lasthop.models")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lasthop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package, keeping ``lasthop.sweep`` the function: importing the submodule
    lasthop.sweep would otherwise bind the module to that name (as the import system does for
    every submodule)."""

    def __setattr__(self, name: str, value) -> None:
        if name == "sweep" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
