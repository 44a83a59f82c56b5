"""Build every visible bench, run the policies on each, write each report and the summary.

The benches come from three sources: LoCoMo (four shapes), the example store's follow-ups
and RealMem (a note per session, each question asked without its own and later sessions).
The shared data is read where it lies: named by a flag or an environment variable, else
found beside the checkout (``../shared/bench/…``) or two levels up from a worktree.

A bench is built afresh on every call (in ``--work``, else in a temporary folder removed at
the end), so a run always measures today's adapters and today's retrieval code. Benches run
one after the other (the machine is shared; each run indexes its own store), and the summary
is rewritten after each, so an interrupted call still leaves the benches it finished.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.followups.make_bench import make_bench
from benchmarks.visible.summary import Outcomes, summarize, summary_markdown
from memory.bench.locomo import locomo_to_bench
from memory.bench.policies import check_policies
from memory.bench.realmem import persona_files, realmem_to_bench
from memory.bench.report import write_report
from memory.bench.run import Progress, run_bench
from memory.config import BACKENDS
from memory.errors import InvalidArgument, NotesError
from memory.retrieval.levers import DEFAULT, Levers

Say = Callable[[str], None]
CHECKOUT = Path(__file__).resolve().parents[2]
LOCOMO_PATH = Path("shared") / "bench" / "locomo" / "locomo10.json"
REALMEM_PATH = Path("shared") / "bench" / "realmem"
SUMMARY_FILES = {"markdown": "summary.md", "json": "summary.json"}


@dataclass(frozen=True)
class VisibleBench:
    name: str
    title: str
    direct: str | None  # the bench of the same questions asked directly (follow-ups only)
    locomo: tuple[bool, bool] | None  # (follow-ups, note per session); None: not LoCoMo
    source: str = "locomo"  # the data it is made from: locomo, realmem or example


BENCHES = {b.name: b for b in (
    VisibleBench("locomo", "LoCoMo (a note per conversation)", None, (False, False)),
    VisibleBench("locomo-sessions", "LoCoMo per session", None, (False, True)),
    VisibleBench("locomo-followups", "LoCoMo follow-ups", "locomo", (True, False)),
    VisibleBench("locomo-sessions-followups", "LoCoMo per session, follow-ups",
                 "locomo-sessions", (True, True)),
    VisibleBench("example-followups", "example store follow-ups", None, None, "example"),
    VisibleBench("realmem", "RealMem, a note per session, asked then", None, None,
                 "realmem"),
)}


@dataclass(frozen=True)
class VisibleOptions:
    benches: list[str]
    out: Path
    policies: list[str] | None = None  # None: every policy
    limit: int | None = None
    locomo: Path | None = None  # the file (None: the first of ``search`` that exists)
    search: tuple[Path, ...] | None = None  # where to look for it (None: locomo_candidates())
    work: Path | None = None  # where the benches are built and kept; None: a temporary folder
    backend: str = "whoosh"
    levers: Levers = DEFAULT  # the retrieval levers of every run (memory.retrieval.levers)
    realmem: Path | None = None  # RealMem's folder (None: the first of ``realmem_search``)
    realmem_search: tuple[Path, ...] | None = None  # None: realmem_candidates()


@dataclass(frozen=True)
class Sources:
    """The shared data the asked benches are made from (None: not needed)."""

    locomo: Path | None = None
    realmem: Path | None = None


def parse_benches(text: str | None) -> list[str]:
    """``--benches`` as names, in the order given (default: every visible bench)."""
    names = [n.strip() for n in (text or "").split(",") if n.strip()] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown or len(set(names)) != len(names):
        raise InvalidArgument(f"benches: got {','.join(names)}; give each of "
                              f"{', '.join(BENCHES)} at most once, e.g. --benches "
                              "locomo-sessions,example-followups")
    return names


def locomo_candidates(checkout: Path = CHECKOUT) -> list[Path]:
    """Where the shared file lies when nobody names it: beside the main checkout
    (``../shared``), or two levels up from a worktree (``/work/wt/NAME``)."""
    return [checkout.parent / LOCOMO_PATH, checkout.parent.parent / LOCOMO_PATH]


def realmem_candidates(checkout: Path = CHECKOUT) -> list[Path]:
    """Where RealMem's folder lies when nobody names it, as for LoCoMo."""
    return [checkout.parent / REALMEM_PATH, checkout.parent.parent / REALMEM_PATH]


def locate_realmem(given: Path | None, candidates: list[Path]) -> Path:
    """RealMem's folder: the one given, else the first candidate that holds its files."""
    also = ("or run the other benches: --benches locomo,locomo-sessions,locomo-followups,"
            "locomo-sessions-followups,example-followups")
    if given is not None:
        try:
            persona_files(given)
        except NotesError as exc:
            raise NotesError(f"RealMem: {exc}; give it with --realmem DIR (or "
                             f"NOTES_BENCH_REALMEM), {also}") from None
        return given
    for candidate in candidates:
        if candidate.is_dir():
            try:
                persona_files(candidate)
            except NotesError:
                continue
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise NotesError(f"RealMem's persona files were not found (looked at {looked}); they are "
                     "not part of the project (Apache-2.0): get the dataset/ folder of "
                     "https://github.com/zhiyuan5986/RealMemBench and give it with --realmem "
                     f"DIR (or NOTES_BENCH_REALMEM), {also}")


def locate_locomo(given: Path | None, candidates: list[Path]) -> Path:
    """The LoCoMo file to read: the one given, else the first candidate that exists."""
    if given is not None:
        if not given.is_file():
            raise NotesError(f"LoCoMo file {given} does not exist; give the path of "
                             "locomo10.json with --locomo FILE (or NOTES_BENCH_LOCOMO), or "
                             "run only the example store's bench: --benches example-followups")
        return given
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise NotesError(f"LoCoMo's locomo10.json was not found (looked at {looked}); it is not "
                     "part of the project (CC BY-NC): get it from "
                     "https://github.com/snap-research/locomo and give its path with --locomo "
                     "FILE (or NOTES_BENCH_LOCOMO), or run only the example store's bench: "
                     "--benches example-followups")


def check_options(options: VisibleOptions) -> Sources:
    """Everything that can be wrong before an hour of runs: benches, policies, backend, the
    shared data. Returns where the data of the asked benches lies (None: not asked for)."""
    parse_benches(",".join(options.benches))
    if options.policies is not None:
        check_policies(options.policies)
    if options.backend not in BACKENDS:
        raise InvalidArgument(f"backend {options.backend!r}: use one of {', '.join(BACKENDS)}")
    sources = {BENCHES[n].source for n in options.benches}
    locomo = realmem = None
    if "locomo" in sources:
        search = locomo_candidates() if options.search is None else list(options.search)
        locomo = locate_locomo(options.locomo, search)
    if "realmem" in sources:
        search = (realmem_candidates() if options.realmem_search is None
                  else list(options.realmem_search))
        realmem = locate_realmem(options.realmem, search)
    return Sources(locomo, realmem)


def build_bench(bench: VisibleBench, folder: Path, sources: Sources) -> str:
    """Write ``bench`` into ``folder`` (replacing what is there); return its counts line."""
    if bench.source == "example":
        notes = make_bench(folder, force=True)
        return f"{notes} notes of notes_example/, questions of benchmarks/followups/"
    if bench.source == "realmem":
        if sources.realmem is None:
            raise NotesError(f"{bench.name} needs RealMem's folder: give it with --realmem")
        return realmem_to_bench(sources.realmem, folder, force=True).summary().replace(
            "\n", "; ")
    locomo = sources.locomo
    if locomo is None or bench.locomo is None:
        raise NotesError(f"{bench.name} needs LoCoMo's locomo10.json: give it with --locomo")
    follow_ups, per_session = bench.locomo
    counts = locomo_to_bench(locomo, folder, force=True, follow_ups=follow_ups,
                             per_session=per_session)
    return counts.summary().replace("\n", "; ")


@contextmanager
def _work_folder(work: Path | None) -> Iterator[Path]:
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
        yield work
        return
    with tempfile.TemporaryDirectory(prefix="notes-visible-") as scratch:
        yield Path(scratch)


def run_visible(options: VisibleOptions, command: str, say: Say,
                progress: Progress | None = None) -> dict[str, Any]:
    """Build and run every bench of ``options``; write ``OUT/NAME/`` (each bench's report)
    and ``OUT/summary.md|json``; return the summary."""
    sources = check_options(options)
    reports: dict[str, dict[str, Any]] = {}
    built: dict[str, str] = {}
    outcomes: dict[str, Outcomes] = {}
    summary: dict[str, Any] = {}
    with _work_folder(options.work) as work:
        for name in options.benches:
            bench = BENCHES[name]
            say(f"{name}: building {bench.title}")
            built[name] = build_bench(bench, work / name, sources)
            say(f"{name}: {built[name]}")
            started = time.perf_counter()
            run = run_bench(work / name, options.policies, options.limit,
                            progress=progress, backend=options.backend,
                            levers=options.levers, vectors=work / "vectors")
            reports[name] = write_report(run, options.out / name, f"{command}  # bench {name}")
            outcomes[name] = [(r.id, {p: o.hit for p, o in r.outcomes.items()})
                              for r in run.results]
            say(f"{name}: {len(run.results)} questions in {time.perf_counter() - started:.0f} s;"
                f" report in {options.out / name / 'report.md'}")
            summary = summarize(reports, {n: BENCHES[n].direct for n in reports},
                                {n: BENCHES[n].title for n in reports}, command, built,
                                outcomes)
            write_summary(summary, options.out)
    return summary


def write_summary(summary: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY_FILES["json"]).write_text(json.dumps(summary, indent=2, ensure_ascii=False)
                                             + "\n", encoding="utf-8")
    (out / SUMMARY_FILES["markdown"]).write_text(summary_markdown(summary), encoding="utf-8")
