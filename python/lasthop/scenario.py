"""Scenarios: a TOML text plus ``--set``-style overrides, validated by the Rust core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from lasthop import _core
from lasthop.errors import BUNDLED_PREFIX, ScenarioError, clarify, did_you_mean, did_you_mean_path

DEFAULT = "dumbbell"
# A scenario file is a few kB; anything this large is not one (and /dev/zero never ends).
MAX_SCENARIO_BYTES = 8 << 20


def _literal(value: Any) -> str:
    """An override value as the TOML literal the core parses (strings stay bare: "10ms")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)



def _not_regular(p: Path) -> str | None:
    """What `p` is when it exists and is no regular file ("a FIFO", "a device", ...), else None."""
    import stat

    try:
        mode = p.stat().st_mode
    except OSError:
        return None  # missing or unreadable: open() says why
    if stat.S_ISREG(mode):
        return None
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")

class Scenario:
    """A validated scenario. Build one with :meth:`from_toml`, :meth:`from_str` or :meth:`bundled`."""

    def __init__(self, text: str, file: str, overrides: Mapping[str, Any] | None = None):
        self.text = text
        self.file = file
        self.overrides: dict[str, str] = {k: _literal(v) for k, v in (overrides or {}).items()}
        _check_encodable(text, file, self.overrides)
        # Validates now, so errors surface where the scenario is made.
        try:
            resolved = _core.resolve_scenario(text, file, list(self.overrides.items()))
        except ScenarioError as e:
            raise ScenarioError(self.clarify(str(e))) from None
        self.resolved: dict = json.loads(resolved)

    def clarify(self, message: str) -> str:
        """A core error message about this scenario, as lasthop.errors.clarify rewrites it."""
        return clarify(message, self.text, self.file, self.overrides)

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> "Scenario":
        p = Path(path)
        try:
            kind = _not_regular(p)
            if kind is not None:  # a FIFO would block the read forever, a device never end
                raise ScenarioError(f"{p}: is {kind}, not a regular file; a scenario is a TOML file")
            with open(p, "rb") as f:
                data = f.read(MAX_SCENARIO_BYTES + 1)
        except OSError as e:
            hint = did_you_mean_path(p) if isinstance(e, FileNotFoundError) else ""
            raise ScenarioError(f"{p}: cannot read the file: {e.strerror}{hint}") from None
        except ValueError as e:  # a NUL in the path
            raise ScenarioError(f"{p!r}: not a usable file name ({e})") from None
        if len(data) > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"{p}: larger than {MAX_SCENARIO_BYTES >> 20} MiB; a scenario file is a small TOML text")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
            raise ScenarioError(f"{p}: line {line}, column {column}: byte 0x{data[e.start]:02x} is not UTF-8; "
                                "scenario files are UTF-8 TOML") from None
        return cls(text, str(p), _dotted(overrides))

    @classmethod
    def from_str(cls, text: str, name: str = "<string>", **overrides: Any) -> "Scenario":
        return cls(text, name, _dotted(overrides))

    @classmethod
    def bundled(cls, name: str = DEFAULT, **overrides: Any) -> "Scenario":
        text = _core.bundled_scenario(name)
        if text is None:
            names = _core.bundled_names()
            raise ScenarioError(f"no bundled scenario {name!r}{did_you_mean(name, names)} (bundled: {', '.join(names)})")
        return cls(text, f"{BUNDLED_PREFIX}{name}>", _dotted(overrides))

    def with_overrides(self, **overrides: Any) -> "Scenario":
        merged = dict(self.overrides)
        merged.update({k: _literal(v) for k, v in _dotted(overrides).items()})
        return Scenario(self.text, self.file, merged)

    @property
    def name(self) -> str:
        explicit = self.resolved["simulation"].get("name")
        if explicit:
            return explicit
        return Path(self.file).stem if not self.file.startswith("<") else self.file.strip("<>").split(":")[-1]

    @property
    def seed(self) -> int:
        return self.resolved["simulation"]["seed"]

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, file={self.file!r}, overrides={self.overrides!r})"


def _check_encodable(text: str, file: str, overrides: Mapping[str, str]) -> None:
    """The core takes UTF-8; a Python string with a lone surrogate has none."""
    from lasthop.errors import source_label

    for what, s in [("the scenario text", text), *((f"--set {k}" , f"{k}={v}") for k, v in overrides.items())]:
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ScenarioError(f"{source_label(file)}: {what}: not valid Unicode (character {e.object[e.start]!r} "
                                f"at position {e.start})") from None


def _dotted(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword overrides: ``seed=3`` is ``simulation.seed``; ``links__bottleneck__rate`` is
    ``links.bottleneck.rate``; keys with dots pass through (``**{"flows.bulk.start": "1s"}``)."""
    out = {}
    for k, v in overrides.items():
        if k in ("seed", "duration", "interval", "name"):
            k = f"simulation.{k}"
        out[k.replace("__", ".")] = v
    return out
