"""Dense evidence: the semantic lever's line vectors, read block by block (issue #34, item 4).

The semantic lever (:mod:`memory.retrieval.semantic`) embeds every line of a note that holds
at least three words, and ``suggest`` re-ranks notes by their best line's cosine with the
message. Here the same vectors score **blocks** (the paragraphs and list items the index
holds): a block's cosine is its best line's. With the lever on, three readers use them
through :class:`DenseReader`:

- ``recall`` (:mod:`memory.retrieval.recall`): every block of the routed notes is a
  candidate, those the lexical ranking found and those that share no word with the message
  alike, and each gains ``BLOCK_WEIGHT`` times its cosine's place between the candidates'
  lowest and highest (0 to 1), so a reply that says in other words what was asked can join
  the answer;
- the section map (:meth:`DenseReader.evidence`): each block of the note adds that share of
  the note's best paragraph score (``MAP_WEIGHT``) to its paragraph evidence, so a section
  whose line says it in other words can be the best one;
- the bench's dense fragments curve (:meth:`DenseReader.dense_blocks`): the store's blocks
  ranked by cosine alone, the rival a user reaching for Mem0-style dense retrieval picks.

Only lines embedded as the semantic lever embeds them are scored: a block whose lines all
hold fewer than three words has no cosine. A note whose lines Python's ``splitlines`` counts
differently from the parser (a form feed, a line separator) is left unscored rather than
misread. numpy is imported with the lever only.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.index.words import words
from memory.model.text import split_lines
from memory.retrieval.semantic import MIN_WORDS

if TYPE_CHECKING:
    from memory.retrieval.section_scores import Evidence
    from memory.retrieval.semantic import SemanticRouter
    from memory.state.store import LoadedNote

BLOCK_WEIGHT = 1.0  # recall: a block's dense share (0..1) counts as much as its own score
MAP_WEIGHT = 1.0  # the map: a block's dense share of the note's best paragraph score
KEPT = 512  # notes' block vectors kept in memory


@dataclass(frozen=True)
class BlockVectors:
    """One note content's scored blocks and the vectors of their embedded lines."""

    blocks: tuple[tuple[str, int, int, int], ...]  # (section, number, start, end)
    starts: Any  # each block's first row in ``vectors`` (rows are in block order)
    vectors: Any  # float16, one row per embedded line of a scored block


class DenseReader:
    """Block vectors of note contents, kept by digest (``KEPT`` of them), read from the
    semantic router's line vectors."""

    def __init__(self, router: SemanticRouter) -> None:
        self.router = router
        self._kept: OrderedDict[str, BlockVectors | None] = OrderedDict()

    def block_vectors(self, loaded: LoadedNote) -> BlockVectors | None:
        """The note's blocks with the vectors of their lines (None: no vectors yet, or lines
        that cannot be matched with the embedded ones)."""
        if loaded.digest in self._kept:
            self._kept.move_to_end(loaded.digest)
            return self._kept[loaded.digest]
        vectors = self.router.vectors(loaded.digest)
        if vectors is None:
            self.router.tell_once("blocks", "notes: semantic-blocks is on but some routed "
                                  "notes have no vectors yet; their blocks stay lexical "
                                  "until `notes embed` has embedded the store")
            return None
        found = _block_vectors(loaded, vectors)
        self._kept[loaded.digest] = found
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return found

    def note_blocks(self, loaded: LoadedNote, asked: Any) -> list[DenseBlock]:
        """Every scored block of one note with its cosine (empty without vectors)."""
        found = self.block_vectors(loaded)
        if found is None:
            return []
        return [DenseBlock(loaded.note_id, s, n, a, b, float(c))
                for (s, n, a, b), c in zip(found.blocks, cosines(found, asked), strict=True)]

    def dense_blocks(self, notes: list[LoadedNote], asked: Any, k: int) -> list[DenseBlock]:
        """The ``k`` blocks of ``notes`` closest to the asked vector, best first (ties in
        note and file order)."""
        every = [b for loaded in notes for b in self.note_blocks(loaded, asked)]
        return sorted(every, key=lambda b: -b.cosine)[:k]

    def evidence(self, loaded: LoadedNote, query: str, evidence: Evidence) -> Evidence:
        """The map's evidence with each block's dense share of the note's best paragraph
        score added to that block's paragraph score (``MAP_WEIGHT``)."""
        from memory.retrieval.section_scores import Evidence

        found = self.note_blocks(loaded, self.router.query_vector(query))
        if not found:
            return evidence
        best = max(evidence.paragraphs.values(), default=0.0) or max(
            evidence.sections.values(), default=0.0) or 1.0
        paragraphs = dict(evidence.paragraphs)
        for block, share in zip(found, shares([b.cosine for b in found]), strict=True):
            key = (block.section, block.start)
            paragraphs[key] = paragraphs.get(key, 0.0) + MAP_WEIGHT * share * best
        return Evidence(evidence.sections, paragraphs)


def _block_vectors(loaded: LoadedNote, vectors: Any) -> BlockVectors | None:
    import numpy as np

    text = loaded.note.text
    lines = text.splitlines()
    if len(lines) != len(split_lines(text)):
        return None
    embedded = [i for i, line in enumerate(lines) if len(words(line)) >= MIN_WORDS]
    if vectors.shape[0] != len(embedded):
        return None
    row_of = {line: row for row, line in enumerate(embedded)}
    blocks: list[tuple[str, int, int, int]] = []
    rows: list[int] = []
    starts: list[int] = []
    for section in loaded.note.sections:
        child = next((s.start for s in loaded.note.sections if s.parent == section.id),
                     section.end)
        for number, block in enumerate(section.blocks, start=1):
            if block.start >= child:
                continue  # a child section indexes its own blocks
            own = [row_of[n] for n in range(block.start, block.end) if n in row_of]
            if own:
                starts.append(len(rows))
                rows.extend(own)
                blocks.append((section.id, number, block.start, block.end))
    return BlockVectors(tuple(blocks), np.array(starts, dtype=np.intp), vectors[rows])


def cosines(found: BlockVectors, asked: Any) -> Any:
    """Each block's best line's cosine with the asked vector."""
    import numpy as np

    if not found.blocks:
        return np.zeros(0, dtype=np.float32)
    by_line = found.vectors.astype(np.float32) @ asked.astype(np.float32)
    return np.maximum.reduceat(by_line, found.starts)


def shares(values: list[float]) -> list[float]:
    """Each cosine's place between the lowest and the highest of them, 0 to 1 (all 0 when
    they are equal): e5's cosines all lie near 0.8, so their spread, not their size, says
    which block is closer."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low < 1e-6:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


@dataclass(frozen=True)
class DenseBlock:
    note: str
    section: str
    number: int
    start: int
    end: int
    cosine: float
