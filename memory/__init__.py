"""A note-based memory store for coding agents.

The public API: build a :class:`Config` with :func:`load_config`, then ``Notes(config)`` gives
the ladder (``suggest``, ``section_map``, ``read_section``) and the writes (``create_note``,
``write_state``, ``append_history``).

The names below are imported on first use, so that importing one small module of the package
(the prompt hook's entry, :mod:`memory.config`) does not load the index and the parsers.
"""

from __future__ import annotations

from memory.lazy_names import lazy_names

# Not `typing.TYPE_CHECKING`: importing `typing` costs a prompt hook answered by the server a
# tenth of its time; type checkers treat this name the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memory.api import Notes
    from memory.config import Config, load_config
    from memory.errors import (
        AmbiguousSection,
        ConfigError,
        IndexUnavailable,
        InvalidArgument,
        InvalidNoteId,
        NoteExists,
        NoteFormatError,
        NoteNotFound,
        NotesError,
        SectionNotFound,
    )
    from memory.model.note import Note, Section, parse_note
    from memory.model.results import NoteSummary, WriteResult
    from memory.retrieval.results import MapRow, SectionMap, SectionText, SuggestHit, Suggestions

_HOMES = {
    "memory.api": ("Notes",),
    "memory.config": ("Config", "load_config"),
    "memory.errors": ("AmbiguousSection", "ConfigError", "IndexUnavailable", "InvalidArgument",
                      "InvalidNoteId", "NoteExists", "NoteFormatError", "NoteNotFound",
                      "NotesError", "SectionNotFound"),
    "memory.model.note": ("Note", "Section", "parse_note"),
    "memory.model.results": ("NoteSummary", "WriteResult"),
    "memory.retrieval.ladder": ("MapRow", "SectionMap", "SectionText", "SuggestHit",
                                "Suggestions"),
}

__all__ = [
    "AmbiguousSection", "Config", "ConfigError", "IndexUnavailable", "InvalidArgument",
    "InvalidNoteId", "MapRow", "Note", "NoteExists", "NoteFormatError", "NoteNotFound",
    "NoteSummary", "Notes", "NotesError", "Section", "SectionMap", "SectionNotFound",
    "SectionText", "SuggestHit", "Suggestions", "WriteResult", "load_config", "parse_note",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
