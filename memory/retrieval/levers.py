"""Which levers are on: the configuration of the optional stages of ``suggest`` and
``recall`` (issue #15 item 4; figures in docs/benchmarks.md, "Routing levers: ablations").

Each lever is a named stage registered in :mod:`memory.retrieval.stages` (one module
there says what it does and where it acts; ``notes bench run --levers list`` lists them).
:class:`Levers` is a set of their names, read as flags (``levers.spread``,
``Levers(block_route=True)``: a name's ``-`` is ``_`` there); :data:`DEFAULT` holds the
levers whose stage says ``default``; a store's ``NOTES_LEVERS`` and the bench's ``--levers``
(both read by :func:`parse_levers`) switch them: ``none``, ``all``, ``default``, names
(only those on) or ``+name``/``-name`` (the default with or without it).

On by default: ``replies`` alone, the one lever the audit of 2026-12-05 found earned on
every source under issue #34's rule (docs/benchmarks.md, "The lever audit"); neighbours,
dates, names and coverage lifted one source at most and are off; block-route's two store-wide
searches make suggest about 8 times slower (``NOTES_LEVERS=+block-route`` turns it on), and
semantic needs the optional model (``NOTES_SEMANTIC`` turns it on; ``semantic-blocks``, its
vectors in recall's blocks and the map, only when named).
"""

from __future__ import annotations

from typing import NamedTuple

from memory.errors import ConfigError, InvalidArgument
from memory.retrieval.stages import REGISTRY

NAMES = tuple(stage.name for stage in REGISTRY)
NEEDS_MODEL = ("semantic", "semantic-blocks")  # the levers of the optional embedding model
_FLAGS = {name.replace("-", "_"): name for name in NAMES}


class Levers:
    """The levers that are on, by name; ``levers.x`` says whether lever ``x`` is
    (``block_route`` for ``block-route``). Immutable, compared and hashed by its names."""

    __slots__ = ("_on",)
    _on: frozenset[str]

    def __init__(self, **flags: bool) -> None:
        unknown = [flag for flag in flags if flag not in _FLAGS]
        if unknown:
            raise TypeError(f"no lever {unknown[0]!r}; levers are: {', '.join(_FLAGS)}")
        object.__setattr__(self, "_on", frozenset(_FLAGS[f] for f, on in flags.items() if on))

    def __getattr__(self, flag: str) -> bool:
        if flag not in _FLAGS:
            raise AttributeError(f"no lever {flag!r}; levers are: {', '.join(_FLAGS)}")
        return _FLAGS[flag] in self._on

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Levers are immutable: use replace()")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Levers) and self._on == other._on

    def __hash__(self) -> int:
        return hash(self._on)

    def __repr__(self) -> str:
        return f"Levers({', '.join(f'{n.replace(chr(45), chr(95))}=True' for n in self.on())})"

    def __reduce__(self) -> tuple[object, tuple[str, ...]]:
        return _levers, self.on()

    def chosen(self) -> frozenset[str]:
        """The names of the levers that are on (a method: a lever may be called anything
        but ``chosen``, ``replace``, ``on`` and ``label``)."""
        return self._on

    def replace(self, **flags: bool) -> Levers:
        """These levers with ``flags`` switched."""
        current = {flag: name in self._on for flag, name in _FLAGS.items()}
        return Levers(**(current | flags))

    def on(self) -> tuple[str, ...]:
        return tuple(n for n in NAMES if n in self._on)

    def label(self) -> str:
        return ",".join(self.on()) or "none"


def _levers(*names: str) -> Levers:
    """The levers of these names (what a pickled ``Levers`` is made from)."""
    return Levers(**{name.replace("-", "_"): True for name in names})


DEFAULT = Levers(**{name.replace("-", "_"): True for stage in REGISTRY if stage.default
                    for name in (stage.name,)})
ALL = Levers(**{flag: True for flag in _FLAGS})


class Registered(NamedTuple):
    """One registered lever as ``notes bench run --levers list`` shows it."""

    name: str
    default: bool
    summary: str
    points: tuple[str, ...]  # where it acts (:data:`memory.retrieval.stages.base.POINTS`)


def registered() -> list[Registered]:
    """Every registered lever, in the registry's order."""
    return [Registered(s.name, s.default, s.summary, s.points()) for s in REGISTRY]


def store_levers(chosen: str = "", semantic: bool = False) -> Levers:
    """The levers of a store's own ladder (the CLI's, the server's; a bench picks its own):
    ``chosen`` as :func:`parse_levers` reads it (``NOTES_LEVERS``; empty: the defaults),
    with ``semantic`` too when the configuration turns it on (``NOTES_SEMANTIC``), which
    needs its extra installed. A lever that does not exist, or a missing extra, is a
    ConfigError that says what to change."""
    try:
        levers = parse_levers(chosen or None)
    except InvalidArgument as exc:
        raise ConfigError(f"NOTES_LEVERS={chosen!r}: {exc}; fix it or unset NOTES_LEVERS "
                          "for the defaults") from exc
    except ConfigError as exc:  # a lever of the model, without its extra
        raise ConfigError(f"NOTES_LEVERS={chosen!r}: {exc}") from exc
    if not semantic or levers.semantic:
        return levers
    from memory.retrieval.semantic import require

    require()
    return levers.replace(semantic=True)


def parse_levers(text: str | None) -> Levers:
    """``None``/``default``: :data:`DEFAULT`; ``none``, ``all``; or comma-separated names,
    each ``name`` (on, from none), ``+name`` (on) or ``-name`` (off); with a ``+`` or ``-``
    item the rest apply to the default (``-spread``: the default without spread)."""
    if text is None or text.strip() in ("", "default"):
        return DEFAULT
    items = [t.strip() for t in text.split(",") if t.strip()]
    if items == ["none"]:
        return Levers()
    if items == ["all"]:
        items = list(NAMES)
    relative = any(t[0] in "+-" for t in items)
    chosen = dict.fromkeys(DEFAULT.on() if relative else (), True)
    for item in items:
        name = item.lstrip("+-")
        if name not in NAMES:
            raise InvalidArgument(f"unknown lever {name!r}; levers are: {', '.join(NAMES)} "
                                  "(or none, all, default)")
        if item.startswith("-"):
            chosen.pop(name, None)
        else:
            chosen[name] = True
    needing = [name for name in NEEDS_MODEL if name in chosen]
    if needing:
        from memory.retrieval.semantic import require

        require(f"the {needing[0]} lever", f"leave {needing[0]} out of the levers")
    return Levers(**{n.replace("-", "_"): True for n in chosen})
