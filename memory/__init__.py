"""A note-based memory store for coding agents.

The public API: build a :class:`Config` with :func:`load_config`, then ``Notes(config)`` gives
the ladder (``suggest``, ``section_map``, ``read_section``) and the writes (``create_note``,
``write_state``, ``append_history``).
"""

from .api import Notes
from .config import Config, load_config
from .errors import (
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
from .ladder import MapRow, SectionMap, SectionText, SuggestHit, Suggestions
from .note import Note, Section, parse_note
from .results import NoteSummary, WriteResult

__all__ = [
    "AmbiguousSection", "Config", "ConfigError", "IndexUnavailable", "InvalidArgument",
    "InvalidNoteId", "MapRow", "Note", "NoteExists", "NoteFormatError", "NoteNotFound",
    "NoteSummary", "Notes", "NotesError", "Section", "SectionMap", "SectionNotFound",
    "SectionText", "SuggestHit", "Suggestions", "WriteResult", "load_config", "parse_note",
]
