"""The UserPromptSubmit hook, run as Claude Code runs it: a process, JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRANSCRIPTS as SHARED_TRANSCRIPTS

from conftest import NOTES_BIN
from memory.hook.answer import EVIDENCE_HEADER, MAX_NOTES, MAX_TOKENS, recent_messages
from memory.state.tokens import count_exact

TRANSCRIPTS = sorted(SHARED_TRANSCRIPTS.rglob("*.jsonl"))


def run_hook(store_dir: Path, stdin: str | None, evidence: bool = False, levers: str = ""
             ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NOTES_DIR": str(store_dir),
           "NOTES_HOOK_EVIDENCE": "1" if evidence else "0", "NOTES_LEVERS": levers}
    return subprocess.run([str(NOTES_BIN), "hook", "user-prompt"], input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None,
                          capture_output=True, text=True, env=env, timeout=60)


def payload(prompt: str, transcript: str = "") -> str:
    return json.dumps({"session_id": "s1", "transcript_path": transcript, "cwd": "/tmp",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def added_context(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return ""
    data = json.loads(result.stdout)
    assert set(data) == {"hookSpecificOutput"}
    out = data["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    text = str(out["additionalContext"])
    assert count_exact(text) <= MAX_TOKENS
    notes_part = text.split(EVIDENCE_HEADER)[0]
    assert len(notes_part.splitlines()) <= MAX_NOTES + 1
    return text


def test_a_typical_prompt_gets_its_notes(store_dir: Path) -> None:
    text = added_context(run_hook(store_dir, payload("cómo hago rollback de un despliegue")))
    assert "howto/deploy-production" in text.splitlines()[1]


def test_a_block_that_wins_clearly_is_shown_whole(store_dir: Path) -> None:
    """Rung 0 with evidence: the one block of the notes shown that scores clearly above the
    next is added whole, labelled, within the 120 tokens (notes dropped from the end to make
    room); the note it comes from is still listed."""
    text = added_context(run_hook(store_dir, payload("how long is the deploy freeze"),
                                  evidence=True))
    head, _, evidence = text.partition(EVIDENCE_HEADER)
    assert evidence.startswith("[people/jonas-becker#state:b4]\n")
    line = evidence.splitlines()[1]
    assert line.startswith("- Strict on the deploy window and the no-Friday rule")
    assert line in (store_dir / "people" / "jonas-becker.md").read_text().splitlines()
    assert "people/jonas-becker" in head
    # off by default: the same prompt, note lines only
    plain = added_context(run_hook(store_dir, payload("how long is the deploy freeze")))
    assert EVIDENCE_HEADER not in plain and plain.startswith(head.rstrip("\n"))


def test_the_hook_routes_without_block_route(tmp_path: Path) -> None:
    """With block-route on (NOTES_LEVERS), `suggest` puts first the session whose one line
    holds both words; the hook keeps BM25F's order, with its evidence on or off (the
    lever's two store-wide searches do not fit the hook's time)."""
    from test_levers import offsite_sessions, session

    store = offsite_sessions(tmp_path / "notes", {
        f"work/filler-{n:02d}": session(f"Session {n + 3}", "2024-03-01",
                                        [f"Cy: the review number {n} is done."])
        for n in range(20)})  # notes without the words, so that both score above the floor
    env = {**os.environ, "NOTES_DIR": str(store), "NOTES_LEVERS": "+block-route"}
    suggested = subprocess.run([str(NOTES_BIN), "suggest", "offsite budget", "--json"],
                               capture_output=True, text=True, env=env, timeout=60)
    assert suggested.returncode == 0, suggested.stderr
    assert [h["note"] for h in json.loads(suggested.stdout)["hits"]][:2] == [
        "work/together", "work/scattered"]

    def listed(evidence: bool) -> list[str]:
        text = added_context(run_hook(store, payload("offsite budget"), evidence=evidence,
                                      levers="+block-route"))
        return [line.split(" · ")[0][2:] for line in text.splitlines()
                if line.startswith("- work/")]

    assert listed(evidence=False) == ["work/scattered", "work/together"]
    assert listed(evidence=True) == ["work/scattered", "work/together"]


def test_no_block_is_shown_when_none_wins_clearly(store_dir: Path) -> None:
    text = added_context(run_hook(store_dir, payload("cómo hago rollback de un despliegue"),
                                  evidence=True))
    assert "howto/deploy-production" in text.splitlines()[1]
    assert EVIDENCE_HEADER not in text


def test_nothing_is_added_when_nothing_scores_well(store_dir: Path) -> None:
    assert added_context(run_hook(store_dir, payload("hola, buenos días"))) == ""


def write_transcript(path: Path, messages: list[tuple[str, str]]) -> Path:
    """A transcript in Claude Code's JSONL format (user string content, assistant blocks)."""
    lines = [json.dumps({"type": "summary", "summary": "x", "leafUuid": "u0"})]
    for number, (role, text) in enumerate(messages):
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": role, "uuid": f"u{number}", "isSidechain": False,
                                 "sessionId": "s1", "message": {"role": role,
                                                                "content": content}}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_vague_prompt_routes_through_the_transcript(store_dir: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Redis se quedó sin memoria otra vez y expulsó claves de Celery"),
        ("assistant", "Looking at the Redis eviction policy and maxmemory on the broker."),
    ])
    text = added_context(run_hook(store_dir, payload("sigue con lo que recomiendes",
                                                     str(transcript))))
    assert "redis" in text.splitlines()[1]
    assert added_context(run_hook(store_dir, payload("sigue con lo que recomiendes"))) == ""


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda p: p.name)
def test_real_transcripts_as_context(store_dir: Path, transcript: Path) -> None:
    assert recent_messages(str(transcript)), "the transcript's last messages are read"
    added_context(run_hook(store_dir, payload("check it all went well", str(transcript))))
    added_context(run_hook(store_dir, payload("redis eviction", str(transcript))))


def test_transcripts_are_there() -> None:
    if not TRANSCRIPTS and not os.environ.get("CI"):
        pytest.skip("../shared/bench/transcripts is not beside this checkout")
    assert len(TRANSCRIPTS) >= 4


@pytest.mark.parametrize("stdin", [None, "", "not json", "[1, 2]", '{"prompt": 3}',
                                   payload("redis", "/no/such/transcript.jsonl"),
                                   payload("redis", "/etc")])
def test_broken_input_never_fails_the_prompt(store_dir: Path, stdin: str | None) -> None:
    result = run_hook(store_dir, stdin)
    added_context(result)


def test_a_broken_store_never_fails_the_prompt(tmp_path: Path) -> None:
    result = run_hook(tmp_path / "missing", payload("redis"))
    assert result.returncode == 0 and result.stdout == ""
    assert "notes hook:" in result.stderr


def test_a_note_edited_since_the_last_hook_is_found(store_dir: Path) -> None:
    """The cold hook re-indexes a changed note before searching (Whoosh then reads a segment
    with deleted documents), with its stand-ins for Whoosh's unused imports in place."""
    assert added_context(run_hook(store_dir, payload("cómo hago rollback de un despliegue")))
    note = store_dir / "howto" / "deploy-production.md"
    note.write_text(note.read_text() + "\n- Zyxwvut canary rollout, checked by hand.\n")
    text = added_context(run_hook(store_dir, payload("zyxwvut canary")))
    assert "howto/deploy-production" in text.splitlines()[1]


def test_the_stand_ins_are_gone_after_the_index_is_imported() -> None:
    done = subprocess.run([sys.executable, "-c", (
        "import sys\n"
        "import memory.index.whoosh\n"  # imports Whoosh with the stand-ins (index/whoosh/lean)
        "assert 'urllib.request' not in sys.modules and 'cached_property' not in sys.modules\n"
        "assert 'html' not in sys.modules\n"
        "import urllib.request, cached_property, asyncio, html\n"
        "assert urllib.request.urlopen and cached_property.threaded_cached_property\n"
        "assert html.unescape('&amp;') == '&'\n"
        "import whoosh.compat, whoosh.reading, functools\n"
        "assert whoosh.reading.cached_property is functools.cached_property\n"
        "print('ok')")], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_evidence_is_read_without_parsing_a_note(store_dir: Path) -> None:
    """The cold hook that shows a block reads it from the file: it loads neither the
    Markdown parser nor YAML (a note's parse costs the hook a third of its time)."""
    env = {**os.environ, "NOTES_DIR": str(store_dir), "NOTES_HOOK_EVIDENCE": "1"}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memory", "hook",
                           "user-prompt"], input=payload("how long is the deploy freeze"),
                          env=env, capture_output=True, text=True, timeout=120)
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert EVIDENCE_HEADER in text
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert "memory.hook.answer" in loaded  # answered in this process, not by a server
    assert not loaded & {"markdown_it", "yaml", "memory.model.note"}
