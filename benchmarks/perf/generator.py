"""A deterministic generator of realistic stores at any scale, and a query set drawn from them.

``generate_store(out, scale, seed)`` writes ``out/notes/`` (``scale`` × 220 notes of about
4,500 cl100k tokens each: ``--scale 1`` ≈ 1 M tokens, ``--scale 10`` ≈ 10 M), ``out/queries.jsonl``
and ``out/store.json``. Notes follow our format (front matter with tags and aliases, a state of
a few hundred tokens, 10–40 dated history entries, sometimes an H3 in the state and a
References section); prose mixes Spanish and English (30–90 % Spanish per note) with inline
code and code blocks. Words are drawn from a Zipf-like vocabulary (function words, common
words, systems, then a long tail of made-up identifiers); every note has a topic (a system,
an aspect in both languages, a code name) whose words recur in it, and every entry has a rare
word of its own, so queries naming them behave like real ones.

Each note depends only on the seed and its position, so a smaller scale is a prefix of a
larger one, and the same seed gives the same bytes.
"""

from __future__ import annotations

import json
import os
import random
import unicodedata
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from itertools import accumulate
from pathlib import Path

from benchmarks.perf.vocab import (
    ASPECTS,
    COMPONENTS,
    EN_CONTENT,
    EN_FUNCTION,
    ES_CONTENT,
    ES_FUNCTION,
    FOLDERS,
    SYLLABLES,
)
from benchmarks.perf.writer import Writer
from memory.model.text import slugify

GENERATOR_VERSION = 1
NOTES_PER_SCALE = 220
TOKENS_PER_NOTE = 4_550  # mean cl100k tokens of a note
CHARS_PER_TOKEN = 3.6  # of this generator's text, measured with cl100k
TAIL_WORDS = 12_000
ZIPF_EXPONENT = 1.0
TAIL_SHARE = 0.1  # made-up identifiers among the words of prose
QUERIES = 200


@dataclass(frozen=True)
class Topic:
    """What one note is about."""

    note_id: str
    component: str
    aspect: str  # English
    aspecto: str  # Spanish
    codename: str
    spanish: float  # share of the prose in Spanish

    @property
    def title(self) -> str:
        if self.spanish > 0.6:
            return f"{self.aspecto.capitalize()} de {self.component}"
        return f"{self.component.capitalize()} {self.aspect}"


@dataclass(frozen=True)
class EntryInfo:
    section: str  # the entry's section id
    word: str  # a rare word of its own


@dataclass(frozen=True)
class GeneratedNote:
    topic: Topic
    text: str
    entries: tuple[EntryInfo, ...]


@dataclass(frozen=True)
class PerfQuery:
    id: str
    question: str
    note: str
    section: str | None
    lang: str
    kind: str


@lru_cache(maxsize=4)
def tail_words(seed: int) -> tuple[str, ...]:
    """Made-up identifiers (``velmarto``, ``tazuli``): the vocabulary's long tail."""
    rng = random.Random(f"tail:{seed}")
    words: dict[str, None] = {}
    while len(words) < TAIL_WORDS:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(3, 4)))] = None
    return tuple(words)


@lru_cache(maxsize=8)
def vocabulary(seed: int, lang: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The words of a language, most frequent first, with cumulative weights: Zipf over the
    real words, and a Zipf tail of made-up identifiers holding ``TAIL_SHARE`` of the mass."""
    head = tuple((ES_FUNCTION + ES_CONTENT) if lang == "es" else (EN_FUNCTION + EN_CONTENT))
    head += tuple(COMPONENTS)
    tail = tail_words(seed)
    head_w = [1.0 / (rank + 2.7) ** ZIPF_EXPONENT for rank in range(len(head))]
    tail_w = [1.0 / (rank + 10) ** ZIPF_EXPONENT for rank in range(len(tail))]
    scale_head = (1 - TAIL_SHARE) / sum(head_w)
    scale_tail = TAIL_SHARE / sum(tail_w)
    weights = [w * scale_head for w in head_w] + [w * scale_tail for w in tail_w]
    return head + tail, tuple(accumulate(weights))


def topics(seed: int, count: int) -> list[Topic]:
    """The first ``count`` topics for a seed (the same prefix at every scale)."""
    rng = random.Random(f"topics:{seed}")
    pairs = [(c, a) for c in COMPONENTS for a in range(len(ASPECTS))]
    rng.shuffle(pairs)
    tail = tail_words(seed)
    out: list[Topic] = []
    for number in range(count):
        component, aspect = pairs[number % len(pairs)]
        lap = number // len(pairs)
        pick = random.Random(f"topic:{seed}:{number}")
        folder = pick.choice(FOLDERS)
        en, es = ASPECTS[aspect]
        suffix = f"-{lap + 1}" if lap else ""
        note_id = f"{folder}/{component}-{slugify(en)}{suffix}"
        out.append(Topic(note_id, component, en, es, tail[(number * 7919) % len(tail)],
                         round(pick.uniform(0.3, 0.9), 2)))
    return out


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed
                                                 if not unicodedata.combining(c)))


def generate_note(seed: int, number: int, topic: Topic) -> GeneratedNote:
    """One note, from the seed and its position only."""
    rng = random.Random(f"note:{seed}:{number}")
    writer = Writer(rng, topic, seed, _words, tail_words(seed))
    target = max(1500, int(rng.lognormvariate(0, 0.35) * TOKENS_PER_NOTE * 0.63))
    text, entries = writer.note(target * CHARS_PER_TOKEN)
    return GeneratedNote(topic, text, tuple(EntryInfo(s, w) for s, w in entries))


def _words(rng: random.Random, seed: int, lang: str, count: int) -> list[str]:
    words, cumulative = vocabulary(seed, lang)
    return rng.choices(words, cum_weights=cumulative, k=count)


def _generate_range(seed: int, start: int, stop: int,
                    all_topics: list[Topic]) -> list[GeneratedNote]:
    return [generate_note(seed, n, all_topics[n]) for n in range(start, stop)]


def notes_for_scale(scale: float) -> int:
    return max(1, round(NOTES_PER_SCALE * scale))


def generate_notes(seed: int, count: int, workers: int | None = None) -> Iterator[GeneratedNote]:
    """The notes in order; several processes share the work above a few hundred notes."""
    all_topics = topics(seed, count)
    workers = workers or min(4, os.cpu_count() or 1)
    if count < 200 or workers < 2:
        for number in range(count):
            yield generate_note(seed, number, all_topics[number])
        return
    step = 100
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(_generate_range, seed, s, min(count, s + step), all_topics)
                   for s in range(0, count, step)]
        for future in futures:
            yield from future.result()


def generate_store(out: Path, scale: float, seed: int = 1,
                   queries: int = QUERIES) -> dict[str, object]:
    """Write ``out/notes``, ``out/queries.jsonl`` and ``out/store.json``; return the manifest."""
    notes_dir = out / "notes"
    notes_dir.mkdir(parents=True, exist_ok=True)
    count = notes_for_scale(scale)
    made: list[GeneratedNote] = []
    chars = 0
    for note in generate_notes(seed, count):
        path = notes_dir / f"{note.topic.note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note.text, encoding="utf-8")
        chars += len(note.text)
        made.append(GeneratedNote(note.topic, "", note.entries))  # drop the text
    query_set = make_queries(made, seed, queries)
    with open(out / "queries.jsonl", "w", encoding="utf-8") as handle:
        for query in query_set:
            handle.write(json.dumps(asdict(query), ensure_ascii=False) + "\n")
    manifest: dict[str, object] = {
        "generator": GENERATOR_VERSION, "seed": seed, "scale": scale, "notes": count,
        "chars": chars, "estimated_tokens": round(chars / CHARS_PER_TOKEN),
        "queries": len(query_set)}
    (out / "store.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_queries(path: Path) -> list[PerfQuery]:
    with open(path, encoding="utf-8") as handle:
        return [PerfQuery(**json.loads(line)) for line in handle if line.strip()]


_ES_TOPIC = ("¿Cómo está la {aspecto} de {component}?", "{aspecto} de {component}",
             "¿Qué decidimos sobre {aspecto} en {component}?",
             "¿Quién revisa la {aspecto} del {codename}?")
_EN_TOPIC = ("How do we handle {component} {aspect}?", "{component} {aspect}",
             "what changed in {aspect} for {component}", "{codename} {aspect} owner")
_ES_ENTRY = ("¿Qué pasó con {word} en {component}?", "{word} {component} fallo")
_EN_ENTRY = ("What happened with {word} in {component}?", "{word} {component} fix")


def _query_language(rng: random.Random, kind: str, topic: Topic) -> str:
    """A topic question's own language; a cross-language one asks in the language the
    note's title is not in; an entry question in either."""
    if kind in ("topic-es", "topic-en"):
        return kind[-2:]
    if kind == "cross":
        return "en" if topic.spanish > 0.6 else "es"
    return rng.choice(("es", "en"))


def make_queries(notes: list[GeneratedNote], seed: int, count: int) -> list[PerfQuery]:
    """Questions naming a note's topic words (Spanish, English, without accents, in the
    other language than the note's title) or an entry's rare word; each knows its note."""
    rng = random.Random(f"queries:{seed}")
    out: list[PerfQuery] = []
    for number in range(count if notes else 0):
        note = notes[rng.randrange(len(notes))]
        topic = note.topic
        kind = rng.choice(("topic-es", "topic-en", "cross", "entry", "entry"))
        lang = _query_language(rng, kind, topic)
        fields = {"aspecto": topic.aspecto, "aspect": topic.aspect,
                  "component": topic.component, "codename": topic.codename}
        section = None
        if kind == "entry" and note.entries:
            entry = note.entries[rng.randrange(len(note.entries))]
            section, fields["word"] = entry.section, entry.word
            template = rng.choice(_ES_ENTRY if lang == "es" else _EN_ENTRY)
        else:
            kind = "topic-" + lang if kind == "entry" else kind
            template = rng.choice(_ES_TOPIC if lang == "es" else _EN_TOPIC)
        question = template.format(**fields)
        if lang == "es" and rng.random() < 0.3:
            question, kind = strip_accents(question), kind + "-noaccent"
        out.append(PerfQuery(f"q{number:04d}", question, topic.note_id, section, lang, kind))
    return out
