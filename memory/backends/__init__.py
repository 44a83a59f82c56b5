"""Search index backends behind one small interface (:class:`.base.SearchIndex`).

- ``whoosh`` (default, embedded, pure Python): :class:`memory.index.NoteIndex`;
- ``tantivy`` (optional extra ``notes-memory[tantivy]``, a native library):
  :class:`memory.backends.tantivy_index.TantivyIndex`.

``NOTES_BACKEND`` picks one (see :mod:`memory.config`); both keep their index in their own
folder of the state directory, so switching back and forth never damages the other.
"""
