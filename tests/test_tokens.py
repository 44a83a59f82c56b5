"""Token counts from parts (a note from its sections, a history from its entries) are exact."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EXAMPLE
from memory.index.documents import section_tokens
from memory.model.note import parse_note
from memory.state.tokens import TokenCounter, count_exact

# Line breaks, spaces of several kinds, '#', punctuation, letters, digits and an apostrophe:
# what the cl100k pre-tokenizer treats differently.
PIECES = ["\n", "\r\n", " ", "  ", "\t", "\u00a0", "\u3000", "#", "## ", "### 2026", ".", ",",
          "'s", "'", "a", "Ñandú", "x1", "123", "```", "-", "é", "東"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_counting_parts_is_counting_the_whole(parts: list[str]) -> None:
    assert TokenCounter().count_parts(parts) == count_exact("".join(parts))


@settings(max_examples=300, deadline=None)
@given(TEXT, st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=4))
def test_counting_at_every_cut_is_exact(head: str, rest: list[tuple[str, str]]) -> None:
    """Every part but the first opens with '#' and every part ends a line: all cuts apply."""
    parts = [head + "\n"] + [f"#{title}\n{body}\n" for title, body in rest]
    assert TokenCounter().count_parts(parts) == count_exact("".join(parts))


def test_cuts_before_headings_add_up() -> None:
    counter = TokenCounter()
    parts = ["intro line.\n\n", "### 2026-01-01 · One\nfoo  \n \n", "### Two\nbar"]
    assert counter.count_parts(parts) == count_exact("".join(parts))
    assert counter.count_parts(["", ""]) == 0


def test_every_section_count_is_the_count_of_its_text() -> None:
    counter = TokenCounter()
    for path in sorted(Path(EXAMPLE).rglob("*.md")):
        note = parse_note(path.read_text(encoding="utf-8"))
        tokens = section_tokens(note, counter)
        assert tokens[""] == count_exact(note.text), path
        for section in note.sections:
            assert tokens[section.id] == count_exact(section.text), (path, section.id)
