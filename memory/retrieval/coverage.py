"""Line coverage: the ``coverage`` routing lever (issue #15 item 4).

BM25F scores a note by its words wherever they are, so a session that says "LGBTQ" in
twenty turns beats the one that says once "I went to an LGBTQ conference two days ago".
This lever re-ranks ``suggest``'s ``POOL`` best notes by their BM25F score over the best
one's plus ``SHARE`` times the note's *coverage*: the share of the message's stemmed words
(each weighed by its rarity among the candidates' lines) that its best single line holds.
The note whose one line holds the question's words together gains on one that holds them
scattered. It is what the ``block-route`` lever captures with two store-wide searches, read
here from the candidates' own text instead, so it costs no search. Each note's line terms
are kept by its content's digest, in memory and in ``lines.sqlite`` in the state folder
(:mod:`memory.state.keyed_cache`: only a cache, never failing a call), and are made as the
index reads a note while the lever is on: stemming a note's lines costs a few milliseconds
(the Snowball stemmers are pure Python), which a cold CLI call or a server's first calls
would otherwise pay on every new candidate.

A question that asks *when* ("when did…", "¿cuándo…?") asks for a time as well: a line that
carries one ("yesterday", "last week", a date: :func:`memory.model.timeexpr.mentions_time`)
holds one more asked term, ``TIME``, weighed by its rarity among the candidates' lines like
any word (and asked only when some candidate's line carries a time). The section map and
``recall`` already lift what carries a time for such a question; without it here, a session
that says "since I lost my job" could pass the one that says "I lost my job this month"
(tenth round).

The message's words count in full, the conversation's at the context's weight (low, and
higher for a vaguer message, as in the search), so a message that names its topic is not
pulled back to the context's; a message with no words of its own is left in BM25F's order.
The n-th note keeps the n-th BM25F score, so the scores between notes keep BM25F's spread.
Figures: docs/benchmarks.md, "Sixth round", "Seventh round" (on by default) and "Tenth round"
(the time term).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.index import ParsedQuery, SearchHit, StoredNote
from memory.model.text import split_lines
from memory.model.timeexpr import asks_when, mentions_time
from memory.retrieval.context import names
from memory.state.keyed_cache import CacheShape, KeyedCache

if TYPE_CHECKING:
    from memory.model.note import Note
    from memory.retrieval.reader import Reader
    from memory.state.store import LoadedNote

POOL = 10  # notes re-ranked: suggest's top ten
SHARE = 0.75  # the coverage's weight beside the BM25F score over the best note's
KEPT_NOTES = 1024  # notes whose line terms are kept (by content digest) ...
KEPT_CHARS = 16_000_000  # ... and the most characters of note text they stand for
LINES_FILE = "lines.sqlite"
LINES_VERSION = "2"  # of what note_lines makes (the stemmer is named apart, by the index)
TIME = "\x00time"  # the term a line holds when it carries a time (no word stems to it)
FILE_BYTES = 128 << 20  # past this the file is started anew
FLUSH_EVERY = 64  # line terms made before they are written to the file
SHAPE = CacheShape(table="lines", column="terms", sql_type="TEXT",
                   label="line-terms cache", kept="line terms")


@dataclass(frozen=True)
class LineTerms:
    """A note's stemmed terms: its names' (title and front matter), and for each term of
    its body the non-blank lines that hold it (numbered among those ``lines``), so a re-rank
    visits only the lines that hold an asked word."""

    title: str = ""
    names: frozenset[str] = frozenset()
    lines: int = 0
    where: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    chars: int = 0  # of the note's text, for the bound on what is kept in memory


class LineCoverage:
    """Each note's line terms, kept by the digest of its content, and the re-rank.
    ``stem``: the index's stemmed terms of a text (:meth:`SearchIndex.stem_terms`), named
    by ``stemming``; ``cache_file``: where line terms are kept between processes (none: in
    memory only)."""

    def __init__(self, stem: Callable[[str], frozenset[str]], stemming: str,
                 cache_file: Path | None = None) -> None:
        self._stem, self._stemming = stem, stemming
        self._kept: OrderedDict[tuple[str, str], tuple[LineTerms, int]] = OrderedDict()
        self._kept_chars = 0  # the kept notes' characters, bounded by KEPT_CHARS
        self._lock = threading.Lock()
        self._file = KeyedCache(cache_file, SHAPE, FILE_BYTES) if cache_file else None

    def rerank(self, reader: Reader, parsed: ParsedQuery,
               hits: list[SearchHit[StoredNote]]) -> list[SearchHit[StoredNote]]:
        """``hits`` with their first ``POOL`` re-ranked by BM25F share plus ``SHARE`` times
        their coverage of the message's words; a note the message names (its title or file
        name, :func:`memory.retrieval.context.names`) covers it all, as its title is the
        line that says what the message asks for; a "when" question asks for ``TIME`` as
        well. Unchanged when the message has no words."""
        pool = hits[:POOL]
        own = {self._term(word, exact): 1.0 for word, exact in parsed.words}
        if len(pool) < 2 or not own or pool[0].score <= 0:
            return hits
        lines = [self.line_terms(reader, h.doc.note_id, h.doc.digest) for h in pool]
        if asks_when(parsed.text) and any(TIME in note.where for note in lines):
            own[TIME] = 1.0  # (asked of candidates none of which says a time, it is a
            # word no line holds: it would only shrink every note's coverage alike)
        factor = {self._term(word, exact): parsed.context_weight
                  for word, exact in parsed.context} | own
        asked = frozenset(factor)
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

    def _term(self, word: str, exact: str) -> str:
        """A message word's stemmed term (its exact term when stemming leaves none)."""
        stems = self._stem(word)
        return min(stems) if stems else exact

    def line_terms(self, reader: Reader, note_id: str, digest: str = "") -> LineTerms:
        """The stemmed terms of the note's names and of each non-blank line of its body;
        none for a note that cannot be read now. Given the digest the index holds, terms
        kept (in memory, else in the file) are used without reading the note; otherwise
        the note is read and its terms looked up by its content's digest, so an edited note
        is never taken for its old text."""
        kept = self._known(note_id, digest) if digest else None
        if kept is not None:
            return kept
        try:
            loaded = reader.load(note_id)
        except NotesError:
            return LineTerms()
        if loaded.digest == digest:  # looked up already: the note's text is new to both
            return self._make(loaded)
        return self.learn(loaded)

    def learn(self, loaded: LoadedNote) -> LineTerms:
        """The line terms of a note just read: the kept ones for its content, else made
        now and kept (in memory: the last ``KEPT_NOTES`` notes, ``KEPT_CHARS`` of text at
        most, a note bigger never; and in the file)."""
        kept = self._known(loaded.note_id, loaded.digest)
        return kept if kept is not None else self._make(loaded)

    def _known(self, note_id: str, digest: str) -> LineTerms | None:
        return self._kept_terms((note_id, digest)) or self._filed(note_id, digest)

    def _make(self, loaded: LoadedNote) -> LineTerms:
        key = (loaded.note_id, loaded.digest)
        found = note_lines(loaded.note, self._stem)
        if self._file is not None:
            self._file.add(self._file_key(*key), encode(found))
            if self._file.pending >= FLUSH_EVERY:
                self._file.flush()
        self._keep(key, found, len(loaded.note.text))
        return found

    def learn_all(self, loaded: list[LoadedNote]) -> None:
        """Make and keep the line terms of notes the index has just read."""
        for note in loaded:
            self.learn(note)
        self.flush()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _filed(self, note_id: str, digest: str) -> LineTerms | None:
        """The terms the file keeps for this content (now kept in memory too), or None."""
        if self._file is None:
            return None
        found = decode(self._file.lookup(self._file_key(note_id, digest)))
        if found is not None:
            self._keep((note_id, digest), found, found.chars)
        return found

    def _file_key(self, note_id: str, digest: str) -> str:
        return f"{LINES_VERSION}:{self._stemming}:{note_id}:{digest}"

    def _keep(self, key: tuple[str, str], found: LineTerms, chars: int) -> None:
        if chars > KEPT_CHARS:
            return
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (found, chars)
                self._kept_chars += chars
            while len(self._kept) > KEPT_NOTES or self._kept_chars > KEPT_CHARS:
                _, (_, old_chars) = self._kept.popitem(last=False)
                self._kept_chars -= old_chars

    def _kept_terms(self, key: tuple[str, str]) -> LineTerms | None:
        with self._lock:
            if key not in self._kept:
                return None
            self._kept.move_to_end(key)
            return self._kept[key][0]


def note_lines(note: Note, stem: Callable[[str], frozenset[str]]) -> LineTerms:
    """The note's line terms, stemmed by ``stem``; a line that carries a time holds
    ``TIME`` too. A hostile note is read up to where the index stops reading it
    (``Note.bounded_at``): stemming the rest would cost what the bound saves."""
    # split as the parser splits, so that body_start and bounded_at count the same lines
    lines = [line.rstrip("\r\n") for line in split_lines(note.text)]
    names = stem(" ".join([note.title, *lines[:note.body_start]]))
    body = [line for line in lines[note.body_start:note.bounded_at] if line.strip()]
    where: defaultdict[str, list[int]] = defaultdict(list)
    for number, line in enumerate(body):
        for term in stem(line):
            where[term].append(number)
        if mentions_time(line):
            where[TIME].append(number)
    return LineTerms(note.title, names, len(body),
                     {term: tuple(numbers) for term, numbers in where.items()},
                     len(note.text))


def encode(terms: LineTerms) -> str:
    return json.dumps({"title": terms.title, "names": sorted(terms.names),
                       "lines": terms.lines, "where": terms.where, "chars": terms.chars},
                      ensure_ascii=False, separators=(",", ":"))


def decode(value: object) -> LineTerms | None:
    """Line terms read back from the file; None for anything :func:`encode` did not write
    (a damaged or foreign value: the note's terms are then made again)."""
    if not isinstance(value, str):
        return None
    try:
        data = json.loads(value)
        title, names, lines = data["title"], data["names"], data["lines"]
        where, chars = data["where"], data["chars"]
    except (ValueError, TypeError, KeyError):
        return None
    if not (isinstance(title, str) and isinstance(names, list) and isinstance(where, dict)
            and type(lines) is int and type(chars) is int and lines >= 0 and chars >= 0
            and all(isinstance(n, str) for n in names)
            and all(isinstance(numbers, list)
                    and all(type(n) is int and 0 <= n < lines for n in numbers)
                    for numbers in where.values())):
        return None
    return LineTerms(title, frozenset(names), lines,
                     {term: tuple(numbers) for term, numbers in where.items()}, chars)


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
