"""The levers' registry: every optional stage of ``suggest`` and ``recall``, by name.

A lever is one :class:`memory.retrieval.stages.base.Stage` subclass in its own module here,
which ends with ``STAGE = TheStage()``, and one line in :data:`MODULES`. From the registry,
:mod:`memory.retrieval.levers` makes the ``Levers`` names, the defaults, ``NOTES_LEVERS``
and ``--levers``; the pipelines (:mod:`memory.retrieval.suggest`,
:mod:`memory.retrieval.recall`, the section map) call the stages that are on at the points
they act at (:data:`memory.retrieval.stages.base.POINTS`), in this order. To add a lever:
write its module (a ``Stage`` with a ``name``, a ``summary``, ``default`` if it is on by
default, and the methods of the points it acts at) and add its line here; to take one out,
delete both. The order is the order of the names in reports (``Levers.label``) and of the
stages at a point where several act.
"""

from __future__ import annotations

from importlib import import_module

from memory.retrieval.stages.base import POINTS, Stage

__all__ = ["MODULES", "POINTS", "REGISTRY", "Stage", "acting"]

MODULES = (
    "spread",
    "fusion",
    "block_route",
    "feedback",
    "neighbours",
    "dates",
    "names",
    "replies",
    "coverage",
    "across",
    "semantic",
    "semantic_blocks",
)


def _stage(module: str) -> Stage:
    stage = import_module(f"{__name__}.{module}").STAGE
    if not isinstance(stage, Stage):
        raise TypeError(f"{__name__}.{module}.STAGE is not a Stage")
    return stage


REGISTRY: tuple[Stage, ...] = tuple(_stage(m) for m in MODULES)
_ACTING = {point: tuple(s for s in REGISTRY if point in s.points()) for point in POINTS}


def acting(on: frozenset[str], point: str) -> list[Stage]:
    """The stages named in ``on`` that act at ``point``, in the registry's order."""
    return [s for s in _ACTING[point] if s.name in on]
