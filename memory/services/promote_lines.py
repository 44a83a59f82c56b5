"""What a promotion writes: the state line proposed for a history entry, by one of a few rules
(no LLM), and the back-reference that ties it to its entry.

A proposed line is ``- <text> (history: <entry id>)``. The rules pick the text from the entry
(its body's lines and their sentences; list markers and code fences left out), given the
questions that reached the entry (from the usage log):

- ``overlap``: the sentence sharing most words with all the questions together (the first
  rule);
- ``votes``: each question votes for the line of the entry that matches it best (the words it
  shares with the line, stemmed as the index stems them and weighted by how few of the
  entry's lines hold them, so that a name on every line counts for little; at least two
  shared words), and within that line for its sentence that matches it best; the sentence
  with most votes wins (ties: the earlier). What several questions came for, rather than what
  all of them together mention;
- ``outcome``: the line the votes chose, and in it the sentence that states an outcome (a
  number, a code span, a decision word such as ``now``, ``never``, ``decided``,
  ``switched``) among those sharing a word with the questions that voted for it; the voted
  sentence when none does. An entry often opens with the problem and ends with the fix: the
  questions' words match both, the outcome is what a reader keeps;
- ``last``: the entry's last sentence, where an entry usually says how it ended;
- ``terms``: a compressed line of the entry's key terms: the words the questions share with the
  entry, and its numbers and code spans, in the entry's order.

Each candidate also counts the questions that **came for its line**: those whose best line of
the entry (as ``votes`` finds it) the proposed text carries (:func:`agreeing`); the promoter's
precision estimate is made of that count.
Which rule is the default was chosen on the promotion bench (docs/promotion.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.index.words import exact_terms

if TYPE_CHECKING:  # the CLI imports the rules' names at start: no note parser for that
    from memory.model.note import Section

RULES = ("overlap", "votes", "outcome", "last", "terms")
Terms = Callable[[str], Iterable[str]]  # a text's terms (the index's stems, or exact words)
DEFAULT_RULE = "overlap"
MAX_LINE_CHARS = 220
MAX_TERMS = 16
MIN_VOTE_WORDS = 2
MIN_CARRIED_SHARE = 0.5
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑ¿¡`\"(])")
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|`{3}.*$")
_BACK_REFERENCE = re.compile(r"\s*\(history: ([^()\s]+)\)\s*$")
_CODE = re.compile(r"`[^`\n]+`")
_NUMBER = re.compile(r"\d")
_TOKEN = re.compile(r"`[^`\n]+`|[\w.%/-]+")
# words that state an outcome: a decision, a rule, a change made (English and Spanish,
# accent-folded as exact terms are)
OUTCOME_WORDS = frozenset((
    "now", "never", "always", "must", "decided", "decision", "agreed", "switched", "moved",
    "replaced", "fixed", "fix", "changed", "chose", "chosen", "rule", "instead", "uses",
    "ahora", "nunca", "siempre", "debe", "decidimos", "decidio", "decision", "acordamos",
    "cambiamos", "cambio", "pasamos", "paso", "sustituimos", "arreglado", "arreglo", "regla",
    "usamos", "usa",
))


def back_reference(entry: Section | str) -> str:
    """``(history: <entry id>)``: what ties a state line to its entry."""
    return f"(history: {entry if isinstance(entry, str) else entry.id})"


def referenced_entry(line: str) -> str | None:
    """The entry id a state line's back-reference names (None: it has none)."""
    found = _BACK_REFERENCE.search(line)
    return found.group(1) if found else None


def line_text(line: str) -> str:
    """A promoted line's own text: without its list marker, back-reference and a cut's ``…``."""
    text = _BACK_REFERENCE.sub("", line.strip())
    return text.removeprefix("- ").strip().removesuffix("…").strip()


def sentences(entry: Section) -> list[str]:
    """The entry's sentences, in order (its heading, code fences and list markers left out)."""
    return [s for line in body_lines(entry) for s in split_sentences(line)]


def body_lines(entry: Section) -> list[str]:
    """The entry's body lines with text, unmarked (code fences and their content left out)."""
    body = entry.text.split("\n", 1)[1] if "\n" in entry.text else ""
    out: list[str] = []
    in_fence = False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        line = unmarked(raw)
        if line and not in_fence:
            out.append(line)
    return out


def unmarked(line: str) -> str:
    """A line of an entry as its sentences are read: without a list marker or a fence's
    info string, trimmed."""
    return _MARKUP.sub("", line).strip()


def split_sentences(line: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(line) if s.strip()]


def asked_terms(questions: list[str] | tuple[str, ...]) -> set[str]:
    """The words of the questions (a hashed question has none)."""
    from memory.state.usage_rows import is_hashed

    asked: set[str] = set()
    for question in questions:
        if not is_hashed(question):
            asked |= set(exact_terms(question))
    return asked


def proposed_line(entry: Section, questions: list[str] | tuple[str, ...],
                  rule: str = DEFAULT_RULE, terms: Terms = exact_terms) -> str:
    """The state line ``rule`` proposes for ``entry``, with its back-reference; ``terms``
    gives the words a question and a line are matched by (the votes' rules)."""
    return f"- {cut(proposed_text(entry, questions, rule, terms))} {back_reference(entry)}"


def proposed_text(entry: Section, questions: list[str] | tuple[str, ...],
                  rule: str = DEFAULT_RULE, terms: Terms = exact_terms) -> str:
    if rule not in RULES:
        raise ValueError(f"rule {rule!r} is not one of {', '.join(RULES)}")
    found = sentences(entry) or [entry.title]
    asked = asked_terms(questions)
    if rule == "last":
        return found[-1]
    if rule == "terms":
        return key_terms(found, asked) or best_overlap(found, asked)
    if rule in ("votes", "outcome"):
        chosen = Ballot(body_lines(entry) or [entry.title], terms).count(questions)
        if chosen is None:
            return best_overlap(found, asked)
        if rule == "outcome":
            return outcome(chosen.sentences, asked_terms(chosen.voters))
        return chosen.sentence
    return best_overlap(found, asked)


def cut(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS].rsplit(" ", 1)[0] + "…"


def overlap(sentence: str, asked: set[str]) -> int:
    return len(set(exact_terms(sentence)) & asked)


def best_overlap(found: list[str], asked: set[str]) -> str:
    """The sentence sharing most words with the questions (the first of equals)."""
    return max(found, key=lambda s: (overlap(s, asked), -found.index(s)))


def states_outcome(sentence: str) -> bool:
    """Whether a sentence states an outcome: a number, a code span or a decision word."""
    return bool(_NUMBER.search(sentence) or _CODE.search(sentence)
                or set(exact_terms(sentence)) & OUTCOME_WORDS)


def outcome(found: list[str], asked: set[str]) -> str:
    """Of the sentences sharing a word with the questions (all of them when none does), one
    that states an outcome, most shared words first, the later of equals."""
    shared = [s for s in found if overlap(s, asked)] or found
    return max(shared, key=lambda s: (states_outcome(s), overlap(s, asked), found.index(s)))


def key_terms(found: list[str], asked: set[str]) -> str:
    """The words the questions share with the entry, its numbers and code spans, in the
    entry's order, each once ('' when there are none)."""
    out: list[str] = []
    seen: set[str] = set()
    for sentence in found:
        for match in _TOKEN.finditer(sentence):
            token = match.group(0).strip(".,;:")
            terms = exact_terms(token)
            keep = token.startswith("`") or bool(_NUMBER.search(token)) \
                or bool(terms and terms[0] in asked)
            if keep and token and token.lower() not in seen:
                seen.add(token.lower())
                out.append(token)
                if len(out) >= MAX_TERMS:
                    return " · ".join(out)
    return " · ".join(out)


# -- votes and consensus ------------------------------------------------------------------
@dataclass(frozen=True)
class Chosen:
    """What the votes chose: a line of the entry, its sentence, who voted for them."""

    line: str
    sentences: list[str]  # the line's sentences
    sentence: str
    voters: tuple[str, ...]  # the questions that voted for the line


class Ballot:
    """Each question votes for the entry's line that matches it best, and in it for a
    sentence (see the module's docstring)."""

    def __init__(self, lines: list[str], terms: Terms = exact_terms) -> None:
        self.lines, self.terms = lines, terms
        words = [set(terms(line)) for line in lines]
        held = Counter(t for found in words for t in found)
        self.weights = [{t: math.log(1 + len(lines) / held[t]) for t in found}
                        for found in words]

    def best_line(self, question: str) -> int | None:
        """The line that matches ``question`` best, when it shares at least MIN_VOTE_WORDS
        of its words (all of a shorter question's); None otherwise."""
        from memory.state.usage_rows import is_hashed

        if not question or is_hashed(question):
            return None
        asked = set(self.terms(question))
        scored = [(sum(w.get(t, 0.0) for t in asked), -i) for i, w in enumerate(self.weights)
                  if asked and len(asked & w.keys()) >= min(MIN_VOTE_WORDS, len(asked))]
        return -max(scored)[1] if scored else None

    def best_sentence(self, line: int, question: str) -> str:
        found = split_sentences(self.lines[line]) or [self.lines[line]]
        asked = set(self.terms(question))
        return max(found, key=lambda s: (len(set(self.terms(s)) & asked), -found.index(s)))

    def count(self, questions: Iterable[str]) -> Chosen | None:
        """The sentence with most votes (None when no question voted)."""
        lines: dict[int, list[str]] = {}
        votes: Counter[tuple[int, str]] = Counter()
        for question in dict.fromkeys(questions):
            best = self.best_line(question)
            if best is not None:
                lines.setdefault(best, []).append(question)
                votes[(best, self.best_sentence(best, question))] += 1
        if not votes:
            return None
        order = {key: i for i, key in enumerate(votes)}
        line, sentence = max(votes, key=lambda k: (votes[k], -order[k]))
        return Chosen(self.lines[line], split_sentences(self.lines[line]) or [sentence],
                      sentence, tuple(lines[line]))


def agreeing(entry: Section, line: str, questions: list[str] | tuple[str, ...],
             terms: Terms = exact_terms) -> int:
    """How many of the (plain, distinct) questions came for the proposed line: their best
    line of ``entry`` (as the votes find it) is one the proposed line carries."""
    from memory.state.usage_rows import is_hashed

    asked = [q for q in dict.fromkeys(questions) if q and not is_hashed(q)]
    ballot = Ballot(body_lines(entry) or [entry.title], terms)
    picks = [ballot.best_line(q) for q in asked]
    return sum(p is not None and carries(line, ballot.lines[p]) for p in picks)


def carries(line: str, text: str) -> bool:
    """Whether a state line carries ``text`` (a line of an entry): its own text
    (:func:`line_text`) is a sentence of it, whole or its first part when the line was cut,
    or holds at least half of its words."""
    own = " ".join(line_text(line).split())
    if not exact_terms(own):
        return False
    plain = " ".join(text.split())
    if any(sentence.startswith(own) for sentence in split_sentences(unmarked(plain))):
        return True
    words = set(exact_terms(plain))
    return bool(words) and len(words & set(exact_terms(own))) >= MIN_CARRIED_SHARE * len(words)
