"""Time-aware history, zooming into long sections, section choice, the session prior, and
the budgeted rung (``recall``), through the library, the CLI and the MCP server."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from pathlib import Path

import pytest
from fastmcp import Client

from conftest import RunCli
from memory import load_config
from memory.api import Notes
from memory.errors import InvalidArgument, SectionNotFound
from memory.fronts.mcp.server import create_server
from memory.retrieval.recall import recall

ASKED = dt.date(2026, 11, 30)
LONG_LINES = "\n\n".join(
    f"Paso {n}: revisamos el nodo {n} del clúster y anotamos la latencia de la réplica {n}."
    for n in range(1, 80))
NOTE = f"""---
title: Réplica de base de datos
tags: [postgres]
---
# Réplica de base de datos

## Estado actual
- La réplica de lectura vive en db-replica-2.

## Historial

### 2026-10-05 · Réplica creada
Creamos la réplica db-replica-2 con streaming replication.

### 2026-11-02 · Failover ensayado
Ensayamos el failover manual; tardó 40 segundos.

### 2026-11-24 · Incidente de lag
{LONG_LINES}

La causa del lag fue un VACUUM FULL lanzado a mano sobre la tabla facturas.

### 2026-11-26 · Ajuste de parámetros
Subimos max_wal_senders a 10 tras el incidente.
"""
OTHER = """---
title: Colas de trabajo
---
# Colas de trabajo

## Estado actual
- Las colas usan Redis Streams; el lag se vigila en Grafana.

## Historial

### 2026-11-20 · Lag de colas
El lag de las colas subió por un consumidor bloqueado.
"""


@pytest.fixture
def store(empty_store: Path) -> Path:
    (empty_store / "infra").mkdir()
    (empty_store / "infra" / "replica.md").write_text(NOTE, encoding="utf-8")
    (empty_store / "infra" / "queues.md").write_text(OTHER, encoding="utf-8")
    return empty_store


@pytest.fixture
def lib(store: Path) -> Notes:
    found = Notes(load_config(store), notify=lambda _: None)
    yield found  # type: ignore[misc]
    found.close()


def test_map_with_a_time_expression_ranks_the_entries_inside_it(lib: Notes) -> None:
    mapped = lib.section_map("infra/replica", "qué hicimos la semana pasada con la réplica",
                             today=ASKED)
    assert mapped.dates == ("la semana pasada=2026-11-23..2026-11-29",)
    scores = {r.id: r.score for r in mapped.rows}
    inside = [i for i in scores if i.startswith(("2026-11-24", "2026-11-26"))]
    outside = [i for i in scores if i.startswith(("2026-10-05", "2026-11-02"))]
    assert min(scores[i] or 0 for i in inside) >= max(scores[i] or 0 for i in outside)
    assert sorted(mapped.best) == sorted(inside)


def test_a_time_expression_that_names_no_entry_changes_nothing(lib: Notes) -> None:
    plain = lib.section_map("infra/replica", "failover réplica", today=ASKED)
    dated = lib.section_map("infra/replica", "failover réplica en marzo", today=ASKED)
    assert dated.dates and [(r.id, r.score) for r in plain.rows] == \
        [(r.id, r.score) for r in dated.rows]
    assert plain.best == dated.best


def test_long_sections_offer_block_ranges_that_read_only_those_lines(lib: Notes) -> None:
    mapped = lib.section_map("infra/replica", "causa del lag VACUUM FULL", today=ASKED)
    entry = next(r for r in mapped.rows if r.id.startswith("2026-11-24"))
    assert mapped.best[0] == entry.id and entry.zoom
    window = entry.zoom[0]
    assert window.tokens < entry.tokens / 3
    text = lib.read_section("infra/replica", window.blocks.ref)
    assert text.kind == "blocks" and text.section == window.blocks.ref
    assert "VACUUM FULL" in text.text and text.text.startswith("### 2026-11-24")
    assert "Paso 1:" not in text.text and text.tokens < entry.tokens / 3


def test_block_references_are_checked(lib: Notes) -> None:
    entry = next(s.id for s in lib.store.load("infra/replica").note.entries
                 if s.id.startswith("2026-11-24"))
    assert lib.read_section("infra/replica", f"{entry}:b2").text.count("Paso") == 1
    with pytest.raises(SectionNotFound, match="has blocks b1-80"):
        lib.read_section("infra/replica", f"{entry}:b90-91")


def test_read_a_month_or_a_range_of_history(lib: Notes) -> None:
    november = lib.read_section("infra/replica", "2026-11")
    assert november.kind == "entries" and november.title == "3 entries"
    assert "Failover ensayado" in november.text and "Réplica creada" not in november.text
    span = lib.read_section("infra/replica", "2026-10-01..2026-11-03")
    assert span.title == "2 entries"
    one = lib.read_section("infra/replica", "2026-11-02")
    assert one.kind == "entry" and one.title == "Failover ensayado"
    with pytest.raises(SectionNotFound, match="entries run from 2026-10-05 to 2026-11-26"):
        lib.read_section("infra/replica", "2025-01")


def test_map_says_when_no_section_wins_clearly(lib: Notes) -> None:
    mapped = lib.section_map("infra/replica", "réplica", today=ASKED)
    assert len(mapped.best) == 2
    clear = lib.section_map("infra/replica", "max_wal_senders", today=ASKED)
    assert clear.clear and clear.best[0].startswith("2026-11-26")


def test_session_prior_keeps_a_vague_message_on_the_topic_at_hand(lib: Notes) -> None:
    vague = "y el lag"
    assert lib.suggest(vague, session="s1").hits[0].note == "infra/queues"
    lib.read_section("infra/replica", "state", session="s2")
    assert lib.suggest(vague, session="s2").hits[0].note == "infra/replica"
    assert lib.suggest(vague, session="s3").hits[0].note == "infra/queues"
    named = lib.suggest("lag de las colas Redis Streams consumidor", session="s2")
    assert named.hits[0].note == "infra/queues"


def test_context_routes_a_vague_question(lib: Notes) -> None:
    assert lib.suggest("y el lag", context="hablábamos de la réplica de postgres",
                       session="x").hits[0].note == "infra/replica"


def test_recall_fits_the_budget_and_labels_its_evidence(lib: Notes) -> None:
    from memory.fronts import render

    for budget in (100, 150, 400, 2000):
        shown = recall(lib._ladder.reader, "lag réplica failover colas", budget, today=ASKED)
        assert lib.counter.count(render.recalled(shown)) <= budget
    found = recall(lib._ladder.reader, "causa del lag VACUUM FULL réplica", 150, today=ASKED)
    assert 0 < found.tokens <= 150
    firsts = {g.note: g for g in reversed(found.groups)}  # each note's first group
    assert all(g.text.startswith(f"[{g.note}#" if firsts[g.note] is g else "[#")
               for g in found.groups)
    shown = "".join(g.text for g in found.groups)
    assert "VACUUM FULL" in shown and "Paso 3:" not in shown
    assert found.left_out > 0 and found.next_ref and found.next_tokens > 0
    with pytest.raises(InvalidArgument, match="between 100 and 20000"):
        recall(lib._ladder.reader, "lag", 5)


def test_recall_shows_a_note_as_it_is_after_an_edit_under_it(lib: Notes, store: Path) -> None:
    """recall keeps what it read of a note (its lines, block texts and tokens) for the next
    questions: an edit made outside the library (lines added above the block, the block's
    words changed) must show at once, not the kept lines."""
    question = "causa del lag VACUUM FULL réplica"
    before = recall(lib._ladder.reader, question, 2000, today=ASKED)
    assert "lanzado a mano sobre la tabla facturas" in before.note_text
    path = store / "infra" / "replica.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("# Réplica de base de datos\n", "# Réplica de base de datos\n\n"
                                 "Nota añadida arriba.\n\nOtra línea más.\n", 1).replace(
        "lanzado a mano sobre la tabla facturas", "lanzado por un cron sobre la tabla pagos"),
        encoding="utf-8")
    after = recall(lib._ladder.reader, question, 2000, today=ASKED)
    assert "lanzado por un cron sobre la tabla pagos" in after.note_text
    assert "facturas" not in after.note_text
    assert after.note_text.count("VACUUM FULL") == before.note_text.count("VACUUM FULL")


def test_recall_from_the_cli_and_the_mcp_tool(run_cli: RunCli, store: Path) -> None:
    result = run_cli("recall", "causa del lag VACUUM", "--budget", "200", notes_dir=store)
    assert result.returncode == 0, result.stderr
    assert "VACUUM FULL" in result.stdout
    assert re.fullmatch(r"\d+ more blocks|nothing else matched", result.stdout.splitlines()[-1])
    bad = run_cli("recall", "lag", "--budget", "5", notes_dir=store)
    assert bad.returncode == 2

    async def call() -> str:
        async with Client(create_server(load_config(store))) as client:
            answer = await client.call_tool("recall", {"query": "causa del lag VACUUM",
                                                       "budget": 200})
            return answer.content[0].text  # type: ignore[union-attr]

    assert "VACUUM FULL" in asyncio.run(call())


def test_cli_reads_blocks_and_dates(run_cli: RunCli, store: Path) -> None:
    mapped = run_cli("map", "infra/replica", "-q", "qué pasó la semana pasada",
                     "--date", "2026-11-30", notes_dir=store)
    assert mapped.returncode == 0, mapped.stderr
    assert "dates understood: la semana pasada=2026-11-23..2026-11-29" in mapped.stdout
    read = run_cli("read", "infra/replica", "2026-11-20..2026-11-30", notes_dir=store)
    assert read.returncode == 0 and "2 entries" not in read.stderr
    assert "Incidente de lag" in read.stdout and "Ajuste de parámetros" in read.stdout


def test_a_when_question_prefers_the_lines_that_carry_a_time() -> None:
    from memory.model.note import parse_note
    from memory.model.timeexpr import asks_when, mentions_time
    from memory.retrieval.section_scores import WHEN_BOOST, Evidence, when_boosted

    assert asks_when("When did Maria's grandmother pass away?")
    assert asks_when("¿Cuándo ensayamos el failover?") and not asks_when("¿Qué es PgBouncer?")
    assert mentions_time("Last week, my grandma passed away") and \
        mentions_time("lo ensayamos el martes") and not mentions_time("me gustan los perros")
    note = parse_note("# T\n\n## History\n\n### 2026-11-02 · Failover\n"
                      "Hablamos del failover con el equipo.\n\n"
                      "El failover se ensayó el martes.\n", "t")
    entry = note.entries[0]
    first, second = (b.start for b in entry.blocks)
    raw = Evidence({}, {(entry.id, first): 2.0, (entry.id, second): 2.0})
    when = when_boosted(raw, note.sections, "¿cuándo fue el failover?")
    assert when.paragraphs == {(entry.id, first): 2.0, (entry.id, second): 2.0 * (1 + WHEN_BOOST)}
    assert when_boosted(raw, note.sections, "qué pasó con el failover") == raw


def test_the_note_at_hand_is_offered_even_when_a_vague_message_matches_nothing_in_it(
        lib: Notes) -> None:
    vague = "¿y las colas?"  # matches the queues note only
    assert [h.note for h in lib.suggest(vague, session="fresh").hits] == ["infra/queues"]
    lib.section_map("infra/replica", session="reading", today=ASKED)
    offered = [h.note for h in lib.suggest(vague, session="reading").hits]
    assert offered[0] == "infra/queues" and "infra/replica" in offered
    hit = next(h for h in lib.suggest(vague, session="reading").hits
               if h.note == "infra/replica")
    assert hit.matched == () and hit.title == "Réplica de base de datos" and hit.tokens > 0
    named = next(h for h in lib.suggest("réplica de base de datos", session="fresh").hits
                 if h.note == "infra/replica")  # the same note, matched: the same costs
    assert (hit.tokens, hit.state_tokens) == (named.tokens, named.state_tokens)
    nothing = lib.suggest("zzzyzx", session="reading")  # matches no note at all
    assert [h.note for h in nothing.hits] == ["infra/replica"] and nothing.total == 1
