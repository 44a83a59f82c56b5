"""The Whoosh backend (the default; embedded, pure Python). Importing this package imports
Whoosh and installs its patches (:mod:`.opening`): only :func:`memory.index.interface.make_index`
does, when a Whoosh index is made."""

from memory.index.whoosh.lean import without_unused_imports

with without_unused_imports():  # Whoosh's imports it never uses here (see .lean)
    from memory.index.whoosh.index import WhooshIndex

__all__ = ["WhooshIndex"]
