"""The `notes` command line: a thin front end over :mod:`memory.api`.

The only module that imports click, with its setup commands (init, import, status, install,
uninstall) in :mod:`memory.cli_setup`. Errors from the library (NotesError) become ``Error: …``
on stderr and exit status 1; usage errors exit 2.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import render
from .api import Notes
from .cli_setup import register as register_setup_commands
from .config import Config, load_config
from .errors import EmptyInput, NotesError
from .http_guard import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S
from .index import RefreshReport

BUDGET_FILE = Path(__file__).resolve().parent / "tool_budget.json"


class NotesGroup(click.Group):
    """Turns library errors into ``Error: …`` and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EmptyInput as exc:  # a usage error: exit 2, with the way to do it on purpose
            raise click.UsageError(str(exc), ctx) from exc
        except NotesError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=NotesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--notes", "notes_dir", type=click.Path(file_okay=False),
              help="Notes folder (default: $NOTES_DIR, else the nearest store walking up "
                   "from here, else your default store; see `notes status`).")
@click.option("--example", is_flag=True,
              help="Use the bundled example store notes_example/ (a demo, not your memory).")
@click.option("--state-dir", type=click.Path(file_okay=False), envvar="NOTES_STATE_DIR",
              help="Where the index lives (default: NOTES/.notes, or a cache folder when "
                   "the notes folder is read-only).")
@click.version_option(package_name="notes-memory")
@click.pass_context
def cli(ctx: click.Context, notes_dir: str | None, example: bool,
        state_dir: str | None) -> None:
    """A note-based memory for coding agents: suggest notes, map them, read one section."""
    ctx.obj = _LazyNotes(notes_dir, state_dir, example)


class _LazyNotes:
    """Resolves the configuration once, when a command first needs the store."""

    def __init__(self, notes_dir: str | None, state_dir: str | None,
                 example: bool = False) -> None:
        self.notes_dir, self.state_dir, self.example = notes_dir, state_dir, example
        self._notes: Notes | None = None

    def config(self, cwd: Path | None = None) -> Config:
        return load_config(self.notes_dir, self.state_dir, cwd=cwd, example=self.example)

    def get(self) -> Notes:
        if self._notes is None:
            self._notes = Notes(self.config(), front="cli")
        return self._notes


def _notes(ctx: click.Context) -> Notes:
    lazy: _LazyNotes = ctx.obj
    return lazy.get()


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


def _emit(as_json: bool, value: Any, text: Callable[[Any], str]) -> None:
    click.echo(render.as_json(value) if as_json else text(value))


context_option = click.option("--context", "-c", metavar="TEXT",
                              help="Recent conversation, counted with a low weight.")
date_option = click.option("--date", "asked_on", type=click.DateTime(["%Y-%m-%d"]),
                           help="The day the question is asked, for 'last week', 'en "
                           "octubre' (default: today).")


def _day(asked_on: dt.datetime | None) -> dt.date | None:
    return asked_on.date() if asked_on else None


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 50),
              help="How many notes to show.")
@context_option
@json_option
@click.pass_context
def suggest(ctx: click.Context, query: str, limit: int, context: str | None,
            as_json: bool) -> None:
    """Rung 1: which notes may answer QUERY (Spanish or English, accents optional). Notes
    this shell session read in the last 30 minutes rank a little higher."""
    _emit(as_json, _notes(ctx).suggest(query, limit, context), render.suggestions)


@cli.command(name="map")
@click.argument("note")
@click.option("--query", "-q", help="Score the sections against these words (and dates).")
@date_option
@json_option
@click.pass_context
def map_(ctx: click.Context, note: str, query: str | None, asked_on: dt.datetime | None,
         as_json: bool) -> None:
    """Rung 2: every section of NOTE with its id, kind, date and token cost. With --query:
    match scores, the best entries only, and the matching blocks of long sections."""
    _emit(as_json, _notes(ctx).section_map(note, query, today=_day(asked_on)),
          render.section_map)


@cli.command()
@click.argument("note")
@click.argument("section", required=False)
@json_option
@click.pass_context
def read(ctx: click.Context, note: str, section: str | None, as_json: bool) -> None:
    """Rung 3: the text of one SECTION of NOTE: an id, unique prefix or #N; blocks of it
    (ID:b3 or ID:b3-5); or the history entries of a date or range (2026-11-03, 2026-11,
    2026-11-01..2026-11-15). The whole note when SECTION is left out."""
    _emit(as_json, _notes(ctx).read_section(note, section), render.section_text)


@cli.command()
@click.argument("query")
@click.option("--budget", "-b", default=1500, show_default=True,
              type=click.IntRange(100, 20_000), help="Most tokens to return.")
@context_option
@date_option
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, budget: int, context: str | None,
           asked_on: dt.datetime | None, as_json: bool) -> None:
    """The best evidence for QUERY that fits BUDGET tokens, across the top notes: the best
    note's state, then blocks by score, each labelled with note, section and date."""
    _emit(as_json, _notes(ctx).recall(query, budget, context, today=_day(asked_on)),
          render.recalled)


@cli.command(name="list")
@json_option
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """Every note with its title, tokens, entries and last entry date."""
    _emit(as_json, _notes(ctx).list_notes(), render.note_list)


@cli.command()
@click.argument("note")
@click.option("--title", "-t", required=True, help="The note's title.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--aliases", default="", help="Comma-separated other names (e.g. Spanish).")
@json_option
@click.pass_context
def new(ctx: click.Context, note: str, title: str, tags: str, aliases: str,
        as_json: bool) -> None:
    """Create NOTE with an empty state and history."""
    result = _notes(ctx).create_note(note, title, _split(tags), _split(aliases))
    _emit(as_json, result, render.write_result)


allow_empty_option = click.option("--allow-empty", is_flag=True,
                                  help="Accept an empty text on stdin (otherwise refused, "
                                  "exit 2).")


@cli.command()
@click.argument("note")
@allow_empty_option
@json_option
@click.pass_context
def state(ctx: click.Context, note: str, allow_empty: bool, as_json: bool) -> None:
    """Replace NOTE's state with the text on stdin (the heading is kept). An empty text is
    refused unless --allow-empty (which clears the state)."""
    result = _notes(ctx).write_state(note, _stdin("the new state"), allow_empty)
    _emit(as_json, result, render.write_result)


@cli.command()
@click.argument("note")
@click.option("--title", "-t", required=True, help="The entry's title.")
@click.option("--date", "-d", help="YYYY-MM-DD or 'YYYY-MM-DD HH:MM' (default: today).")
@allow_empty_option
@json_option
@click.pass_context
def log(ctx: click.Context, note: str, title: str, date: str | None, allow_empty: bool,
        as_json: bool) -> None:
    """Append a dated history entry to NOTE; its body is read from stdin (an empty body is
    refused unless --allow-empty)."""
    result = _notes(ctx).append_history(note, title, _stdin("the entry's body"), date,
                                        allow_empty)
    _emit(as_json, result, render.write_result)


@cli.command()
@click.option("--rebuild", is_flag=True, help="Build the whole index anew.")
@json_option
@click.pass_context
def index(ctx: click.Context, rebuild: bool, as_json: bool) -> None:
    """Bring the index up to date with the notes (only changed notes are re-indexed), then
    merge the small index segments that quick updates left behind."""
    notes = _notes(ctx)
    if sys.stderr.isatty() and not as_json:
        report = _with_progress(lambda p: notes.refresh_index(rebuild, p))
    else:
        report = notes.refresh_index(rebuild)
    notes.tidy_index()  # merge the small segments quick commits left (Whoosh)
    _emit(as_json, report, lambda r: _index_summary(r, notes))


def _with_progress(run: Callable[[Callable[[int, int], None]], RefreshReport]) -> RefreshReport:
    state: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if "bar" not in state:
            state["bar"] = click.progressbar(length=total, label="indexing notes",
                                             file=sys.stderr)
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
            f"{report.unchanged} unchanged ({notes.index.dir})")


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
    there are errors. --restore or --accept resolve the history ones."""
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
    """Keep the index fresh while notes change on disk (Ctrl-C to stop)."""
    from .watch import Watcher

    notes = _notes(ctx)
    notes.refresh_index()
    notes.tidy_index()
    done = threading.Event()

    def changed(paths: list[Path]) -> None:
        report = notes.refresh_index()
        names = ", ".join(report.indexed + [f"-{r}" for r in report.removed]) or "no change"
        click.echo(f"re-indexed: {names}", err=True)

    def tidy() -> None:  # once the notes are quiet: merge what quick commits left
        merged = notes.tidy_index()
        if merged:
            click.echo(f"tidied: merged {merged} small index segments", err=True)

    def reconcile() -> None:  # every minute: what the events missed
        changed([])
        tidy()

    # an error is printed (Error: ...) and watching goes on: the next change may succeed
    watcher = Watcher(notes.config.notes_dir, changed, reconcile, quiet_seconds, on_idle=tidy,
                      ignore=notes.config.state_dir)
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
@click.option("--read-only", is_flag=True, help="Serve only the reading tools.")
@click.option("--http", "http_port", type=click.IntRange(1, 65535), metavar="PORT",
              help="Serve streamable HTTP on 127.0.0.1:PORT (default: stdio).")
@click.option("--host", metavar="ADDR", help="With --http: listen on ADDR instead of "
              "127.0.0.1; beyond loopback it needs a token.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="With --http: also answer to Host/Origin NAME or NAME:PORT (repeatable; "
                   "adds to $NOTES_HTTP_ALLOWED_HOSTS).")
@click.option("--token-file", is_flag=True, help="With --http: require the bearer token kept "
              "in STATE/http-token (made, mode 0600, if missing) instead of $NOTES_HTTP_TOKEN.")
@click.option("--max-sessions", type=click.IntRange(min=1), metavar="N",
              help=f"With --http: live sessions at most [default: {DEFAULT_MAX_SESSIONS}].")
@click.option("--session-idle", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help=f"With --http: close a session idle this long "
                   f"[default: {DEFAULT_SESSION_IDLE_S}].")
@click.pass_context
def serve(ctx: click.Context, read_only: bool, http_port: int | None, host: str | None,
          allow_hosts: tuple[str, ...], token_file: bool, max_sessions: int | None,
          session_idle: float | None) -> None:
    """Run the MCP server for this store (stdio by default; logs on stderr)."""
    from .http_guard import http_settings

    http_only = {"--host": host, "--allow-host": allow_hosts, "--token-file": token_file,
                 "--max-sessions": max_sessions, "--session-idle": session_idle}
    given = [name for name, value in http_only.items() if value]
    if given and http_port is None:
        raise click.UsageError(f"{', '.join(given)} go with --http PORT")
    config = _notes(ctx).config
    http = None if http_port is None else http_settings(
        config, http_port, host, allow_hosts, token_file, max_sessions, session_idle)
    import mcp_server

    mcp_server.serve(config, read_only, http)


@cli.command()
@json_option
@click.pass_context
def tokens(ctx: click.Context, as_json: bool) -> None:
    """Token cost of the MCP tool catalog, per tool, and of a typical answer of each rung;
    exit 1 when a figure is over the committed budget."""
    import mcp_server

    costs = mcp_server.measure_costs(_notes(ctx).config)
    budget = json.loads(BUDGET_FILE.read_text())
    over = mcp_server.over_budget(costs, budget)
    _emit(as_json, costs | {"over_budget": over}, lambda c: render.costs(c, budget))
    if over:
        raise click.ClickException("over budget: " + "; ".join(over) + f" (see {BUDGET_FILE})")


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
@click.option("--dry-run", is_flag=True, help="With --apply: show the diff, write nothing.")
@json_option
@click.pass_context
def promote(ctx: click.Context, days: int, min_sessions: int, demote_days: int,
            report_dir: Path | None, apply_: tuple[str, str] | None, line: str | None,
            dry_run: bool, as_json: bool) -> None:
    """Report which history entries deserve the state (from the usage log), state lines
    nobody asks about, and routing misses; or --apply one promotion."""
    from . import promote_report
    from .promote import apply_promotion, build_report

    notes = _notes(ctx)
    if apply_:
        result = apply_promotion(notes, apply_[0], apply_[1], line, dry_run, days)
        _emit(as_json, result, lambda r: promote_report.applied(r, dry_run))
        return
    if line or dry_run:
        raise click.UsageError("--line and --dry-run go with --apply NOTE ENTRY")
    report = build_report(notes, days, min_sessions, demote_days)
    text = promote_report.markdown(report)
    if report_dir is not None:
        report_dir.mkdir(parents=True, exist_ok=True)
        stem = report_dir / f"promotion-{report.generated[:10]}"
        _write_replacing(stem.with_suffix(".md"), text)
        _write_replacing(stem.with_suffix(".json"), render.as_json(report))
    _emit(as_json, report, lambda _: text)


def _write_replacing(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    tmp.replace(path)


@cli.group()
def hook() -> None:
    """Hooks for agent front ends (Claude Code)."""


@hook.command("user-prompt")
@click.pass_context
def hook_user_prompt(ctx: click.Context) -> None:
    """UserPromptSubmit hook: JSON on stdin, suggested notes as added context on stdout.
    Never fails the prompt: problems are logged and it exits 0 with no output."""
    from .hook import log_problem, run_hook

    lazy: _LazyNotes = ctx.find_root().obj
    try:
        raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        notes = Notes(lazy.config(), notify=lambda _: None, front="hook")
        output = run_hook(notes, raw)
        notes.close()
    except Exception as exc:  # the user's prompt must go through whatever happens
        message = f"notes hook: {type(exc).__name__}: {exc}"
        click.echo(message, err=True)
        log_problem(_hook_log_dir(lazy), message)
        return
    if output:
        click.echo(output)


def _hook_log_dir(lazy: _LazyNotes) -> Path:
    try:
        return lazy.config().state_dir
    except NotesError:
        return Path.home() / ".cache" / "notes-memory"


@cli.group()
def bench() -> None:
    """Evidence reached per token: build a bench, run the retrieval policies on it, report."""


_bench_out = click.option("--out", required=True, type=click.Path(file_okay=False,
                          path_type=Path), help="The bench folder to write (notes/ and "
                          "questions.jsonl).")
_bench_force = click.option("--force", is_flag=True, help="Replace a bench already in --out.")


@bench.command("from-locomo")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_bench_out
@_bench_force
@click.option("--follow-ups", is_flag=True, help="Vague follow-ups: take the speakers' names "
              "out of each question; its context is the previous question and its answer.")
def bench_from_locomo(source: Path, out: Path, force: bool, follow_ups: bool) -> None:
    """LoCoMo's locomo10.json as a bench: a note per conversation, an entry per session, a
    line per turn; evidence turns become answer lines. Prints the counts."""
    from .bench.locomo import locomo_to_bench

    click.echo(locomo_to_bench(source, out, force, follow_ups).summary())
    click.echo(f"bench written to {out}")


@bench.command("from-transcripts")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--notes", "notes_dir", required=True, type=click.Path(exists=True,
              file_okay=False, path_type=Path), help="Today's notes folder the agent used.")
@_bench_out
@_bench_force
def bench_from_transcripts(paths: tuple[Path, ...], notes_dir: Path, out: Path,
                           force: bool) -> None:
    """Claude Code transcripts (.jsonl files or folders) as a bench: per turn, the memory lines
    the agent read and recalled in its reply; the notes are copied into the bench."""
    from .bench.mining import transcripts_to_bench

    counts = transcripts_to_bench(list(paths), notes_dir, out, force)
    click.echo(counts.summary())
    for line in counts.stale[:20]:
        click.echo(f"no longer in the notes: {line}")
    if len(counts.stale) > 20:
        click.echo(f"… and {len(counts.stale) - 20} more lines no longer in the notes")
    click.echo(f"bench written to {out}")


@bench.command("run")
@click.argument("bench_dir", metavar="BENCH", type=click.Path(exists=True, file_okay=False,
                path_type=Path))
@click.option("--policies", help="Comma-separated, from: ladder@1, ladder@2, ladder-oracle, "
              "fragments@5, fragments@10, fragments@20, fragments@40, hybrid, full "
              "(default: all).")
@click.option("--limit", type=click.IntRange(1), help="Run only the first N questions.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write the report (default: BENCH/report/).")
@click.option("--backend", "backends", default="whoosh", show_default=True,
              help="Comma-separated index backends (whoosh, tantivy); with several, every "
              "policy runs on each and one report shows them side by side.")
@json_option
def bench_run(bench_dir: Path, policies: str | None, limit: int | None, out: Path | None,
              backends: str, as_json: bool) -> None:
    """Run the policies on a bench (index in a temporary folder, usage log off) and write the
    report: Markdown, JSON, per-question results and a plot of hit rate against tokens."""
    import shlex

    from .bench.report import FILES, PLOT_HINT, policy_table, routing_text, write_report
    from .bench.run import run_backends

    progress = _bench_progress()
    run = run_backends(bench_dir, _split(backends), _split(policies or "") or None, limit,
                       progress=progress)
    if progress is not None:
        click.echo("", err=True)
    target = out or bench_dir / "report"
    data = write_report(run, target, "notes " + shlex.join(sys.argv[1:]))
    if data["plot"] is None:
        click.echo(f"no plot: {PLOT_HINT}", err=True)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(policy_table(data["policies"]) + "\n\n" + routing_text(data))
    click.echo(f"\n{len(run.results)} questions in {run.seconds:.0f} s; report in "
               f"{target / FILES['markdown']}")


@bench.command("perf")
@click.option("--scale", type=click.FloatRange(0, 100, min_open=True), default=1.0,
              show_default=True, help="Store size: 1 ≈ 220 notes and 1 M cl100k tokens.")
@click.option("--scales", help="Comma-separated scales for the growth table and plot (e.g. "
              "0.25,1,4,10); replaces --scale.")
@click.option("--backend", "backends", default="whoosh", show_default=True,
              help="Comma-separated index backends to measure side by side: whoosh, tantivy.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("perf-report"), show_default=True,
              help="Where to write performance.md, .json and .png.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the generated stores here (default: a temporary folder, removed).")
@click.option("--queries", type=click.IntRange(5, 5000), default=200, show_default=True,
              help="Questions drawn from each store.")
@click.option("--seed", type=int, default=1, show_default=True, help="Generator seed.")
@click.option("--runs", type=click.IntRange(1, 100), default=7, show_default=True,
              help="Cold processes and one-note updates timed per figure.")
@click.option("--generate-only", is_flag=True,
              help="Write the store of --scale (notes/, queries.jsonl) into --work and stop.")
def bench_perf(scale: float, scales: str | None, backends: str, out: Path, work: Path | None,
               queries: int, seed: int, runs: int, generate_only: bool) -> None:
    """Speed and scale: generate stores, then measure index build, one-note freshness
    (library and `notes watch`), warm suggest/section_map/read_section, cold CLI and hook
    processes, MCP round trips and server memory, beside ripgrep and SQLite FTS5."""
    import shlex

    from .perf.generator import generate_store
    from .perf.report import FILES, targets_table, write_report
    from .perf.run import PerfOptions, parse_backends, parse_scales, run_perf

    if generate_only:
        if work is None:
            raise click.UsageError("--generate-only writes the store into --work DIR")
        click.echo(json.dumps(generate_store(work, scale, seed, queries)))
        return
    try:
        chosen = parse_scales(scales) if scales else [scale]
        options = PerfOptions(chosen, parse_backends(backends), seed, queries, runs, runs,
                              work=work)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    data = run_perf(options, "notes " + shlex.join(sys.argv[1:]),
                    lambda line: click.echo(line, err=True))
    data = write_report(data, out)
    click.echo(targets_table(data) + f"\n\nreport in {out / FILES['markdown']}")


def _bench_progress() -> Callable[[int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int) -> None:
        if done % 50 == 0:
            click.echo(f"\r{done} questions run", err=True, nl=False)

    return show


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _stdin(what: str) -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise click.UsageError(f"give {what} on standard input (for example: echo '…' | notes "
                               "…)")
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"{what} on standard input is not UTF-8 text (byte "
                               f"0x{raw[exc.start]:02x} at offset {exc.start}); re-encode it "
                               "as UTF-8 and retry") from None


register_setup_commands(cli)  # init, import, status/doctor, install, uninstall


def main() -> None:
    cli(prog_name="notes")
