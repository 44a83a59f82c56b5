"""Importing Whoosh without what it imports and never uses here.

``whoosh.compat`` imports ``urllib.request`` (with ``http.client``, ``email``, ``ssl``) for a
``urlretrieve`` that Whoosh never calls, and ``whoosh.reading`` takes ``cached_property`` from
the package of that name, which imports ``asyncio`` for coroutine properties Whoosh does not
have (``functools.cached_property`` does the same for a plain one), and ``whoosh.query.terms``
imports ``whoosh.lang.morph_en`` (115 suffix rules compiled into six large regular expressions
at import, about 5 ms) for the ``Variations`` query, never built here; ``whoosh.compat`` also
imports ``html`` (with its table of entities, about 1 ms) for an ``escape`` that only the HTML
highlighter calls. Together about a sixth of a cold prompt hook. While this package imports
Whoosh, stand-ins take their place; each is put only where the real module is not imported
yet, and taken out afterwards, so anything that imports them later gets the real ones.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def without_unused_imports() -> Iterator[None]:
    standing = {"urllib.request": _stand_in("urllib.request", urlretrieve=_urlretrieve),
                "cached_property": _stand_in("cached_property",
                                             cached_property=functools.cached_property),
                "whoosh.lang.morph_en": _stand_in("whoosh.lang.morph_en",
                                                  variations=_variations),
                "html": _stand_in("html", escape=_escape)}
    placed = [name for name in standing if name not in sys.modules]
    for name in placed:
        sys.modules[name] = standing[name]
    try:
        yield
    finally:
        for name in placed:
            if sys.modules.get(name) is standing[name]:
                del sys.modules[name]


def _stand_in(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name, "a stand-in while Whoosh is imported "
                                    "(memory.index.whoosh.lean)")
    module.__dict__.update(attributes)
    return module


def _variations(word: str) -> Any:
    from whoosh.lang.morph_en import variations

    return variations(word)


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def _escape(*args: Any, **kwargs: Any) -> Any:
    from html import escape

    return escape(*args, **kwargs)
