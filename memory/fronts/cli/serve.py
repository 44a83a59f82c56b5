"""`notes serve`, `tokens`, `hook`: serving the store, to an agent over MCP and to its prompt
hook (`mcp_server.py` runs :func:`serve_script`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memory.fronts import render
from memory.fronts.cli import _emit, _LazyNotes, _notes, cli, json_option, translated
from memory.fronts.mcp import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S  # not the guard's
from memory.locate import EXAMPLE_STORE

BUDGET_FILE = Path(__file__).resolve().parent.parent / "mcp" / "tool_budget.json"
EXAMPLE_QUESTIONS = EXAMPLE_STORE.parent / "benchmarks" / "followups" / "questions.jsonl"


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
@click.option("--no-hook-socket", is_flag=True,
              help="Do not answer the prompt hook (`notes hook user-prompt`) on the store's "
                   "socket STATE/run/hook.sock.")
@click.pass_context
def serve(ctx: click.Context, read_only: bool, http_port: int | None, host: str | None,
          allow_hosts: tuple[str, ...], token_file: bool, max_sessions: int | None,
          session_idle: float | None, no_hook_socket: bool) -> None:
    """Run the MCP server for this store (stdio by default; logs on stderr). While it runs
    it also answers the prompt hook of this store, much faster than a hook process alone.

    \b
    Examples:
      notes serve --read-only
      notes serve --http 8765
    """
    from memory.fronts.mcp.http_guard import http_settings

    http_only = {"--host": host, "--allow-host": allow_hosts, "--token-file": token_file,
                 "--max-sessions": max_sessions, "--session-idle": session_idle}
    given = [name for name, value in http_only.items() if value]
    if given and http_port is None:
        raise click.UsageError(f"{', '.join(given)} go with --http PORT")
    lazy: _LazyNotes = ctx.find_root().obj
    config = lazy.config()
    http = None if http_port is None else http_settings(
        config, http_port, host, allow_hosts, token_file, max_sessions, session_idle)
    from memory.fronts.mcp import server as mcp_server

    mcp_server.serve(config, read_only, http, hook_socket=not no_hook_socket)


class _ServeScript(click.Command):
    """``python mcp_server.py``: `notes serve` with the store options of `notes` itself,
    as one command (the same options, checks and errors)."""

    def invoke(self, ctx: click.Context) -> Any:
        return translated(ctx, lambda: super(_ServeScript, self).invoke(ctx))


def serve_script() -> click.Command:
    """The command ``python mcp_server.py`` runs (:func:`memory.fronts.mcp.server.main`):
    ``notes [--notes DIR] [--state-dir DIR] [--example] serve [OPTIONS]`` as one command
    line, ``mcp_server.py [OPTIONS]``."""
    store_options = [p for p in cli.params if p.name in ("notes_dir", "state_dir", "example")]

    @click.pass_context
    def run(ctx: click.Context, /, notes_dir: str | None, state_dir: str | None, example: bool,
            **options: Any) -> None:
        ctx.obj = _LazyNotes(notes_dir, state_dir, example)
        ctx.invoke(serve, **options)

    return _ServeScript("mcp_server.py", params=[*store_options, *serve.params], callback=run,
                        help=serve.help, context_settings={"help_option_names": ["-h", "--help"]})


@cli.command()
@click.option("--questions", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A bench's questions.jsonl about this store: also measure the framing of "
                   "recall (500, 1000, 2000 tokens) and read_section answers over them "
                   "(default for the example store: its follow-up questions).")
@json_option
@click.pass_context
def tokens(ctx: click.Context, questions: Path | None, as_json: bool) -> None:
    """Token cost of the MCP tool catalog, per tool, and of a typical answer of each rung,
    and the share of recall's and read_section's answers that is framing (labels, the last
    line), not note text; exit 1 when a figure is over the committed budget.

    \b
    Example:
      notes --example tokens
    """
    from memory.fronts.mcp import costs as mcp_costs

    config = _notes(ctx).config
    if questions is None and config.notes_dir.resolve() == EXAMPLE_STORE.resolve() and \
            EXAMPLE_QUESTIONS.is_file():
        questions = EXAMPLE_QUESTIONS
    costs = mcp_costs.measure_costs(config, questions)
    budget = json.loads(BUDGET_FILE.read_text())
    over = mcp_costs.over_budget(costs, budget)
    _emit(as_json, costs | {"over_budget": over}, lambda c: render.costs(c, budget))
    if over:
        raise click.ClickException("over budget: " + "; ".join(over) + f" (see {BUDGET_FILE})")



@cli.group()
def hook() -> None:
    """Hooks for agent front ends (Claude Code).

    \b
    Example:
      echo '{"prompt": "how do we deploy?"}' | notes --example hook user-prompt
    """


@hook.command("user-prompt")
@click.pass_context
def hook_user_prompt(ctx: click.Context) -> None:
    """UserPromptSubmit hook: JSON on stdin, suggested notes as added context on stdout.
    Answered by the store's MCP server when one runs, else here. Never fails the prompt:
    problems are logged and it exits 0 with no output.

    \b
    Example:
      echo '{"prompt": "how do we deploy?"}' | notes --example hook user-prompt
    """
    from memory import hook as prompt_hook

    lazy: _LazyNotes = ctx.find_root().obj
    prompt_hook.run(prompt_hook.HookArgs(lazy.notes_dir, lazy.state_dir, lazy.example))
