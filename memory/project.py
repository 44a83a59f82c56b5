"""Which project a folder belongs to, as a user thinks of it (docs/projects.md).

A project is the git repository a folder is in (its root), else the folder itself. Its
**key** is what notes record in a note's ``project:`` front matter key and compare: the
repository's remote URL, normalised (``git@github.com:ana/shop.git`` and
``https://github.com/ana/shop`` are both ``github.com/ana/shop``), so that every clone of it,
anywhere, is the same project; a repository without a remote, and a folder outside any
repository, are known by their absolute path.

No project: the home folder itself, the file system's root, and any folder inside the store
(a store kept in a git repository is not a project of its own notes).

Only ``os``, ``pathlib`` and ``re``: the prompt hook finds its project before it imports
anything heavy. Git itself is never run: ``.git/config`` is read (through the ``gitdir:``
file of a worktree or submodule, and its ``commondir``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

SHARED = "none"  # what `--project` takes for the notes of no project
HERE = "."  # ... and for the project of the current folder
_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>[^"]+)"\s*\]\s*$')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.+?)\s*$")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")  # git@host:owner/repo
_MAX_CONFIG = 1_000_000


@dataclass(frozen=True)
class Project:
    """A project: its key (what notes record), its root folder, and why, in words."""

    key: str
    root: Path
    why: str


def find_project(folder: Path, store: Path | None = None,
                 home: Path | None = None) -> Project | None:
    """The project ``folder`` is in (None: no project; see the module's docstring)."""
    try:
        here = Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return None
    if store is not None:
        real_store = Path(os.path.realpath(store))
        if here == real_store or real_store in here.parents:
            return None
    root = git_root(here)
    if root is None:
        home_dir = Path(os.path.realpath(home if home is not None else Path.home()))
        if here == home_dir or here == Path(here.anchor):
            return None
        return Project(str(here), here, f"the folder {here} (not in a git repository)")
    url = remote_url(root)
    if url:
        return Project(normalise_url(url), root,
                       f"the git remote of {root} ({url})")
    return Project(str(root), root, f"the git repository {root} (it has no remote)")


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a folder or a file)."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def remote_url(root: Path) -> str:
    """The URL of the repository's ``origin`` remote, else of its first remote ("" for
    none, or a config that cannot be read)."""
    config = _git_dir(root)
    if config is None:
        return ""
    try:
        with open(config / "config", encoding="utf-8", errors="replace") as handle:
            text = handle.read(_MAX_CONFIG)
    except OSError:
        return ""
    urls: dict[str, str] = {}
    remote: str | None = None
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section:
            remote = section["name"]
            continue
        if _ANY_SECTION.match(line):
            remote = None
            continue
        url = _URL.match(line)
        if remote is not None and url and remote not in urls:
            urls[remote] = url["url"].strip('"')
    return urls.get("origin") or next(iter(urls.values()), "")


def _git_dir(root: Path) -> Path | None:
    """The folder holding the repository's ``config``: ``.git`` itself, or for a worktree
    or a submodule (a ``.git`` file naming its ``gitdir:``) the common folder."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        first = dot.read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = Path(first.removeprefix("gitdir:").strip())
    gitdir = gitdir if gitdir.is_absolute() else root / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    common_dir = Path(common)
    return common_dir if common_dir.is_absolute() else gitdir / common_dir


def normalise_url(url: str) -> str:
    """A remote URL as a project key: no scheme, user, password, port, ``.git`` suffix or
    trailing slash, the host in lower case (``ssh://git@GitHub.com:22/ana/shop.git`` →
    ``github.com/ana/shop``); a local path stays a path."""
    text = url.strip()
    scheme = re.match(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)$", text)
    if scheme and scheme["scheme"].lower() == "file":
        return _tail(scheme["rest"])
    if scheme:
        rest = scheme["rest"]
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2]
        host = re.sub(r":\d*$", "", host)
        return _tail(f"{host.lower()}/{path}")
    scp = _SCP.match(text)
    if scp and "/" not in scp["host"]:
        return _tail(f"{scp['host'].lower()}/{scp['path'].lstrip('/')}")
    return _tail(text)


def _tail(path: str) -> str:
    clean = path.rstrip("/")
    clean = clean[:-4] if clean.endswith(".git") else clean
    return clean.rstrip("/") or path


def note_project(meta: dict[str, object]) -> str:
    """The project a note's front matter names ("" for a note of no project)."""
    value = meta.get("project")
    return " ".join(str(value).split()) if isinstance(value, str | int | float) and \
        not isinstance(value, bool) else ""
