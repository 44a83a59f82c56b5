"""The dense fragments curve's index: every block vector of a bench's store in one matrix.

A bench asks for the store's closest blocks on every question (``dense@k``), over thousands
of notes (RealMem: 2,055 sessions). Reading each note's block vectors per question would parse
the notes again and again; here they are read once (:class:`memory.retrieval.dense.DenseReader`
from the semantic lever's line vectors) into one matrix of line vectors, with each block's
first row, so that a question costs one product and one ``maximum.reduceat``. Notes a question
may not see (its ``exclude_notes``) are masked out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory.errors import NotesError
from memory.retrieval.dense import DenseBlock

if TYPE_CHECKING:
    from memory.retrieval.ladder import Ladder


class DenseStore:
    """The block vectors of ``note_ids``' contents (notes with no vectors are left out)."""

    def __init__(self, ladder: Ladder, note_ids: list[str]) -> None:
        import numpy as np

        reader = ladder.dense()
        self.blocks: list[DenseBlock] = []
        parts: list[Any] = []
        starts: list[int] = []
        rows = 0
        for note_id in note_ids:
            try:
                loaded = ladder.store.load(note_id)
            except NotesError:
                continue
            found = reader.block_vectors(loaded)
            if found is None or not found.blocks:
                continue
            for (section, number, start, end), first in zip(found.blocks, found.starts,
                                                           strict=True):
                self.blocks.append(DenseBlock(note_id, section, number, start, end, 0.0))
                starts.append(rows + int(first))
            parts.append(found.vectors)
            rows += found.vectors.shape[0]
        self.matrix = np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 1))
        self.starts = np.array(starts, dtype=np.intp)
        self.notes = np.array([b.note for b in self.blocks], dtype=object)

    def closest(self, asked: Any, k: int, excluded: frozenset[str]) -> list[DenseBlock]:
        """The ``k`` blocks closest to ``asked``, best first (ties in store order), none of
        an ``excluded`` note."""
        import numpy as np

        if not self.blocks:
            return []
        scores = np.maximum.reduceat(self.matrix @ asked.astype(np.float32), self.starts)
        if excluded:
            scores[np.isin(self.notes, list(excluded))] = -np.inf
        order = np.argsort(-scores, kind="stable")[:k]
        return [DenseBlock(self.blocks[i].note, self.blocks[i].section, self.blocks[i].number,
                           self.blocks[i].start, self.blocks[i].end, float(scores[i]))
                for i in order if np.isfinite(scores[i])]
