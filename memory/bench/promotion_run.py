"""`notes bench promote BENCH`: one promotion cycle replayed on a bench, measured.

The earlier half of the questions is asked through the real ladder on a copy of the bench's
notes with the usage log on (:mod:`memory.bench.promotion`); the promoter runs on that log with
its default rules; its proposals are applied on fresh copies of the notes as a user would
(every one, with each line rule asked for; the top N; those whose precision estimate reaches
P), and its demotions on another; then every policy runs on the later half over the notes as
they were and over each copy, with the same index settings. The bench itself is only read.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memory.api import Notes
from memory.bench.policies import check_policies, question_day
from memory.bench.promotion import (
    Promoted,
    Replayed,
    carried_lines,
    cut_sessions,
    replay,
    split_in_time,
)
from memory.bench.questions import (
    NOTES_FOLDER,
    QUESTIONS_FILE,
    Question,
    QuestionWriter,
    bench_paths,
    read_questions,
)
from memory.bench.reader import bench_config
from memory.bench.run import Progress, RunResult, run_bench
from memory.bench.split import half_of
from memory.errors import InvalidArgument, NotesError
from memory.model.note import Note
from memory.retrieval.levers import DEFAULT, Levers
from memory.services.promote import Candidate, Demotion, PromotionReport, build_report
from memory.services.promote_apply import apply_lines, demote_lines
from memory.services.promote_lines import DEFAULT_RULE, RULES

Say = Callable[[str], None]
DEFAULT_TOP = 20
DEFAULT_MIN_PRECISION = 0.6
RUN_STATE = "run-state"  # a run's state folder beside its notes


@dataclass(frozen=True)
class PromoteOptions:
    policies: list[str] | None = None  # None: every policy
    limit: int | None = None  # the first N questions of the bench (before the split)
    half: str | None = None  # run only this half (tuning, test) of the later questions
    rules: tuple[str, ...] = (DEFAULT_RULE,)  # the first is that of the other variants
    top: int = DEFAULT_TOP
    min_precision: float = DEFAULT_MIN_PRECISION
    backend: str = "whoosh"
    levers: Levers = DEFAULT


@dataclass
class Variant:
    """The notes after one way of accepting the report."""

    name: str
    kind: str  # all, top, precision, demote
    rule: str
    promoted: list[Promoted] = field(default_factory=list)
    demoted: int = 0  # state lines moved into the history
    state_tokens: dict[str, tuple[int, int]] = field(default_factory=dict)  # changed notes
    run: RunResult | None = None
    carried: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class PromotionRun:
    bench: Path
    options: PromoteOptions
    how: str  # date or hash
    earlier: int
    later: list[Question]
    replayed: Replayed
    calls: int
    reports: dict[str, PromotionReport]
    notes: int
    state_tokens: int
    before: RunResult
    variants: list[Variant]
    seconds: float = 0.0
    shared: int = 0  # later questions whose every answer line answered an earlier one too


def check_options(options: PromoteOptions) -> None:
    if options.policies is not None:
        check_policies(options.policies)
    unknown = [r for r in options.rules if r not in RULES]
    if not options.rules or unknown or len(set(options.rules)) != len(options.rules):
        raise InvalidArgument(f"rules: got {','.join(options.rules) or 'none'}; give each of "
                              f"{', '.join(RULES)} at most once, e.g. --rules overlap,last")
    if options.levers.semantic:
        raise InvalidArgument("the promotion bench runs without the semantic lever; leave it "
                              "out of --levers")


def run_promotion(bench: Path, options: PromoteOptions, work: Path | None = None,
                  say: Say | None = None, progress: Progress | None = None) -> PromotionRun:
    """Replay, promote and measure (see the module's docstring); scratch files in ``work``
    (kept) or a temporary folder (removed)."""
    check_options(options)
    tell = say or (lambda _: None)
    notes_dir, questions_file = bench_paths(bench)
    started = time.perf_counter()
    questions = list(read_questions(questions_file, options.limit))
    earlier, later, how = split_in_time(questions)
    later = [q for q in later if options.half is None or half_of(q.id) == options.half]
    with _scratch(work) as scratch:
        tell(f"replaying {len(earlier)} earlier questions ({how} split) in "
             f"{len(cut_sessions(earlier))} sessions")
        replayed, calls, reports = _replay(notes_dir, scratch / "replay", earlier, options)
        variants = _variants(reports, options)
        original = copy_notes(notes_dir, scratch / "before" / NOTES_FOLDER)
        counts = _state_tokens(original, scratch / "count-state", options)
        for variant in variants:
            _make(variant, notes_dir, scratch / variant.name, reports[variant.rule], options,
                  _last_day(earlier))
        tell(f"running {len(later)} later questions before promotion")
        seed_state(scratch / "replay" / "state", scratch / "before" / RUN_STATE)
        before = _run(scratch / "before", later, options, progress)
        for variant in variants:
            tell(f"running them after: {variant.name}")
            if not variant.promoted and not variant.demoted:  # the same notes as before's
                seed_state(scratch / "before" / RUN_STATE, scratch / variant.name / RUN_STATE)
            variant.carried = _carried(scratch / variant.name / NOTES_FOLDER, variant, later)
            variant.run = _run(scratch / variant.name, later, options, progress,
                               variant.carried)
    asked = {line.strip() for q in earlier for line in q.answer_lines}
    shared = sum(bool(q.answer_lines) and all(line.strip() in asked for line in q.answer_lines)
                 for q in later)
    return PromotionRun(bench, options, how, len(earlier), later, replayed, calls, reports,
                        len(counts), sum(counts.values()), before, variants,
                        time.perf_counter() - started, shared)


@contextmanager
def _scratch(work: Path | None) -> Iterator[Path]:
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
        yield work
        return
    with tempfile.TemporaryDirectory(prefix="notes-promote-") as folder:
        yield Path(folder)


def copy_notes(source: Path, target: Path) -> Path:
    """A fresh copy of a bench's notes (its dot-folders left out)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".*"))
    return target


def seed_state(source: Path, target: Path) -> None:
    """Start ``target`` (a run's state folder) from ``source``'s index and token caches,
    for a copy of the same notes (the index keeps each note's mtime, size and digest, and no
    path): its run then finds the index fresh instead of building the whole store again.
    Only for identical notes: an index refreshed after a change would rank as a fresh build
    would not (deleted documents stay in the term statistics until a merge), and before and
    after must differ by the promotion alone. The usage log, the history ledger and lock
    files stay behind: they belong to the run that made them."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns("usage.sqlite*", "ledger.sqlite*", "*.lock"))


def _notes(folder: Path, state: Path, options: PromoteOptions, log: bool) -> Notes:
    config = dataclasses.replace(bench_config(folder, state, options.backend),
                                 levers=options.levers.label(), usage_log=log,
                                 usage_queries="plain")
    return Notes(config, notify=lambda _: None)


def _replay(notes_dir: Path, folder: Path, earlier: list[Question], options: PromoteOptions
            ) -> tuple[Replayed, int, dict[str, PromotionReport]]:
    copy = copy_notes(notes_dir, folder / NOTES_FOLDER)
    notes = _notes(copy, folder / "state", options, log=True)
    try:
        end = time.time()
        replayed = replay(notes, cut_sessions(earlier), end)
        calls = notes.usage_count()
        reports = {rule: build_report(notes, now=end + 60, rule=rule)
                   for rule in options.rules}
    finally:
        notes.close()
    return replayed, calls, reports


def _variants(reports: dict[str, PromotionReport], options: PromoteOptions) -> list[Variant]:
    first = options.rules[0]
    out = [Variant(f"all-{rule}", "all", rule) for rule in options.rules]
    out.append(Variant(f"top{options.top}-{first}", "top", first))
    out.append(Variant(f"precision{round(100 * options.min_precision)}-{first}", "precision",
                       first))
    if reports[first].demotions:
        out.append(Variant("demote", "demote", first))
    return out


def chosen(report: PromotionReport, variant: Variant, options: PromoteOptions
           ) -> list[Candidate]:
    if variant.kind == "top":
        return list(report.candidates[:options.top])
    if variant.kind == "precision":
        return [c for c in report.candidates if c.precision >= options.min_precision]
    if variant.kind == "all":
        return list(report.candidates)
    return []


def _last_day(earlier: list[Question]) -> str | None:
    """The day of the last earlier question, when they carry dates: the day a demotion is
    dated (None: today)."""
    days = [d for d in (question_day(q) for q in earlier) if d is not None]
    return max(days).isoformat() if days else None


def _make(variant: Variant, notes_dir: Path, folder: Path, report: PromotionReport,
          options: PromoteOptions, day: str | None) -> None:
    """The variant's notes: a fresh copy with its promotions (or demotions) applied through
    the library, as a user accepting them would."""
    copy = copy_notes(notes_dir, folder / NOTES_FOLDER)
    notes = _notes(copy, folder / "apply-state", options, log=False)
    try:
        touched: dict[str, int] = {}
        picked = chosen(report, variant, options)
        for candidate in picked:
            touched.setdefault(candidate.note, _state_of(notes, candidate.note))
        done = apply_lines(notes, [(c.note, c.entry, c.proposed) for c in picked])
        variant.promoted += [Promoted(d.note, d.entry, d.line.strip()) for d in done
                             if d.changed]
        if variant.kind == "demote":
            for note_id, lines in _by_note(report.demotions).items():
                touched.setdefault(note_id, _state_of(notes, note_id))
                variant.demoted += demote_lines(notes, note_id, lines, day)
        variant.state_tokens = {n: (was, _state_of(notes, n)) for n, was in touched.items()}
    finally:
        notes.close()


def _by_note(demotions: tuple[Demotion, ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for demotion in demotions:
        out.setdefault(demotion.note, []).append(demotion.text)
    return out


def _state_of(notes: Notes, note_id: str) -> int:
    """The tokens of a note's state section (0 when it has none)."""
    state = notes.load_note(note_id).note.state
    return notes.count_tokens(state.text) if state else 0


def _state_tokens(notes_dir: Path, state: Path, options: PromoteOptions) -> dict[str, int]:
    """Every note's state tokens."""
    notes = _notes(notes_dir, state, options, log=False)
    try:
        out = {}
        for note_id in notes.note_ids():
            try:
                out[note_id] = _state_of(notes, note_id)
            except NotesError:
                continue
        return out
    finally:
        notes.close()


def _carried(notes_dir: Path, variant: Variant, later: list[Question]
             ) -> dict[str, frozenset[str]]:
    from memory.bench.questions import trimmed
    from memory.model.note import parse_note
    from memory.model.text import split_lines

    answers = {trimmed(line) for q in later for line in q.answer_lines}
    entries: dict[tuple[str, str], set[str]] = {}
    parsed: dict[str, Note] = {}
    for line in variant.promoted:
        if line.note not in parsed:
            path = notes_dir / f"{line.note}.md"
            parsed[line.note] = parse_note(path.read_text(encoding="utf-8"))
        section = parsed[line.note].section(line.entry)
        entries[(line.note, line.entry)] = {trimmed(t) for t in
                                            split_lines(section.text)} if section else set()
    return carried_lines(variant.promoted, entries, answers)


def _run(folder: Path, later: list[Question], options: PromoteOptions,
         progress: Progress | None, carried: dict[str, frozenset[str]] | None = None
         ) -> RunResult:
    """Every policy on the later questions, over ``folder``'s notes."""
    with QuestionWriter(folder / QUESTIONS_FILE) as writer:
        writer.write_all(later)
    return run_bench(folder, options.policies, state_dir=folder / RUN_STATE,
                     progress=progress, backend=options.backend, levers=options.levers,
                     carried=carried)
