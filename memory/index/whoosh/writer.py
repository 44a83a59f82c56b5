"""One write to the Whoosh index: a note's documents replaced by fingerprint, one commit.

Re-indexing a note replaces only the documents whose fingerprint (a hash of everything the
document holds) changed: appending an entry to a long note adds a section and its paragraphs
and refreshes the note and history documents, so writes to long notes stay cheap. A new,
empty index (a rebuild) has nothing to compare with: every document is added.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memory.index.whoosh.build import commit_quickly


def doc_digest(document: dict[str, Any]) -> str:
    """A fingerprint of everything a document holds, to re-index only what changed."""
    body = json.dumps({k: v for k, v in document.items() if k != "digest"}, sort_keys=True,
                      default=str)
    return hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()


class WhooshWriter:
    """A :class:`memory.index.backend.NoteWriter` over one Whoosh writer."""

    def __init__(self, raw: Any, building: bool) -> None:
        self.raw = raw
        self.building = building
        self.added = 0  # documents handed over (a rebuild checks the index holds them all)
        self.committed = False

    def delete(self, note_id: str) -> None:
        self.raw.delete_by_term("note_id", note_id)

    def put(self, note_id: str, documents: list[dict[str, Any]]) -> None:
        fresh = {}
        for document in documents:
            if document["kind"] != "note":
                document["digest"] = doc_digest(document)
            fresh[document["id"]] = document
        if self.building:  # an empty new index: nothing to compare with
            for document in fresh.values():
                self.raw.add_document(**document)
            self.added += len(fresh)
            return
        stored = self._stored_digests(note_id)
        for doc_id in stored.keys() - fresh.keys():
            self.raw.delete_by_term("id", doc_id)
        for doc_id, document in fresh.items():
            if document["kind"] == "note" or stored.get(doc_id) != document["digest"]:
                self.raw.update_document(**document)  # replaces the one with the same id

    def commit(self) -> None:
        commit_quickly(self.raw)
        self.committed = True

    def _stored_digests(self, note_id: str) -> dict[str, str]:
        """The documents the index holds for a note, with their fingerprints."""
        with self.raw.searcher() as searcher:
            return {d["id"]: d.get("digest") or "" for d in searcher.documents(note_id=note_id)}
