"""Modules imported when first used: ``pd = LazyModule("pandas")`` reads like ``import pandas as
pd`` but costs nothing until an attribute such as ``pd.DataFrame`` is read. ``lasthop --help``,
``lasthop scenarios`` and ``import lasthop`` then do not pay the half second that numpy, pandas
and pyarrow take to import (matplotlib, another half second, is imported only by the reports).
pandas is not imported by a run at all: pyarrow's ``pa.array`` imports it to ask whether its
argument is a DataFrame, so lasthop.results builds Arrow arrays from their buffers instead."""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for the module `name`; the first attribute read imports it."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (imported)' if self._module is not None else ''}>"
