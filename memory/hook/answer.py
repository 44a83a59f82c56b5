"""Rung 0: the Claude Code ``UserPromptSubmit`` hook.

Reads the hook's JSON on stdin (``prompt``, ``session_id``, ``transcript_path``, ``cwd``),
suggests notes for the prompt with the last few transcript messages as low-weight context, and
prints the hook output that adds them to the model's context: at most 4 notes, one line each,
at most 120 tokens in all, nothing when nothing scores well.

It never blocks or fails the user's prompt: any problem is logged (stderr and
``<state dir>/hook.log``) and the hook exits 0 with no output.

It runs on every prompt, so the store's MCP server, when one runs, is asked to answer first
(:func:`memory.hook.run`, before this module is even imported; the server runs the same
:func:`run_hook` on its open store, :func:`serve_request`), and only then is the store opened
here (:func:`answer_here`). This module imports the index and the parsers only on that second
path. It reads the store through :class:`memory.api.Notes`' public methods alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.config import Config
from memory.errors import NotesError
from memory.hook.client import input_problem, read_input, write_output
from memory.model.text import fold

if TYPE_CHECKING:
    from memory.api import Notes
    from memory.retrieval.ladder import SuggestHit, Suggestions

MAX_NOTES = 4
MAX_TOKENS = 120
CONTEXT_MESSAGES = 4
TAIL_BYTES = 256_000
MIN_SCORE = 3.0
RELATIVE_FLOOR = 0.4
# Chit-chat that carries no topic: a greeting must not route to "Buenos Aires", and "go on" must
# fall back on the conversation. Compared accent-folded.
FILLER_WORDS = frozenset("""
hola buenos buenas dias tardes noches gracias vale venga sigue seguir segui continua continuar
adelante porfa favor perfecto genial listo dale bueno hace hazlo mira revisa comprueba
hello hi hey thanks thank please ok okay yes yeah sure go on continue proceed next great good
fine cool check done looks well recommend recommendation recomiendas recomiendes recomienda
""".split())
HEADER = "Notes that may help (read with section_map / read_section, or `notes map`):"
EVIDENCE_HEADER = "Best match: "
EVIDENCE_POOL = 10  # blocks of the store searched for the best block of the notes shown


@dataclass(frozen=True)
class HookInput:
    prompt: str
    session_id: str
    transcript_path: str
    cwd: str


def parse_input(raw: str) -> HookInput | None:
    """The hook's JSON, or None when it is not usable."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        return None
    return HookInput(data["prompt"], str(data.get("session_id") or ""),
                     str(data.get("transcript_path") or ""), str(data.get("cwd") or ""))


def recent_messages(path: str, count: int = CONTEXT_MESSAGES) -> list[str]:
    """The last ``count`` user and assistant text messages of a transcript (oldest first)."""
    if not path or not os.path.isfile(path):
        return []
    with open(path, "rb") as handle:
        handle.seek(max(0, os.path.getsize(path) - TAIL_BYTES))
        tail = handle.read().decode("utf-8", errors="replace")
    lines = tail.splitlines()
    found = _last_texts(lines, count, sidechain=False)
    return found or _last_texts(lines, count, sidechain=True)  # a sub-agent's own file


def _last_texts(lines: list[str], count: int, sidechain: bool) -> list[str]:
    found: list[str] = []
    for line in reversed(lines):
        text = _message_text(line, sidechain)
        if text:
            found.append(text)
            if len(found) == count:
                break
    return list(reversed(found))


def _message_text(line: str, sidechain: bool) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return ""  # the first line of the tail is usually cut
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
        return ""
    if bool(record.get("isSidechain")) != sidechain or record.get("isMeta") \
            or record.get("isCompactSummary"):
        return ""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return " ".join(_texts(content)).strip()[:2000]


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        if not content.startswith("<"):  # command caveats and other wrappers
            yield content
        return
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                yield str(block.get("text") or "")


def topic_words(prompt: str) -> str:
    """The prompt without chit-chat words (greetings, "go on", "thanks")."""
    words = re.findall(r"\w+", prompt)
    return " ".join(w for w in words if fold(w) not in FILLER_WORDS)


def worth_showing(result: Suggestions) -> list[SuggestHit]:
    """Hits that score well: above a floor, near the best, and the best matched the prompt."""
    if not result.hits:
        return []
    best = result.hits[0]
    on_prompt = bool(set(result.query_words) & set(best.matched))
    if best.score < MIN_SCORE or (not on_prompt and len(best.matched) < 2):
        return []
    floor = max(MIN_SCORE, best.score * RELATIVE_FLOOR)
    return [h for h in result.hits[:MAX_NOTES] if h.score >= floor]


def context_text(hits: list[SuggestHit], count: Callable[[str], int],
                 evidence: str | None = None) -> str:
    """One line per note, then the evidence block when there is one; the last notes are
    dropped (never the first) until the whole fits the token budget, then the evidence."""
    lines = [f"- {h.note} · {h.title} · state {h.state_tokens} of {h.tokens} tokens"
             for h in hits]
    while lines:
        text = "\n".join([HEADER, *lines, *([evidence] if evidence else [])])
        if count(text) <= MAX_TOKENS:
            return text
        if evidence and len(lines) == 1:
            evidence = None
        else:
            lines.pop()
    return ""


def best_evidence(notes: Notes, prompt: str, context: str | None,
                  hits: list[SuggestHit]) -> str | None:
    """The best block of the notes shown, labelled, when it wins clearly: it scores
    ``CLEAR_MARGIN`` times the next best block of those notes (as a section wins clearly in
    a map). None when no block of them matched or none wins clearly. The block is read from
    the note's file as it is, unparsed (:meth:`memory.api.Notes.block_lines`): the hook
    stays light."""
    from memory.retrieval.answers import label
    from memory.retrieval.section_scores import clear_winner
    from memory.retrieval.zoom import block_ref

    shown = {h.note for h in hits}
    if not shown or not prompt:
        return None
    found = notes.search_paragraphs(prompt, EVIDENCE_POOL, context)
    blocks = [(doc, score) for doc, score in found if doc.note_id in shown][:2]
    if not blocks or not clear_winner([(doc.id, score) for doc, score in blocks]):
        return None
    best = blocks[0][0]
    text = notes.block_lines(best.note_id, best.lines)
    if text is None:
        return None
    ref = block_ref(best.section, best.block)
    return (EVIDENCE_HEADER + label(best.note_id, ref, best.date) + text).rstrip("\n")


def hook_text(notes: Notes, result: Suggestions, prompt: str, context: str | None,
              evidence: bool) -> str:
    """What the hook adds for ``result`` (suggest's answer for the prompt's topic words):
    the notes worth showing and, with ``evidence`` (``NOTES_HOOK_EVIDENCE``), the block of
    them that wins clearly ("" when nothing is worth adding). The evidence is off by
    default: its store-wide paragraph search costs a cold hook about 30 % more
    instructions (docs/claude-code.md). The bench's ``hook`` policy measures this text with
    the evidence on."""
    hits = worth_showing(result)
    block = best_evidence(notes, prompt, context, hits) if evidence else None
    return context_text(hits, notes.count_tokens, block)


def hook_output(text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": text}}, ensure_ascii=False)


def run_hook(notes: Notes, raw: str, folder: str = "") -> str:
    """The hook's stdout for one input ("" when there is nothing worth adding), seen from
    the project of the input's ``cwd`` (else of ``folder``, the hook process's own)."""
    data = parse_input(raw)
    if data is None or not data.prompt.strip():
        return ""
    context = " ".join(recent_messages(data.transcript_path))
    prompt = topic_words(data.prompt)
    if not prompt and not context:
        return ""
    _follow_imports(notes)
    notes = notes.in_project(hook_project(notes, data.cwd or folder))
    # no block-route: its two store-wide searches would take a cold hook on a store of a
    # million tokens past its 150 ms (docs/benchmarks.md, "Fourth round")
    result = notes.suggest(prompt, limit=MAX_NOTES, context=context or None,
                           session=data.session_id or None, by_blocks=False)
    text = hook_text(notes, result, prompt, context or None, notes.config.hook_evidence)
    return hook_output(text) if text else ""


def _follow_imports(notes: Notes) -> None:
    """Bring in what changed in Claude Code's memory files since imported, at most once a
    minute (one stat when not due; :mod:`memory.services.import_sync`). A failure leaves
    it to the next look: the prompt is answered from the notes as they are."""
    from memory.state.imports import due

    try:
        if not due(notes.config.state_dir):  # one stat: the merge's imports only when due
            return
        from memory.services.import_sync import follow

        follow(notes, force=True)
    except Exception as exc:  # never in the way of the answer
        notes.notify(f"notes: Claude Code's memory was not brought in ({exc})")


def hook_project(notes: Notes, folder: str) -> str | None:
    """The key of the project Claude Code runs in (None: no project, or no folder)."""
    from memory.project import find_project

    if not folder:
        return None
    found = find_project(Path(folder), notes.config.notes_dir)
    return found.key if found else None


def default_session(config: Config, parent: int | None = None) -> str:
    """The usage log's session of a hook call that names none (as :class:`Notes` makes it
    for ``front="hook"``): the configured one, else one per parent process (``parent``: the
    hook process's parent, when another process answers for it)."""
    return config.session or f"hook-{os.getppid() if parent is None else parent}"


def store_key(config: Config) -> str:
    """The settings that change a hook's answer: the server answers only a hook whose key is
    its own (the same store, index and usage log), so both answers are the same."""
    return json.dumps([str(config.notes_dir), str(config.state_dir), config.backend,
                       config.state_headings, config.history_headings, config.max_note_bytes,
                       config.usage_log, config.usage_queries, config.hook_evidence,
                       config.levers])


def answer(config: Config, raw: str) -> str:
    """The hook's stdout for ``raw`` from the store opened in this process (no server
    answered)."""
    if not raw.strip():
        return ""
    from memory.api import Notes

    # a hook that answers itself routes without the semantic model: loading it and its
    # vectors would double a cold hook's time (the MCP server, warm, routes with it)
    notes = Notes(dataclasses.replace(config, semantic=False), notify=lambda _: None,
                  front="hook")
    try:
        output = run_hook(notes, raw, os.getcwd())
        notes.keep_token_ranks()  # the next cold hook counts without loading the encoding
        return output
    finally:
        notes.close()


def serve_request(notes: Notes, request: dict[str, Any]) -> dict[str, Any]:
    """The server's side of :func:`memory.hook.client.served`: the hook's store and
    settings resolved from what it sent, and if they are this server's, ``run_hook`` on its
    open store, logged in the usage log as the hook's call in the hook's session."""
    raw, client, parent = request.get("input"), request.get("client"), request.get("parent")
    if not isinstance(raw, str) or not isinstance(client, dict) or type(parent) is not int:
        return {"error": "the request has no hook input"}
    try:
        config = client_config(client)
    except (NotesError, OSError, TypeError, ValueError) as exc:
        return {"error": f"the hook's store cannot be found here ({exc})"}
    if store_key(config) != store_key(notes.config):
        return {"error": "this server serves another store, or with other settings"}
    return {"output": run_hook(notes.with_front("hook", default_session(config, parent)), raw,
                               str(client.get("cwd") or ""))}


def client_config(client: dict[str, Any]) -> Config:
    """The configuration a hook process builds from what it sent (its flags, environment
    and folder); raises as :func:`memory.config.load_config` does, or TypeError."""
    from memory.config import load_config

    env, cwd = client.get("env"), client.get("cwd")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in env.items()) or not isinstance(cwd, str):
        raise TypeError("the hook sent no environment or folder")
    notes_dir, state_dir = client.get("notes_dir"), client.get("state_dir")
    if not all(v is None or isinstance(v, str) for v in (notes_dir, state_dir)):
        raise TypeError("the hook sent folders that are not text")
    return load_config(notes_dir, state_dir, env=env, cwd=Path(cwd),
                       example=client.get("example") is True)


def answer_here(notes_dir: str | None, state_dir: str | None, example: bool,
                raw: str | None = None) -> int:
    """The hook answered in this process (:func:`memory.hook.run` found no server to): read
    the hook's JSON (or take ``raw``, already read), print what to add (if anything). Exit
    status 0 whatever happens: a problem is one line on stderr and in the hook's log."""
    from memory.config import load_config

    def load() -> Config:
        return load_config(notes_dir, state_dir, example=example)

    config: Config | None = None
    try:
        if raw is None:
            raw = read_input(sys.stdin)
        config = load()
        problem = input_problem(raw)
        if problem:
            _report(f"notes hook: {problem}", config.state_dir)
            return 0
        output = answer(config, raw)
    except Exception as exc:  # the user's prompt must go through whatever happens
        _report(f"notes hook: {type(exc).__name__}: {exc}", _log_dir(config, load))
        return 0
    write_output(output)
    return 0


def _report(message: str, log_dir: Path) -> None:
    """One line on stderr and in the hook's log."""
    print(message, file=sys.stderr)
    log_problem(log_dir, message)


def _log_dir(config: Config | None, load: Callable[[], Config]) -> Path:
    if config is not None:
        return config.state_dir
    try:
        return load().state_dir
    except (NotesError, OSError):
        return Path.home() / ".cache" / "notes-memory"


def log_problem(state_dir: Path, message: str) -> None:
    """Append one line to the hook's log; never raises."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        with open(state_dir / "hook.log", "a", encoding="utf-8") as handle:
            handle.write(f"{dt.datetime.now().isoformat(timespec='seconds')} {message}\n")
    except OSError:
        pass
