"""Where the store and its state folder are: the part of the configuration that every process,
the prompt hook's included, resolves before anything else.

The store (the notes folder) is found in this order: ``--notes DIR``, then ``NOTES_DIR``,
then the nearest store walking up from the current folder (a folder holding the marker file
``.notes.toml`` that ``notes init`` writes; at a project root, the folder with ``.git``, also
a store directly inside it), then the per-user default store under the platform's data
folder. The bundled example is used only when asked for (``example=True``, ``--example``);
it lies beside the package, in a checkout or (installed as package data) in site-packages.

This module imports only the standard library's ``os``, ``sys`` and ``pathlib`` (no
``dataclasses``, no ``hashlib`` until a read-only store needs it): the prompt hook finds the
store's socket with it before importing anything else (:mod:`memory.hook.client`).
:func:`memory.config.load_config` builds the whole configuration on top of it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from memory.errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
EXAMPLE_STORE = PACKAGE_DIR.parent / "notes_example"
STATE_FOLDER = ".notes"
STORE_MARKER = ".notes.toml"  # marks a folder as a store (written by `notes init`)
APP_FOLDER = "notes-memory"  # under the platform's data folder: the per-user default store
STORE_SOURCES = ("flag", "env", "found", "default", "example")
# What a store's location depends on besides the flags and the folder it is looked for from.
LOCATION_ENV = ("NOTES_DIR", "NOTES_STATE_DIR", "HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                "APPDATA")


class StoreChoice:
    """Where the store is and what chose it (before checking that it exists)."""

    __slots__ = ("path", "source", "searched_from")

    def __init__(self, path: Path, source: str, searched_from: Path | None = None) -> None:
        self.path = path
        self.source = source  # one of STORE_SOURCES
        self.searched_from = searched_from  # where the walk up started ("found", "default")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreChoice) and (self.path, self.source, self.searched_from) \
            == (other.path, other.source, other.searched_from)

    def __hash__(self) -> int:
        return hash((self.path, self.source, self.searched_from))

    def __repr__(self) -> str:
        return (f"StoreChoice(path={self.path!r}, source={self.source!r}, "
                f"searched_from={self.searched_from!r})")


def state_dir_for(notes_dir: str | None, state_dir: str | None, example: bool,
                  env: Mapping[str, str], cwd: Path | None = None) -> Path:
    """The state folder of the store these flags and this environment name (as
    :func:`memory.config.load_config` resolves it); raises ConfigError as it does."""
    return resolve_state_dir(existing_store(choose_store(notes_dir, env, cwd, example)),
                             state_dir, env)


def choose_store(notes_dir: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None,
                 example: bool = False) -> StoreChoice:
    """Which store: the flag, ``NOTES_DIR``, the nearest store walking up from ``cwd``, or
    the per-user default (which may not exist yet). Never the example unless asked."""
    env = os.environ if env is None else env
    if example:
        if notes_dir:
            raise ConfigError("--example and --notes name two stores; give one of them")
        return StoreChoice(EXAMPLE_STORE, "example")
    if notes_dir:
        return StoreChoice(_absolute(notes_dir, cwd), "flag")
    if env.get("NOTES_DIR"):
        return StoreChoice(_absolute(env["NOTES_DIR"], cwd), "env")
    start = (cwd or Path.cwd()).resolve()
    found = find_store(start)
    if found is not None:
        return StoreChoice(found, "found", start)
    return StoreChoice(default_store(env), "default", start)


def find_store(start: Path) -> Path | None:
    """The nearest store at or above ``start``: a folder holding ``.notes.toml``, or at a
    project root (a folder with ``.git``) the one store directly inside it."""
    for folder in (start, *start.parents):
        if _is_store(folder):
            return folder
        if _exists(folder / ".git"):
            inside = _stores_inside(folder)
            if len(inside) > 1:
                names = ", ".join(p.name for p in inside)
                raise ConfigError(f"the project {folder} holds several stores ({names}); "
                                  "pick one with --notes DIR (or set NOTES_DIR)")
            if inside:
                return inside[0]
    return None


def store_above(folder: Path) -> Path | None:
    """The store that ``folder`` lies inside (an ancestor holding the marker), if any."""
    return next((p for p in folder.parents if _is_store(p)), None)


def default_store(env: Mapping[str, str] | None = None) -> Path:
    """The per-user default store: ``$XDG_DATA_HOME/notes-memory/notes`` on Linux
    (``~/.local/share/…``), ``~/Library/Application Support/…`` on macOS, ``%APPDATA%``
    on Windows."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    return (base / APP_FOLDER / "notes").resolve()


def user_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The per-user state folder, for what belongs to no store (the backups of the settings
    files `notes install` changes): ``$XDG_STATE_HOME/notes-memory`` on Linux
    (``~/.local/state/…``), ``~/Library/Application Support/notes-memory/state`` on macOS,
    ``%LOCALAPPDATA%\\notes-memory\\state`` on Windows."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return (home / "Library" / "Application Support" / APP_FOLDER / "state").resolve()
    if sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return (base / APP_FOLDER / "state").resolve()
    return (Path(env.get("XDG_STATE_HOME") or home / ".local" / "state") / APP_FOLDER).resolve()


def _absolute(value: str | os.PathLike[str], cwd: Path | None) -> Path:
    path = Path(value).expanduser()
    return (path if path.is_absolute() else (cwd or Path.cwd()) / path).resolve()


def _is_store(folder: Path) -> bool:
    try:
        return (folder / STORE_MARKER).is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _stores_inside(folder: Path) -> list[Path]:
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    return [c for c in children if _is_store(c) and c.is_dir()]


def existing_store(choice: StoreChoice) -> Path:
    """The chosen store's folder; raises ConfigError, naming the next step, if it is not there."""
    path = choice.path
    if path.is_dir():
        return path
    if choice.source == "example":
        raise ConfigError(f"the bundled example store ({path}) is not here, though it "
                          "ships with the package: reinstall notes-memory (pipx reinstall "
                          "notes-memory), or use your own store (`notes init`)")
    if choice.source == "default":
        raise ConfigError(f"no store here: none found walking up from {choice.searched_from}, "
                          f"and your default store {path} does not exist yet; create it with "
                          "`notes init` (or `notes init DIR` for a store elsewhere), name one "
                          "with --notes DIR, or try the bundled demo with --example")
    where = "--notes" if choice.source == "flag" else "NOTES_DIR"
    raise ConfigError(f"notes folder {path} (from {where}) does not exist; create it with "
                      f"`notes init {path}`, or pass --notes DIR (or set NOTES_DIR) to an "
                      "existing folder")


def resolve_state_dir(
    root: Path, value: str | os.PathLike[str] | None, env: Mapping[str, str]
) -> Path:
    """The state folder: ``value`` (the flag), else ``NOTES_STATE_DIR``, else the store's
    hidden folder, or a cache folder when the notes folder is read-only."""
    value = value or env.get("NOTES_STATE_DIR") or None
    if value:
        return Path(value).expanduser().resolve()
    inside = root / STATE_FOLDER
    if _writable(inside if inside.exists() else root) and not _installed_example(root):
        return inside
    import hashlib  # here: only a read-only store needs it

    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return (cache / "notes-memory" / f"{root.name}-{digest}").resolve()


def _installed_example(root: Path) -> bool:
    """The example store as installed with the package (beside it in site-packages, not in
    a checkout): its index goes to the cache folder, never into the installed files."""
    return root == EXAMPLE_STORE and not (EXAMPLE_STORE.parent / "pyproject.toml").is_file()


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)
