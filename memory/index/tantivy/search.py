"""Searching the tantivy indexes: the same query semantics as Whoosh's
(:mod:`memory.index.whoosh.search`).

A query is never parsed as syntax: each word of the :class:`ParsedQuery` goes through the
tantivy analyzers (so its terms are the index's) and becomes term queries OR-ed over the
kind's exact fields and its stemmed field, each boosted by the field's boost; context words
join with their low weight. A note filter is a zero-scored required clause, so it never adds
to a score; a scope's excluded notes are a must-not clause. Matched words are found by
asking which of the hits hold each word, twenty words a search (each word's clause scores
its own bit, :func:`_matched_words`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import tantivy

from memory.index.documents import KIND_FIELDS, STEM_BOOST, STEM_FIELD
from memory.index.query import ParsedQuery
from memory.index.stored import (
    Found,
    PartKind,
    SearchHit,
    StoredNote,
    StoredPart,
    settle_ties,
    tied_reach,
)
from memory.index.tantivy import schema as ts
from memory.index.words import base_forms

Word = tuple[str, list[str], list[str], float]  # word, exact terms, stem terms, weight


class TantivySearcher:
    """One point-in-time view of the three kind indexes: this backend's
    :class:`memory.index.interface.Searcher`; with ``excluded`` notes (a scope,
    :meth:`without`), a view that leaves them out."""

    def __init__(self, searchers: dict[str, Any], excluded: frozenset[str] = frozenset()
                 ) -> None:
        self.searchers = searchers
        self.excluded = excluded

    def without(self, note_ids: frozenset[str]) -> TantivySearcher:
        return TantivySearcher(self.searchers, self.excluded | note_ids)

    # -- stored documents ------------------------------------------------------------
    def stored_note(self, note_id: str) -> StoredNote | None:
        if note_id in self.excluded:
            return None
        found = next(self.documents("note", note_id), None)
        return StoredNote.of(found) if found is not None else None

    def stored_notes(self) -> list[StoredNote]:
        return [StoredNote.of(d) for d in self.documents("note")
                if d.get("note_id") not in self.excluded]

    def documents(self, kind: str, note_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Stored fields of every document of a kind (optionally of one note)."""
        searcher = self.searchers[kind]
        query = tantivy.Query.all_query() if note_id is None else tantivy.Query.term_query(
            ts.schema(kind), "note_id", note_id, index_option="basic")
        total = searcher.num_docs
        if not total:
            return
        for _score, address in searcher.search(query, total, count=False).hits:
            yield ts.stored_fields(searcher.doc(address))

    # -- search ----------------------------------------------------------------------
    def search_notes(self, parsed: ParsedQuery, limit: int | None) -> Found[StoredNote]:
        hits, total = self._search(parsed, "note", limit, None)
        return [SearchHit(f.as_note(), score, m) for f, score, m in hits], total

    def search_parts(self, parsed: ParsedQuery, kind: PartKind, limit: int | None,
                     note_id: str | None = None) -> Found[StoredPart]:
        hits, total = self._search(parsed, kind, limit, note_id)
        return [SearchHit(f.as_part(), score, m) for f, score, m in hits], total

    def _search(self, parsed: ParsedQuery, kind: str, limit: int | None,
                note_id: str | None) -> tuple[list[tuple[Stored, float, tuple[str, ...]]],
                                              int]:
        if (not parsed.words and not parsed.context) or note_id in self.excluded:
            return [], 0
        words = analyzed_words(parsed)
        if not words:
            return [], 0
        searcher, schema = self.searchers[kind], ts.schema(kind)
        query = _scoped(schema, _or_query(schema, kind, words), note_id,
                        self.excluded if note_id is None else frozenset())
        # One hit past the limit tells whether the cut falls in a tie; only then is more
        # fetched (tied_reach reaching the last hit fetched), until the tie ends.
        size = limit + 1 if limit is not None else max(1, searcher.num_docs)
        result = searcher.search(query, size, count=True)
        reach = tied_reach([score for score, _ in result.hits], limit)
        while reach == size < searcher.num_docs:
            size = min(2 * size, searcher.num_docs)
            result = searcher.search(query, size, count=True)
            reach = tied_reach([score for score, _ in result.hits], limit)
        stored = [(score, address, _stored(ts.stored_bytes(searcher.doc(address))))
                  for score, address in result.hits[:reach]]
        matched = _matched_words(searcher, schema, kind, words,
                                 {_key(a): str(f["id"]) for _, a, f in stored})
        hits = [(fields, float(score), tuple(matched.get(_key(address), ())))
                for score, address, fields in stored]  # words in query order
        return settle_ties(hits, limit), int(result.count or 0)


class Stored(dict[str, Any]):
    """A hit's stored fields (:func:`memory.index.tantivy.schema.stored_fields`), and the
    note or part they make, made once: a document's fields are read back from its stored
    bytes, the same bytes give the same fields, and the long questions of a bench find the
    same few thousand documents again and again. Read only (several hits share it)."""

    __slots__ = ("note", "part")

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.note: StoredNote | None = None
        self.part: StoredPart | None = None

    def as_note(self) -> StoredNote:
        if self.note is None:
            self.note = StoredNote.of(self)
        return self.note

    def as_part(self) -> StoredPart:
        if self.part is None:
            self.part = StoredPart.of(self)
        return self.part


@lru_cache(maxsize=8192)
def _stored(raw: bytes) -> Stored:
    return Stored(ts.stored_values(raw))


def analyzed_words(parsed: ParsedQuery) -> list[Word]:
    """Each query (then context) word with its tantivy terms and weight; words that analyze
    to nothing (stop words) are left out, as in :func:`memory.index.words.query_words`."""
    out: list[Word] = []
    seen: set[str] = set()
    for (word, _exact), weight in parsed.weighted():
        exact, stem = _terms(word)
        if not exact or word in seen:
            continue
        seen.add(word)
        out.append((word, list(exact), list(stem), weight))
    return out


@lru_cache(maxsize=8192)
def _terms(word: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A word's exact terms, and its stemmed terms (its exact terms when stemming leaves
    none), by the tantivy analyzers: a word is analyzed once, not at each search."""
    exact = tuple(ts.exact_analyzer().analyze(word))
    return exact, tuple(ts.stem_analyzer().analyze(base_forms(word))) or exact


def _word_query(schema: Any, kind: str, word: Word, with_boosts: bool = True) -> list[Any]:
    _word, exact, stem, weight = word
    parts = []
    for name, boost in KIND_FIELDS[kind].items():
        parts += [_boosted(_term(schema, name, term), boost * weight, with_boosts)
                  for term in exact]
    parts += [_boosted(_term(schema, STEM_FIELD[kind], term), STEM_BOOST * weight, with_boosts)
              for term in stem]
    return parts


def _term(schema: Any, field: str, term: str) -> Any:
    return tantivy.Query.term_query(schema, field, term, index_option="freq")


def _boosted(query: Any, boost: float, apply: bool) -> Any:
    return tantivy.Query.boost_query(query, boost) if apply and boost != 1.0 else query


def _or_query(schema: Any, kind: str, words: list[Word]) -> Any:
    parts = [part for word in words for part in _word_query(schema, kind, word)]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, p) for p in parts])


def _scoped(schema: Any, query: Any, note_id: str | None,
            excluded: frozenset[str] = frozenset()) -> Any:
    """``query`` inside one note (a zero-scored required clause), or without the excluded
    notes (a must-not clause, which scores nothing): the scores are the query's."""
    if note_id is None and not excluded:
        return query
    clauses = [(tantivy.Occur.Must, query)]
    if note_id is not None:
        clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(
            tantivy.Query.term_query(schema, "note_id", note_id, index_option="basic"), 0.0)))
    if excluded:
        clauses.append((tantivy.Occur.MustNot, tantivy.Query.term_set_query(
            schema, "note_id", sorted(excluded))))
    return tantivy.Query.boolean_query(clauses)


def _key(address: Any) -> tuple[int, int]:
    return (address.segment_ord, address.doc)


# Words asked about in one search of _matched_words: each is a constant score 2**i, so a
# hit's score is the sum of its words' bits, exact in the f32 scores tantivy returns (24
# bits of mantissa) whatever order the sum is taken in.
WORD_BITS = 20


def _matched_words(searcher: Any, schema: Any, kind: str, words: list[Word],
                   hits: dict[tuple[int, int], str]) -> dict[tuple[int, int], list[str]]:
    """For each hit (by address), the words it holds (in any field, exact or stemmed), in
    the words' order. One search per ``WORD_BITS`` words: each word's clause scores its bit,
    and the hits' scores are read back as the set of words each holds (one search per word
    used to be a third of a long question's search time)."""
    if not hits:
        return {}
    among = tantivy.Query.const_score_query(
        tantivy.Query.term_set_query(schema, "id", sorted(set(hits.values()))), 0.0)
    found: dict[tuple[int, int], list[str]] = {}
    for first in range(0, len(words), WORD_BITS):
        batch = words[first:first + WORD_BITS]
        clauses = [(tantivy.Occur.Should, tantivy.Query.const_score_query(
            tantivy.Query.boolean_query([(tantivy.Occur.Should, p) for p in
                                         _word_query(schema, kind, word, with_boosts=False)]),
            float(1 << bit))) for bit, word in enumerate(batch)]
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.boolean_query(clauses)),
             (tantivy.Occur.Must, among)])
        for score, address in searcher.search(query, len(hits), count=False).hits:
            bits = int(score)
            found.setdefault(_key(address), []).extend(
                word[0] for bit, word in enumerate(batch) if bits >> bit & 1)
    return found
