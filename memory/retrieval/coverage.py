"""Line coverage: the ``coverage`` routing lever (issue #15 item 4).

BM25F scores a note by its words wherever they are, so a session that says "LGBTQ" in
twenty turns beats the one that says once "I went to an LGBTQ conference two days ago".
This lever re-ranks ``suggest``'s ``POOL`` best notes by their BM25F score over the best
one's plus ``SHARE`` times the note's *coverage*: the share of the message's stemmed words
(each weighed by its rarity among the candidates' lines) that its best single line holds.
The note whose one line holds the question's words together gains on one that holds them
scattered. It is what the ``block-route`` lever captures with two store-wide searches, read
here from the candidates' own text instead (the parsed notes the store keeps, and each
note's line terms, kept here by its content's digest), so it costs no search.

The message's words count in full, the conversation's at the context's weight (low, and
higher for a vaguer message, as in the search), so a message that names its topic is not
pulled back to the context's; a message with no words of its own is left in BM25F's order.
The n-th note keeps the n-th BM25F score, so the scores between notes keep BM25F's spread.
Figures: docs/benchmarks.md, "Sixth round".
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.index import ParsedQuery, SearchHit, StoredNote
from memory.index.whoosh.analysis import stem_term, stem_terms
from memory.retrieval.context import names

if TYPE_CHECKING:
    from memory.model.note import Note
    from memory.retrieval.ladder import Ladder

POOL = 10  # notes re-ranked: suggest's top ten
SHARE = 0.75  # the coverage's weight beside the BM25F score over the best note's
KEPT_NOTES = 1024  # notes whose line terms are kept (by content digest) ...
KEPT_CHARS = 16_000_000  # ... and the most characters of note text they stand for


@dataclass(frozen=True)
class LineTerms:
    """A note's stemmed terms: its names' (title and front matter), and for each term of
    its body the non-blank lines that hold it (numbered among those ``lines``), so a re-rank
    visits only the lines that hold an asked word."""

    title: str = ""
    names: frozenset[str] = frozenset()
    lines: int = 0
    where: Mapping[str, tuple[int, ...]] = field(default_factory=dict)


class LineCoverage:
    """Each note's line terms, kept by the digest of its content, and the re-rank."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], tuple[LineTerms, int]] = OrderedDict()
        self._kept_chars = 0  # the kept notes' characters, bounded by KEPT_CHARS
        self._lock = threading.Lock()

    def rerank(self, ladder: Ladder, parsed: ParsedQuery,
               hits: list[SearchHit[StoredNote]]) -> list[SearchHit[StoredNote]]:
        """``hits`` with their first ``POOL`` re-ranked by BM25F share plus ``SHARE`` times
        their coverage of the message's words; a note the message names (its title or file
        name, :func:`memory.retrieval.context.names`) covers it all, as its title is the
        line that says what the message asks for. Unchanged when the message has no
        words."""
        pool = hits[:POOL]
        own = {stem_term(word, exact): 1.0 for word, exact in parsed.words}
        if len(pool) < 2 or not own or pool[0].score <= 0:
            return hits
        factor = {stem_term(word, exact): parsed.context_weight
                  for word, exact in parsed.context} | own
        asked = frozenset(factor)
        lines = [self.line_terms(ladder, h.doc.note_id, h.doc.digest) for h in pool]
        weight = {t: w * factor[t] for t, w in rarity(lines, asked).items()}
        said = [exact for _, exact in parsed.words]
        top = pool[0].score
        mixed = [h.score / top + SHARE * (1.0 if names(said, note.title, h.doc.note_id)
                                          else coverage(note, asked, weight))
                 for h, note in zip(pool, lines, strict=True)]
        order = sorted(range(len(pool)), key=lambda i: (-mixed[i], i))
        scores = [h.score for h in pool]  # already best first
        return [dataclasses.replace(pool[i], score=score)
                for i, score in zip(order, scores, strict=True)] + hits[POOL:]

    def line_terms(self, ladder: Ladder, note_id: str, digest: str = "") -> LineTerms:
        """The stemmed terms of the note's names and of each non-blank line of its body;
        none for a note that cannot be read now. The last ``KEPT_NOTES`` notes'
        (``KEPT_CHARS`` of text at most; a note bigger is never kept) are kept by their
        content's digest, so an edited note is read anew; given the digest the index holds,
        a kept note is not even read."""
        kept = self._kept_terms((note_id, digest)) if digest else None
        if kept is not None:
            return kept
        try:
            loaded = ladder.load(note_id)
        except NotesError:
            return LineTerms()
        key = (note_id, loaded.digest)
        kept = self._kept_terms(key)
        if kept is not None:
            return kept
        found = note_lines(loaded.note)
        chars = len(loaded.note.text)
        if chars > KEPT_CHARS:
            return found
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (found, chars)
                self._kept_chars += chars
            while len(self._kept) > KEPT_NOTES or self._kept_chars > KEPT_CHARS:
                _, (_, old_chars) = self._kept.popitem(last=False)
                self._kept_chars -= old_chars
        return found

    def _kept_terms(self, key: tuple[str, str]) -> LineTerms | None:
        with self._lock:
            if key not in self._kept:
                return None
            self._kept.move_to_end(key)
            return self._kept[key][0]


def note_lines(note: Note) -> LineTerms:
    lines = note.text.splitlines()
    names = stem_terms(" ".join([note.title, *lines[:note.body_start]]))
    body = [line for line in lines[note.body_start:] if line.strip()]
    where: defaultdict[str, list[int]] = defaultdict(list)
    for number, line in enumerate(body):
        for term in stem_terms(line):
            where[term].append(number)
    return LineTerms(note.title, names, len(body),
                     {term: tuple(numbers) for term, numbers in where.items()})


def rarity(notes: list[LineTerms], asked: frozenset[str]) -> dict[str, float]:
    """Each asked term's weight: log(1 + lines / (1 + lines holding it)), over the body
    lines of the candidates only (a word in every line of them tells none from another;
    the names are left out, so the word a note is named for stays rare)."""
    count = sum(note.lines for note in notes)
    return {term: math.log(1 + count / (1 + sum(len(note.where.get(term, ()))
                                                for note in notes)))
            for term in asked}


def coverage(note: LineTerms, asked: frozenset[str], weight: dict[str, float]) -> float:
    """The weighted share of ``asked`` that the note's best line holds (0 to 1), each line
    read under the note's names: a note the message names keeps that word in every line
    ("Verifactu" beside "hash" in product/verifactu, whose Spanish lines never say both)."""
    total = sum(weight.values())
    if not note.lines or total <= 0:
        return 0.0
    named = note.names & asked
    held: defaultdict[int, float] = defaultdict(float)  # each line's asked terms' weight,
    for term in asked - named:                          # the names' left out
        for number in note.where.get(term, ()):
            held[number] += weight[term]
    return (sum(weight[t] for t in named) + max(held.values(), default=0.0)) / total
