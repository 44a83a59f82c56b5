"""Routing and evidence levers: optional steps of ``suggest`` and ``recall``, each switchable
so that its ablation is reproducible (issue #15 item 4; figures in docs/benchmarks.md,
"Routing levers: ablations").

- ``spread``: ``recall`` spreads its budget across notes and sections: each block already
  picked from a block's own section (and, less, from its note) lowers the block's score, so
  when several sessions score close, the best blocks of each are shown rather than all from
  one (multi-session questions).
- ``fusion``: ``recall`` ranks blocks by reciprocal rank fusion of their own rank, their
  section's and their note's (and the date signals), instead of the weighted sum of
  normalised scores.
- ``block-route``: ``suggest`` re-orders its notes by the note's own BM25F score plus half
  its best block's (each over the best of its kind; the blocks are the paragraphs and the
  headers of store-wide searches): the session whose one turn holds the message's words
  together gains on one that holds them scattered. Not in ``recall``'s routing nor the
  hook's (:func:`memory.retrieval.routing.block_routed_notes`).
- ``feedback``: pseudo-relevance feedback (RM3-style) for ``suggest``: the words that weigh
  most in the best paragraphs of a first search join the query at a low weight.
- ``neighbours``: ``recall`` ranks the blocks next to a matching block (one and two blocks
  away in its section) with a share of that block's score, so the reply to a matching line,
  or the line a matching reply answers, can join it though it shares no word with the query.
- ``names``: ``recall`` halves the own score of a block that matched only words of its
  note's title (a conversation's speakers, the topic a note is named for): they chose the
  note, and inside it they do not tell one block from another.
- ``dates``: ``suggest`` lifts the notes with a matching entry dated inside the message's
  time expressions of at most a month ("on 3 November", "in May 2023", "last week"),
  resolved at the question's date, when the message's own words match the dated entry:
  each scores 1.5 times as much.
- ``replies``: ``recall`` ranks the block right after a ranked block that asks something
  (a question mark near its end) with 0.9 of that block's score (``neighbours`` alone gives
  it half): in a dialogue the turn after a question is its answer, and it rarely repeats the
  question's words ("How long have you been doing yoga?" / "Three years now").
- ``coverage``: ``suggest`` re-ranks its 10 best notes by their BM25F score plus 0.75 times
  the share of the message's words that the note's best single line holds
  (:mod:`memory.retrieval.coverage`): ``block-route``'s idea read from the candidates' own
  lines, with no search (their line terms are made as the index reads a note, and kept in
  ``lines.sqlite``). On by default; not in ``recall``'s routing nor the hook's.
- ``across``: for a question that asks across time or episodes ("how many…", "in total",
  "which came first", "¿cuántas veces…?", :func:`memory.model.timeexpr.asks_across`),
  ``recall`` weighs the blocks of twice as many routed notes and spreads the second half of
  its budget across sections as ``spread`` does: the answer lies in several sessions, and
  one session's blocks should not fill the budget (issue #34, item 6).
- ``semantic``: ``suggest`` re-ranks its 50 best notes with an embedding model's cosine
  between the message and each note's best line (:mod:`memory.retrieval.semantic`; the
  optional extra ``notes-memory[semantic]``, on for a store with ``NOTES_SEMANTIC=1``).

:data:`DEFAULT` holds the levers that are on; a store's ``NOTES_LEVERS`` and the bench's
``--levers`` (both read by :func:`parse_levers`) switch them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from memory.errors import ConfigError, InvalidArgument

NAMES = ("spread", "fusion", "block-route", "feedback", "neighbours", "dates", "names",
         "replies", "coverage", "across", "semantic")


@dataclass(frozen=True)
class Levers:
    spread: bool = False
    fusion: bool = False
    block_route: bool = False
    feedback: bool = False
    neighbours: bool = False
    dates: bool = False
    names: bool = False
    replies: bool = False
    coverage: bool = False
    across: bool = False
    semantic: bool = False

    def on(self) -> tuple[str, ...]:
        return tuple(n for n in NAMES if getattr(self, n.replace("-", "_")))

    def label(self) -> str:
        return ",".join(self.on()) or "none"


# on: each helped every visible bench or cost none more than a point (docs/benchmarks.md,
# "Routing levers: ablations"; coverage: its "Seventh round", on once its line terms were
# made at index time and its warm p95 met default's); block-route helps routing on them
# too, but its two store-wide searches make suggest about 8 times slower
# (NOTES_LEVERS=+block-route turns it on), and semantic needs the optional model
# (NOTES_SEMANTIC turns it on)
DEFAULT = Levers(neighbours=True, dates=True, names=True, replies=True, coverage=True)
ALL = Levers(**{n.replace("-", "_"): True for n in NAMES})


def store_levers(chosen: str = "", semantic: bool = False) -> Levers:
    """The levers of a store's own ladder (the CLI's, the server's; a bench picks its own):
    ``chosen`` as :func:`parse_levers` reads it (``NOTES_LEVERS``; empty: the defaults),
    with ``semantic`` too when the configuration turns it on (``NOTES_SEMANTIC``), which
    needs its extra installed. A lever that does not exist, or a missing extra, is a
    ConfigError that says what to change."""
    try:
        levers = parse_levers(chosen or None)
    except InvalidArgument as exc:
        raise ConfigError(f"NOTES_LEVERS={chosen!r}: {exc}; fix it or unset NOTES_LEVERS "
                          "for the defaults") from exc
    if not semantic or levers.semantic:
        return levers
    from memory.retrieval.semantic import require

    require()
    return dataclasses.replace(levers, semantic=True)


def parse_levers(text: str | None) -> Levers:
    """``None``/``default``: :data:`DEFAULT`; ``none``, ``all``; or comma-separated names,
    each ``name`` (on, from none), ``+name`` (on) or ``-name`` (off); with a ``+`` or ``-``
    item the rest apply to the default (``-spread``: the default without spread)."""
    if text is None or text.strip() in ("", "default"):
        return DEFAULT
    items = [t.strip() for t in text.split(",") if t.strip()]
    if items == ["none"]:
        return Levers()
    if items == ["all"]:
        items = list(NAMES)
    relative = any(t[0] in "+-" for t in items)
    chosen = dict.fromkeys(DEFAULT.on() if relative else (), True)
    for item in items:
        name = item.lstrip("+-")
        if name not in NAMES:
            raise InvalidArgument(f"unknown lever {name!r}; levers are: {', '.join(NAMES)} "
                                  "(or none, all, default)")
        if item.startswith("-"):
            chosen.pop(name, None)
        else:
            chosen[name] = True
    if "semantic" in chosen:
        from memory.retrieval.semantic import require

        require()
    return dataclasses.replace(Levers(), **{n.replace("-", "_"): True for n in chosen})
