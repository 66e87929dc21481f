"""lasthop's error types, and the one place that turns the core's scenario errors into what a
user can act on.

Every error a user can cause is one of three types, each with a message that names the file (or
the ``--set`` argument), the field, the value and what is valid:

    ScenarioError   a scenario that cannot be used (from the Rust core; a ValueError)
    SimulationError a run that the engine stopped, e.g. simulated time no longer advanced
                    (from the Rust core's watchdog when this build has it; a RuntimeError)
    OutputError     a results directory lasthop refuses to write (a ValueError)

The core applies ``--set`` overrides by rewriting the TOML document, so its "line N" refers to a
document the user never saw. :func:`clarify` re-attributes each problem: to the override that
introduced it (found by re-validating with the overrides added one at a time), or to the line
of the user's own file. Bundled scenarios are compiled in, so their messages cite the
scenario's name and the offending line's text instead of a line number.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lasthop import _core

ScenarioError = _core.ScenarioError


class _FallbackSimulationError(RuntimeError):
    """A run the engine stopped (this build's core has no SimulationError of its own)."""


SimulationError: type[RuntimeError] = getattr(_core, "SimulationError", _FallbackSimulationError)


class RunTimeout(SimulationError):  # type: ignore[misc, valid-type]
    """A run stopped because it exceeded its wall-clock limit (``wall_limit_s``, ``--run-timeout``)."""


class OutputError(ValueError):
    """A results directory lasthop refuses to write: a file, or a non-empty directory that is
    not a lasthop results directory of the same kind (without ``force``)."""


BUNDLED_PREFIX = "<bundled:"
_LINE = re.compile(r"^line (\d+): ")


def source_label(file: str) -> str:
    """How messages name a scenario's source: the path, or ``bundled scenario home``."""
    if file.startswith(BUNDLED_PREFIX) and file.endswith(">"):
        return f"bundled scenario {file[len(BUNDLED_PREFIX):-1]}"
    return file


def did_you_mean(word: str, choices: Iterable[str], quote: str = '"') -> str:
    """``'; did you mean "home"?'`` for the closest choice, or ``''``."""
    close = difflib.get_close_matches(word, [c for c in choices if isinstance(c, str)], n=1, cutoff=0.6)
    return f"; did you mean {quote}{close[0]}{quote}?" if close else ""


def _problems(text: str, file: str, overrides: Sequence[tuple[str, str]]) -> list[str] | None:
    """The core's problems (without the file prefix) for these overrides, or None if valid."""
    try:
        _core.resolve_scenario(text, file, list(overrides))
    except ScenarioError as e:
        return [p[len(file) + 2:] if p.startswith(f"{file}: ") else p for p in _split_problems(str(e), file)]
    return None


def printable(text: str) -> str:
    """`text` on one line: control characters (a newline or NUL in a --set value, a name) as
    escapes, so that one problem is always one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _split_problems(message: str, file: str) -> list[str]:
    """The core's problems, one per ``<file>: `` prefix (a problem may itself hold a newline)."""
    return re.split(r"\n(?=" + re.escape(file) + ": )", message)


def _strip_line(problem: str) -> str:
    return _LINE.sub("", problem, count=1)


class _Attribution:
    """Finds which override introduced a problem: the first prefix of the overrides whose
    validation reports it. Validations are cached; a scenario validates in well under 1 ms."""

    def __init__(self, text: str, file: str, overrides: Sequence[tuple[str, str]]):
        self.text, self.file, self.overrides = text, file, list(overrides)
        self._cache: dict[int, list[str] | None] = {}

    def problems(self, k: int) -> list[str]:
        if k not in self._cache:
            self._cache[k] = _problems(self.text, self.file, self.overrides[:k])
        return self._cache[k] or []

    def origin(self, problem: str) -> tuple[int, str | None]:
        """(k, the problem as validated with the first k overrides) for the smallest k that
        reports it; k = 0 means the file itself."""
        want = _strip_line(problem)
        for k in range(len(self.overrides) + 1):
            for p in self.problems(k):
                if _strip_line(p) == want:
                    return k, p
        return len(self.overrides), None


def _element_names(text: str, file: str, path: str, head: str) -> list[str]:
    """Names of the elements of the array `head` on the way down `path` in the scenario."""
    try:
        node: object = json.loads(_core.resolve_scenario(text, file, []))
    except (ScenarioError, ValueError):
        return []
    for part in path.split("."):
        if isinstance(node, dict):
            if part == head and isinstance(node.get(part), list):
                return [e.get("name") for e in node[part] if isinstance(e, dict) and isinstance(e.get("name"), str)]
            node = node.get(part)
        elif isinstance(node, list):
            by_name = [e for e in node if isinstance(e, dict) and e.get("name") == part]
            node = by_name[0] if by_name else (node[int(part)] if part.isdigit() and int(part) < len(node) else None)
        else:
            return []
    return []


def did_you_mean_path(path: str | Path, max_entries: int = 10_000) -> str:
    """``'; did you mean scenarios/dumbbell.toml?'`` for a path that does not exist when one close
    to it does (each missing component replaced by the closest name in its directory), or ``''``."""
    p = Path(path)
    if p.exists():
        return ""
    cur = Path(p.anchor) if p.is_absolute() else Path()
    changed = False
    for part in p.parts[1:] if p.is_absolute() else p.parts:
        if (cur / part).exists() or part in (".", ".."):
            cur = cur / part
            continue
        try:
            names = [e.name for _, e in zip(range(max_entries), os.scandir(cur))]
        except OSError:
            return ""
        close = difflib.get_close_matches(part, names, n=1, cutoff=0.6)
        if not close:
            return ""
        cur, changed = cur / close[0], True
    return f"; did you mean {cur}?" if changed and cur.exists() else ""


def _suggestions(problem: str, text: str, file: str) -> str:
    m = re.search(r"unknown (?:field|variant) `([^`]*)`, expected (?:one of )?(.*)$", problem)
    if m:
        return did_you_mean(m.group(1), re.findall(r"`([^`]+)`", m.group(2)), quote="`")
    # The core's own checks: "... "cubci" is not known; valid: "newreno", ...", "unknown node "X"; known nodes: ..."
    m = re.search(r'"([^"]*)" is not known; valid: (.*)$', problem) or re.search(r'unknown [\w /]+ "([^"]*)"; known[\w ]*: (.*)$', problem)
    if m and "did you mean" not in problem:
        return did_you_mean(m.group(1), re.findall(r'"([^"]+)"', m.group(2)))
    m = re.match(r"--set ([^=]+)=.*?: (\w+): no element named \"(.*)\"$", problem)
    if m:
        names = _element_names(text, file, m.group(1), m.group(2))
        listed = f" ({m.group(2)}: {', '.join(names)})" if names else ""
        return listed + did_you_mean(m.group(3), names)
    return ""


def clarify(message: str, text: str, file: str, overrides: Mapping[str, str] | Sequence[tuple[str, str]] = ()) -> str:
    """The core's ScenarioError message, one problem per line, rewritten for the user: line
    numbers of the rewritten document become the ``--set`` argument at fault; bundled scenarios
    are named as such without line numbers; unknown names get a "did you mean"."""
    pairs = list(overrides.items()) if isinstance(overrides, Mapping) else list(overrides)
    if pairs and "TOML parse error" in message:
        # The file itself is not TOML (the core met it while applying the overrides): the
        # overrides play no part, and the error without them is the file's, with its line.
        base = _problems(text, file, [])
        if base:
            message, pairs = "\n".join(f"{file}: {p}" for p in base), []
    attribution = _Attribution(text, file, pairs) if pairs else None
    base_lines = text.split("\n")
    bundled = file.startswith(BUNDLED_PREFIX)
    out = []
    for raw in _split_problems(message, file):
        problem = raw[len(file) + 2:] if raw.startswith(f"{file}: ") else raw
        lines_are_the_files = attribution is None
        for path, value in pairs:  # the core's own "--set P=V: ", with a value made printable
            prefix = f"--set {path}={value}: "
            if problem.startswith(prefix):
                problem = f"--set {path}={printable(value)}: {problem[len(prefix):]}"
                break
        if attribution is not None and not problem.startswith("--set "):
            k, original = attribution.origin(problem)
            if k > 0:
                path, value = pairs[k - 1]
                problem = f"--set {path}={printable(value)}: {_strip_line(problem)}"
            elif original is not None:
                problem = original  # the file's own problem, with the line of the file itself
                lines_are_the_files = True
        m = _LINE.match(problem)
        if m and bundled:
            # Compiled in: no file to open. Quote the line instead, when it is the scenario's own.
            n = int(m.group(1))
            at = base_lines[n - 1].strip() if lines_are_the_files and 0 < n <= len(base_lines) else ""
            problem = (f"at `{at}`: " if at else "") + _strip_line(problem)
        # The TOML parser's own messages run over lines ("invalid string\nexpected `\"`"): one line.
        problem = "; ".join(part.strip() for part in problem.strip().split("\n") if part.strip())
        out.append(printable(f"{source_label(file)}: {problem}{_suggestions(problem, text, file)}"))
    return "\n".join(out)


def scenario_error(message: str, text: str, file: str, overrides=()) -> ScenarioError:
    return ScenarioError(clarify(message, text, file, overrides))
