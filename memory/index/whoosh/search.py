"""Searching the Whoosh index: a query's words as plain terms OR-ed over the kind's fields,
scored with BM25F whose statistics are those of the kind. Read-only.

Each word becomes its exact term on the kind's exact fields and its stemmed term on the
kind's stem field (:mod:`memory.index.whoosh.analysis`); context words join with their low
weight. :class:`WhooshSearcher` is what :meth:`memory.index.interface.SearchIndex.run_search`
hands over: the :class:`memory.index.interface.Searcher` of this backend.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from whoosh.query import Or, Query, Require, Term
from whoosh.scoring import BM25F

from memory.index.documents import FIELD_KIND, KIND_FIELDS, STEM_FIELD
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
from memory.index.whoosh.analysis import stem_term

Terms = tuple[str, str, str, float]  # word, exact term, stem term, weight


def query_terms(parsed: ParsedQuery) -> list[Terms]:
    """Each message word, then each context word, with its Whoosh terms and weight."""
    return [(word, exact, stem_term(word, exact), weight)
            for (word, exact), weight in parsed.weighted()]


def build_query(terms: list[Terms], kind: str) -> Query:
    """An OR of every query word over the kind's exact fields and its stemmed field;
    context words join with a low boost."""
    parts: list[Query] = []
    for _word, exact, stem, boost in terms:
        parts.extend(Term(f, exact, boost=boost) for f in KIND_FIELDS[kind])
        parts.append(Term(STEM_FIELD[kind], stem, boost=boost))
    return Or(parts)


class KindBM25F(BM25F):  # type: ignore[misc]
    """BM25F whose statistics are those of the field's own document kind.

    Whoosh divides a field's total length by the number of *all* documents, and its idf
    counts all documents too; with notes, sections and paragraphs in one index that would
    compare a note's body with paragraphs. Here each field's average length and idf use
    only the documents of its kind.
    """

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable or fieldname not in FIELD_KIND:
            return super().scorer(searcher, fieldname, text, qf)
        scorer = super().scorer(searcher, fieldname, text, qf)
        parent = searcher.get_parent()
        docs = max(1, parent.doc_frequency("kind", FIELD_KIND[fieldname]))
        freq = parent.doc_frequency(fieldname, text)
        scorer.idf = math.log(1 + (docs - freq + 0.5) / (freq + 0.5))
        scorer.avgfl = (parent.field_length(fieldname) / docs) or 1
        return scorer


def weighting() -> KindBM25F:
    """BM25F with the usual constants; field boosts come from the schema."""
    return KindBM25F(B=0.75, K1=1.2)


def search(searcher: Any, parsed: ParsedQuery, kind: str, limit: int | None,
           note_id: str | None = None, mask: frozenset[int] | None = None
           ) -> tuple[list[tuple[dict[str, Any], float, tuple[str, ...]]], int]:
    """Hits of one document kind (optionally inside one note), as (stored fields, score,
    matched words), and how many matched in all; documents whose numbers are in ``mask``
    (the notes a scope leaves out, :meth:`WhooshSearcher.without`) are neither hits nor
    counted."""
    if not parsed.words and not parsed.context:
        return [], 0
    terms = query_terms(parsed)
    # No filter: each kind has fields of its own (KIND_FIELDS), so the query matches that
    # kind's documents only, and a filter on "kind" cost more than the search (Whoosh
    # builds the set of every paragraph's number first). One note's scope is required
    # inside the query instead (Require: its documents only, its scores unchanged), so the
    # search skips to that note's few documents.
    query = build_query(terms, kind)
    if note_id is not None:
        query = Require(query, Term("note_id", note_id))
    # Every match is scored (limit=None) and the best are kept: it gives the exact count of
    # matching documents, and Whoosh's top-k shortcut, which skips blocks by their quality
    # bound, can drop a better document once KindBM25F has replaced the idf and average
    # lengths.
    # Ties at the cut are all loaded and ordered by tie_key: Whoosh's own order among them
    # is the order of the segments, which a parallel build changes.
    # A scope's mask is a set of document numbers that Whoosh's collector skips: a filter,
    # not a clause, so scores are unchanged and ``limit`` hits come from the other notes.
    results = searcher.search(query, limit=None, terms=True, mask=set(mask) if mask else None)
    reach = tied_reach([score for score, _ in results.top_n], limit)
    hits = [(dict(hit.fields()), float(hit.score), _matched(hit, terms))
            for hit in results[:reach]]
    return settle_ties(hits, limit), len(results)


def _matched(hit: Any, terms: list[Terms]) -> tuple[str, ...]:
    """The query's words a hit holds (by the terms it matched), in the query's order."""
    stems = set(STEM_FIELD.values())
    words: list[str] = []
    for field, term in hit.matched_terms() or []:
        if field not in FIELD_KIND:
            continue  # a scope's note_id, not a word
        text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
        at = 2 if field in stems else 1
        word = next((t[0] for t in terms if t[at] == text), None)
        if word and word not in words:
            words.append(word)
    order = [t[0] for t in terms]
    return tuple(sorted(words, key=order.index))


class WhooshSearcher:
    """A Whoosh searcher as the index's :class:`~memory.index.interface.Searcher`; with
    ``excluded`` notes (a scope, :meth:`without`), a view that leaves them out."""

    MASKS = 8  # the document-number sets of the last scopes, kept per searcher

    def __init__(self, searcher: Any, excluded: frozenset[str] = frozenset(),
                 masks: OrderedDict[frozenset[str], frozenset[int]] | None = None) -> None:
        self.raw = searcher
        self.excluded = excluded
        self._masks: OrderedDict[frozenset[str], frozenset[int]] = \
            OrderedDict() if masks is None else masks

    @property
    def is_closed(self) -> bool:
        return bool(self.raw.is_closed)

    def close(self) -> None:
        self.raw.close()

    def without(self, note_ids: frozenset[str]) -> WhooshSearcher:
        return WhooshSearcher(self.raw, self.excluded | note_ids, self._masks)

    def search_notes(self, parsed: ParsedQuery, limit: int | None) -> Found[StoredNote]:
        hits, total = search(self.raw, parsed, "note", limit, mask=self._mask())
        return [SearchHit(StoredNote.of(f), s, m) for f, s, m in hits], total

    def search_parts(self, parsed: ParsedQuery, kind: PartKind, limit: int | None,
                     note_id: str | None = None) -> Found[StoredPart]:
        if note_id in self.excluded:
            return [], 0
        hits, total = search(self.raw, parsed, kind, limit, note_id,
                             None if note_id is not None else self._mask())
        return [SearchHit(StoredPart.of(f), s, m) for f, s, m in hits], total

    def stored_note(self, note_id: str) -> StoredNote | None:
        if note_id in self.excluded:
            return None
        found = next(iter(self.raw.documents(kind="note", note_id=note_id)), None)
        return StoredNote.of(found) if found is not None else None

    def stored_notes(self) -> list[StoredNote]:
        return [StoredNote.of(d) for d in self.raw.documents(kind="note")
                if d["note_id"] not in self.excluded]

    def _mask(self) -> frozenset[int] | None:
        """The numbers of every document of the excluded notes (None: none excluded), made
        once per scope while this searcher lives: a suggest searches many times."""
        if not self.excluded:
            return None
        found = self._masks.get(self.excluded)
        if found is None:
            found = frozenset(self.raw.docs_for_query(
                Or([Term("note_id", note) for note in sorted(self.excluded)])))
            self._masks[self.excluded] = found
            if len(self._masks) > self.MASKS:
                self._masks.popitem(last=False)
        else:
            self._masks.move_to_end(self.excluded)
        return found
