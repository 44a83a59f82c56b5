"""Filling ``recall``'s budget with ranked blocks, and grouping what was picked.

**More budget never shows less.** The answer for a budget ``B`` starts from the answer for
``B // 2`` (made the same way) and adds: the best note's state when it now fits its share
(it replaces the blocks of the state shown before), then the ranked blocks in order, each
when it fits, skipping one that does not. So every block ``recall`` shows at ``B`` is shown
at ``2 B`` too: a large block that did not fit at ``B`` can only take what ``2 B`` adds, never
push out what ``B`` found. (Filled from scratch, a 686-token block that fits at 1,000 but
not at 500 used to come first at 1,000 and leave no room for the small, better-placed
blocks that 500 showed.)

Below the three best-ranked blocks, a block that would open a group of its own is left out
when it holds fewer than twice its label's tokens: a third or more of it would be label.

**Groups.** Picked blocks are shown by note (in the order the notes were first picked), then
section, in file order; consecutive blocks share one label. The first group of a note is
labelled ``[note#ref:b2,b4-6]``, the note's next ones ``[#ref:b7]``, where ``ref`` is the
section's shortest name that ``read_section`` reads back (:func:`short_ref`: a history
entry's day when it is the only entry of that day, written ``20260622``). Labels and the
last line are the answer's *framing* (see docs/mcp.md); the rest is the notes' own text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from memory.retrieval.answers import recall_label
from memory.retrieval.zoom import BlockRange, block_ref

TAIL_TOKENS = 5  # kept for the last line: "218 more blocks" (3 tokens, 4 from 1,000 blocks)
# or "nothing else matched" (3)
RUN_TOKENS = 4  # what one more block adds to its group's label (",b7"), at most
TOP_BLOCKS = 3  # the best-ranked blocks: each taken whenever it fits
LABEL_SHARE = 2  # below them, a block opening a group must hold this many times its label
Counter = Callable[[str], int]


@dataclass(frozen=True)
class Unit:
    note: str
    section: str
    block: int  # 0 for a whole section (a state)
    date: str | None
    start: int  # first line, for file order
    text: str
    tokens: int
    score: float
    short: str = ""  # the section's short name (:func:`memory.retrieval.reading.short_ref`)
    of: int = 0  # how many blocks its section has (0: not known)

    @cached_property
    def key(self) -> tuple[str, str, int]:
        return self.note, self.section, self.block

    @cached_property
    def ref(self) -> str:
        """The section's short name, with the block: ``2026-06-22:b3``."""
        return block_ref(self.short or self.section, self.block)


@dataclass(frozen=True)
class Group:
    note: str
    ref: str  # the section's id and block runs: ``2026-06-22-dislikes-argocd:b1,b3-4``
    date: str | None
    text: str  # the label and the notes' lines, as shown
    tokens: int
    short: str = ""  # the label's reference: ``20260622:b1,b3-4``
    label: str = ""  # the first line of ``text``: ``[note#20260622:b1,b3-4]``

    @property
    def body(self) -> str:
        """The notes' lines alone."""
        return self.text[len(self.label):]


@dataclass(frozen=True)
class Recalled:
    query: str
    budget: int
    groups: tuple[Group, ...]
    tokens: int  # of the text the groups show (labels included)
    left_out: int  # matching blocks that did not fit
    left_tokens: int
    next_ref: str | None  # ``note#section-id:b6``
    next_tokens: int
    next_short: str | None = None  # the same, by the section's short name

    @property
    def note_text(self) -> str:
        """The notes' own lines the answer shows, without labels or the last line."""
        return "".join(g.body for g in self.groups)


def room(budget: int) -> int:
    return budget - TAIL_TOKENS


def add_to(base: Sequence[Unit], state: Unit | None, ranked: Sequence[Unit], budget: int,
           grouped: Grouped) -> list[Unit]:
    """``base`` (what a smaller budget picked) and, greedily by rank, what else fits in
    ``budget``: the state first (replacing the state's blocks in ``base``), then each ranked
    block that fits, except a small one below the ``TOP_BLOCKS`` best that would open a group
    of its own: with fewer than ``LABEL_SHARE`` times its label's tokens, it would be mostly
    label. Only what this call adds is ever dropped to fit. ``grouped``: :func:`groups` with
    the answer's counter, kept for all its fills (:class:`Grouped`)."""
    picked = list(base)
    limit = room(budget)
    if state is not None and state.key not in {u.key for u in picked}:
        rest = [u for u in picked if (u.note, u.section) != (state.note, state.section)]
        if _shown_tokens([state, *rest], grouped) <= limit:
            picked = [state, *rest]
    kept = len(picked)  # what fits already (base fitted a smaller budget): never dropped
    used = _shown_tokens(picked, grouped)
    whole = {(u.note, u.section) for u in picked if u.block == 0}
    keys = {u.key for u in picked}
    notes = {u.note for u in picked}
    sections = {(u.note, u.section) for u in picked}
    for rank, unit in enumerate(ranked):
        if used + unit.tokens > limit or unit.key in keys or (unit.note, unit.section) in whole:
            continue  # (a block that does not fit alone is not worth counting its label)
        label = _label_cost(unit, notes, sections, grouped.count)
        if rank >= TOP_BLOCKS and (unit.note, unit.section) not in sections and \
                unit.tokens < LABEL_SHARE * label:
            continue  # alone under its own label, a third or more of it would be label
        cost = unit.tokens + label
        if used + cost <= limit:
            picked.append(unit)
            keys.add(unit.key)
            notes.add(unit.note)
            sections.add((unit.note, unit.section))
            used += cost
    while len(picked) > kept and _shown_tokens(picked, grouped) > limit:
        picked.pop()  # labels ran longer than estimated: drop the last block this call added
    return picked


def _label_cost(unit: Unit, notes: set[str], sections: set[tuple[str, str]],
                count: Counter) -> int:
    if (unit.note, unit.section) in sections:
        return RUN_TOKENS
    return count(recall_label(unit.note, unit.ref, unit.date, first=unit.note not in notes))


def _shown_tokens(picked: Sequence[Unit], grouped: Grouped) -> int:
    return sum(g.tokens for g in grouped(picked))


class Grouped:
    """:func:`groups` with one counter, each list of picked units grouped once: an answer's
    fill at a budget starts from what half the budget picked, which that fill grouped to
    check it fits, and the answer shows the groups its last fill checked."""

    def __init__(self, count: Counter) -> None:
        self.count = count
        self._made: dict[tuple[Unit, ...], list[Group]] = {}

    def __call__(self, picked: Sequence[Unit]) -> list[Group]:
        """The groups of ``picked`` (shared: not to be changed)."""
        key = tuple(picked)  # units equal in every field group alike
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = groups(picked, self.count)
        return made


def left_over(picked: Sequence[Unit], ranked: Sequence[Unit]) -> list[Unit]:
    """Ranked blocks the answer does not show (nor holds inside a whole section)."""
    keys = {u.key for u in picked}
    whole = {(u.note, u.section) for u in picked if u.block == 0}
    return [u for u in ranked if u.key not in keys and (u.note, u.section) not in whole]


def groups(picked: Sequence[Unit], count: Counter) -> list[Group]:
    """Picked units by note (in the order the notes were first picked), then section, in
    file order; consecutive blocks of one section share a label."""
    order = {note: i for i, note in enumerate(dict.fromkeys(u.note for u in picked))}
    by_section: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in picked:
        by_section[(unit.note, unit.section)].append(unit)
    out = []
    shown: set[str] = set()
    for (note, section), units in sorted(by_section.items(), key=lambda kv: (
            order[kv[0][0]], min(u.start for u in kv[1]))):
        units = sorted(units, key=lambda u: u.start)
        blocks = [u.block for u in units if u.block]
        runs = ",".join(r.span for r in block_runs(section, blocks)) if blocks else ""
        ref = f"{section}:{runs}" if runs else section
        short_name = units[0].short or section
        whole = runs == f"b1-{units[0].of}" or runs == "b1" and units[0].of == 1
        short = f"{short_name}:{runs}" if runs and not whole else short_name
        body = "".join(u.text if u.text.endswith("\n") else u.text + "\n" for u in units)
        date = units[0].date
        label = recall_label(note, short, date, first=note not in shown)
        shown.add(note)
        out.append(Group(note, ref, date, label + body, count(label + body), short, label))
    return out


def block_runs(section: str, blocks: list[int]) -> list[BlockRange]:
    """Block numbers (ascending) as runs: [2, 4, 5, 6, 9] -> b2, b4-6, b9."""
    runs: list[BlockRange] = []
    for number in blocks:
        if runs and number == runs[-1].last + 1:
            runs[-1] = BlockRange(section, runs[-1].first, number)
        else:
            runs.append(BlockRange(section, number, number))
    return runs


Block = tuple[str, str, int]  # (note, section, block number); 0: the whole section


def shown_blocks(groups: Sequence[Group]) -> set[Block]:
    """Every block an answer's groups show, read back from their refs (``section:b2,b4-6``);
    block 0 for a whole section (the monotonicity checks compare two budgets' answers)."""
    found: set[Block] = set()
    for group in groups:
        section, _, runs = group.ref.partition(":")
        if not runs:
            found.add((group.note, section, 0))
        for run in filter(None, runs.split(",")):
            first, _, last = run.removeprefix("b").partition("-")
            found.update((group.note, section, n)
                         for n in range(int(first), int(last or first) + 1))
    return found
