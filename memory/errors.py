"""The one error hierarchy of the notes store.

    NotesError                 every error the library raises on purpose
    ├── ConfigError            a setting that cannot be used (bad folder, bad value)
    ├── InvalidNoteId          a note id that is malformed or leaves the store
    ├── NoteNotFound           no note with that id (names the closest ids)
    ├── NoteExists             `new` on an id that is already taken
    ├── SectionNotFound        no section with that id (names the sections and their tokens)
    ├── AmbiguousSection       a prefix that matches several sections
    ├── NoteFormatError        a note too broken for the requested write
    ├── InvalidArgument        an empty query, a limit out of range, a bad date
    └── IndexUnavailable       the index cannot be opened or written even after a rebuild

Front ends translate these at the edge: the CLI prints ``Error: …`` on stderr and exits 1,
the MCP server raises a tool error. Every message names the next step.
"""

from __future__ import annotations


class NotesError(Exception):
    """Base class of every error the notes store raises on purpose."""


class ConfigError(NotesError):
    """A configuration value cannot be used."""


class InvalidNoteId(NotesError):
    """A note id is malformed or points outside the store."""


class NoteNotFound(NotesError):
    """No note has that id."""


class NoteExists(NotesError):
    """A note with that id already exists."""


class SectionNotFound(NotesError):
    """The note has no section with that id."""


class AmbiguousSection(NotesError):
    """A section prefix matches more than one section."""


class NoteFormatError(NotesError):
    """The note is too malformed for the requested change."""


class InvalidArgument(NotesError):
    """An argument is out of range or empty."""


class IndexUnavailable(NotesError):
    """The search index cannot be used, even after trying to rebuild it."""
