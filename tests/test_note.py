"""The note model: exact round trips, stable ids, lookups, and robustness on any input."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model.edit import with_entry, with_state
from memory.model.note import parse_note
from memory.model.text import _LINE, split_lines

EXAMPLE = Path(__file__).resolve().parent.parent / "notes_example"
EXAMPLE_FILES = sorted(EXAMPLE.rglob("*.md"))

SAMPLE = dedent("""\
    ---
    title: Search index
    tags: [search, whoosh]
    aliases: [buscador]
    ---
    # Search index

    ## Current state
    - The index is BM25F over notes.

    ### Owners
    - Lucía

    ## History
    ### 2026-10-02 · First index
    Indexed notes whole.

    ### 2026-11-29 14:30 - Spanish stemming
    Added a Spanish stemmer.

    ### 2026-11-29 · Spanish stemming
    Same title, same day: gets its own id.

    ## References
    - docs/architecture.md
    """)


def test_example_store_is_big_enough() -> None:
    assert len(EXAMPLE_FILES) >= 30


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.relative_to(EXAMPLE).as_posix())
def test_round_trip_of_every_example_note(path: Path) -> None:
    raw = path.read_bytes()
    note = parse_note(raw.decode("utf-8"))
    assert note.render().encode("utf-8") == raw
    assert note.state is not None, "every example note has a state"
    assert not [p for p in note.problems if p.severity == "error"], note.problems


def test_sections_have_stable_ids_kinds_and_dates() -> None:
    note = parse_note(SAMPLE)
    assert [(s.id, s.kind) for s in note.sections] == [
        ("header", "header"), ("state", "state"), ("state/owners", "sub"),
        ("history", "history"), ("2026-10-02-first-index", "entry"),
        ("2026-11-29-spanish-stemming", "entry"), ("2026-11-29-spanish-stemming-2", "entry"),
        ("references", "section"),
    ]
    assert note.entries[1].date == "2026-11-29 14:30"
    assert note.entries[0].text.startswith("### 2026-10-02 · First index\n")
    assert note.title == "Search index" and note.tags == ["search", "whoosh"]
    assert note.aliases == ["buscador"]
    assert note.problems == ()


def test_top_level_sections_partition_the_file() -> None:
    note = parse_note(SAMPLE)
    assert "".join(s.text for s in note.top_level()) == SAMPLE


def test_problems_name_their_lines() -> None:
    text = "---\ntitle: [unclosed\n---\n# T\n\n## History\n### yesterday · no date\nx\n"
    note = parse_note(text)
    codes = {p.code: p.line for p in note.problems}
    assert codes["bad-yaml"] >= 2
    assert codes["missing-state"] == 4
    assert codes["entry-without-date"] == 7
    assert note.render() == text


def test_new_entry_leaves_older_entries_byte_identical() -> None:
    note = parse_note(SAMPLE)
    after = parse_note(with_entry(note, "Third", "More text.", date="2026-11-30"))
    for old, new in zip(note.entries, after.entries, strict=False):
        assert new.text.rstrip("\n") == old.text.rstrip("\n")
    assert after.entries[-1].id == "2026-11-30-third"
    assert after.section("references") is not None
    assert after.entries[-1].text == "### 2026-11-30 · Third\nMore text.\n\n"


def test_new_state_replaces_only_the_state() -> None:
    note = parse_note(SAMPLE)
    after = parse_note(with_state(note, "- Only this line.\n"))
    assert after.state is not None and after.state.text == "## Current state\n- Only this line.\n\n"
    assert [e.text for e in after.entries] == [e.text for e in note.entries]


_line = st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=40).map(
    lambda s: s.lstrip("#`~<>=-*+|0123456789 \t"))
_titles = st.text(st.characters(whitelist_categories=["L", "N"]), min_size=1, max_size=20)
_entry = st.tuples(st.dates().map(lambda d: d.isoformat()), _titles,
                   st.lists(_line, max_size=4))


@st.composite
def _notes(draw: st.DrawFn) -> tuple[str, int]:
    entries = draw(st.lists(_entry, max_size=8))
    noise = draw(st.lists(_line, max_size=5))
    body = [f"### {date} · {title}\n" + "".join(f"{line}\n" for line in lines)
            for date, title, lines in entries]
    text = ("---\ntitle: T\n---\n# T\n\n## Current state\n" + "".join(f"{n}\n" for n in noise)
            + "\n## History\n" + "\n".join(body))
    return text, len(entries)


@settings(max_examples=150, deadline=None)
@given(_notes())
def test_generated_notes_keep_every_history_entry(case: tuple[str, int]) -> None:
    text, expected = case
    note = parse_note(text)
    assert note.render() == text
    assert len(note.entries) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_parses_without_crashing(text: str) -> None:
    note = parse_note(text)
    assert note.render() == text


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab \r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029é")))
def test_lines_split_where_markdown_it_splits_them(text: str) -> None:
    """``split_lines``' fast path (``str.splitlines`` when the text holds no other break)
    splits every text as the pattern that follows markdown-it does."""
    assert split_lines(text) == _LINE.findall(text)
    assert "".join(split_lines(text)) == text
