"""The tantivy side of the index: analyzers, one schema per document kind, documents.

**Per-kind statistics.** Whoosh keeps the three kinds in one index and :class:`KindBM25F`
corrects BM25's average field length and idf per kind. tantivy computes both over every
document of an index, so each kind gets its own index (``note/``, ``section/``,
``paragraph/``): the statistics are then those of the kind, as in Whoosh.

**Analysis** mirrors Whoosh's (:mod:`memory.index.whoosh.analysis`) with tantivy's native
filters, from the same word lists (:mod:`memory.index.words`):

- ``exact``: ``\\w+`` → lower-case → ASCII fold → stop words (the same Spanish + English list,
  folded, with ``estado``/``estados`` kept, and one-character tokens dropped);
- ``stem``: ``\\w+`` → lower-case → stop words (folded and accented spellings) → Snowball
  Spanish → ASCII fold → Snowball English.

Differences with Whoosh, measured on every word of ``notes_example`` and a generated sample
(8,783 distinct words): the exact terms are identical; 15 stems differ (0.2 %), because
rust-stemmers and Whoosh's Python Snowball ports disagree on a few suffixes (``added`` →
``add`` here, ``ad`` in Whoosh; ``university`` → ``universiti`` here, ``univers`` there;
``facturacion`` without its accent → ``factur`` here, unchanged there). A one-character
word outside a–z, 0–9 and their accented forms (``東``) is indexed here, dropped by Whoosh.
Words longer than 255 bytes are dropped here (tantivy cannot index a term of more than
65,530 bytes).

**Field boosts.** Whoosh multiplies a field's term frequencies by its boost when indexing;
tantivy cannot, so here the boost multiplies the field's BM25 score (as a query boost).
Rankings agree on the golden questions (tests/test_backend_conformance.py); scores differ.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import tantivy

from memory.index.documents import KIND_FIELDS, STEM_FIELD
from memory.index.documents import SCHEMA_VERSION as DOCUMENTS_VERSION
from memory.index.words import ANALYZER_VERSION, stop_words

SCHEMA_VERSION = 1
KINDS = ("paragraph", "section", "note")  # commit order: the note index last (see index)
MAX_TERM_BYTES = 255
_ACCENTED = {"a": "áàâä", "e": "éèêë", "i": "íìîï", "o": "óòôö", "u": "úùûü", "n": "ñ",
             "c": "ç"}


def version() -> dict[str, Any]:
    from importlib.metadata import version as package_version

    return {"schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION,
            "documents": DOCUMENTS_VERSION, "tantivy": package_version("tantivy"),
            "backend": "tantivy"}


def _spellings(word: str) -> set[str]:
    """The word and its spellings with one accented letter (``como`` → ``cómo``…)."""
    out = {word}
    for position, letter in enumerate(word):
        for accented in _ACCENTED.get(letter, ""):
            out.add(word[:position] + accented + word[position + 1:])
    return out


@lru_cache(maxsize=1)
def _short_words() -> list[str]:
    singles = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("0123456789_")
    return sorted({s for letter in singles for s in _spellings(letter)})


@lru_cache(maxsize=1)
def exact_analyzer() -> Any:
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.remove_long(MAX_TERM_BYTES))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.custom_stopword(sorted(stop_words()) + _short_words()))
            .build())


@lru_cache(maxsize=1)
def stem_analyzer() -> Any:
    stops = {s for word in stop_words() for s in _spellings(word)}
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.remove_long(MAX_TERM_BYTES))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.custom_stopword(sorted(stops) + _short_words()))
            .filter(tantivy.Filter.stemmer("spanish")).filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english")).build())


def register(index: Any) -> None:
    """Analyzers are not stored in the index: register them on every opened index."""
    index.register_tokenizer("exact", exact_analyzer())
    index.register_tokenizer("stem", stem_analyzer())


@lru_cache(maxsize=3)
def schema(kind: str) -> Any:
    """id and note_id (raw, for deletes and filters), the kind's text fields, ``meta`` (every
    stored value, as JSON)."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("note_id", tokenizer_name="raw", index_option="basic")
    for name in KIND_FIELDS[kind]:
        builder.add_text_field(name, tokenizer_name="exact", index_option="freq")
    builder.add_text_field(STEM_FIELD[kind], tokenizer_name="stem", index_option="freq")
    builder.add_bytes_field("meta", stored=True)
    return builder.build()


TEXT_FIELDS = {kind: (*KIND_FIELDS[kind], STEM_FIELD[kind]) for kind in KINDS}


def to_document(document: dict[str, Any]) -> Any:
    """A tantivy document from one of :func:`memory.index.documents.note_documents`' dicts."""
    kind = document["kind"]
    doc = tantivy.Document()
    doc.add_text("id", document["id"])
    doc.add_text("note_id", document["note_id"])
    stored: dict[str, Any] = {}
    for name, value in document.items():
        if name in TEXT_FIELDS[kind]:
            if value:
                doc.add_text(name, value)
            if name != "title":
                continue
        stored[name] = value
    doc.add_bytes("meta", json.dumps(stored, ensure_ascii=False, default=str).encode(
        "utf-8", "surrogatepass"))
    return doc


def stored_fields(doc: Any) -> dict[str, Any]:
    return stored_values(stored_bytes(doc))


def stored_bytes(doc: Any) -> bytes:
    """A document's ``meta`` bytes, where its stored values are (none: empty)."""
    raw = doc.get_first("meta")
    return bytes(raw) if raw else b""


def stored_values(raw: bytes) -> dict[str, Any]:
    """The stored values a document's ``meta`` bytes hold (none for no bytes)."""
    data = json.loads(raw.decode("utf-8", "surrogatepass")) if raw else {}
    return data if isinstance(data, dict) else {}
