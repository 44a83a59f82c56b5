"""Lab probe (issue #34's decision): RealMem in the shape the store is built for.

`notes bench from-realmem` writes one note per session. An agent keeps one topic note per
thread of work, each session a dated history entry. This probe measures, on the same
questions, both shapes of one person's memory **as it was when each question was asked**:
for every cut-off (a person and the session a question is asked in) it writes two stores
of that person's earlier sessions only (no later session can leak, so no note is left out):

- ``sessions``: the session notes as `from-realmem` wrote them;
- ``topics``: one note per project thread (the session's ``session_identifier`` before the
  colon, which `from-realmem` puts in the title), its sessions as dated entries in order,
  each entry the session's lines unchanged. The gold notes become the threads holding the
  gold sessions.

It runs the policies on each (tantivy, the default levers) and prints, per shape, each
policy's hit rate and tokens over all questions and its margin over the fragments curve of
the same shape, split by one gold session and several. Figures are for the lab log, not the
user's pages. It reads a `from-realmem` bench (never the raw data) and writes its stores
under ``--work`` (removed at the end).

Run: .venv/bin/python benchmarks/realmem_topics.py BENCH --half test --every 3 [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.bench.curve import best_of_family, margin_text  # noqa: E402
from memory.bench.figures import policy_figures, with_margins  # noqa: E402
from memory.bench.locomo import note_text  # noqa: E402
from memory.bench.questions import Question, read_questions  # noqa: E402
from memory.bench.run import QuestionResult  # noqa: E402
from memory.bench.split import half_of  # noqa: E402
from memory.model.text import slugify  # noqa: E402

POLICIES = ["ladder@1", "ladder@2", "ladder-oracle", "recall@500", "recall@1000",
            "recall@2000", "fragments@2", "fragments@5", "fragments@10", "fragments@20",
            "fragments@40", "fragments@80"]
SHAPES = ("sessions", "topics")
_TITLE = re.compile(r'^title: "(?P<person>[^:]+): (?P<project>.+?)(?:, (?P<stage>S[\w-]+))? '
                    r'\((?P<day>\d{4}-\d{2}-\d{2})\)"$', re.M)
_ENTRY = re.compile(r"^### .*$", re.M)


@dataclass(frozen=True)
class SessionNote:
    note_id: str  # person/session-042
    person: str
    project: str
    day: str
    entry: str  # "### day · Session N" and its lines


def read_session(notes_dir: Path, note_id: str) -> SessionNote:
    text = (notes_dir / f"{note_id}.md").read_text(encoding="utf-8")
    title = _TITLE.search(text)
    start = _ENTRY.search(text)
    if title is None or start is None:
        raise SystemExit(f"{note_id}: not a from-realmem session note")
    return SessionNote(note_id, title["person"], title["project"], title["day"],
                       text[start.start():].rstrip("\n"))


def topic_id(session: SessionNote) -> str:
    return f"{session.note_id.split('/')[0]}/{slugify(session.project) or 'talk'}"


def write_sessions(out: Path, notes_dir: Path, sessions: list[SessionNote]) -> None:
    for one in sessions:
        target = out / "notes" / f"{one.note_id}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notes_dir / f"{one.note_id}.md", target)


def write_topics(out: Path, sessions: list[SessionNote]) -> None:
    threads: dict[str, list[SessionNote]] = defaultdict(list)
    for one in sessions:  # in session order
        threads[topic_id(one)].append(one)
    for note_id, thread in threads.items():
        first, last = thread[0], thread[-1]
        title = f"{first.person}: {first.project}"
        state = (f"- {first.person} and the assistant on {first.project}: {len(thread)} "
                 f"session{'s' if len(thread) > 1 else ''}, {first.day} to {last.day}.")
        body = [part for one in thread for part in ("", one.entry)]
        target = out / "notes" / f"{note_id}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(note_text(title, state, body), encoding="utf-8")


def write_questions(out: Path, questions: list[Question], gold: dict[str, str]) -> None:
    with (out / "questions.jsonl").open("w", encoding="utf-8") as handle:
        for q in questions:
            notes = list(dict.fromkeys(gold[n] for n in q.gold_notes))
            data = {k: v for k, v in q.to_json().items()
                    if k not in ("note", "notes", "exclude_notes")}
            data.update({"note": notes[0]} if len(notes) == 1 else {"notes": notes})
            handle.write(json.dumps(data, ensure_ascii=False) + "\n")


def run_cutoff(job: tuple[str, str, list[str], list[dict[str, Any]], str]
               ) -> list[tuple[str, bool, QuestionResult]]:
    """Both shapes of one cut-off: (shape, several gold sessions, the question's result)."""
    from memory.bench.run import run_bench
    from memory.retrieval.levers import DEFAULT

    notes_dir, work, earlier, asked, _ = job
    sessions = [read_session(Path(notes_dir), n) for n in earlier]
    questions = [Question(**q) for q in asked]
    several = {q.id: len(q.gold_notes) > 1 for q in questions}
    rows: list[tuple[str, bool, QuestionResult]] = []
    with tempfile.TemporaryDirectory(dir=work) as scratch:
        for shape in SHAPES:
            out = Path(scratch) / shape
            (out / "notes").mkdir(parents=True)
            if shape == "sessions":
                write_sessions(out, Path(notes_dir), sessions)
                gold = {s.note_id: s.note_id for s in sessions}
            else:
                write_topics(out, sessions)
                gold = {s.note_id: topic_id(s) for s in sessions}
            write_questions(out, questions, gold)
            run = run_bench(out, POLICIES, backend="tantivy", levers=DEFAULT,
                            state_dir=Path(scratch) / f"state-{shape}")
            rows.extend((shape, several[r.id], r) for r in run.results)
    return rows


def jobs(bench: Path, half: str | None, every: int, work: Path
         ) -> list[tuple[str, str, list[str], list[dict[str, Any]], str]]:
    chosen = [q for q in read_questions(bench / "questions.jsonl")
              if q.answer_lines and q.gold_notes and (half is None or half_of(q.id) == half)]
    chosen = chosen[::every]
    by_cutoff: dict[tuple[str, str], list[Question]] = defaultdict(list)
    for q in chosen:
        person = q.id.split(":")[0]
        by_cutoff[(person, q.exclude_notes[0] if q.exclude_notes else "")].append(q)
    out = []
    for (person, first_left_out), asked in sorted(by_cutoff.items()):
        every_session = sorted(p.relative_to(bench / "notes").with_suffix("").as_posix()
                               for p in (bench / "notes" / person).glob("session-*.md"))
        earlier = [n for n in every_session if not first_left_out or n < first_left_out]
        out.append((str(bench / "notes"), str(work), earlier,
                    [vars(q) for q in asked], f"{person}@{first_left_out}"))
    return out


def summary(rows: list[tuple[str, bool, QuestionResult]]
            ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per shape and part (all, one gold session, several): each policy's figures with its
    margin over that part's fragments curve, and the best ladder-family policy."""
    parts: dict[str, Callable[[bool], bool]] = {
        "all": lambda several: True, "one session": lambda several: not several,
        "several sessions": lambda several: several}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for shape in SHAPES:
        for part, keep in parts.items():
            mine = [r for s, several, r in rows if s == shape and keep(several)]
            policies = with_margins({p: policy_figures(mine, p) for p in POLICIES})
            out.setdefault(shape, {})[part] = {"policies": policies,
                                               "best": best_of_family(policies)}
    return out


def table(result: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = ["| shape | part | questions | best ladder-family policy | over fragments | "
             "ladder@1 | ladder@2 | recall@2000 | fragments@20 |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for shape, parts in result.items():
        for part, figures in parts.items():
            p, best = figures["policies"], figures["best"] or {}

            def cell(name: str, p: dict[str, Any] = p) -> str:
                f = p.get(name)
                return f"{f['hit_rate']:.1%} @{f['mean_tokens']:,.0f}" if f else "–"

            questions = max((f["questions"] for f in p.values()), default=0)
            lines.append(f"| {shape} | {part} | {questions} | {best.get('policy', '–')} "
                         f"{best.get('hit_rate', 0):.1%} @{best.get('mean_tokens', 0):,.0f} | "
                         f"{margin_text(best.get('curve_margin'))} | {cell('ladder@1')} | "
                         f"{cell('ladder@2')} | {cell('recall@2000')} | "
                         f"{cell('fragments@20')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", type=Path, help="a `notes bench from-realmem` folder")
    parser.add_argument("--half", choices=["tuning", "test"], default=None)
    parser.add_argument("--every", type=int, default=1, help="every Nth question")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the per-question rows here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="realmem-topics-") as work:
        todo = jobs(args.bench, args.half, args.every, Path(work))
        print(f"{sum(len(j[3]) for j in todo)} questions, {len(todo)} cut-offs",
              file=sys.stderr)
        rows: list[tuple[str, bool, QuestionResult]] = []
        with ProcessPoolExecutor(args.jobs) as pool:
            for n, done in enumerate(pool.map(run_cutoff, todo), 1):
                rows.extend(done)
                if n % 20 == 0:
                    print(f"{n}/{len(todo)} cut-offs", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps([
            {"shape": shape, "several": several, "id": r.id,
             "outcomes": {p: [o.hit, o.tokens] for p, o in r.outcomes.items()}}
            for shape, several, r in rows]), encoding="utf-8")
    print(table(summary(rows)))


if __name__ == "__main__":
    main()
