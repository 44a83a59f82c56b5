"""A note-based memory store for coding agents.

The public API: build a :class:`Config` with :func:`load_config`, then ``Notes(config)`` gives
the ladder (``suggest``, ``section_map``, ``read_section``) and the writes (``create_note``,
``write_state``, ``append_history``).
"""

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
from memory.retrieval.ladder import MapRow, SectionMap, SectionText, SuggestHit, Suggestions

__all__ = [
    "AmbiguousSection", "Config", "ConfigError", "IndexUnavailable", "InvalidArgument",
    "InvalidNoteId", "MapRow", "Note", "NoteExists", "NoteFormatError", "NoteNotFound",
    "NoteSummary", "Notes", "NotesError", "Section", "SectionMap", "SectionNotFound",
    "SectionText", "SuggestHit", "Suggestions", "WriteResult", "load_config", "parse_note",
]
