"""The one error hierarchy of the notes store.

    NotesError                 every error the library raises on purpose
    ├── ConfigError            a setting that cannot be used (bad folder, bad value)
    ├── InvalidNoteId          a note id that is malformed or leaves the store
    ├── NoteNotFound           no note with that id (names the closest ids)
    ├── NoteExists             `new` on an id that is already taken
    ├── SectionNotFound        no section with that id (names the sections and their tokens)
    ├── AmbiguousSection       a prefix that matches several sections
    ├── NoteFormatError        a note too broken for the requested write
    │   └── NoteLostContent    the file lost what the store last knew of it (a save under way?)
    ├── NoteBusy               another program is writing the note right now; retry
    ├── InvalidArgument        an empty query, a limit out of range, a bad date
    │   └── EmptyInput         an empty state or entry body (a usage error: exit 2)
    ├── StorageError           the disk refused a write (full, read-only, no permission)
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


class NoteLostContent(NoteFormatError):
    """The note on disk lost its header, state, a section or history entries since the store
    last saw it: an editor may be saving it, or it was cut by hand. Nothing was written."""


class NoteBusy(NotesError):
    """Another program holds the note open for writing, or it kept changing while the store
    tried to write it. Nothing was written; retry in a moment."""


class InvalidArgument(NotesError):
    """An argument is out of range or empty."""


class EmptyInput(InvalidArgument):
    """A state or entry body that is empty or only whitespace (refused unless allowed)."""


class StorageError(NotesError):
    """The operating system refused a write: disk full, read-only, no permission."""


class IndexUnavailable(NotesError):
    """The search index cannot be used, even after trying to rebuild it."""
