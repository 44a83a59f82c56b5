"""`notes check`: every format problem in the store, with its file and line."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from memory.state.store import Store
from memory.state.tokens import TokenCounter


@dataclass(frozen=True)
class FileProblem:
    path: str  # relative to the notes folder
    line: int
    severity: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message} [{self.code}]"


def check_store(store: Store, counter: TokenCounter) -> list[FileProblem]:
    """Problems of every note; one unreadable file never stops the others."""
    problems: list[FileProblem] = []
    for link in store.escaping_links():
        problems.append(FileProblem(_rel(store, link), 1, "error", "link-outside",
                                    "symbolic link leading outside the store is ignored; "
                                    "move the note into the store"))
    for link, real in store.inner_links():
        target = real.relative_to(store._real_root).as_posix()
        problems.append(FileProblem(_rel(store, link), 1, "warning", "link-inside",
                                    f"symbolic link to {target}: one note, two names; it is "
                                    "indexed and written as "
                                    f"{target.removesuffix('.md')} (replace the link by a "
                                    "note of its own to keep them apart)"))
    for entry in store.files():
        rel = _rel(store, entry.path)
        try:
            loaded = store.load_path(entry.note_id, entry.path)
        except OSError as exc:
            problems.append(FileProblem(rel, 1, "error", "unreadable",
                                        f"cannot read the file ({exc.strerror}); check its "
                                        "permissions"))
            continue
        for p in loaded.problems:
            problems.append(FileProblem(rel, p.line, p.severity, p.code,
                                        p.message + _next_step(p.code, entry.path)))
        state = loaded.note.state
        budget = store.config.state_token_budget
        if state is not None and loaded.indexable:
            tokens = counter.count(state.text)
            if tokens > budget:
                problems.append(FileProblem(rel, state.start + 1, "warning", "state-too-long",
                                            f"state is {tokens} tokens, over the budget of "
                                            f"{budget}; move old facts into the history"))
    counter.flush()
    return problems


def _next_step(code: str, path: Path) -> str:
    if code != "missing-state":
        return ""
    return (f"; convert it with `notes import {shlex.quote(str(path))} --prefix converted` (a "
            "new note in the format, every line kept; then delete this file), or add "
            "'## Current state' as its first H2")


def _rel(store: Store, path: Path) -> str:
    return path.relative_to(store.root).as_posix()
