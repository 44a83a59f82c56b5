"""Configuration: one frozen value, resolved once at the entry point.

Order of precedence for every setting: command-line flag, then environment variable, then
the default. Nothing below the entry points reads the environment.

The store (the notes folder) is found in this order: ``--notes DIR``, then ``NOTES_DIR``,
then the nearest store walking up from the current folder (a folder holding the marker file
``.notes.toml`` that ``notes init`` writes; at a project root, the folder with ``.git``, also
a store directly inside it), then the per-user default store under the platform's data
folder. The bundled example is used only when asked for (``example=True``, ``--example``).
``Config.store_source`` records which of these chose the store.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory.errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
EXAMPLE_STORE = PACKAGE_DIR.parent / "notes_example"
STATE_FOLDER = ".notes"
STORE_MARKER = ".notes.toml"  # marks a folder as a store (written by `notes init`)
APP_FOLDER = "notes-memory"  # under the platform's data folder: the per-user default store
STORE_SOURCES = ("flag", "env", "found", "default", "example")

DEFAULT_STATE_HEADINGS = ("current state", "estado vigente", "estado actual", "estado", "state")
DEFAULT_HISTORY_HEADINGS = ("history", "historia", "historial", "log", "bitácora", "bitacora")
BACKENDS = ("whoosh", "tantivy")  # the search index: Whoosh (embedded default) or tantivy
USAGE_QUERY_MODES = ("plain", "hashed", "off")  # how the usage log keeps each query


@dataclass(frozen=True)
class Config:
    """Settings of one store. Build it with :func:`load_config` at an entry point."""

    notes_dir: Path
    state_dir: Path
    state_headings: tuple[str, ...] = DEFAULT_STATE_HEADINGS
    history_headings: tuple[str, ...] = DEFAULT_HISTORY_HEADINGS
    max_note_bytes: int = 2_000_000
    state_token_budget: int = 600
    usage_log: bool = True  # log every ladder call for the promoter (off for benchmarks)
    usage_retention_days: int = 180
    usage_queries: str = "plain"  # NOTES_USAGE_QUERIES: "plain", "hashed" or "off"
    usage_max_mb: int = 64  # NOTES_USAGE_MAX_MB: the usage log's size cap on disk
    session: str = ""  # the CLI's session id (NOTES_SESSION); servers and hooks pass their own
    backend: str = "whoosh"  # NOTES_BACKEND: "whoosh" or "tantivy" (the optional extra)
    http_allowed_hosts: tuple[str, ...] = ()  # NOTES_HTTP_ALLOWED_HOSTS: names beyond loopback
    http_token: str = field(default="", repr=False)  # NOTES_HTTP_TOKEN: HTTP bearer token
    extra: Mapping[str, str] = field(default_factory=dict)
    store_source: str = "flag"  # how the store was chosen: one of STORE_SOURCES


@dataclass(frozen=True)
class StoreChoice:
    """Where the store is and what chose it (before checking that it exists)."""

    path: Path
    source: str  # one of STORE_SOURCES
    searched_from: Path | None = None  # where the walk up started ("found", "default")


def load_config(
    notes_dir: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    example: bool = False,
    must_exist: bool = True,
) -> Config:
    """Resolve the settings: flag, then ``NOTES_*`` environment variable, then default. The
    store as :func:`choose_store` finds it (walking up from ``cwd``, default the current
    folder); it must exist unless ``must_exist`` is False (a dry run's plan)."""
    env = os.environ if env is None else env
    choice = choose_store(notes_dir, env, cwd, example)
    root = _existing_store(choice) if must_exist else choice.path
    state = _resolve_state_dir(root, state_dir or env.get("NOTES_STATE_DIR") or None, env)
    max_bytes = _int_setting(env, "NOTES_MAX_NOTE_BYTES", 2_000_000)
    budget = _int_setting(env, "NOTES_STATE_TOKEN_BUDGET", 600)
    retention = _int_setting(env, "NOTES_USAGE_RETENTION_DAYS", 180)
    usage = (env.get("NOTES_USAGE_LOG") or "1").strip().lower() not in ("0", "false", "no", "off")
    return Config(notes_dir=root, state_dir=state, max_note_bytes=max_bytes,
                  state_token_budget=budget, usage_log=usage, usage_retention_days=retention,
                  usage_queries=_usage_queries(env),
                  usage_max_mb=_int_setting(env, "NOTES_USAGE_MAX_MB", 64),
                  session=env.get("NOTES_SESSION", ""), backend=_backend(env),
                  http_allowed_hosts=_names(env.get("NOTES_HTTP_ALLOWED_HOSTS", "")),
                  http_token=env.get("NOTES_HTTP_TOKEN", "").strip(),
                  store_source=choice.source)


def _names(raw: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in raw.split(",") if name.strip())


def _usage_queries(env: Mapping[str, str]) -> str:
    value = (env.get("NOTES_USAGE_QUERIES") or "plain").strip().lower()
    if value not in USAGE_QUERY_MODES:
        raise ConfigError(f"NOTES_USAGE_QUERIES={value!r} is not a way to keep queries; use one "
                          f"of {', '.join(USAGE_QUERY_MODES)} (or unset it for plain)")
    return value


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


def _backend(env: Mapping[str, str]) -> str:
    value = (env.get("NOTES_BACKEND") or "whoosh").strip().lower()
    if value not in BACKENDS:
        raise ConfigError(f"NOTES_BACKEND={value!r} is not a search backend; use one of "
                          f"{', '.join(BACKENDS)} (or unset it for whoosh)")
    return value


def _existing_store(choice: StoreChoice) -> Path:
    path = choice.path
    if path.is_dir():
        return path
    if choice.source == "example":
        raise ConfigError(f"the bundled example store ({path}) is not here: it ships with a "
                          "checkout of the project, not with the installed package; use "
                          "your own store (`notes init`), or run from a checkout")
    if choice.source == "default":
        raise ConfigError(f"no store here: none found walking up from {choice.searched_from}, "
                          f"and your default store {path} does not exist yet; create it with "
                          "`notes init` (or `notes init DIR` for a store elsewhere), name one "
                          "with --notes DIR, or try the bundled demo with --example")
    where = "--notes" if choice.source == "flag" else "NOTES_DIR"
    raise ConfigError(f"notes folder {path} (from {where}) does not exist; create it with "
                      f"`notes init {path}`, or pass --notes DIR (or set NOTES_DIR) to an "
                      "existing folder")


def _resolve_state_dir(
    root: Path, value: str | os.PathLike[str] | None, env: Mapping[str, str]
) -> Path:
    """The store's hidden folder, or a cache folder when the notes folder is read-only."""
    if value:
        return Path(value).expanduser().resolve()
    inside = root / STATE_FOLDER
    if _writable(inside if inside.exists() else root):
        return inside
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return (cache / "notes-memory" / f"{root.name}-{digest}").resolve()


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def _int_setting(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number; unset it or fix it") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {value}; unset it or fix it")
    return value
