"""Running a bench: build a store over its notes, run every policy on every question.

Questions are streamed twice (first to learn which lines are answers, then to run them), and
the notes are scanned once, one at a time, to find where each answer line lives (state,
history, other) and what reading the whole store costs. A question's ``exclude_notes`` (what
the store did not hold yet when it was asked) are left out of every policy's searches, and of
``full``'s cost. The index lives in a state folder outside the bench, and the usage log is
off. The index is of one backend; :func:`run_backends`
runs the same questions on several and merges them into one run, policy by policy.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory.bench.policies import POLICIES, QuestionPass, Reading, check_policies
from memory.bench.questions import BenchError, Question, bench_paths, read_questions
from memory.bench.reader import BenchReader, bench_config
from memory.bench.split import half_of
from memory.config import BACKENDS
from memory.errors import InvalidArgument, NotesError
from memory.model.text import split_lines
from memory.retrieval.levers import DEFAULT, Levers

Progress = Callable[[int], None]
_WHERE = {"state": "state", "sub": "state", "history": "history", "entry": "history"}


@dataclass(frozen=True)
class Outcome:
    hit: bool
    any_line: bool
    tokens: int
    carried: bool = False  # a hit only because a promoted state line carried an answer line


Positions = tuple[int | None, ...]  # each gold note's place in suggest's list (None: not in it)


@dataclass(frozen=True)
class QuestionResult:
    id: str
    category: str
    where: str  # state, history, other, or mixed
    gold_positions: Positions  # one per gold note; empty: no gold note
    outcomes: dict[str, Outcome]  # policies that applied
    positions_by_backend: dict[str, Positions] = field(default_factory=dict)  # when several

    @property
    def has_gold(self) -> bool:
        return bool(self.gold_positions)

    @property
    def gold_rank(self) -> int | None:
        """The best place of a gold note in suggest's list (None: none in it)."""
        return best_rank(self.gold_positions)

    @property
    def gold_ranks(self) -> dict[str, int | None]:
        """The best place by backend, when the run has several."""
        return {b: best_rank(p) for b, p in self.positions_by_backend.items()}

    @property
    def gold_notes(self) -> str:
        """How many notes hold the answer, as a split of the report."""
        count = len(self.gold_positions)
        return "no gold note" if count == 0 else "one gold note" if count == 1 else \
            "several gold notes"


def best_rank(positions: Positions) -> int | None:
    shown = [p for p in positions if p is not None]
    return min(shown) if shown else None


@dataclass
class RunResult:
    bench: Path
    policies: list[str]
    results: list[QuestionResult] = field(default_factory=list)
    read: int = 0
    skipped_empty: int = 0  # no answer lines
    skipped_missing: int = 0  # an answer line is not a line of any note
    notes: int = 0
    store_tokens: int = 0
    seconds: float = 0.0
    limit: int | None = None
    backends: list[str] = field(default_factory=lambda: ["whoosh"])
    levers: Levers = DEFAULT
    half: str | None = None  # tuning or test when only that half ran


@dataclass
class StoreScan:
    """Where each answer line lives, and the cost of reading the whole store."""

    places: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # line -> (note, kind)
    notes: int = 0
    tokens: int = 0
    note_tokens: dict[str, int] = field(default_factory=dict)  # what ``full`` pays per note

    def full(self, excluded: tuple[str, ...] = ()) -> Reading:
        """Every note whole but the excluded ones (``full`` for a question's scope)."""
        left_out = sum(self.note_tokens.get(note, 0) for note in set(excluded))
        return Reading((), self.tokens - left_out, everything=True)


def run_bench(bench: Path, policies: list[str] | None = None, limit: int | None = None,
              state_dir: Path | None = None, progress: Progress | None = None,
              backend: str = "whoosh", levers: Levers = DEFAULT,
              vectors: Path | None = None, half: str | None = None,
              carried: Mapping[str, frozenset[str]] | None = None) -> RunResult:
    """Run ``policies`` (default: all) on the first ``limit`` questions of ``bench`` (of
    its ``half``, tuning or test, when given: :mod:`memory.bench.split`), over an index of
    ``backend``, with the retrieval ``levers`` given; the semantic lever's vectors are kept
    in ``vectors`` (shared by runs: a note's content is embedded once), else with the
    index. ``carried`` maps an answer line to the promoted state lines that carry it (the
    promotion bench's hit rule, :meth:`Reading.reaches`); without it the plain rule."""
    names = check_policies(list(policies or POLICIES))
    notes_dir, questions_file = bench_paths(bench)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="notes-bench-") as scratch:
        config = bench_config(notes_dir, state_dir or Path(scratch) / "state", backend)
        reader = BenchReader(config, levers, vectors)
        try:
            reader.prepare()
            wanted = {line.strip() for q in _questions(questions_file, limit, half)
                      for line in q.answer_lines}
            scan = scan_store(reader, wanted)
            check_scopes(_questions(questions_file, limit, half), scan)
            run = RunResult(bench, names, notes=scan.notes, store_tokens=scan.tokens,
                            limit=limit, backends=[backend], levers=levers, half=half)
            for question in _questions(questions_file, limit, half):
                _run_question(reader, question, scan, run, carried)
                if progress:
                    progress(run.read)
        finally:
            reader.close()
    run.seconds = time.perf_counter() - started
    return run


def _questions(path: Path, limit: int | None, half: str | None) -> Iterator[Question]:
    """The bench's questions, of one half when given; ``limit`` counts those kept."""
    if half is None:
        yield from read_questions(path, limit)
        return
    kept = 0
    for question in read_questions(path):
        if limit is not None and kept >= limit:
            return
        if half_of(question.id) == half:
            kept += 1
            yield question


def run_backends(bench: Path, backends: list[str], policies: list[str] | None = None,
                 limit: int | None = None, state_dir: Path | None = None,
                 progress: Progress | None = None, levers: Levers = DEFAULT,
                 vectors: Path | None = None, half: str | None = None) -> RunResult:
    """:func:`run_bench` on each backend (the semantic lever's ``vectors`` shared); with
    several, one run whose policies are named ``policy [backend]`` (:func:`side_by_side`)."""
    unknown = [b for b in backends if b not in BACKENDS]
    if not backends or unknown or len(set(backends)) != len(backends):
        raise InvalidArgument(f"backends: got {','.join(backends) or 'none'}; give each of "
                              f"{', '.join(BACKENDS)} at most once, e.g. --backend "
                              "whoosh,tantivy")
    runs = [run_bench(bench, policies, limit, state_dir and state_dir / backend, progress,
                      backend, levers, vectors, half) for backend in backends]
    return side_by_side(runs)


def backend_policy(policy: str, backend: str) -> str:
    return f"{policy} [{backend}]"


def side_by_side(runs: list[RunResult]) -> RunResult:
    """Runs of the same questions on several backends as one run: each policy once per
    backend (next to each other), each question's gold rank kept per backend."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    backends = [run.backends[0] for run in runs]
    merged = dataclasses.replace(
        first, results=[], backends=backends, seconds=sum(r.seconds for r in runs),
        policies=[backend_policy(p, b) for p in first.policies for b in backends])
    for rows in zip(*(run.results for run in runs), strict=True):
        outcomes = {backend_policy(p, b): row.outcomes[p]
                    for p in first.policies for b, row in zip(backends, rows, strict=True)
                    if p in row.outcomes}
        ranks = {b: row.gold_positions for b, row in zip(backends, rows, strict=True)}
        merged.results.append(dataclasses.replace(rows[0], outcomes=outcomes,
                                                  positions_by_backend=ranks))
    return merged


def scan_store(reader: BenchReader, wanted: set[str]) -> StoreScan:
    """One pass over the notes, one at a time."""
    scan = StoreScan()
    for note_id in reader.note_ids():
        try:
            text = reader.read_note(note_id)
            sections = reader.note(note_id).sections
        except NotesError:
            continue  # a file whose name is not a valid note id: the ladder cannot read it
        scan.notes += 1
        scan.note_tokens[note_id] = reader.count(text)
        scan.tokens += scan.note_tokens[note_id]
        for section in sections:
            if section.parent is not None:
                continue  # top-level sections partition the file
            kind = _WHERE.get(section.kind, "other")
            for line in split_lines(section.text):
                if line.strip() in wanted:
                    scan.places.setdefault(line.strip(), set()).add((note_id, kind))
    return scan


def check_scopes(questions: Iterable[Question], scan: StoreScan) -> None:
    """Fail before any policy runs when a question's scope hides its own answer: a gold note
    among its ``exclude_notes``, or an answer line that only excluded notes hold (the
    adapter that wrote the bench is wrong; no policy could reach it, not even ``full``)."""
    for question in questions:
        excluded = set(question.exclude_notes)
        if not excluded:
            continue
        gold = excluded.intersection(question.gold_notes)
        hidden = [line for line in question.answer_lines if line.strip() in scan.places
                  and {note for note, _ in scan.places[line.strip()]} <= excluded]
        if gold or hidden:
            what = (f"its gold note {sorted(gold)[0]}" if gold
                    else f"the only notes holding its answer line {hidden[0][:80]!r}")
            raise BenchError(f"question {question.id} leaves out {what} (exclude_notes): "
                             "the bench is wrong; make it again with its adapter, or fix the "
                             "question's exclude_notes")


def _run_question(reader: BenchReader, question: Question, scan: StoreScan,
                  run: RunResult, carried: Mapping[str, frozenset[str]] | None = None) -> None:
    run.read += 1
    if not question.answer_lines:
        run.skipped_empty += 1
        return
    if any(line.strip() not in scan.places for line in question.answer_lines):
        run.skipped_missing += 1
        return
    reader.exclude(question.exclude_notes)
    one = QuestionPass(reader, question, scan.full(question.exclude_notes))
    outcomes: dict[str, Outcome] = {}
    for policy in run.policies:
        reading = one.run(policy)
        if reading is not None:
            hit, any_line = reading.covers(question.answer_lines)
            plain = hit
            if carried:
                hit, any_line = reading.reaches(question.answer_lines, carried)
            outcomes[policy] = Outcome(hit, any_line, reading.tokens, hit and not plain)
    run.results.append(QuestionResult(question.id, question.category or "(none)",
                                      where_answer_lives(question, scan),
                                      one.gold_positions(), outcomes))


def where_answer_lives(question: Question, scan: StoreScan) -> str:
    """The kind of section holding the answer lines (in the gold notes when there are)."""
    kinds: set[str] = set()
    gold = set(question.gold_notes)
    for line in question.answer_lines:
        places = scan.places.get(line.strip(), set())
        in_gold = {k for n, k in places if n in gold}
        kinds |= in_gold or {k for _, k in places}
    return kinds.pop() if len(kinds) == 1 else "mixed"
