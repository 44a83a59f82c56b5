"""Writes the text of one generated note: front matter, state, history, references.

Prose is one line per paragraph (as agents write notes), sentences of Zipf-drawn words with
the note's topic words mixed in; entries sometimes carry a bullet list or a code block. Only
words, inline code, numbers and simple punctuation are written, so no generated line can be
mistaken for Markdown structure (a heading, a thematic break, a fence).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from benchmarks.perf.vocab import CODE_VERBS, COMPONENTS, NAMES
from memory.model.text import slugify

if TYPE_CHECKING:
    from benchmarks.perf.generator import Topic

DrawWords = Callable[[random.Random, int, str, int], list[str]]

_CODE: dict[str, tuple[str, ...]] = {
    "bash": ("kubectl -n {c} rollout restart deployment/{c}-{w}",
             "{c}ctl {v} --{w}={n} --{w2}", "curl -s https://{c}.internal/{w}/{v} | jq .{w2}",
             "export {W}_{W2}={n}", "./scripts/{v}-{w}.sh {c} prod --dry-run"),
    "python": ("def {v}_{w}(client, retries={n}):", "    return client.{v}('{c}', key='{w2}')",
               "{w} = settings.{W}_{W2} or {n}", "logger.info('{c} {v} %s', {w}_id)"),
    "yaml": ("{c}:", "  {w}: {n}", "  {w2}: true", "  {v}_timeout: {n}s"),
    "sql": ("SELECT {w}, count(*) FROM {c}_{w2} GROUP BY 1;",
            "UPDATE {c}_{w} SET {w2} = NULL WHERE id > {n};",
            "CREATE INDEX {w}_{w2}_idx ON {c}_{w} ({w2});"),
    "text": ("{c} {v} failed: {w} {w2} after {n} ms", "WARN {c}.{w}: {v} took {n}s",
             "ERROR {W}_{W2} not set ({n})"),
}


class Writer:
    """Composes one note's text for a topic, from a seeded random generator."""

    def __init__(self, rng: random.Random, topic: Topic, seed: int, draw: DrawWords,
                 tail: tuple[str, ...]) -> None:
        self.rng, self.topic, self.seed, self.draw, self.tail = rng, topic, seed, draw, tail
        self.topic_words = [topic.component, topic.codename, *topic.aspect.split(),
                            *topic.aspecto.split()[:1]]

    # -- prose -------------------------------------------------------------------------
    def lang(self) -> str:
        return "es" if self.rng.random() < self.topic.spanish else "en"

    def sentence(self, lang: str, extra: list[str] | None = None) -> str:
        rng = self.rng
        words = self.draw(rng, self.seed, lang, rng.randint(7, 22))
        for word in [*(extra or []), *rng.sample(self.topic_words, rng.randint(0, 2))]:
            words[rng.randrange(len(words))] = word
        if rng.random() < 0.25:
            words[rng.randrange(len(words))] = f"`{self._identifier()}`"
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words)), f"{rng.randint(2, 900)} "
                         + rng.choice(("ms", "s", "%", "MB", "GB", "req/s")))
        if rng.random() < 0.3:
            words.insert(rng.randrange(1, len(words)), ",")
        text = " ".join(words).replace(" ,", ",")
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?"))

    def paragraph(self, extra: list[str] | None = None, sentences: int = 0) -> str:
        lang = self.lang()
        count = sentences or self.rng.randint(2, 5)
        return " ".join(self.sentence(lang, extra if i == 0 else None) for i in range(count))

    def _identifier(self) -> str:
        rng = self.rng
        word = self.draw(rng, self.seed, "en", 1)[0].lower()
        pattern = rng.randrange(3)
        if pattern == 0:
            return f"{self.topic.component}.{word}"
        if pattern == 1:
            return f"{rng.choice(CODE_VERBS)}_{word}()"
        return f"{slugify(word) or 'x'}/{rng.choice(COMPONENTS)}.yaml"

    def code_block(self) -> str:
        rng = self.rng
        language = rng.choice(tuple(_CODE))
        lines = [self._code_line(rng.choice(_CODE[language]))
                 for _ in range(rng.randint(3, 9))]
        return f"```{language}\n" + "\n".join(lines) + "\n```"

    def _code_line(self, template: str) -> str:
        rng = self.rng
        w, w2 = (slugify(x).replace("-", "_") or "x"
                 for x in self.draw(rng, self.seed, "en", 2))
        return template.format(c=self.topic.component, v=rng.choice(CODE_VERBS), w=w, w2=w2,
                               W=w.upper(), W2=w2.upper(), n=rng.randint(1, 5000))

    # -- the note ----------------------------------------------------------------------
    def note(self, target_chars: float) -> tuple[str, list[tuple[str, str]]]:
        """The note's text and, per entry, (section id, rare word)."""
        topic, rng = self.topic, self.rng
        spanish = topic.spanish > 0.6
        head = self.front_matter() + f"# {topic.title}\n\n"
        if rng.random() < 0.3:
            head += self.paragraph(sentences=1) + "\n\n"
        state = self.state("## Estado actual" if spanish else "## Current state")
        refs = self.references() if rng.random() < 0.4 else ""
        entries_count = rng.randint(10, 40)
        budget = max(400.0, target_chars - len(head) - len(state) - len(refs))
        history, entries = self.history("## Historial" if spanish else "## History",
                                        entries_count, budget)
        return head + state + history + refs, entries

    def front_matter(self) -> str:
        topic = self.topic
        tags = [topic.component, slugify(topic.aspect), topic.codename]
        aliases = [topic.aspecto if topic.spanish <= 0.6 else topic.aspect, topic.codename]
        return (f"---\ntitle: {json.dumps(topic.title, ensure_ascii=False)}\n"
                f"tags: [{', '.join(tags)}]\naliases: [{', '.join(aliases)}]\n---\n")

    def state(self, heading: str) -> str:
        rng = self.rng
        target = rng.uniform(200, 450) * 3.55
        lines: list[str] = []
        while sum(len(line) for line in lines) < target:
            lines.append("- " + self.paragraph(sentences=rng.randint(1, 2)))
        text = heading + "\n" + "\n".join(lines) + "\n\n"
        if rng.random() < 0.3:
            title = "Responsables" if heading.startswith("## Estado") else "Owners"
            people = rng.sample(NAMES, 2)
            text += f"### {title}\n- {people[0]}: {self.sentence(self.lang())}\n" \
                    f"- {people[1]}: {self.sentence(self.lang())}\n\n"
        return text

    def history(self, heading: str, count: int,
                budget: float) -> tuple[str, list[tuple[str, str]]]:
        rng = self.rng
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 300))
        parts = [heading + "\n"]
        entries: list[tuple[str, str]] = []
        for _ in range(count):
            day += dt.timedelta(days=rng.randint(1, 25))
            rare = rng.choice(self.tail)
            title = self._entry_title(rare)
            clock = f" {rng.randint(8, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}"
            stamp = day.isoformat() + (clock if rng.random() < 0.3 else "")
            entries.append((f"{day.isoformat()}-{slugify(title)}", rare))
            parts.append(f"### {stamp} · {title}\n" + self.entry_body(budget / count, rare))
        return "".join(parts), entries

    def _entry_title(self, rare: str) -> str:
        rng = self.rng
        words = self.draw(rng, self.seed, self.lang(), rng.randint(1, 3))
        words = [w for w in words if w.isalpha()] or ["cambio"]
        title = " ".join([rare, *words[:2], rng.choice(self.topic_words)])
        return title[0].upper() + title[1:]

    def entry_body(self, chars: float, rare: str) -> str:
        rng = self.rng
        blocks: list[str] = []
        size = 0.0
        target = chars * rng.uniform(0.5, 1.5)
        while size < target or not blocks:
            roll = rng.random()
            if roll < 0.12 and blocks:
                block = self.code_block()
            elif roll < 0.25:
                block = "\n".join("- " + self.sentence(self.lang())
                                  for _ in range(rng.randint(2, 4)))
            else:
                block = self.paragraph([rare] if not blocks or rng.random() < 0.3 else None)
            blocks.append(block)
            size += len(block)
        return "\n\n".join(blocks) + "\n\n"

    def references(self) -> str:
        rng = self.rng
        items = [f"- {rng.choice(COMPONENTS)}/{slugify(w) or 'notes'}"
                 for w in self.draw(rng, self.seed, "en", rng.randint(2, 4))]
        return "## References\n" + "\n".join(items) + "\n"
