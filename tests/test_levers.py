"""The routing levers (issue #15 item 4) on small hand-made stores: each test fails with the
lever off. Their ablations on the benches are in docs/benchmarks.md."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory.retrieval.coverage as coverage_module
from conftest import NOTES_BIN, ROOT
from memory import Notes, load_config
from memory.errors import ConfigError, InvalidArgument
from memory.fronts import render
from memory.index import parse_query
from memory.retrieval import semantic
from memory.retrieval.coverage import LineCoverage
from memory.retrieval.levers import ALL, DEFAULT, Levers, parse_levers
from memory.retrieval.recall import Gathered
from memory.retrieval.stages.feedback import with_feedback
from memory.retrieval.stages.fusion import RRF_K


def session(title: str, day: str, lines: list[str]) -> str:
    body = "\n".join(f"- {line}" for line in lines)
    return (f"---\ntitle: \"{title}\"\n---\n# {title}\n\n## Current state\n- {title}.\n\n"
            f"## History\n\n### {day} · Session\n{body}\n")


def make_store(root: Path, notes: dict[str, str]) -> Path:
    for note_id, text in notes.items():
        path = root / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[Notes]:
    """Four sessions: the first talks of the kayak trip at length, the second holds one
    line about it; the third and fourth talk of a glacier, with seals in the third only."""
    first = [f"Ann: the kayak trip, day {n}, we paddled kayak after kayak along the coast "
             f"and camped on beach number {n} with the whole group." for n in range(1, 9)]
    second = ["Ann: I finally booked the kayak trip for the summer with my brother: two weeks "
              "in July up the northern fjords, tents, dry bags and all.",
              "Bob: The weather in Bergen was grey all week, lots of rain and wind."]
    third = ["Bob: We walked along the Nordfjord glacier and saw seals near Nordfjord.",
             "Ann: Nordfjord glacier walks are long, take warm gloves."]
    fourth = ["Ann: Next year the Nordfjord glacier again, maybe in June."]
    store = make_store(tmp_path / "notes", {
        "trip/session-01": session("Ann and Bob: session 1", "2024-05-01", first),
        "trip/session-02": session("Ann and Bob: session 2", "2024-06-01", second),
        "trip/session-03": session("Ann and Bob: session 3", "2024-07-01", third),
        "trip/session-04": session("Ann and Bob: session 4", "2024-08-01", fourth)})
    notes = Notes(load_config(store), notify=lambda _: None)
    yield notes
    notes.close()


def test_parse_levers() -> None:
    assert parse_levers(None) == DEFAULT
    assert parse_levers("none") == Levers()
    assert parse_levers("spread,feedback") == Levers(spread=True, feedback=True)
    assert DEFAULT == Levers(replies=True)  # the lever audit of 2026-12-05
    assert parse_levers("+fusion") == Levers(fusion=True, replies=True)  # on the default
    assert parse_levers("+dates,-replies") == Levers(dates=True)
    assert parse_levers("fusion") == Levers(fusion=True)  # names alone: from none
    if semantic.available():  # "all" takes the semantic lever too, which needs its extra
        assert parse_levers("all") == ALL
        assert parse_levers("all").on() == ("spread", "fusion", "block-route", "feedback",
                                            "neighbours", "dates", "names", "replies",
                                            "coverage", "across", "semantic",
                                            "semantic-blocks")
    else:
        with pytest.raises(ConfigError, match="notes-memory"):
            parse_levers("all")
    with pytest.raises(InvalidArgument, match="unknown lever 'rm3'"):
        parse_levers("rm3")


def test_spread_takes_the_second_session_into_the_budget(sessions: Notes) -> None:
    """Without spread, the budget fills with the first session's blocks (its section and
    note lift them all); with it, the second half of the budget takes the second session's
    best block too. (That line is long enough to stand under a label of its own: below its
    three best blocks, recall leaves out a block that would be a third or more label.)"""
    question = "the kayak trip with the group"
    wanted = "I finally booked the kayak trip"
    ladder = sessions._ladder
    ladder.levers = Levers()
    without = render.recalled(ladder.recall(question, 300))
    ladder.levers = Levers(spread=True)
    with_spread = render.recalled(ladder.recall(question, 300))
    assert "day 1," in without and "day 1," in with_spread
    assert wanted not in without
    assert wanted in with_spread


def test_across_spreads_only_a_question_that_asks_across_time(sessions: Notes) -> None:
    """The across lever (issue #34, item 6) acts as spread, and routes twice the notes, for
    a question that asks across sessions ("how many times…"), and changes nothing else."""
    from memory.model.timeexpr import asks_across

    assert asks_across("How many times did we go on the kayak trip?")
    assert asks_across("¿Cuántas veces fuimos en kayak?") and asks_across("which came first")
    assert not asks_across("the kayak trip with the group")
    ladder = sessions._ladder
    across = "how many times the kayak trip with the group"
    wanted = "I finally booked the kayak trip"
    ladder.levers = Levers()
    without = render.recalled(ladder.recall(across, 300))
    ladder.levers = Levers(across=True)
    with_across = render.recalled(ladder.recall(across, 300))
    plain = render.recalled(ladder.recall("the kayak trip with the group", 300))
    assert wanted not in without and wanted in with_across
    ladder.levers = Levers()
    assert plain == render.recalled(ladder.recall("the kayak trip with the group", 300))


def test_fusion_ranks_blocks_by_reciprocal_ranks(sessions: Notes) -> None:
    ladder = sessions._ladder
    ladder.levers = Levers(fusion=True)
    fused = ladder.gather("kayak trip coast beach")
    top = fused.units[0]
    # the best block, of the best section, of the best note: rank 1 on each of three signals
    assert top.note == "trip/session-01"
    # three or more signals (block, section, note), each at most 1 / (RRF_K + 1)
    assert 2 / (RRF_K + 1) < top.score <= 5 / (RRF_K + 1)
    assert all(u.score <= 5 / (RRF_K + 1) for u in fused.units)
    ladder.levers = Levers()
    assert ladder.gather("kayak trip coast beach").units[0].score > 1.0  # the weighted sum


def test_feedback_adds_the_best_paragraphs_words_at_low_weight(sessions: Notes) -> None:
    """The first search for "seals" finds the third session's line; feedback adds its other
    words (nordfjord, glacier…), below the message's weight, so the fourth session, which
    shares only them, is routed second."""
    ladder = sessions._ladder
    parsed = with_feedback(ladder.reader, parse_query("seals"))
    added = {word for (word, _exact), _weight in parsed.expansion}
    assert {"nordfjord", "glacier"} <= added
    assert "seals" not in added
    assert all(0 < weight <= 0.3 for _word, weight in parsed.expansion)
    ladder.levers = Levers()
    plain = [h.note for h in ladder.suggest("seals", 5).hits]
    ladder.levers = Levers(feedback=True)
    expanded = ladder.suggest("seals", 5)
    assert plain == ["trip/session-03"]
    assert [h.note for h in expanded.hits][:2] == ["trip/session-03", "trip/session-04"]
    assert expanded.hits[0].matched == ("seals",)  # feedback words are not shown as matched


def offsite_sessions(root: Path, more: dict[str, str] | None = None) -> Path:
    """Two sessions hold "offsite" and "budget" once each: the first scattered over two
    lines (a shorter note, so BM25F puts it first), the second in one line."""
    return make_store(root, {**(more or {}),
        "work/scattered": session("Session 1", "2024-01-01", [
            "Cy: the offsite is in Lisbon this year.", "Di: and the budget for the team?",
            "Cy: it is not final, the dates are.", "Di: fine, I will book."]),
        "work/together": session("Session 2", "2024-02-01", [
            "Di: we cut the offsite budget in half after the review.",
            "Cy: good call, thanks.", "Di: see you at the all-hands.", "Cy: see you."]),
        "work/other": session("Session 3", "2024-03-01", ["Cy: the review is done."])})


@pytest.mark.parametrize("lever", [Levers(block_route=True), Levers(coverage=True)],
                         ids=["block-route", "coverage"])
def test_a_lever_puts_first_the_note_whose_one_line_holds_the_words(tmp_path: Path,
                                                                    lever: Levers) -> None:
    """With block-route (by its best paragraph) or coverage (by its best line, with no
    search of its own) the note whose one line holds both words comes first, and the notes
    keep BM25F's scores in the new order (the best note keeps the best score); recall's
    routing, and the hook's, leave the levers out."""
    notes = Notes(load_config(offsite_sessions(tmp_path / "notes")), notify=lambda _: None)
    try:
        notes._ladder.levers = Levers()
        plain = [(h.note, h.score) for h in notes._ladder.suggest("offsite budget", 3).hits]
        notes._ladder.levers = lever
        routed = [(h.note, h.score) for h in notes._ladder.suggest("offsite budget", 3).hits]
        for_recall = [h.note for h in notes._ladder.suggest("offsite budget", 3,
                                                           by_blocks=False).hits]
    finally:
        notes.close()
    assert [n for n, _ in plain] == ["work/scattered", "work/together"]
    assert [n for n, _ in routed] == ["work/together", "work/scattered"]
    assert [s for _, s in routed] == [s for _, s in plain]
    assert for_recall == ["work/scattered", "work/together"]


@pytest.mark.parametrize("lever", [Levers(block_route=True), Levers(coverage=True)],
                         ids=["block-route", "coverage"])
def test_a_lever_leaves_the_context_to_bm25f(tmp_path: Path, lever: Levers) -> None:
    """A message with no words of its own routes by its context alone; neither block-route
    nor coverage re-orders the context's notes (the conversation's clearest paragraph or
    line must not pull its note up), so the order is BM25F's."""
    notes = Notes(load_config(offsite_sessions(tmp_path / "notes")), notify=lambda _: None)
    try:
        notes._ladder.levers = lever
        vague = [h.note for h in notes._ladder.suggest("what then", 3,
                                                      context="offsite budget").hits]
    finally:
        notes.close()
    assert vague == ["work/scattered", "work/together"]


def job_sessions(root: Path) -> Path:
    """Two sessions that say the same words: the first once, in a line that carries a time;
    the second in a line without one, and again in the lines around it."""
    return make_store(root, {
        "life/session-01": session("Ann and Bob: session 1", "2024-05-01", [
            "Ann: I quit the bakery job this week, it was time.",
            "Bob: good for you, the bakery hours were long."]),
        "life/session-02": session("Ann and Bob: session 2", "2024-06-01", [
            "Ann: since I quit the bakery job I paint every morning.",
            "Bob: the bakery still sells your cakes.", "Ann: the bakery job taught me a lot.",
            "Bob: see you soon."])})


@pytest.mark.parametrize(("question", "first"), [
    ("When did Ann quit the bakery job?", "life/session-01"),
    ("¿Cuándo dejó Ann el bakery job?", "life/session-01"),
    ("Why did Ann quit the bakery job?", "life/session-02"),
    ("Ann quit the bakery job", "life/session-02"),
])
def test_coverage_counts_a_time_for_a_when_question(tmp_path: Path, question: str,
                                                     first: str) -> None:
    """A question that asks when holds one more asked term, a time: the session whose
    matching line says when ("this week") passes the one that says the words more often
    without a time. Any other question keeps BM25F's order, and so do the scores."""
    notes = Notes(load_config(job_sessions(tmp_path / "notes")), notify=lambda _: None)
    try:
        notes._ladder.levers = DEFAULT.replace(coverage=False)
        plain = [(h.note, h.score) for h in notes._ladder.suggest(question, 3).hits]
        notes._ladder.levers = DEFAULT.replace(coverage=True)
        routed = [(h.note, h.score) for h in notes._ladder.suggest(question, 3).hits]
    finally:
        notes.close()
    assert plain[0][0] == "life/session-02"
    assert routed[0][0] == first
    assert [s for _, s in routed] == [s for _, s in plain]


def test_a_when_question_asks_no_time_of_notes_that_carry_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Among candidates none of whose lines carries a time, a "when" question asks for its
    words only (the time term would be held by no line and shrink every note's coverage
    alike); among dated sessions it asks for a time as well."""
    asked: list[frozenset[str]] = []
    rarity = coverage_module.rarity
    monkeypatch.setattr(coverage_module, "rarity",
                        lambda notes, terms: asked.append(terms) or rarity(notes, terms))
    undated = make_store(tmp_path / "undated", {
        f"kitchen/{name}": f"# {name}\n\n- the bakery job of {name}, the bakery oven.\n"
        for name in ("ann", "bob")})
    for store in (undated, job_sessions(tmp_path / "dated")):
        notes = Notes(load_config(store, env={"NOTES_LEVERS": "+coverage"}),
                      notify=lambda _: None)
        try:
            notes._ladder.suggest("When did Ann quit the bakery job?", 3)
        finally:
            notes.close()
    assert [coverage_module.TIME in terms for terms in asked] == [False, True]


def test_line_terms_mark_the_lines_that_carry_a_time(tmp_path: Path) -> None:
    """Only the lines that carry a time hold the time term: an entry's dated heading, and a
    line that says when; numbered among the non-blank lines of the body, as every term is."""
    notes = Notes(load_config(job_sessions(tmp_path / "notes")), notify=lambda _: None)
    timed = {}
    try:
        for note_id in ("life/session-01", "life/session-02"):
            note = notes._ladder.load(note_id).note
            body = [line for line in note.text.splitlines()[note.body_start:] if line.strip()]
            terms = notes._ladder.line_coverage().line_terms(notes._ladder.reader, note_id)
            timed[note_id] = [body[n] for n in terms.where[coverage_module.TIME]]
    finally:
        notes.close()
    assert timed == {
        "life/session-01": ["### 2024-05-01 · Session",
                            "- Ann: I quit the bakery job this week, it was time."],
        "life/session-02": ["### 2024-06-01 · Session"]}


def test_line_terms_stop_where_the_note_stops_being_indexed() -> None:
    """Past a hostile note's bound (MAX_SECTIONS here) the index reads nothing, and neither
    does coverage: stemming every line of a 100,000-line note doubled its cold build."""
    from memory.index.whoosh.analysis import stem_terms
    from memory.model.note import MAX_SECTIONS, parse_note

    headings = "".join(f"## H{i}\n- heron {i}\n" for i in range(MAX_SECTIONS))
    note = parse_note(f"# Birds\n\n{headings}## Past\n- zebra beyond the bound\n")
    assert note.bounded_at is not None
    terms = coverage_module.note_lines(note, stem_terms)
    (heron,), (zebra,) = stem_terms("heron"), stem_terms("zebra")
    assert heron in terms.where and zebra not in terms.where
    assert terms.lines == 1 + 2 * MAX_SECTIONS  # the title's line, then each heading's two


@pytest.mark.slow(13)
def test_bench_run_takes_levers(tmp_path: Path) -> None:
    """`notes bench run --levers`: the report names the levers on; an unknown one is an
    error that lists the levers."""
    import json
    import subprocess
    import sys

    from test_bench_policies import write_tiny_bench

    bench = write_tiny_bench(tmp_path / "tiny")
    notes_bin = Path(sys.executable).parent / "notes"
    ran = subprocess.run([str(notes_bin), "bench", "run", str(bench), "--policies",
                          "recall@500,fragments@5", "--levers", "spread,feedback"],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((bench / "report" / "report.json").read_text())
    assert data["levers"] == ["spread", "feedback"]
    wrong = subprocess.run([str(notes_bin), "bench", "run", str(bench), "--levers", "rm3"],
                           capture_output=True, text=True, timeout=300)
    assert wrong.returncode == 1
    assert "unknown lever 'rm3'; levers are: spread, fusion, block-route, feedback, " \
        "neighbours, dates, names, replies" in wrong.stderr


@pytest.mark.slow(13)
def test_bench_visible_takes_levers(tmp_path: Path) -> None:
    """`python -m benchmarks visible --levers`: every bench's report names the levers it ran
    with."""
    import json

    from conftest import run_lab

    out = tmp_path / "out"
    ran = run_lab(["visible", "--benches", "example-followups", "--policies",
                   "recall@500,fragments@2", "--limit", "3", "--levers", "fusion", "--out",
                   str(out)])
    assert ran.returncode == 0, ran.stderr
    data = json.loads((out / "example-followups" / "report.json").read_text())
    assert data["levers"] == ["fusion"]


def gathered(store: Path, query: str, *settings: Levers) -> list[Gathered]:
    """``recall``'s ranking of ``query`` over ``store`` under each lever setting."""
    notes = Notes(load_config(store), notify=lambda _: None)
    try:
        found = []
        for levers in settings:
            notes._ladder.levers = levers
            found.append(notes._ladder.gather(query))
        return found
    finally:
        notes.close()


def test_neighbours_bring_the_reply_that_shares_no_word(tmp_path: Path) -> None:
    """The question's words are in Bob's question; Ann's reply, the answer, shares none of
    them: without the lever recall never shows it, with it the reply joins at half the
    question's score, above a block that matched one word only."""
    lines = ["Bob: What did you cook for the harvest party on Saturday?",
             "Ann: A big lasagna with spinach, and a lemon tart.",
             "Bob: Sounds great, I will bring wine next time.",
             "Ann: My sister baked bread all morning, it was lovely.",
             "Bob: The train was late again, I missed the first hour."]
    other = ["Cy: The party at the office was loud.", "Di: We left before the cake."]
    store = make_store(tmp_path / "notes", {
        "talk/session-01": session("Ann and Bob: session 1", "2024-09-07", lines),
        "talk/session-02": session("Cy and Di: session 1", "2024-09-08", other)})
    reply = "A big lasagna with spinach"
    question = "what was cooked for the harvest party"
    without, with_lever = gathered(store, question, Levers(), Levers(neighbours=True))
    notes = Notes(load_config(store), notify=lambda _: None)
    try:
        notes._ladder.levers = Levers(neighbours=True)
        shown = render.recalled(notes._ladder.recall(question, 300))
    finally:
        notes.close()
    assert not any(reply in u.text for u in without.units)
    ranked = [u.text for u in with_lever.units]
    asked = next(i for i, t in enumerate(ranked) if "harvest party" in t)
    answered = next(i for i, t in enumerate(ranked) if reply in t)
    assert asked == 0 and answered == 1
    assert with_lever.units[1].score == pytest.approx(with_lever.units[0].score * 0.5)
    assert reply in shown


def test_dates_route_to_the_note_written_that_day(sessions: Notes) -> None:
    """The third session says most about the glacier; asked about the glacier "on 1 August
    2024", the fourth (written that day) comes first with the lever, and the question
    asked at an earlier date (when "1 August" was last year's) does not lift it."""
    import datetime as dt

    ladder = sessions._ladder
    question = "what about the Nordfjord glacier on 1 August 2024"
    ladder.levers = Levers()
    plain = [h.note for h in ladder.suggest(question, 4, today=dt.date(2024, 9, 1)).hits]
    ladder.levers = Levers(dates=True)
    dated = ladder.suggest(question, 4, today=dt.date(2024, 9, 1))
    undated = ladder.suggest("what about the Nordfjord glacier on 1 August", 4,
                             today=dt.date(2024, 7, 15))
    assert plain[0] == "trip/session-03"
    assert [h.note for h in dated.hits][:2] == ["trip/session-04", "trip/session-03"]
    assert undated.hits[0].note == "trip/session-03"  # 1 August 2023: no note written then


def test_names_halve_a_block_that_matched_only_the_title(tmp_path: Path) -> None:
    """In a conversation titled with its speakers, a short turn that matches only a
    speaker's name outranks a long turn about the question's topic; with the lever its own
    score is halved and the topic's turn comes first."""
    lines = ["Ann: Thanks Bob!",
             "Bob: the new violin lessons on Tuesday went well."]
    others = {f"talk/other-{n}": session(f"Cy and Di: session {n}", f"2024-09-1{n}",
                                         [f"Cy: violin concerts number {n} are rare here."])
              for n in range(1, 2)}
    store = make_store(tmp_path / "notes", {
        "talk/session-01": session("Ann and Bob: session 1", "2024-09-07", lines), **others})
    plain, named = gathered(store, "what did Ann say about violin", Levers(),
                            Levers(names=True))
    turns = ("- Ann:", "- Bob:")  # the session's turns (its state line matches "Ann" too)
    ann = [u for u in plain.units if u.text.startswith(turns)]
    ann_named = [u for u in named.units if u.text.startswith(turns)]
    assert ann[0].text.strip() == "- Ann: Thanks Bob!"
    assert "violin" in ann_named[0].text


def test_dates_lift_only_what_the_message_matches(sessions: Notes) -> None:
    """The fourth session (1 August) is lifted only when the message's own words match it:
    not by the time expression's words ("August", "2024", which its dated heading holds),
    nor by the conversation's words on a topic switch (a talk about the glacier, then a
    question about the kayak trip "in early August 2024")."""
    import datetime as dt

    ladder = sessions._ladder
    day = dt.date(2024, 9, 1)

    def fourth(question: str, context: str | None = None) -> float:
        hits = ladder.suggest(question, 4, context=context, today=day).hits
        return next(h.score for h in hits if h.note == "trip/session-04")

    for question, context in (("the kayak trip in early August 2024", None),
                              ("the kayak trip in early August 2024",
                               "Nordfjord glacier Nordfjord glacier walks")):
        ladder.levers = Levers()
        plain = fourth(question, context)
        ladder.levers = Levers(dates=True)
        assert fourth(question, context) == plain
    ladder.levers = Levers(dates=True)
    lifted = fourth("the Nordfjord glacier in early August 2024")
    ladder.levers = Levers()
    assert lifted == pytest.approx(1.5 * fourth("the Nordfjord glacier in early August 2024"),
                                   abs=0.01)


def test_replies_lift_the_answer_to_a_matching_question(tmp_path: Path) -> None:
    """Bob's question matches; Ann's reply shares none of its words. With neighbours alone
    the reply scores half the question's, under a turn that matched one word; with replies
    on it scores 0.9 of the question's and comes next. The turn before the question, and a
    turn after a matching line that asks nothing, keep the neighbours' share."""
    lines = ["Ann: The garden is full of tomatoes this year.",
             "Bob: How long have you been playing the cello now?",
             "Ann: Since I was nine, almost twenty years.",
             "Bob: The cello shop on Main Street closed.",
             "Ann: Pity, it was a nice shop."]
    other = ["Cy: I heard a cello concert once, long and boring, playing all night.",
             "Di: We left early."]
    store = make_store(tmp_path / "notes", {
        "talk/session-01": session("Ann and Bob: session 1", "2024-09-07", lines),
        "talk/session-02": session("Cy and Di: session 1", "2024-09-08", other)})
    question = "how long has she been playing the cello"
    plain, replies, alone, matched = gathered(store, question, Levers(neighbours=True),
                                              Levers(neighbours=True, replies=True),
                                              Levers(replies=True), Levers())

    def score(found: Gathered, text: str) -> float:
        return next(u.score for u in found.units if text in u.text)

    asked = score(replies, "How long have you been playing")
    assert score(replies, "Since I was nine") == pytest.approx(0.9 * asked)
    assert score(plain, "Since I was nine") == pytest.approx(0.5 * asked)
    assert score(replies, "garden is full") == score(plain, "garden is full")
    assert score(replies, "Pity, it was") == score(plain, "Pity, it was")
    ranked = [u.text for u in replies.units]
    assert "Since I was nine" in ranked[1]
    assert "Since I was nine" not in [u.text for u in plain.units][1]
    # without neighbours, only the reply joins the blocks that matched
    assert score(alone, "Since I was nine") == pytest.approx(0.9 * asked)
    assert not any("Since I was nine" in u.text for u in matched.units)
    assert {u.text for u in alone.units} - {u.text for u in matched.units} == {
        next(u.text for u in alone.units if "Since I was nine" in u.text)}


def test_the_store_takes_its_levers_from_notes_levers(tmp_path: Path) -> None:
    """NOTES_LEVERS sets a store's levers (read once, by load_config); one that does not
    exist stops every command, and the MCP server, with an error that names the variable
    and the levers."""
    store = offsite_sessions(tmp_path / "notes")
    config = load_config(store, env={"NOTES_LEVERS": "+block-route,+dates,-replies"})
    notes = Notes(config, notify=lambda _: None)
    try:
        assert notes._ladder.levers == Levers(block_route=True, dates=True)
    finally:
        notes.close()
    plain = Notes(load_config(store, env={}), notify=lambda _: None)
    try:
        assert plain._ladder.levers == DEFAULT
    finally:
        plain.close()
    with pytest.raises(ConfigError, match=r"NOTES_LEVERS='rm3': unknown lever 'rm3'; levers "
                                          r"are: spread, .*unset NOTES_LEVERS"):
        Notes(load_config(store, env={"NOTES_LEVERS": "rm3"}), notify=lambda _: None)
    env = {**os.environ, "NOTES_LEVERS": "rm3"}
    for command in ([str(NOTES_BIN), "--notes", str(store), "suggest", "offsite"],
                    [sys.executable, str(ROOT / "mcp_server.py"), "--notes", str(store)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 1 and done.stdout == "", command
        assert "Error: NOTES_LEVERS='rm3': unknown lever 'rm3'" in done.stderr
        assert "Traceback" not in done.stderr


def test_coverage_reads_a_note_again_when_it_changes(tmp_path: Path) -> None:
    """The line terms are kept by the note's content: an edit that splits the one line
    holding both words gives the order back to BM25F on the next call."""
    root = offsite_sessions(tmp_path / "notes")
    notes = Notes(dataclasses.replace(load_config(root), levers="+coverage"),
                  notify=lambda _: None)
    try:
        assert notes.suggest("offsite budget", 3).hits[0].note == "work/together"
        path = root / "work/together.md"
        path.write_text(path.read_text(encoding="utf-8").replace(
            "we cut the offsite budget in half", "we cut the offsite\n- Cy: budget in half"),
            encoding="utf-8")
        assert notes.suggest("offsite budget", 3).hits[0].note == "work/scattered"
    finally:
        notes.close()


NAMED = [("cómo despliego a producción", "howto/deploy-production"),  # the README's command
         ("rotate the database secrets", "howto/rotate-secrets")]  # issue #15's example


@pytest.mark.parametrize(("lever", "query", "first"), [
    *[("block-route", q, f) for q, f in NAMED],
    *[("coverage", q, f) for q, f in NAMED],
    ("coverage", "how does the Verifactu hash chaining work?", "product/verifactu"),
])
def test_a_lever_keeps_a_note_reached_by_its_names(store_dir: Path, lever: str, query: str,
                                                   first: str) -> None:
    """The example store writes some notes in Spanish under English names and aliases; a
    note the message reaches through them has no paragraph nor line in the message's
    language: its header counts as its block with block-route, and with coverage each line
    is read under the note's title and front matter, and a note the message names covers
    the message. It stays first with either."""
    config = dataclasses.replace(load_config(store_dir), levers=f"+{lever}")
    notes = Notes(config, notify=lambda _: None)
    try:
        assert lever in notes._ladder.levers.on()
        assert notes.suggest(query, 3).hits[0].note == first
    finally:
        notes.close()


def test_coverage_keeps_line_terms_bounded_in_characters(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A long-running server must not keep every big note's line terms: past KEPT_CHARS
    the oldest go, and a note bigger than that is never kept."""
    big = session("Session 4", "2024-04-01", [f"Cy: line {i} of a long talk." for i in range(60)])
    notes = Notes(load_config(offsite_sessions(tmp_path / "notes", {"work/big": big})),
                  notify=lambda _: None)
    try:
        sizes = {n: len(notes._ladder.load(n).note.text) for n in
                 ("work/scattered", "work/together", "work/other", "work/big")}
        small = sizes["work/scattered"] + sizes["work/together"]
        assert sizes["work/big"] > small + sizes["work/other"]
        monkeypatch.setattr(coverage_module, "KEPT_CHARS", small + sizes["work/other"] - 1)
        kept = LineCoverage(notes.index.stem_terms, notes.index.stemming())
        reader = notes._ladder.reader
        first = {n: kept.line_terms(reader, n)
                 for n in ("work/scattered", "work/together", "work/other")}
        assert kept.line_terms(reader, "work/other") is first["work/other"]  # latest kept
        assert kept.line_terms(reader, "work/scattered") is not first["work/scattered"]
        once = kept.line_terms(reader, "work/big")
        assert once.where and kept.line_terms(reader, "work/big") is not once  # too big
    finally:
        notes.close()
