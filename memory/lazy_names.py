"""A package's public names imported on first use (PEP 562's module ``__getattr__``), so that
importing one small module of the package does not load all the others (start-up time of a
command: docs/performance.md). Used by :mod:`memory` and :mod:`memory.index`."""

from __future__ import annotations

import importlib
import sys

# Not `typing.TYPE_CHECKING`: importing `typing` costs a prompt hook answered by the server a
# tenth of its time; type checkers treat this name the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_names(package: str, homes: dict[str, tuple[str, ...]], public: list[str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names ``homes`` gives by the
    module that defines them: a name is imported from its module when first asked for, then
    kept in the package."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public))

    return __getattr__, __dir__
