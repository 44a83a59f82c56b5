"""The conversation's context in every rung (suggest, section_map, recall, the hook), and
never against the message: a message that names its own topic keeps its own ranking, while a
vague one leans on the conversation (issue #15 item 3)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from hypothesis import given
from hypothesis import strategies as st
from test_hook import write_transcript

from conftest import NOTES_BIN, RunCli, copy_example
from memory import load_config
from memory.api import Notes
from memory.fronts.mcp.server import create_server
from memory.index import Found, ParsedQuery, SearchHit, StoredNote
from memory.retrieval.context import (
    DOMINANT,
    Blended,
    blended_search,
    keep_ahead,
    keep_named_first,
    settled_note,
)

# What a transcript about the Redis eviction looked like when the hook answered "rotate the
# database secrets" with infra/redis and the incident (the repro of the issue).
REDIS_TALK = [
    ("user", "Redis se quedó sin memoria otra vez y expulsó las colas de Celery del broker"),
    ("assistant", "The broker instance now runs with maxmemory-policy noeviction; the "
                  "eviction incident in March came from a cache key without TTL, after "
                  "which we split Redis into broker and cache instances."),
    ("user", "¿Y las alertas de memoria del Redis de caché siguen en 75 %?"),
    ("assistant", "Yes: a ticket above 75 % and a page above 90 % on either Redis instance, "
                  "and a page on any broker eviction."),
]
REDIS_CONTEXT = " ".join(text for _, text in REDIS_TALK)
NAMED = "rotate the database secrets"
REDIS_NOTES = ("infra/redis", "incidents/redis-eviction-2026-03")
SECRETS = "howto/rotate-secrets"
PG_ENTRY = "2026-03-30-postgres-password-with-alternating-users"
VAGUE = "¿y cómo lo hicimos?"
PERSON_ASKED = "¿quién es Jonas?"  # one word of people/jonas-becker's name
PERSON = "people/jonas-becker"
PG_CONTEXT = ("Jonas cambió la contraseña con gcloud sql users set-password y forzó el "
              "rollout de pgbouncer; las conexiones viejas se drenan en unos minutos")


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory, indexed_example: Path) -> Iterator[Notes]:
    """One indexed copy of notes_example/ for the library tests (they only read): a copy of
    the session's ``indexed_example``, index included."""
    root = tmp_path_factory.mktemp("context")
    copy_example(indexed_example, root / "notes")
    config = dataclasses.replace(load_config(root / "notes"), usage_log=False)
    found = Notes(config, notify=lambda _: None)  # no usage log: no session prior between tests
    yield found
    found.close()


def hook_notes(store_dir: Path, prompt: str, transcript: Path | None) -> list[str]:
    """The notes the real hook process suggests, in order."""
    payload = json.dumps({"session_id": "s1", "cwd": "/tmp", "prompt": prompt,
                          "hook_event_name": "UserPromptSubmit",
                          "transcript_path": str(transcript or "")})
    done = subprocess.run([str(NOTES_BIN), "hook", "user-prompt"], input=payload,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NOTES_DIR": str(store_dir)})
    assert done.returncode == 0, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return [line[2:].split(" · ")[0] for line in text.splitlines()[1:]]


def test_the_hook_keeps_a_message_that_names_its_topic(store_dir: Path,
                                                       tmp_path: Path) -> None:
    """The repro: with a transcript about Redis, "rotate the database secrets" must still
    put howto/rotate-secrets first, as it does without the transcript."""
    transcript = write_transcript(tmp_path / "redis.jsonl", REDIS_TALK)
    alone = hook_notes(store_dir, NAMED, None)
    assert alone[0] == SECRETS
    assert hook_notes(store_dir, NAMED, transcript)[0] == SECRETS
    # a vague prompt in the same conversation still follows it
    assert hook_notes(store_dir, "¿y las alertas?", transcript)[0] in REDIS_NOTES
    # a prompt that says one word of a note's name and clearly asks about it stays with it
    assert hook_notes(store_dir, PERSON_ASKED, transcript)[0] == PERSON


def test_suggest_keeps_a_message_that_names_its_topic(lib: Notes) -> None:
    alone = [h.note for h in lib.suggest(NAMED, 5).hits]
    with_talk = [h.note for h in lib.suggest(NAMED, 5, REDIS_CONTEXT).hits]
    assert with_talk[0] == alone[0] == SECRETS
    # the talk's notes may follow, below the note the message names
    assert all(with_talk.index(n) > 0 for n in REDIS_NOTES if n in with_talk)


@pytest.mark.parametrize("talk", [REDIS_CONTEXT, PG_CONTEXT])
@pytest.mark.parametrize("message", [PERSON_ASKED, "what does Priya own?", "Sofía vacaciones"])
def test_suggest_keeps_the_one_note_a_message_settles_on(lib: Notes, talk: str,
                                                         message: str) -> None:
    """One word of a note's name, and a message whose own best note scores twice the next:
    the talk about Redis or Postgres used to put its notes first ("¿quién es Jonas?" got
    infra/redis); the message's note now stays first, the talk's notes below it, and recall
    answers as if the message came alone."""
    alone = lib.suggest(message, 3)
    with_talk = lib.suggest(message, 3, talk)
    assert with_talk.settled == alone.hits[0].note == with_talk.hits[0].note
    assert alone.settled is None  # no context, nothing to settle against
    assert lib.recall(message, 600, talk).groups == lib.recall(message, 600).groups


def test_a_named_note_the_blend_pushed_past_the_limit_is_still_kept_first(lib: Notes) -> None:
    """The example store's topic switch: the message names product/verifactu (its whole
    title) but the Redis talk lifts three notes above it, so a 3-note route (recall's) cut
    it off before the naming rule ran; recall then answered from the Redis notes."""
    asked = "Unrelated: how does the Verifactu hash chaining work, and how is it serialised?"
    talk = ("Going over the Redis instances on Memorystore. Two since March: the broker "
            "with `noeviction` and the cache with `allkeys-lru`.")
    assert [h.note for h in lib.suggest(asked, 3, talk, by_blocks=False).hits][0] == \
        "product/verifactu"
    assert lib.recall(asked, 2000, talk).groups == lib.recall(asked, 2000).groups


def test_suggest_still_follows_the_conversation_for_a_vague_message(lib: Notes) -> None:
    assert lib.suggest("¿y las alertas?", 3, REDIS_CONTEXT).hits[0].note in REDIS_NOTES


def test_the_map_keeps_a_message_that_names_its_topic(lib: Notes) -> None:
    alone = lib.section_map(SECRETS, NAMED)
    with_talk = lib.section_map(SECRETS, NAMED, context=REDIS_CONTEXT)
    assert with_talk.best[:1] == alone.best[:1]


def test_the_map_uses_the_conversation_for_a_vague_message(lib: Notes) -> None:
    """Given the right note, a vague message alone picks no useful section; with the
    conversation, the map picks the entry it was about."""
    alone = lib.section_map(SECRETS, VAGUE)
    assert alone.best[:1] != (PG_ENTRY,)
    with_talk = lib.section_map(SECRETS, VAGUE, context=PG_CONTEXT)
    assert with_talk.best[0] == PG_ENTRY


def test_recall_uses_the_conversation_only_when_the_message_is_vague(lib: Notes) -> None:
    alone = [g.note for g in lib.recall(NAMED, 1000).groups]
    named = [g.note for g in lib.recall(NAMED, 1000, REDIS_CONTEXT).groups]
    assert named[0] == SECRETS and named[:4] == alone[:4]
    vague = lib.recall(VAGUE, 600, PG_CONTEXT)
    assert any(g.note == SECRETS and g.ref.startswith(PG_ENTRY) for g in vague.groups)


def test_cli_map_and_recall_take_the_context(run_cli: RunCli) -> None:
    mapped = run_cli("map", SECRETS, "--query", VAGUE, "--context", PG_CONTEXT, "--json")
    assert mapped.returncode == 0, mapped.stderr
    assert json.loads(mapped.stdout)["best"][0] == PG_ENTRY
    recalled = run_cli("recall", VAGUE, "--budget", "600", "-c", PG_CONTEXT, "--json")
    assert recalled.returncode == 0, recalled.stderr
    assert any(g["note"] == SECRETS and g["ref"].startswith(PG_ENTRY)
               for g in json.loads(recalled.stdout)["groups"])
    by_context = run_cli("map", SECRETS, "--context", PG_CONTEXT)  # scored by it alone
    assert by_context.returncode == 0, by_context.stderr
    assert by_context.stdout.splitlines()[-1].startswith(f"best match: {PG_ENTRY} (")


def test_mcp_section_map_takes_the_context(lib: Notes) -> None:
    server = create_server(lib.config)

    async def call() -> str:
        async with Client(server) as client:
            result = await client.call_tool("section_map", {
                "note": SECRETS, "query": VAGUE, "context": PG_CONTEXT})
            return str(result.content[0].text)  # type: ignore[union-attr]

    assert asyncio.run(call()).splitlines()[-1].startswith(f"best match: {PG_ENTRY} (")


def stored(note: str) -> StoredNote:
    return StoredNote(note, note, 0, 0, 0, None, "", 0, 0)


def searched(scores: dict[str, float]) -> Found[StoredNote]:
    ranked = sorted(scores, key=lambda k: -scores[k])
    return [SearchHit(stored(k), scores[k], ()) for k in ranked], len(ranked)


scores = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0.01, 100), max_size=8)


@given(scores, scores, st.sets(st.sampled_from("abcdefgh")), st.integers(1, 8),
       st.integers(1, 8))
def test_a_message_that_names_its_topic_keeps_its_ranking(
        message: dict[str, float], context: dict[str, float], named: set[str], words: int,
        look: int) -> None:
    """Whatever the context's scores: a note the message names among its ``look`` best
    stays above every note that scores lower on the message alone, and no note scores below
    its message score."""
    found = _blended(message, context, words)
    ranked = keep_named_first(found.hits, found.message, lambda note: note in named, look)
    own_best = sorted(message, key=lambda k: -message[k])[:look]
    _check_kept_ahead(found, ranked, message, context, named & set(own_best))


@given(scores, scores, st.sets(st.sampled_from("abcdefgh")), st.integers(1, 8))
def test_a_message_that_settles_on_one_note_keeps_it_first(
        message: dict[str, float], context: dict[str, float], mentioned: set[str],
        words: int) -> None:
    """Whatever the scores the context and the levers gave: the message's own best note,
    when it scores twice the next on the message alone and the message says a word of its
    title, stays above every note that scores lower on the message alone."""
    found = _blended(message, context, words)
    settled = settled_note(found.message, lambda note: note in mentioned)
    ranked = keep_ahead(found.hits, found.message, {settled} if settled else set())
    alone = sorted(message, key=lambda k: -message[k])
    expected = bool(alone) and alone[0] in mentioned and (
        len(alone) == 1 or message[alone[0]] >= DOMINANT * message[alone[1]])
    assert settled == (alone[0] if expected else None)
    _check_kept_ahead(found, ranked, message, context, {alone[0]} if expected else set())


def _blended(message: dict[str, float], context: dict[str, float],
             words: int) -> Blended[StoredNote]:
    parsed = ParsedQuery("q", tuple((f"w{n}", f"w{n}") for n in range(words)),
                         (("c", "c"),))
    return blended_search(lambda part, _: searched(message if part.words[0][0] != "c"
                                                   else context), parsed, None)


def _check_kept_ahead(found: Blended[StoredNote], ranked: list[SearchHit[StoredNote]],
                      message: dict[str, float], context: dict[str, float],
                      protected: set[str]) -> None:
    order = [h.doc.note_id for h in ranked]
    assert sorted(order) == sorted(set(message) | set(context))
    for hit in ranked:
        assert hit.score >= round(message.get(hit.doc.note_id, 0.0), 4)
    if not protected:
        assert order == [h.doc.note_id for h in found.hits]
        return
    for high in protected:
        for low in set(order) - protected:
            if message[high] > message.get(low, 0.0):
                assert order.index(high) < order.index(low)
