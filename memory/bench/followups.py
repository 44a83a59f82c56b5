"""LoCoMo questions as vague follow-ups: the speakers' names go, the topic moves to the context.

Each question is rewritten so that its wording no longer names the conversation: every
occurrence of either speaker's name (and of a short form the conversation itself uses, such as
"Mel" for Melanie) becomes "they"/"them", and a possessive ("Caroline's") becomes "their". The
question's ``context`` is what a user's earlier turn looked like: the previous question about
the same conversation, in its original wording, and its gold answer (when the dataset has one).
The first question of a conversation, and one whose previous question names nobody, gets an
opener naming the speakers first, so every context names the topic.

**Topic switches** (:func:`topic_switches`): every ``SWITCH_EVERY``-th question of a
conversation is also asked once more, in its own wording (names kept), after a context
about another conversation (the next one's opener, one of its questions and its answer):
the user changes topic. They are extra questions (id ``<id>:switch``, category
``topic-switch``), so the follow-ups themselves stay as they were; a policy that trusts
the context too much routes them to the wrong conversation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from memory.bench.questions import Question, one_line

_SUBJECT_BEFORE = frozenset(
    "did do does is are was were has have had will would could can should might may must "
    "didn't don't doesn't isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't "
    "couldn't can't shouldn't and or but that if when while because as since so than though "
    "where how why what who which whose".split())
# "them" after a preposition or a verb that takes a person ("suggest Jolene to try"); after
# any other word (a noun: "the necklace Calvin received") the name is a subject again
_OBJECT_BEFORE = frozenset(
    "to for by with between of from behind besides about at on in into like than among "
    "suggest suggests help helps give gives gave make makes made support supports inspire "
    "inspires motivate motivates mesmerize mesmerizes recommend recommends tell tells told ask "
    "asks offer offers show shows gift invite invites impress impresses frustrate frustrates "
    "encourage encourages remind reminds teach teaches taught thank thanks meet met visit "
    "visits call calls send sends sent bring brings brought introduce introduces describe "
    "describes".split())
_NOT_VERBS = frozenset("always sometimes perhaps afterwards nowadays besides towards "
                       "was has does".split())
# singular auxiliaries that must agree with "they", right before or after the name
_PLURAL = {"is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't",
           "wasn't": "weren't", "hasn't": "haven't", "doesn't": "don't"}
_WORD = re.compile(r"[A-Za-z]+(?:['’][a-z]+)?")


@dataclass(frozen=True)
class Speakers:
    """The two speakers of a conversation and the forms of their names to take out."""

    a: str
    b: str
    forms: tuple[str, ...]

    def opener(self) -> str:
        return f"Let's go over my chats with {self.a} and {self.b}."

    def named_in(self, text: str) -> bool:
        return _pattern(self.forms).search(text) is not None


def speakers_of(a: str, b: str, turn_texts: Iterable[str]) -> Speakers:
    """The speakers' names and their short forms: a proper prefix of a name, 3 letters or
    more, that the turns use capitalised and never in lower case ("Mel", not "And")."""
    words = Counter(w for text in turn_texts for w in _WORD.findall(text))
    short = [name[:size] for name in (a, b) for size in range(3, len(name))
             if words[name[:size]] and not words[name[:size].lower()]]
    forms = sorted({f for f in (a, b, *short) if f}, key=lambda f: (-len(f), f))
    return Speakers(a, b, tuple(forms))


def _pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    name = "|".join(re.escape(f) for f in forms)
    # "Caroline and Melanie('s)", or one name; "Johns's" (a typo in the data) is a possessive
    return re.compile(rf"\b(?:(?P<both>[Bb]oth\s+)(?=(?:{name})\s+and\s+(?:{name})\b))?"
                      rf"(?P<names>(?:{name})(?:\s+and\s+(?:{name}))?)"
                      rf"(?:(?P<poss>s?['’]s)\b|\b)")


def strip_names(question: str, speakers: Speakers) -> str:
    """The question with the speakers' names replaced by they/them/their."""
    pattern = _pattern(speakers.forms)
    out: list[str] = []
    position = 0
    for match in pattern.finditer(question):
        before = question[position:match.start()]
        previous = _last_word("".join(out) + before)
        if match["both"]:
            word = "both of them" if not match["poss"] else "both their"
        elif match["poss"]:
            word = "their"
        elif previous is not None and _is_object_before(previous):
            word = "them"
        else:
            word = "they"
            before = _agree_before(before)
        out.append(before)
        out.append(_capitalised(word) if _starts_sentence("".join(out)) else word)
        position = match.end()
        if word == "they":
            position = _agree_after(question, position, out)
    out.append(question[position:])
    return "".join(out)


def _is_object_before(word: str) -> bool:
    lower = word.lower()
    return lower in _OBJECT_BEFORE or (lower not in _SUBJECT_BEFORE and len(lower) > 4
                                       and lower.endswith(("ed", "ing"))
                                       and not lower.endswith("thing"))


def _last_word(text: str) -> str | None:
    if re.search(r"[.?!:;]\s*$", text):
        return None
    words = _WORD.findall(text)
    return words[-1] if words else None


def _starts_sentence(text: str) -> bool:
    return not text.strip() or re.search(r"[.?!]\s*$", text) is not None


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


def _agree_before(before: str) -> str:
    """'has Caroline' → 'have they': a singular auxiliary right before the new subject."""
    match = re.search(r"\b([A-Za-z]+(?:['’]t)?)(\s+)$", before)
    if match is None or match[1].lower().replace("’", "'") not in _PLURAL:
        return before
    plural = _PLURAL[match[1].lower().replace("’", "'")]
    plural = _capitalised(plural) if match[1][:1].isupper() else plural
    return before[:match.start(1)] + plural + match[2]


def _agree_after(question: str, position: int, out: list[str]) -> int:
    """'Caroline is' → 'they are', 'Gina thinks' → 'they think': the verb right after the
    new subject."""
    match = re.match(r"(\s+)([A-Za-z]+(?:['’]t)?)\b", question[position:])
    if match is None:
        return position
    verb = match[2].lower().replace("’", "'")
    plural = _PLURAL.get(verb) or _third_person_stem(verb)
    if plural is None:
        return position
    out.append(match[1] + plural)
    return position + match.end()


def _third_person_stem(word: str) -> str | None:
    """'thinks' → 'think', 'tries' → 'try', 'watches' → 'watch'; None if not such a verb."""
    if (len(word) < 4 or not word.endswith("s") or word.endswith(("ss", "us", "is"))
            or word in _NOT_VERBS):
        return None
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "oes")):
        return word[:-2]
    return word[:-1]


SWITCH_EVERY = 10  # one question in this many is also asked after another topic's context
SWITCH_CATEGORY = "topic-switch"


@dataclass
class FollowUpCounts:
    questions: int = 0
    names_removed: int = 0
    openers: int = 0
    switches: int = 0

    def summary(self) -> str:
        return (f"follow-ups: {self.names_removed} of {self.questions} questions had a "
                f"speaker's name removed; {self.openers} contexts start with the opener; "
                f"{self.switches} topic switches added")


@dataclass(frozen=True)
class Talk:
    """One conversation's questions as written, their LoCoMo records, and its speakers."""

    questions: list[Question]
    qas: dict[str, dict[str, Any]]
    speakers: Speakers


def topic_switches(talks: list[Talk], counts: FollowUpCounts) -> Iterator[tuple[int, Question]]:
    """(conversation index, question) for each topic switch: a conversation's question
    number ``SWITCH_EVERY`` × n + ``SWITCH_EVERY`` // 2, in its own wording, after the
    next conversation's opener, its question of the same number (or its last) and that
    question's answer."""
    if len(talks) < 2:
        return
    for index, talk in enumerate(talks):
        other = talks[(index + 1) % len(talks)]
        if not other.questions:
            continue
        for number in range(SWITCH_EVERY // 2, len(talk.questions), SWITCH_EVERY):
            question = talk.questions[number]
            before = other.questions[min(number, len(other.questions) - 1)]
            context = [other.speakers.opener(), before.question]
            answer = other.qas.get(before.id, {}).get("answer")
            if answer is not None and one_line(str(answer)):
                context.append(one_line(str(answer)))
            counts.switches += 1
            yield index, replace(question, id=f"{question.id}:switch",
                                 context=tuple(context), category=SWITCH_CATEGORY)


def follow_ups(questions: Iterable[Question], qas: dict[str, dict[str, Any]],
               speakers: Speakers, counts: FollowUpCounts) -> Iterator[Question]:
    """The questions of one conversation, in order, as follow-ups. ``qas`` maps a question id
    to its LoCoMo record (for the gold ``answer``)."""
    previous: Question | None = None
    for question in questions:
        context: list[str] = []
        if previous is None or not speakers.named_in(previous.question):
            context.append(speakers.opener())
            counts.openers += 1
        if previous is not None:
            context.append(previous.question)
            answer = qas.get(previous.id, {}).get("answer")
            if answer is not None and one_line(str(answer)):
                context.append(one_line(str(answer)))
        vague = strip_names(question.question, speakers)
        counts.questions += 1
        counts.names_removed += vague != question.question
        yield replace(question, question=vague, context=tuple(context))
        previous = question
