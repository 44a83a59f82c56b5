"""The retrieval policies a bench compares, each a single pass per question.

Every policy returns what it put in front of the agent (the rendered outputs of the ladder's
calls, or the paragraphs' text) and its token count:

- ``ladder@1``, ``ladder@2``: ``suggest`` (4 notes; its table counts), then for each of the 1 or
  2 top notes its map with the question as query, its state, and the map's best section
  (``best[0]``, skipped when it is the state or inside it).
- ``ladder-oracle``: the same on the gold note (on each gold note, in order, when the answer
  spans several), without ``suggest``.
- ``fragments@k`` (k = 2, 5, 10, 20, 40, 80): the k best paragraphs of the whole store, no
  notes (with the question's context blended in as for ``suggest``, so the comparison is
  fair on follow-up benches). Together they trace the fragments curve (see curve.py).
- ``hybrid``: the 5 best paragraphs are shown and route the note (the most score among them);
  the ladder then reads that note (map + state + best section).
- ``ladder-zoom@1``: like ``ladder@1``, but the best section is read through its best
  block range when the map offers one (a long section), and when the map says no section
  wins clearly the second best is read too (its block range, or whole).
- ``recall@N`` (N = 500, 1000, 2000): one ``recall`` call with a budget of N tokens.
- ``recall-flat@1000``: the same without the hierarchy (blocks ranked by their own score,
  the state still first), to measure what the section's and note's scores add.
- ``hook``: what the ``UserPromptSubmit`` hook adds, with its rung-0 evidence on
  (``NOTES_HOOK_EVIDENCE=1``), for the question as the prompt and its context as the
  transcript's last messages (:func:`memory.hook.answer.hook_text`): at most 4 note lines
  and, when one block of those notes wins clearly, that block, in at most 120 tokens;
  nothing when nothing scores well (0 tokens, a miss).
- ``states``: ``suggest`` (4 notes; its table counts), then the state of each note shown,
  no history: what promoting history into the state should lift most.
- ``full``: every note whole but the question's ``exclude_notes`` (the same for every
  question of a bench without them).
- ``dense@k`` (k as for fragments; asked for by name, with the ``semantic`` extra): the k
  blocks of the whole store whose best line's e5 vector is closest to the question's (the
  question alone is embedded, as the semantic lever embeds the message): the dense fragments
  curve, the rival of a user who reaches for Mem0-style dense retrieval
  (:mod:`memory.retrieval.dense`).

Every policy passes the question's ``context`` to each rung it calls (``suggest``, the maps,
``recall``, the paragraph search), where it helps a vague question and never outranks what
the question names (:mod:`memory.retrieval.context`); the maps are made at the question's
``date``, so time expressions resolve as when asked.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from memory.bench.questions import Question, line_set
from memory.bench.reader import BenchReader, Paragraph
from memory.errors import NotesError
from memory.model.timeexpr import day_of
from memory.retrieval.results import SectionMap, Suggestions

SUGGEST_LIMIT = 4
FRAGMENT_KS = (2, 5, 10, 20, 40, 80)
HYBRID_PARAGRAPHS = 5
RECALL_BUDGETS = (500, 1000, 2000)
POLICIES = ("ladder@1", "ladder@2", "ladder-oracle", "ladder-zoom@1",
            *(f"recall@{n}" for n in RECALL_BUDGETS), "recall-flat@1000",
            *(f"fragments@{k}" for k in FRAGMENT_KS), "hybrid", "hook", "states", "full")
# the dense curve: run only when named (it embeds the whole store), with the semantic extra
DENSE_POLICIES = tuple(f"dense@{k}" for k in FRAGMENT_KS)


@dataclass(frozen=True)
class Reading:
    """What one policy showed the agent for one question."""

    texts: tuple[str, ...]
    tokens: int
    everything: bool = False  # the whole store (``full``)

    def covers(self, answer_lines: tuple[str, ...]) -> tuple[bool, bool]:
        """(every answer line was read, at least one was), comparing trimmed whole lines."""
        if self.everything:
            return True, True
        seen: set[str] = set().union(*(line_set(t) for t in self.texts))
        inside = [line.strip() in seen for line in answer_lines]
        return all(inside), any(inside)

    def reaches(self, answer_lines: tuple[str, ...],
                carried: Mapping[str, frozenset[str]]) -> tuple[bool, bool]:
        """As :meth:`covers`, where an answer line also counts as read when the text holds
        a line that ``carried`` gives for it (a promoted state line derived from it, with
        its back-reference: :mod:`memory.bench.promotion`)."""
        if self.everything:
            return True, True
        seen: set[str] = set().union(*(line_set(t) for t in self.texts))
        inside = [line.strip() in seen or bool(carried.get(line.strip(), frozenset()) & seen)
                  for line in answer_lines]
        return all(inside), any(inside)


def check_policies(names: list[str]) -> list[str]:
    unknown = [n for n in names if n not in POLICIES + DENSE_POLICIES]
    if unknown:
        raise NotesError(f"unknown policies: {', '.join(unknown)}; known: "
                         f"{', '.join(POLICIES + DENSE_POLICIES)}")
    if any(n in DENSE_POLICIES for n in names):
        from memory.retrieval.semantic import available

        if not available():
            raise NotesError("the dense@k policies need the semantic extra (pip install "
                             "'notes-memory[semantic]'); leave them out of --policies")
    return names


class QuestionPass:
    """One question's pass over every policy, sharing the calls that repeat between them."""

    def __init__(self, reader: BenchReader, question: Question, full: Reading) -> None:
        self.reader, self.question, self.full = reader, question, full
        self.query = question.question
        self.context = " ".join(question.context) or None
        self.today = question_day(question)
        self._suggested: tuple[Suggestions, str] | None = None
        self._paragraphs: list[Paragraph] | None = None
        self._dense: list[Paragraph] | None = None
        self._recalled: dict[int, str] | None = None
        self._maps: dict[str, tuple[SectionMap, str]] = {}
        self._climbs: dict[str, tuple[str, ...]] = {}

    def run(self, policy: str) -> Reading | None:
        """The reading of one policy; None when it does not apply (no gold note)."""
        if policy.startswith("ladder@"):
            return self.ladder(int(policy.removeprefix("ladder@")))
        if policy == "ladder-oracle":
            return self.oracle()
        if policy == "ladder-zoom@1":
            return self.zoom()
        if policy.startswith("recall@"):
            return self._reading([self.recalled()[int(policy.removeprefix("recall@"))]])
        if policy == "recall-flat@1000":
            flat = self.reader.recall(self.query, (1000,), self.context, self.today,
                                      hierarchy=False)
            return self._reading([flat[1000]])
        if policy.startswith("fragments@"):
            return self.fragments(int(policy.removeprefix("fragments@")))
        if policy.startswith("dense@"):
            return self._reading([join_paragraphs(self.dense()[:int(
                policy.removeprefix("dense@"))])])
        if policy == "hybrid":
            return self.hybrid()
        if policy == "hook":
            return self.hook()
        if policy == "states":
            return self.states()
        if policy == "full":
            return self.full
        raise NotesError(f"unknown policy {policy!r}")

    def suggested(self) -> tuple[Suggestions, str]:
        if self._suggested is None:
            self._suggested = self.reader.suggest(self.query, SUGGEST_LIMIT, self.context,
                                                 self.today)
        return self._suggested

    def recalled(self) -> dict[int, str]:
        if self._recalled is None:
            self._recalled = self.reader.recall(self.query, RECALL_BUDGETS, self.context,
                                                self.today)
        return self._recalled

    def gold_positions(self) -> tuple[int | None, ...]:
        """Where ``suggest`` put each gold note (1-based), None for one not in its list."""
        if not self.question.gold_notes:
            return ()
        hits = [h.note for h in self.suggested()[0].hits]
        return tuple(hits.index(n) + 1 if n in hits else None for n in self.question.gold_notes)

    def ladder(self, notes: int) -> Reading:
        result, table = self.suggested()
        texts = [table]
        for hit in result.hits[:notes]:
            texts.extend(self.climb(hit.note))
        return self._reading(texts)

    def oracle(self) -> Reading | None:
        """The climb on every gold note that exists; None when there is none."""
        gold = [note for note in self.question.gold_notes if self._exists(note)]
        if not gold:
            return None
        return self._reading([text for note in gold for text in self.climb(note)])

    def _exists(self, note: str) -> bool:
        try:
            return self.reader.exists(note)
        except NotesError:
            return False

    def fragments(self, k: int) -> Reading:
        return self._reading([join_paragraphs(self.paragraphs()[:k])])

    def hybrid(self) -> Reading:
        shown = self.paragraphs()[:HYBRID_PARAGRAPHS]
        if not shown:
            return self._reading([])
        return self._reading([join_paragraphs(shown), *self.climb(route(shown))])

    def hook(self) -> Reading:
        from memory.hook.answer import MAX_NOTES, hook_text, topic_words

        prompt = topic_words(self.query)
        if not prompt and not self.context:
            return self._reading([])
        result, _ = self.reader.suggest(prompt, MAX_NOTES, self.context, self.today,
                                        by_blocks=False)  # as the hook asks it
        return self._reading([hook_text(self.reader.notes, result, prompt, self.context,
                                        evidence=True)])

    def states(self) -> Reading:
        """``suggest``'s table, then the state of every note it shows (no history)."""
        result, table = self.suggested()
        texts = [table]
        for hit in result.hits:
            try:
                if self.reader.has_state(hit.note):
                    texts.append(self.reader.read(hit.note, "state"))
            except NotesError as exc:
                texts.append(f"Error: {exc}")
        return self._reading(texts)

    def dense(self) -> list[Paragraph]:
        """The store's blocks closest to the question by e5's cosine (the dense curve)."""
        if self._dense is None:
            self._dense = self.reader.dense_paragraphs(self.query, max(FRAGMENT_KS))
        return self._dense

    def paragraphs(self) -> list[Paragraph]:
        if self._paragraphs is None:
            self._paragraphs = self.reader.paragraphs(self.query, max(FRAGMENT_KS),
                                                      self.context)
        return self._paragraphs

    def climb(self, note: str) -> tuple[str, ...]:
        """Rungs 2 and 3 on one note: its map for the question, its state, its best section."""
        if note not in self._climbs:
            try:
                self._climbs[note] = self._climb(note)
            except NotesError as exc:  # what a tool would answer: the error
                self._climbs[note] = (f"Error: {exc}",)
        return self._climbs[note]

    def zoom(self) -> Reading:
        result, table = self.suggested()
        texts = [table]
        if result.hits:
            try:
                texts.extend(self._zoom_climb(result.hits[0].note))
            except NotesError as exc:
                texts.append(f"Error: {exc}")
        return self._reading(texts)

    def mapped(self, note: str) -> tuple[SectionMap, str]:
        """The note's map for the question (made once, shared by the ladder policies)."""
        if note not in self._maps:
            self._maps[note] = self.reader.section_map(note, self.query, self.today,
                                                       self.context)
        return self._maps[note]

    def _zoom_climb(self, note: str) -> list[str]:
        found, map_text = self.mapped(note)
        texts = [map_text]
        if self.reader.has_state(note):
            texts.append(self.reader.read(note, "state"))
        rows = {r.id: r for r in found.rows}
        for section in found.best[:1 if found.clear else 2]:
            row = rows.get(section)
            if row is None or section == "state" or section.startswith("state/"):
                continue
            texts.append(self.reader.read(note, row.zoom[0].blocks.ref if row.zoom
                                          else section))
        return texts

    def _climb(self, note: str) -> tuple[str, ...]:
        found, map_text = self.mapped(note)
        texts = [map_text]
        if self.reader.has_state(note):
            texts.append(self.reader.read(note, "state"))
        best = found.best[0] if found.best else None
        if best and best != "state" and not best.startswith("state/"):
            texts.append(self.reader.read(note, best))
        return tuple(texts)

    def _reading(self, texts: list[str]) -> Reading:
        kept = tuple(t for t in texts if t)
        return Reading(kept, sum(self.reader.count(t) for t in kept))


def question_day(question: Question) -> dt.date | None:
    """The day the question is asked (None: today), from its ISO ``date``."""
    return day_of(question.date)


def join_paragraphs(paragraphs: list[Paragraph]) -> str:
    """Paragraph texts one after the other, one line break between them."""
    return "\n".join(p.text.rstrip("\r\n") for p in paragraphs)


def route(paragraphs: list[Paragraph]) -> str:
    """The note holding the most score among the paragraphs (ties: the better-ranked one)."""
    mass: dict[str, float] = defaultdict(float)
    for paragraph in paragraphs:
        mass[paragraph.note] += paragraph.score
    order = [p.note for p in paragraphs]
    return max(mass, key=lambda n: (mass[n], -order.index(n)))
