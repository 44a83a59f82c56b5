"""`notes index`, `embed`, `check`, `watch`, `promote`: keeping the store (serving it is
:mod:`.serve`)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from memory.errors import NotesError
from memory.fronts import render
from memory.fronts.cli import (
    _emit,
    _notes,
    cli,
    json_option,
    output_folder,
)
from memory.services.promote_lines import DEFAULT_RULE, RULES
from memory.state.storage_errors import make_folder

if TYPE_CHECKING:  # types only: `notes --help` does not load the store (start-up time)
    from memory.api import Notes
    from memory.fronts.cli import _LazyNotes
    from memory.index import RefreshReport

Done = TypeVar("Done")  # what a command with a progress bar returns


@cli.command()
@click.option("--rebuild", is_flag=True, help="Build the whole index anew.")
@json_option
@click.pass_context
def index(ctx: click.Context, rebuild: bool, as_json: bool) -> None:
    """Bring the index up to date with the notes (only changed notes are re-indexed), then
    merge the small index segments that quick updates left behind.

    \b
    Example:
      notes index --rebuild
    """
    notes = _notes(ctx)
    if sys.stderr.isatty() and not as_json:
        report = _with_progress(lambda p: notes.refresh_index(rebuild, p))
    else:
        report = notes.refresh_index(rebuild)
    notes.tidy_index()  # merge the small segments quick commits left (Whoosh)
    _emit(as_json, report, lambda r: _index_summary(r, notes))


def _with_progress(run: Callable[[Callable[[int, int], None]], Done],
                   label: str = "indexing notes") -> Done:
    state: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if "bar" not in state:
            state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            state["bar"].__enter__()
        state["bar"].update(max(0, done - state.get("done", 0)))  # a retry starts at 0
        state["done"] = done

    try:
        return run(progress)
    finally:
        if "bar" in state:
            state["bar"].__exit__(None, None, None)


def _index_summary(report: RefreshReport, notes: Notes) -> str:
    how = "rebuilt" if report.rebuilt else "refreshed"
    return (f"index {how}: {len(report.indexed)} notes indexed, {len(report.removed)} removed, "
            f"{report.unchanged} unchanged ({notes.index_dir})")


@cli.command()
@json_option
@click.pass_context
def embed(ctx: click.Context, as_json: bool) -> None:
    """Embed every note's lines for semantic routing (NOTES_SEMANTIC=1, the extra
    notes-memory[semantic]): only notes changed since they were last embedded (about 60 ms
    a line on two cores), and the vectors of gone notes removed.

    \b
    Example:
      notes embed
    """
    from memory.errors import ConfigError
    from memory.retrieval.semantic import INSTALL_HINT, PACKAGE, available

    notes = _notes(ctx)
    if not available():  # named here: the library's message is NOTES_SEMANTIC's
        also = " (NOTES_SEMANTIC=1 needs it too, or unset it)" if notes.config.semantic else ""
        raise ConfigError(f"`notes embed` needs the {PACKAGE} package of semantic routing: "
                          f"{INSTALL_HINT}{also}")
    if sys.stderr.isatty() and not as_json:
        built = _with_progress(notes.embed, "embedding notes")
    else:
        built = notes.embed()
    _emit(as_json, built, lambda b: render.embedded(b, notes.config.semantic))


@cli.command()
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--restore", is_flag=True,
              help="Put changed or removed history entries back as first recorded.")
@click.option("--accept", is_flag=True,
              help="Keep the current history as it is (deliberate corrections).")
@click.option("--note", "only_note", metavar="NOTE", help="With --restore/--accept: one note.")
@json_option
@click.pass_context
def check(ctx: click.Context, strict: bool, restore: bool, accept: bool,
          only_note: str | None, as_json: bool) -> None:
    """Report format problems and changed history entries with file and line; exit 1 when
    there are errors. --restore or --accept resolve the history ones.

    \b
    Example:
      notes check --strict
    """
    notes = _notes(ctx)
    if restore and accept:
        raise click.UsageError("--restore and --accept are alternatives; pick one")
    if restore or accept:
        repairs = (notes.restore_history if restore else notes.accept_history)(only_note)
        _emit(as_json, repairs, render.repairs)
        return
    if only_note:
        raise click.UsageError("--note goes with --restore or --accept")
    found = notes.check()
    _emit(as_json, found, render.problems)
    failing = [p for p in found if p.severity == "error" or strict]
    if failing:
        ctx.exit(1)


@cli.command()
@click.option("--quiet-seconds", default=0.3, show_default=True, type=float,
              help="Wait this long after the last change to a note before re-indexing it.")
@click.pass_context
def watch(ctx: click.Context, quiet_seconds: float) -> None:
    """Keep the index fresh while notes change on disk, and bring in what Claude Code
    changes in the memory files imported with `notes import --claude` (at start, then
    every minute). Ctrl-C to stop.

    \b
    Example:
      notes watch --quiet-seconds 2
    """
    from memory.state.watch import guarded, print_error

    notes = _notes(ctx)
    done = threading.Event()

    def changed(paths: list[Path]) -> None:
        report = notes.refresh_index()
        names = ", ".join(report.indexed + [f"-{r}" for r in report.removed])
        if names:  # a save of the same bytes, the check every minute: nothing to say
            click.echo(f"re-indexed: {names}", err=True)

    def tidy() -> None:  # once the notes are quiet: merge what quick commits left (and more)
        merged = notes.when_idle()
        if merged:
            click.echo(f"tidied: merged {merged} small index segments", err=True)

    def follow() -> None:  # Claude Code's memory files, changed since imported
        from memory.services.import_sync import follow as bring_in

        report = bring_in(notes, force=True)
        for item in report.items if report else []:
            if item.action in ("created", "updated"):
                click.echo(f"imported: {item.note} ({item.action}; from {item.source})",
                           err=True)

    def reconcile() -> None:  # every minute: what the events missed
        follow()
        changed([])
        tidy()

    guarded(follow, print_error)
    notes.refresh_index()
    notes.tidy_index()
    # an error is printed (Error: ...) and watching goes on: the next change may succeed
    watcher = notes.watcher(changed, reconcile, quiet_seconds, on_idle=tidy)
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    watcher.start()
    click.echo(f"watching {notes.config.notes_dir} (Ctrl-C to stop)", err=True)
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()


@cli.command()
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3650),
              help="Window for promotion candidates and routing misses.")
@click.option("--sessions", "min_sessions", default=3, show_default=True,
              type=click.IntRange(1, 1000), help="Distinct sessions that must read an entry.")
@click.option("--demote-days", default=90, show_default=True, type=click.IntRange(1, 3650),
              help="Window in which a state line must match some question.")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write promotion-YYYY-MM-DD.md (and .json) there; rerunning the same "
                   "day replaces them.")
@click.option("--apply", "apply_", nargs=2, metavar="NOTE ENTRY",
              help="Write ENTRY's proposed line into NOTE's state (history untouched).")
@click.option("--line", help="With --apply: the state line to write instead of the proposal.")
@click.option("--apply-all", is_flag=True, help="Apply every candidate whose precision "
              "estimate is at least --min-precision, each with its proposed line.")
@click.option("--min-precision", type=click.FloatRange(0, 1), default=0.6, show_default=True,
              help="With --apply-all: the precision estimate a candidate needs (k/(k+1) for k "
              "questions that came for its line).")
@click.option("--undo", metavar="ENTRY", help="Take a promoted line back out of the state: "
              "ENTRY is the id in its `(history: …)` (NOTE#ENTRY when several notes hold "
              "one); the exact bytes come back when the note was not edited since.")
@click.option("--rule", type=click.Choice(RULES), default=DEFAULT_RULE, show_default=True,
              help="How a line is proposed from an entry (docs/promotion.md).")
@click.option("--dry-run", is_flag=True, help="With --apply, --apply-all or --undo: show the "
              "diff, write nothing.")
@click.option("--nightly", is_flag=True, help="Run as the nightly job does (`notes install "
              "nightly`): write the report into --report-dir (default: STATE/reports, made if "
              "missing), print nothing, record the run for `notes status` (STATE/nightly.json, "
              "one line in STATE/nightly.log).")
@json_option
@click.pass_context
def promote(ctx: click.Context, days: int, min_sessions: int, demote_days: int,
            report_dir: Path | None, apply_: tuple[str, str] | None, line: str | None,
            apply_all: bool, min_precision: float, undo: str | None, rule: str,
            dry_run: bool, nightly: bool, as_json: bool) -> None:
    """Report which history entries deserve the state (from the usage log), state lines
    nobody asks about, and routing misses; or --apply one promotion, --apply-all those
    you trust, --undo one.

    \b
    Example:
      notes promote --days 30 --report-dir reports
    """
    from memory.services import promote_report
    from memory.services.promote import build_report
    from memory.services.promote_apply import apply_all as apply_every
    from memory.services.promote_apply import apply_promotion, undo_promotion

    actions = [name for name, given in (("--apply", apply_), ("--apply-all", apply_all),
                                        ("--undo", undo), ("--nightly", nightly)) if given]
    if len(actions) > 1:
        raise click.UsageError(f"{' and '.join(actions)} do different things; give one")
    if nightly:
        if line or dry_run or as_json:
            raise click.UsageError("--nightly writes the report; it goes with --report-dir, "
                                   "--days, --sessions, --demote-days and --rule only")
        _nightly(ctx, lambda notes: build_report(notes, days, min_sessions, demote_days,
                                                 rule=rule), report_dir)
        return
    if line and not apply_:
        raise click.UsageError("--line goes with --apply NOTE ENTRY")
    if dry_run and not actions:
        raise click.UsageError("--dry-run goes with --apply NOTE ENTRY, --apply-all or --undo")
    notes = _notes(ctx)
    if apply_:
        result = apply_promotion(notes, apply_[0], apply_[1], line, dry_run, days, rule)
        _emit(as_json, result, lambda r: promote_report.applied(r, dry_run))
        return
    if undo is not None:
        taken = undo_promotion(notes, undo, dry_run)
        _emit(as_json, taken, lambda r: promote_report.undone(r, dry_run))
        return
    if report_dir is not None:
        output_folder(report_dir, "--report-dir")
    report = build_report(notes, days, min_sessions, demote_days, rule=rule)
    if apply_all:
        done = apply_every(notes, report, min_precision, dry_run)
        _emit(as_json, done, lambda r: promote_report.applied_all(
            r, len(report.candidates), min_precision, dry_run))
        return
    text = promote_report.markdown(report)
    if report_dir is not None:
        _write_report(report_dir, report, text)
    _emit(as_json, report, lambda _: text)


def _write_report(folder: Path, report: Any, text: str) -> Path:
    """``promotion-DAY.md`` and ``.json`` in ``folder`` (made if missing); the Markdown's
    path."""
    make_folder(folder, "the --report-dir folder")
    stem = folder / f"promotion-{report.generated[:10]}"
    _write_replacing(stem.with_suffix(".md"), text)
    _write_replacing(stem.with_suffix(".json"), render.as_json(report))
    return stem.with_suffix(".md")


def _nightly(ctx: click.Context, build: Callable[[Notes], Any], report_dir: Path | None) -> None:
    """The nightly run: the report written, nothing printed, the run recorded (its failure
    too, then said on stderr with exit 1, which cron mails and systemd keeps in the
    journal)."""
    from memory.locate import user_state_dir
    from memory.services import promote_report
    from memory.services.nightly_run import default_report_dir, record_run

    lazy: _LazyNotes = ctx.find_root().obj
    try:
        notes = _notes(ctx)
    except NotesError as exc:  # no store: logged where the user's state is
        record_run(Path(lazy.state_dir) if lazy.state_dir else user_state_dir(), None,
                   str(exc))
        raise
    folder = notes.config.state_dir
    target = report_dir or default_report_dir(folder)
    try:
        report = build(notes)
        written = _write_report(target, report, promote_report.markdown(report))
    except NotesError as exc:
        record_run(folder, None, str(exc))
        raise
    except OSError as exc:
        message = (f"cannot write the report into {target} ({exc.strerror or exc}); free "
                   "some space or fix the folder's permissions, or give another --report-dir")
        record_run(folder, None, message)
        raise click.ClickException(message) from exc
    record_run(folder, written, None)


def _write_replacing(path: Path, text: str) -> None:
    from memory.state.safe_files import write_atomic  # here: not loaded by --help (start-up)

    write_atomic(path, text if text.endswith("\n") else text + "\n")
