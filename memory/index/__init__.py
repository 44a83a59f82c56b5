"""The search index: one package owns it. What the rest of the package uses is the
interface (:mod:`.interface`: :class:`SearchIndex`, :class:`Searcher`, :func:`make_index`),
the query (:mod:`.query`) and what the index gives back (:mod:`.stored`); none of them
imports a backend.

- :mod:`.words`, :mod:`.wordlists`: what a word is (tokens, stop words, accent folding), for
  every backend and for promotion;
- :mod:`.documents`: the documents made from one note (three kinds: note, section,
  paragraph);
- :mod:`.lifecycle`: open, refresh, write, rebuild, swap and recovery, written once;
  :mod:`.scan` (the fast freshness check), :mod:`.locks` (the build lock, workers, leftovers),
  :mod:`.failures` (the errors of a failing disk);
- :mod:`.scope`: a view of an index whose searches leave a set of notes out
  (:class:`.scope.ScopedIndex`, over :meth:`Searcher.without`);
- :mod:`.whoosh` (default, embedded, pure Python) and :mod:`.tantivy` (the optional extra
  ``notes-memory[tantivy]``, a native library): each backend's own schema, analysis, scoring,
  files and workers. ``NOTES_BACKEND`` picks one (see :mod:`memory.config`); both keep their
  index in their own folder of the state directory, so switching back and forth never
  damages the other.

A new backend is one more folder: a subclass of :class:`.lifecycle.IndexLifecycle` whose
searcher is a :class:`Searcher`, named in :func:`make_index`, that passes
``tests/test_backend_conformance.py``.
"""

from __future__ import annotations

from memory.lazy_names import lazy_names

# The names below are imported on first use (as in memory/__init__.py): a module that needs
# only :mod:`.words` (the levers' registry, promotion's rules, so `notes --help`) then does
# not load the interface, the store and the token counter. Not `typing.TYPE_CHECKING`, which
# costs importing `typing`; type checkers treat this name the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memory.index.interface import (
        Notify,
        Observer,
        Progress,
        RefreshReport,
        Searcher,
        SearchIndex,
        WrittenNote,
        make_index,
    )
    from memory.index.query import ParsedQuery, parse_query, vagueness
    from memory.index.scope import ScopedIndex
    from memory.index.stored import Found, PartKind, SearchHit, StoredNote, StoredPart

_HOMES = {
    "memory.index.interface": ("Notify", "Observer", "Progress", "RefreshReport", "Searcher",
                               "SearchIndex", "WrittenNote", "make_index"),
    "memory.index.query": ("ParsedQuery", "parse_query", "vagueness"),
    "memory.index.scope": ("ScopedIndex",),
    "memory.index.stored": ("Found", "PartKind", "SearchHit", "StoredNote", "StoredPart"),
}

__all__ = ["Found", "Notify", "Observer", "ParsedQuery", "PartKind", "Progress",
           "RefreshReport", "ScopedIndex", "SearchHit", "SearchIndex", "Searcher", "StoredNote",
           "StoredPart", "WrittenNote", "make_index", "parse_query", "vagueness"]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
