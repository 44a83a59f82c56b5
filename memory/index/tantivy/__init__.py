"""The tantivy backend (``NOTES_BACKEND=tantivy``, the extra ``notes-memory[tantivy]``, a
native library). Importing this package imports tantivy: only
:func:`memory.index.interface.make_index` does, when a tantivy index is made."""

from memory.index.tantivy.index import TantivyIndex

__all__ = ["TantivyIndex"]
