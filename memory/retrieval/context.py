"""The conversation as context: it helps a vague message, and never goes against one that
names its own topic. Every rung that takes ``context`` (``suggest``, ``section_map``,
``recall``, the hook, the bench's policies) searches through :func:`blended_search`.

The message and its context are searched apart: the message's own words, then the
context's words that the message does not hold. Their scores join as

    score(d) = m(d) + weight × c(d)

where ``m(d)`` is the document's BM25 score for the message alone and ``c(d)`` for the
context alone. The ``weight`` (:func:`context_weight`) is the weight a context word has
beside the message (0.5 beside a one-word message, falling to 0.2 from five words on:
:func:`memory.index.query.context_weight_for`), shared out when the context is long: a
context of more than ``CONTEXT_WORDS`` words counts as that many words in all, however long
the transcript (the way query expansion keeps the expansion terms' total weight fixed). So a
vague message leans on the conversation, and a long conversation does not outweigh a
message that matches well on its own.

Three rules keep the context from going against the message:

- **a note the message names stays ahead** (:func:`keep_named_first`, used by ``suggest``
  and so by the hook and by ``recall``'s routing): a note among the message's own best
  whose name the message says (its whole title or file name, or two of their words:
  :func:`names`) is never passed by a note that scores lower on the message alone.
  "rotate the database secrets" after a talk about Redis stays with howto/rotate-secrets;
  "¿y las alertas?" after the same talk names no note, and the conversation decides;
- **a note the message settles on stays first** (:func:`settled_note`, then
  :func:`keep_ahead` as ``suggest``'s last step): the message's own best note, when it
  scores at least ``DOMINANT`` times the next on the message alone and the message says one
  word of its title or file name ("¿quién es Jonas?" and people/jonas-becker, after a talk
  about Redis), is passed by no note that scores lower on the message, whatever the context,
  the session prior or coverage's context words add; ``recall`` then routes and ranks its
  blocks by the message alone (as it does when the note routed first is one the message
  names). One title word alone is not enough: vague follow-ups say a note's generic title
  words ("app", "facturas") and need the conversation;
- **inside one note** (``section_map``) the topic is settled, and the message's match on a
  section is direct evidence: the context adds at most ``share × M`` to a section, where
  ``M`` is the message's best section score (the context's best when the message matches
  nothing in the note) and ``share`` (:func:`context_share`) goes from ``CONTEXT_SHARE``
  beside five words or more to ``VAGUE_CONTEXT_SHARE`` beside one word: the context breaks
  near-ties and picks the section when the message alone picks none. That lift is scaled
  by how much the context is about the note (:func:`aboutness`: the note's score for the
  context over the best note's), so a talk about Redis does not pick the sections of
  howto/rotate-secrets by its generic words ("key", "instance").

The context only ever adds: no document scores less than the message alone gives it. The
session's own reading is context too: :func:`with_prior` lifts the notes read lately, more
for vaguer messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic

from memory.index import Found, ParsedQuery, SearchHit, StoredNote, StoredPart, vagueness
from memory.index.query import context_weight_for
from memory.index.stored import Doc
from memory.index.words import exact_terms

CONTEXT_WORDS = 16  # a longer context counts as this many words in all (about 2 messages)
CONTEXT_POOL = 30  # a ranked search asks each part for at least this many hits
POOL_FACTOR = 4  # … and for this many times the hits it returns: a document missing from
# one part's hits counts 0 there, so the pools must reach past what is shown
CONTEXT_SHARE = 0.5  # inside a note: the context's share of the best section score, 5+ words
VAGUE_CONTEXT_SHARE = 1.0  # … and beside a one-word message (in between: linear)
DOMINANT = 2.0  # a note scoring this many times the next on the message alone is its topic
NAMING_WORDS = 2  # words of a note's title or file name that name it (or all of them)


@dataclass(frozen=True)
class Blended(Generic[Doc]):
    """A blended search: hits best first, how many matched, and each hit's score for the
    message alone (what :func:`keep_named_first` compares)."""

    hits: list[SearchHit[Doc]]
    total: int
    message: dict[str, float]


def context_weight(words: int, context_words: int) -> float:
    """A context word's weight beside a message of ``words`` words, for a context of
    ``context_words`` words (see the module's doc)."""
    return context_weight_for(words) * min(1.0, CONTEXT_WORDS / max(1, context_words))


def split(parsed: ParsedQuery) -> tuple[ParsedQuery, ParsedQuery | None]:
    """The message's words alone, and the context's words alone (None: no context)."""
    message = dataclasses.replace(parsed, context=())
    if not parsed.context:
        return message, None
    return message, ParsedQuery(parsed.text, parsed.context)


def context_share(words: int) -> float:
    """Inside one note: the most the context may add, as a share of the message's best
    section score, beside a message of ``words`` words (the vaguer, the more)."""
    return CONTEXT_SHARE + (VAGUE_CONTEXT_SHARE - CONTEXT_SHARE) * vagueness(words)


def blended_search(search: Callable[[ParsedQuery, int | None], Found[Doc]],
                   parsed: ParsedQuery, limit: int | None, about: float | None = None,
                   keep_own: bool = False) -> Blended[Doc]:
    """``search(query, limit)`` for the message, and for its context when it has one,
    blended: the best ``limit`` hits (None: all), each with the message's matched words
    then the context's, and how many documents matched (the larger of the two counts: the
    union is not counted). With ``about`` (0 to 1: inside one note, see :func:`aboutness`)
    the lift is the bounded one of the module's doc, scaled by ``about``. With
    ``keep_own`` the message's own best ``limit`` documents the blend pushed past ``limit``
    follow the best ``limit`` hits (in blended order), so a rule that keeps what the message
    names ahead (:func:`keep_named_first`) still finds them."""
    message, context = split(parsed)
    weight = context_weight(len(message.words), len(parsed.context)) if about is None \
        else about
    if context is None or weight <= 0:
        hits, total = search(message, limit)
        return Blended(hits, total, {_key(h.doc): h.score for h in hits})
    pool = None if limit is None else max(POOL_FACTOR * limit, CONTEXT_POOL)
    message_hits: list[SearchHit[Doc]] = []
    message_total = 0
    if message.words:
        message_hits, message_total = search(message, pool)
    context_hits, context_total = search(context, pool)
    scores = {_key(h.doc): h.score for h in message_hits}
    merged: dict[str, SearchHit[Doc]] = {}
    _merge(merged, message_hits)  # message order first, for ties
    _merge(merged, context_hits)
    if about is not None:  # bounded: the message's best score sets the scale
        top = max((h.score for h in context_hits), default=0.0) or 1.0
        scale = max(scores.values(), default=0.0) or top
        weight = about * context_share(len(message.words)) * scale / top
    blended = dict(scores)
    for lifted in context_hits:
        key = _key(lifted.doc)
        blended[key] = blended.get(key, 0.0) + weight * lifted.score
    order = {key: n for n, key in enumerate(merged)}
    ranked = sorted(merged, key=lambda key: (-blended[key], order[key]))
    shown = ranked if limit is None else ranked[:limit]
    if keep_own and limit is not None:
        own = set(sorted(scores, key=lambda k: -scores[k])[:limit])
        shown += [k for k in ranked[limit:] if k in own]
    return Blended([dataclasses.replace(merged[k], score=round(blended[k], 4)) for k in shown],
                   max(message_total, context_total, len(merged)), scores)


def _merge(merged: dict[str, SearchHit[Doc]], hits: list[SearchHit[Doc]]) -> None:
    """Add hits to ``merged`` by document, a known one gaining the new matched words."""
    for hit in hits:
        key = _key(hit.doc)
        known = merged.get(key)
        if known is None:
            merged[key] = hit
        else:
            more = tuple(w for w in hit.matched if w not in known.matched)
            merged[key] = dataclasses.replace(known, matched=known.matched + more)


def keep_named_first(hits: list[SearchHit[StoredNote]], message: dict[str, float],
                     named: Callable[[str], bool], look: int) -> list[SearchHit[StoredNote]]:
    """``hits`` (ranked with the context's help), except that no note gets above a note
    the message names among its own ``look`` best (``message``: each note's score for the
    message alone; ``named(note)``, asked of those notes only, and only when the order
    differs from the message's) and scores higher on its own: it moves just below the last
    such note, with that note's score at most."""
    if _as_message_ranks(hits, message):
        return hits
    own_best = sorted(message, key=lambda k: -message[k])[:look]
    return keep_ahead(hits, message, {note for note in own_best if named(note)})


def settled_note(message: dict[str, float], mentioned: Callable[[str], bool]) -> str | None:
    """The note the message settles on by itself: its own best (``message``: each note's
    score for the message alone), when that one scores at least ``DOMINANT`` times the next
    and the message says a word of its title or file name (``mentioned(note)``, asked of
    that note only). ``suggest`` keeps it first after every lever
    (:func:`keep_ahead`), so neither the context's words nor the levers that use them
    (coverage, the session prior) pull the message away from the one note it clearly asks
    about, and ``recall`` then ranks blocks by the message alone."""
    first, second = (sorted(message.values(), reverse=True) + [0.0, 0.0])[:2]
    if first <= 0 or first < DOMINANT * second:
        return None
    top = max(message, key=lambda k: message[k])
    return top if mentioned(top) else None


def _as_message_ranks(hits: list[SearchHit[StoredNote]], message: dict[str, float]) -> bool:
    """Whether the hits are in the order the message alone gives them."""
    order = [h.doc.note_id for h in hits]
    return order == sorted(order, key=lambda k: -message.get(k, 0.0))


def keep_ahead(hits: list[SearchHit[StoredNote]], message: dict[str, float],
                protected: set[str]) -> list[SearchHit[StoredNote]]:
    """``hits``, each note that scores lower on the message than a protected note below
    it moved just below the last such note, with that note's score at most."""
    if not protected:
        return hits
    pending = list(hits)
    out: list[SearchHit[StoredNote]] = []
    while pending:
        hit = pending.pop(0)
        own = message.get(hit.doc.note_id, 0.0)
        higher = [n for n, later in enumerate(pending) if later.doc.note_id in protected
                  and message.get(later.doc.note_id, 0.0) > own]
        if higher and hit.doc.note_id not in protected:
            last = higher[-1]
            pending.insert(last + 1, dataclasses.replace(
                hit, score=min(hit.score, pending[last].score)))
            continue
        out.append(hit)
    return out


def names(words: Iterable[str], title: str, note_id: str) -> bool:
    """Whether a message's exact terms name a note: they hold its whole title or its whole
    file name (``rotate-secrets`` of howto/rotate-secrets), or at least ``NAMING_WORDS`` of
    their words. One word shared with a longer title ("año", "clientes") does not name a
    note; aliases and tags do not either (they are the broad words a note shares with
    others). Words are the same when equal, or one is the other with a plural -s/-es."""
    said = list(words)
    title_words, file_words = _name_words(title, note_id)

    def held(terms: set[str]) -> set[str]:
        return {t for t in terms if any(_same(w, t) for w in said)}

    if (title_words and held(title_words) == title_words) or \
            (file_words and held(file_words) == file_words):
        return True
    return len(held(title_words | file_words)) >= NAMING_WORDS


def mentions(words: Iterable[str], title: str, note_id: str) -> bool:
    """Whether a message's exact terms hold a word (not a number) of a note's title or file
    name: less than naming it, and enough beside a message that settles on the note."""
    said = list(words)
    title_words, file_words = _name_words(title, note_id)
    return any(_same(w, t) for t in title_words | file_words if not t.isdigit() for w in said)


def _name_words(title: str, note_id: str) -> tuple[set[str], set[str]]:
    """The exact terms of a note's title and of its file name (``rotate-secrets``)."""
    file_name = note_id.rpartition("/")[2].replace("-", " ").replace("_", " ")
    return set(exact_terms(title)), set(exact_terms(file_name))


def _same(a: str, b: str) -> bool:
    """Equal, or one is the other with a plural ``-s`` or ``-es``."""
    short, long = sorted((a, b), key=len)
    return long in (short, short + "s", short + "es")


def aboutness(note_id: str, parsed: ParsedQuery,
              search: Callable[[ParsedQuery, int | None], Found[StoredNote]]) -> float:
    """How much the query's context is about one note: its score for the context's words
    over the best note's (0 when it does not match them, 1 for the best; 1 with no
    context, which then changes nothing)."""
    _, context = split(parsed)
    if context is None:
        return 1.0
    hits, _ = search(context, None)
    best = max((h.score for h in hits), default=0.0)
    own = next((h.score for h in hits if h.doc.note_id == note_id), 0.0)
    return own / best if best > 0 else 0.0


def _key(doc: StoredNote | StoredPart) -> str:
    return doc.note_id if isinstance(doc, StoredNote) else doc.id


PRIOR_WEIGHT = 1.0  # share of the best score a note read just now gains (see with_prior)


def with_prior(hits: list[SearchHit[StoredNote]], prior: dict[str, float], words: int,
               unmatched: Callable[[str], StoredNote | None]) -> list[SearchHit[StoredNote]]:
    """Hits re-ranked with the session prior. The vaguer the message (the fewer its own
    words: 1 word counts fully, 5 or more not at all), the more a note read lately gains:
    up to ``PRIOR_WEIGHT`` × the best score × its prior. So "y el lag?" stays with the note
    at hand, while a message that names another topic still goes there. A prior note that
    matched nothing joins with half that gain (so it stays below the best note that matched
    the message), with the fields ``unmatched(note)`` gives (none: the note is gone)."""
    vague = vagueness(words)
    if not prior or vague <= 0:
        return hits
    lift = PRIOR_WEIGHT * vague * max((h.score for h in hits), default=1.0)
    lifted = [dataclasses.replace(h, score=round(h.score + lift * prior.get(
        h.doc.note_id, 0.0), 2)) for h in hits]
    seen = {h.doc.note_id for h in hits}
    for note, weight in prior.items():
        stored = unmatched(note) if note not in seen else None
        if stored is not None:
            lifted.append(SearchHit(stored, round(lift * weight / 2, 2), ()))
    return sorted(lifted, key=lambda h: -h.score)
