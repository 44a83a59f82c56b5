"""The Whoosh schema: the three document kinds in one index, each with its own text fields
(:data:`memory.index.documents.KIND_FIELDS`) and a stemmed twin, so that BM25's statistics
can be those of the kind (:class:`memory.index.whoosh.search.KindBM25F`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from whoosh import fields

from memory.index.documents import KIND_FIELDS, SCHEMA_VERSION, STEM_BOOST, STEM_FIELD
from memory.index.whoosh.analysis import exact_analyzer, stem_analyzer
from memory.index.words import ANALYZER_VERSION

VERSION = {"schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION}  # the index's version.json


@lru_cache(maxsize=1)
def shared_schema() -> fields.Schema:
    """The schema an index of this version holds, built once per process. Opening an index
    with it skips unpickling the one in each table of contents (every searcher reads one,
    and each unpickling rebuilds six stemmers): ``version.json`` matching :data:`VERSION` is
    what says the stored schema is this one."""
    return build_schema()


def build_schema() -> fields.Schema:
    exact, stem = exact_analyzer(), stem_analyzer()
    text_fields: dict[str, Any] = {}
    for kind, boosts in KIND_FIELDS.items():
        for name, boost in boosts.items():
            text_fields[name] = fields.TEXT(analyzer=exact, field_boost=boost, phrase=False)
        text_fields[STEM_FIELD[kind]] = fields.TEXT(analyzer=stem, field_boost=STEM_BOOST,
                                                     phrase=False)
    return fields.Schema(
        id=fields.ID(stored=True, unique=True),
        note_id=fields.ID(stored=True),
        kind=fields.ID(stored=True),
        section=fields.ID(stored=True),
        title=fields.TEXT(analyzer=exact, stored=True, field_boost=2.0, phrase=False),
        **{k: v for k, v in text_fields.items() if k != "title"},
        label=fields.STORED(),
        date=fields.STORED(),
        tokens=fields.STORED(),
        state_tokens=fields.STORED(),
        lines=fields.STORED(),
        digest=fields.STORED(),
        mtime_ns=fields.STORED(),
        size=fields.STORED(),
        entries=fields.STORED(),
        project=fields.STORED(),
    )
