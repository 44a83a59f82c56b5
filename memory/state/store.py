"""The notes on disk: find, confine and read note files; their locks and snapshots.

Note ids are relative paths without ``.md`` (``infra/search``); every id is checked before
it becomes a path, so nothing reads or writes outside the store. What writes a note is
:mod:`memory.state.commit`, the one write path: under the per-note lock file kept in the
state folder (:meth:`Store.locked`), a compare-and-swap against the :meth:`Store.snapshot`
the change was computed from.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING

from memory.config import Config
from memory.errors import InvalidNoteId, NoteNotFound
from memory.model.text import excerpt
from memory.state.safe_files import Snapshot, read_snapshot
from memory.state.storage_errors import storage_error

if TYPE_CHECKING:  # the parser is imported when a note is first read (see load_bytes)
    from memory.model.front_matter import Problem
    from memory.model.note import Note

_MAX_ID_LENGTH = 200
_MAX_PART_BYTES = 200  # a file name holds 255 bytes; ".md" and a writer's temp name need room
_COMPONENT = re.compile(r"^[\w][\w\-. ]*$")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
             *(f"lpt{i}" for i in range(10))}
_BINARY_SNIFF = 8192
PARSED_NOTES = 256  # parsed notes a store keeps, by their bytes' hash (recall reads dozens)
PARSED_BYTES = 16_000_000  # ... and the most bytes of note text it keeps parsed


@dataclass(frozen=True)
class NoteFile:
    """A note's file as found on disk (before reading it)."""

    note_id: str
    path: Path
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class LoadedNote:
    """A note read from disk: the parsed note plus read-level problems and its hash."""

    note_id: str
    path: Path
    note: Note
    digest: str
    problems: tuple[Problem, ...]
    indexable: bool = True
    size: int | None = None  # the file's size when it was read (None: not read from a file)


class Store:
    """The notes folder of one configuration."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = config.notes_dir
        self._real_root = Path(os.path.realpath(self.root))
        self._state = Path(os.path.realpath(config.state_dir))  # never taken for notes
        self._parsed: OrderedDict[tuple[str, str, int, int, str], LoadedNote] = OrderedDict()
        self._parsed_bytes = 0  # the kept notes' bytes, bounded by PARSED_BYTES
        self._parsed_lock = threading.Lock()

    # -- ids and paths ---------------------------------------------------------------
    def path_for(self, note_id: str) -> Path:
        """The file of a note id, refusing any id that is malformed or leaves the store."""
        clean = validate_note_id(note_id)
        path = self.root / f"{clean}.md"
        self._confine(path, note_id)
        return path

    def _confine(self, path: Path, note_id: str) -> None:
        real = Path(os.path.realpath(path))
        if real != self._real_root and self._real_root not in real.parents:
            raise InvalidNoteId(f"note id {excerpt(note_id, 80)} leads outside the store "
                                "(through a symbolic link); use an id of a note inside the "
                                "notes folder")

    def exists(self, note_id: str) -> bool:
        return self.path_for(note_id).is_file()

    def note_id_of(self, note_id: str) -> str:
        """The note a name means: the id itself, or, for a file (or folder) that is a
        symbolic link to another note of the store, that note's id (one note, two names:
        a write goes to the note the link points to, and the link stays a link)."""
        clean = validate_note_id(note_id)
        path = self.path_for(clean)
        real = Path(os.path.realpath(path))
        if real == self._real_root / f"{clean}.md":
            return clean
        target = real.relative_to(self._real_root)
        if target.suffix != ".md" or target.name.startswith("."):
            raise InvalidNoteId(f"note {excerpt(note_id, 80)} is a symbolic link to "
                                f"{target.as_posix()}, which is not a note; write to a note "
                                "of the store, or replace the link by a note")
        return validate_note_id(target.with_suffix("").as_posix())

    # -- discovery -------------------------------------------------------------------
    def files(self) -> list[NoteFile]:
        """Every note file under the root, hidden folders, escaping links and what is no
        regular file (a named pipe, a socket, a device) left out."""
        found: list[NoteFile] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if self._searched(dirpath, d))
            for name in sorted(filenames):
                if name.endswith(".md") and not name.startswith("."):
                    entry = self._note_file(Path(dirpath) / name)
                    if entry is not None:
                        found.append(entry)
        return found

    def _searched(self, parent: str, name: str) -> bool:
        """Sub-folders that may hold notes: not hidden, not the state folder."""
        return not name.startswith(".") and Path(os.path.realpath(
            os.path.join(parent, name))) != self._state

    def _note_file(self, path: Path) -> NoteFile | None:
        rel = path.relative_to(self.root).with_suffix("").as_posix()
        real = Path(os.path.realpath(path))
        if self._real_root not in real.parents:
            return None
        if real != self._real_root / path.relative_to(self.root) and real.suffix == ".md":
            return None  # a second name of a note of the store: indexed under its own name
        try:
            stat = path.stat()
        except OSError:
            return None
        if not S_ISREG(stat.st_mode):  # a named pipe would block every read of it for good
            return None
        return NoteFile(rel, path, stat.st_mtime_ns, stat.st_size)

    def escaping_links(self) -> list[Path]:
        """Note-like files that are symbolic links leading out of the store (for `check`)."""
        return [path for path, real in self._links() if self._real_root not in real.parents]

    def inner_links(self) -> list[tuple[Path, Path]]:
        """Note files that are symbolic links to another file of the store, and that file
        (for `check`: one note, two names)."""
        return [(path, real) for path, real in self._links() if self._real_root in
                real.parents]

    def _links(self) -> list[tuple[Path, Path]]:
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if self._searched(dirpath, d)]
            for name in filenames:
                path = Path(dirpath) / name
                if not name.endswith(".md"):
                    continue
                real = Path(os.path.realpath(path))
                if real != self._real_root / path.relative_to(self.root):
                    out.append((path, real))
        return out

    def note_ids(self) -> list[str]:
        return [f.note_id for f in self.files()]

    # -- reading ---------------------------------------------------------------------
    def load(self, note_id: str) -> LoadedNote:
        """Read and parse one note; raises NoteNotFound with the closest ids."""
        path = self.path_for(note_id)
        if not path.is_file():
            raise NoteNotFound(missing_note_message(note_id, self.note_ids()))
        return self.load_path(validate_note_id(note_id), path)

    def read_head(self, note_id: str) -> bytes:
        """The note's file as far as it is parsed and indexed (``max_note_bytes``), unparsed:
        for a reader that needs a few indexed lines and not the note model (the hook)."""
        return _read_head(self.path_for(note_id), self.config.max_note_bytes)

    def load_path(self, note_id: str, path: Path) -> LoadedNote:
        raw = path.read_bytes() if path.stat().st_size <= self.config.max_note_bytes \
            else _read_head(path, self.config.max_note_bytes)
        return self.load_bytes(note_id, path, raw, path.stat().st_size)

    def load_bytes(self, note_id: str, path: Path, raw: bytes, size: int,
                   parsed: Note | None = None) -> LoadedNote:
        """The note parsed from ``raw``; the same bytes parsed a moment ago are not parsed
        again (the last ``PARSED_NOTES`` notes, ``PARSED_BYTES`` at most, are kept by their
        hash, so an edited file, whatever its time stamps say, is always parsed anew).
        ``parsed``: those bytes parsed already (a write's edit), taken when it was parsed
        as the store parses that note."""
        digest = hashlib.sha256(raw).hexdigest()
        key = (note_id, str(path), size, len(raw), digest)  # size: the too-large problem
        with self._parsed_lock:
            if key in self._parsed:
                self._parsed.move_to_end(key)
                return self._parsed[key]
        loaded = self._parse(note_id, path, raw, size, digest, parsed)
        if len(raw) > PARSED_BYTES:
            return loaded
        with self._parsed_lock:
            if key not in self._parsed:
                self._parsed[key] = loaded
                self._parsed_bytes += len(raw)
            while len(self._parsed) > PARSED_NOTES or self._parsed_bytes > PARSED_BYTES:
                old_key, _ = self._parsed.popitem(last=False)
                self._parsed_bytes -= old_key[3]
        return loaded

    def written(self, note_id: str, path: Path, text: str,
                parsed: Note | None = None) -> LoadedNote:
        """A note as a write has just put ``text`` in its file, from the write's own parse
        (``parsed``) when it has one: kept as if read back, so that the next read of the
        same bytes parses nothing."""
        raw = text.encode("utf-8")
        return self.load_bytes(note_id, path, raw, len(raw), parsed)

    def _parse(self, note_id: str, path: Path, raw: bytes, size: int,
               digest: str, parsed: Note | None = None) -> LoadedNote:
        from memory.model.front_matter import Problem  # here: a search reads no note
        from memory.model.note import parse_note

        problems: list[Problem] = []
        if size > self.config.max_note_bytes:
            problems.append(Problem(1, "too-large", f"file is {size:,} bytes, over the limit "
                                    f"of {self.config.max_note_bytes:,}; only the start is "
                                    "indexed: split it into smaller notes"))
        if b"\x00" in raw[:_BINARY_SNIFF]:
            problems.append(Problem(1, "binary", "file holds binary data (NUL bytes), not "
                                    "Markdown; move it out of the notes folder"))
            empty = parse_note("", fallback_title=note_id)
            return LoadedNote(note_id, path, empty, digest, tuple(problems), indexable=False,
                              size=size)
        text = _decode(raw, problems)
        fallback = note_id.split("/")[-1]
        names = (self.config.state_headings, self.config.history_headings)
        if parsed is not None and (parsed.text, parsed.fallback, parsed.names) == (
                text, fallback, names):
            note = parsed
        else:
            note = parse_note(text, fallback_title=fallback, state_headings=names[0],
                              history_headings=names[1])
        if not raw.strip():
            problems.append(Problem(1, "empty", "file is empty; write a title, a state "
                                    "and a history, or delete it"))
        return LoadedNote(note_id, path, note, digest, tuple(problems) + note.problems,
                          size=size)

    # -- writing ---------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, note_id: str) -> Iterator[Path]:
        """Hold the per-note write lock (across processes) while a change is made."""
        path = self.path_for(note_id)
        lock_dir = self.config.state_dir / "locks"
        digest = hashlib.sha1(validate_note_id(note_id).encode()).hexdigest()
        try:
            lock_dir.mkdir(parents=True, exist_ok=True)
            handle = open(lock_dir / f"{digest}.lock", "a+b")  # noqa: SIM115
        except OSError as exc:
            raise storage_error(exc, f"take the write lock in {lock_dir}") from exc
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield path
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def snapshot(self, note_id: str, path: Path) -> tuple[LoadedNote, Snapshot]:
        """Read a note for a change: the parsed note and what its file was (to compare just
        before the new text replaces it)."""
        try:
            snap = read_snapshot(path, limit=self.config.max_note_bytes)
        except FileNotFoundError:
            raise NoteNotFound(missing_note_message(note_id, self.note_ids())) from None
        except OSError as exc:
            raise storage_error(exc, f"read {path}") from exc
        return self.load_bytes(note_id, path, snap.raw, snap.size), snap


def validate_note_id(note_id: object) -> str:
    """Return the canonical note id or raise InvalidNoteId with what is wrong."""
    if not isinstance(note_id, str) or not note_id.strip():
        raise InvalidNoteId("note id is empty; give a note id such as 'infra/search' "
                            "(run `notes list` to see them)")
    clean = note_id.strip().removesuffix(".md")
    _refuse(clean, note_id)
    return clean


def _refuse(clean: str, original: str) -> None:
    def fail(why: str) -> None:
        raise InvalidNoteId(f"note id {original[:80]!r} is not allowed: {why}; use a "
                            "relative id such as 'infra/search' (run `notes list`)")

    if len(clean) > _MAX_ID_LENGTH:
        fail(f"longer than {_MAX_ID_LENGTH} characters")
    if any(unicodedata.category(c)[0] == "C" for c in clean):
        fail("it contains control or invisible characters")
    if unicodedata.normalize("NFC", clean) != clean:
        fail("it is not in Unicode normal form (NFC)")
    if clean.startswith("/") or "\\" in clean or re.match(r"^[A-Za-z]:", clean):
        fail("absolute paths and backslashes are refused")
    for part in clean.split("/"):
        if part in ("", ".", ".."):
            fail("empty, '.' and '..' path parts are refused")
        if not _COMPONENT.match(part) or part.endswith((" ", ".")):
            fail(f"the part {part[:40]!r} must start with a letter or digit and hold only "
                 "letters, digits, '-', '_', '.' and spaces")
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > _MAX_PART_BYTES:
            fail(f"the part {part[:20]!r}… is {size} bytes long in UTF-8, over the "
                 f"{_MAX_PART_BYTES} a file name can hold here; use a shorter id")
        if part.split(".")[0].casefold() in _RESERVED:
            fail(f"{part!r} is a reserved device name")


def missing_note_message(note_id: str, known: list[str]) -> str:
    close = closest_ids(note_id, known)
    hint = f"closest: {', '.join(close)}" if close else "run `notes list` to see the notes"
    return f"no note {excerpt(note_id, 80)}; {hint}"


def closest_ids(wanted: str, known: list[str], limit: int = 5) -> list[str]:
    lowered = {k.casefold(): k for k in known}
    tail_matches = [k for k in known if k.split("/")[-1].casefold() == wanted.casefold()
                    .split("/")[-1]]
    import difflib  # here: only a missing note needs it

    fuzzy = difflib.get_close_matches(wanted.casefold(), list(lowered), n=limit, cutoff=0.5)
    ordered = tail_matches + [lowered[f] for f in fuzzy]
    return list(dict.fromkeys(ordered))[:limit]


def _decode(raw: bytes, problems: list[Problem]) -> str:
    from memory.model.front_matter import Problem

    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(Problem(line, "not-utf8", f"bytes that are not UTF-8 at line {line} "
                                "(replaced by U+FFFD when indexing); re-save the file as UTF-8"))
        return raw.decode("utf-8", errors="replace")


def _read_head(path: Path, limit: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(limit)


class CachingStore(Store):
    """A store whose notes do not change while it is read (a bench): each note is read and
    parsed once, and the last ``size`` of them are kept."""

    def __init__(self, config: Config, size: int = 512) -> None:
        super().__init__(config)
        self._cache: OrderedDict[str, LoadedNote] = OrderedDict()
        self._size = size

    def load(self, note_id: str) -> LoadedNote:
        found = self._cache.get(note_id)
        if found is None:
            found = super().load(note_id)
            self._cache[note_id] = found
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(note_id)
        return found
