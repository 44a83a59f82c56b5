"""Configuration: one frozen value, resolved once at the entry point.

Order of precedence for every setting: command-line flag, then environment variable, then
the default. Nothing below the entry points reads the environment.

Where the store and its state folder are is :mod:`memory.locate`'s (the prompt hook resolves
it before importing this module); ``Config.store_source`` records what chose the store.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory.errors import ConfigError
from memory.locate import choose_store, existing_store, resolve_state_dir

DEFAULT_STATE_HEADINGS = ("current state", "estado vigente", "estado actual", "estado", "state")
DEFAULT_HISTORY_HEADINGS = ("history", "historia", "historial", "log", "bitácora", "bitacora")
BACKENDS = ("whoosh", "tantivy")  # the search index: Whoosh (embedded default) or tantivy
BACKEND_PACKAGES = {"tantivy": "tantivy"}  # a backend's package, installed by its extra
BACKEND_PINS = {"tantivy": "tantivy==0.27.0"}  # the extra's pin (pyproject.toml), for pipx inject
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
    hook_evidence: bool = False  # NOTES_HOOK_EVIDENCE: the hook adds the clearly best block
    semantic: bool = False  # NOTES_SEMANTIC: suggest re-ranks with the optional embedding model
    levers: str = ""  # NOTES_LEVERS: the ladder's levers (retrieval/levers.py); "": the defaults
    extra: Mapping[str, str] = field(default_factory=dict)
    store_source: str = "flag"  # how the store was chosen: one of locate.STORE_SOURCES


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
    root = existing_store(choice) if must_exist else choice.path
    state = resolve_state_dir(root, state_dir, env)
    max_bytes = _int_setting(env, "NOTES_MAX_NOTE_BYTES", 2_000_000)
    budget = _int_setting(env, "NOTES_STATE_TOKEN_BUDGET", 600)
    retention = _int_setting(env, "NOTES_USAGE_RETENTION_DAYS", 180)
    return Config(notes_dir=root, state_dir=state, max_note_bytes=max_bytes,
                  state_token_budget=budget, usage_log=_flag(env, "NOTES_USAGE_LOG", True),
                  usage_retention_days=retention,
                  usage_queries=_usage_queries(env),
                  usage_max_mb=_int_setting(env, "NOTES_USAGE_MAX_MB", 64),
                  session=env.get("NOTES_SESSION", ""), backend=_backend(env),
                  http_allowed_hosts=_names(env.get("NOTES_HTTP_ALLOWED_HOSTS", "")),
                  http_token=env.get("NOTES_HTTP_TOKEN", "").strip(),
                  hook_evidence=_flag(env, "NOTES_HOOK_EVIDENCE", False),
                  semantic=_flag(env, "NOTES_SEMANTIC", False),
                  levers=env.get("NOTES_LEVERS", "").strip(),
                  store_source=choice.source)


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """An on/off setting: ``0``/``false``/``no``/``off`` is off, any other value on, unset or
    empty the default."""
    value = (env.get(name) or "").strip().lower()
    return default if not value else value not in ("0", "false", "no", "off")


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


def backend_installed(backend: str) -> bool:
    """Whether ``backend``'s package is there (without importing it): whoosh always is,
    tantivy with the ``tantivy`` extra."""
    package = BACKEND_PACKAGES.get(backend)
    if package is None:
        return True
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a module entry set to None: blocked on purpose
        return False


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
