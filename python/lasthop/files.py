"""Where lasthop writes, and how: names from scenarios made safe as file names, and results
directories that appear complete or not at all.

The rules (README, "Errors and limits"):

* Every name that comes from a scenario (its ``simulation.name``, flow, link, node and WLAN
  names) passes through :func:`safe_name` before it becomes part of a path: ASCII letters,
  digits, ``.``, ``_`` and ``-`` only, no leading dot, at most 100 characters; a name that had to
  change gets a short hash of the original, so two names never share a file. ``..``, ``/``, an
  absolute path or a NUL cannot lead outside the directory they are joined to.
* A results directory is written into a temporary sibling (``.<name>.lasthop-tmp-<pid>-*``) and
  renamed into place only once complete; a failure midway leaves no directory that looks
  complete, and no file of an earlier run survives in it. Such scratch directories
  (``.<name>.lasthop-{tmp,spool,old}-<pid>-*``) of a process that is gone — killed before it
  could remove them — are removed by the next one that makes one in the same place.
* lasthop recognises its own directories by a marker: ``"format": "lasthop.run/1"`` in a run's
  ``summary.json``, ``"format": "lasthop.sweep/1"`` in a sweep's ``sweep.json`` (directories of
  earlier versions, without the marker, by their ``lasthop_version`` key). It replaces a run
  directory by a run and resumes a sweep in a sweep directory; it refuses any other non-empty
  directory (another program's, or a lasthop directory of the other kind) unless ``force``, and
  then writes its files beside what is there. A path that is a file is always refused.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

from lasthop.errors import OutputError

RUN_FORMAT = "lasthop.run/1"
SWEEP_FORMAT = "lasthop.sweep/1"
MAX_NAME = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MARKER_FILE = {"run": "summary.json", "sweep": "sweep.json"}
_FORMAT = {"run": RUN_FORMAT, "sweep": SWEEP_FORMAT}


def name_digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def safe_name(name: str, max_len: int = MAX_NAME) -> str:
    """`name` as one path component: unchanged if it is already safe, else its safe characters
    (others become ``_``, leading dots go) cut to `max_len`, plus ``-`` and a hash of `name`."""
    clean = _UNSAFE.sub("_", name).lstrip(".")
    if clean == name and 0 < len(clean) <= max_len:
        return clean
    return f"{clean[:max_len] or 'x'}-{name_digest(name)}"


def directory_kind(d: Path) -> str | None:
    """"run" or "sweep" for a lasthop results directory, else None."""
    for kind, marker in _MARKER_FILE.items():
        f = d / marker
        if not f.is_file():
            continue
        try:
            with open(f, "rb") as fh:  # a regular file (is_file), read no further than any lasthop writes
                meta = json.loads(fh.read(64 << 20))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            continue
        if meta.get("format") == _FORMAT[kind]:
            return kind
        # Written before the marker existed.
        if "format" not in meta and "lasthop_version" in meta and ("flows" in meta if kind == "run" else "runs" in meta):
            return kind
    return None


def check_output(directory: str | Path, kind: str, force: bool = False) -> Path:
    """`directory` as a Path if lasthop may write a `kind` ("run" or "sweep") results directory
    there, else an OutputError saying why and what to do."""
    try:
        d = Path(directory)
        d.exists()
    except (TypeError, ValueError) as e:
        raise OutputError(f"{directory!r}: not a usable directory name ({e})") from None
    if d.exists() and not d.is_dir():
        raise OutputError(f"{d}: is a file, not a directory; give --out a directory (it is created if missing)")
    if d.is_dir() and any(d.iterdir()) and not force:
        found = directory_kind(d)
        if found != kind:
            what = f"a lasthop {found} directory" if found else "not a lasthop results directory"
            raise OutputError(
                f"{d}: the directory is not empty and is {what} (no {_MARKER_FILE[kind]} with "
                f'"format": "{_FORMAT[kind]}"); choose another --out, or add --force to write into it anyway'
            )
    return d


def write_atomically(directory: str | Path, kind: str, fill: Callable[[Path], None], force: bool = False) -> Path:
    """Calls ``fill(tmp)`` on a fresh temporary sibling of `directory`, then puts it in place:
    a rename when `directory` is missing or empty; a swap (old moved aside, then deleted) when it
    is a lasthop directory of this kind; with `force`, otherwise, lasthop's entries replace
    their namesakes one by one, the marker file last."""
    given = check_output(directory, kind, force)
    # Absolute, so that "." has a name and a parent; a symlink is written through.
    d = Path(os.path.realpath(given) if given.is_symlink() else os.path.abspath(given))
    d.parent.mkdir(parents=True, exist_ok=True)
    tmp = scratch_dir(d.parent, d.name or "results", "tmp")
    try:
        fill(tmp)
        if not d.exists() or (d.is_dir() and not any(d.iterdir())):
            os.replace(tmp, d)
        elif directory_kind(d) == kind:
            old = scratch_dir(d.parent, d.name, "old")
            os.replace(d, old / "d")
            os.replace(tmp, d)
            shutil.rmtree(old, ignore_errors=True)
        else:
            _merge(tmp, d, _MARKER_FILE[kind])
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return given


_SCRATCH = re.compile(r"^\..+\.lasthop-(?:tmp|spool|old)-([0-9]+)-[A-Za-z0-9_]+$")


def scratch_dir(parent: Path, name: str, kind: str) -> Path:
    """A new private directory ``.<name>.lasthop-<kind>-<pid>-*`` in `parent` (`kind`: tmp,
    spool or old), after removing those of processes that are gone (remove_dead_scratch)."""
    remove_dead_scratch(parent)
    return Path(tempfile.mkdtemp(prefix=f".{safe_name(name)}.lasthop-{kind}-{os.getpid()}-", dir=parent))


def remove_dead_scratch(parent: Path) -> list[Path]:
    """Removes the scratch directories and files in `parent` that a process now gone left (a
    SIGKILL gives it no chance to): names of scratch_dir's (and replace_file's) form only,
    directories and regular files of this user only, never a symlink. Returns what it removed."""
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for e in entries:
        m = _SCRATCH.match(e.name)
        if not m or process_alive(int(m.group(1))):
            continue
        try:
            if e.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            elif e.is_file(follow_symlinks=False):
                os.unlink(e.path)
            else:
                continue
            removed.append(Path(e.path))
        except OSError:
            pass  # another process's cleanup got there first, or it is not ours to remove
    return removed


def process_alive(pid: int) -> bool:
    """True while process `pid` exists (a zombie counts as gone: it runs no more code); a pid
    that cannot be looked at counts as alive, so that nothing of it is removed."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    state = stat.rsplit(")", 1)[-1].split()[:1]
    return state not in (["Z"], ["X"])


def _merge(src: Path, dst: Path, marker: str) -> None:
    """Moves every entry of `src` into `dst`, replacing namesakes; the marker goes first out and
    last in, so `dst` never looks like a complete lasthop directory of mixed runs."""
    if (dst / marker).exists() or (dst / marker).is_symlink():
        _remove(dst / marker)
    for entry in sorted(src.iterdir(), key=lambda p: p.name == marker):
        target = dst / entry.name
        if target.exists() or target.is_symlink():
            _remove(target)
        os.replace(entry, target)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    else:
        p.unlink()


def replace_file(path: str | Path, data: bytes | str | Callable[[BinaryIO], None]) -> Path:
    """Writes `path` by a rename from a fresh temporary file beside it: readers see the old
    content or the new, never half of it, and a symlink planted at `path` is replaced, never
    written through. `data` is the content, or a function that writes it to a binary file
    (``fig.savefig``, ``frame.to_csv``). The file gets the mode a plain ``open`` would give."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise OutputError(f"{path}: is a directory where lasthop writes a file: remove it (or name another path) and run again")
    remove_dead_scratch(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.lasthop-tmp-{os.getpid()}-", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@functools.cache
def _umask() -> int:
    """The process's umask, read once (setting and restoring it races other threads' files)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def subdirectory(d: Path, name: str) -> Path:
    """`d`/`name`, created if missing, where lasthop writes its own files (a report's
    ``figures/``); OutputError if something planted there is a symlink or not a directory, so
    that no write lands outside `d`."""
    sub = d / name
    if sub.is_symlink():
        raise OutputError(f"{sub}: is a symlink; lasthop writes {name}/ inside the results directory and does not "
                          f"follow links out of it: remove {sub} and run again")
    if sub.exists() and not sub.is_dir():
        raise OutputError(f"{sub}: is a file where lasthop writes its directory {name}/: remove it and run again")
    sub.mkdir(parents=True, exist_ok=True)
    return sub
