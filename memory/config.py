"""Configuration: one frozen value, resolved once at the entry point.

Order of precedence for every setting: command-line flag, then environment variable, then
the default. Nothing below the entry points reads the environment.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
EXAMPLE_STORE = PACKAGE_DIR.parent / "notes_example"
STATE_FOLDER = ".notes"

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


def load_config(
    notes_dir: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Resolve the settings: flag, then ``NOTES_*`` environment variable, then default."""
    env = os.environ if env is None else env
    root = _resolve_notes_dir(notes_dir or env.get("NOTES_DIR") or None)
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
                  http_token=env.get("NOTES_HTTP_TOKEN", "").strip())


def _names(raw: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in raw.split(",") if name.strip())


def _usage_queries(env: Mapping[str, str]) -> str:
    value = (env.get("NOTES_USAGE_QUERIES") or "plain").strip().lower()
    if value not in USAGE_QUERY_MODES:
        raise ConfigError(f"NOTES_USAGE_QUERIES={value!r} is not a way to keep queries; use one "
                          f"of {', '.join(USAGE_QUERY_MODES)} (or unset it for plain)")
    return value


def _backend(env: Mapping[str, str]) -> str:
    value = (env.get("NOTES_BACKEND") or "whoosh").strip().lower()
    if value not in BACKENDS:
        raise ConfigError(f"NOTES_BACKEND={value!r} is not a search backend; use one of "
                          f"{', '.join(BACKENDS)} (or unset it for whoosh)")
    return value


def _resolve_notes_dir(value: str | os.PathLike[str] | None) -> Path:
    path = Path(value) if value else EXAMPLE_STORE
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise ConfigError(
            f"notes folder {path} does not exist; create it, or pass --notes DIR "
            "(or set NOTES_DIR) to an existing folder"
        )
    return path


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
