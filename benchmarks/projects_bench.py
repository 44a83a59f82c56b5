"""Project scopes, measured (docs/projects.md): notes_example split in two projects plus
shared notes, every question asked inside each project.

Usage: .venv/bin/python benchmarks/projects_bench.py [--json]

The store: ``decisions/``, ``incidents/``, ``infra/`` and every other ``howto/`` note (by
name) are project ``github.com/acme/backend``; ``product/`` and the other ``howto/`` notes
project ``github.com/acme/product``; ``people/``, ``conventions`` and ``glossary`` are of no
project. The questions: benchmarks/followups/questions.jsonl and tests/golden_routing.jsonl,
each with the note that answers it; a question is its gold note's project's (a shared
note's question belongs to both).

Printed, per project: how many notes of the other project appear (and, for comparison, how
many appear when the same questions are asked from no project, every note searched) in the
answers of
``suggest`` (top 5), ``recall`` (1,000 tokens) and the prompt hook to *every* question asked
inside it (its own and the other project's: the scope must hold whatever is asked), and the
hit rates of its own questions (gold note first, in the top 5, in recall's notes, in the
hook's notes) in the shared store seen from inside it and in a store holding only its notes
and the shared ones. Each project's figures inside the shared store must be no lower than
alone, and the crossings 0.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.api import Notes  # noqa: E402
from memory.config import load_config  # noqa: E402
from memory.hook.answer import run_hook  # noqa: E402
from memory.model.note import parse_note  # noqa: E402
from memory.services.manage import with_project  # noqa: E402

BACKEND, PRODUCT = "github.com/acme/backend", "github.com/acme/product"
QUESTIONS = (ROOT / "benchmarks" / "followups" / "questions.jsonl",
             ROOT / "tests" / "golden_routing.jsonl")


def project_of(note_id: str, howto: list[str]) -> str:
    top = note_id.split("/")[0]
    if top in ("decisions", "incidents", "infra"):
        return BACKEND
    if top == "product":
        return PRODUCT
    if top == "howto":
        return BACKEND if howto.index(note_id) % 2 == 0 else PRODUCT
    return ""


def build(out: Path) -> dict[str, str]:
    """The shared store (``out/both``) and each project alone (``out/alone-<n>``); the
    project of every note by id."""
    source = ROOT / "notes_example"
    ids = sorted(p.relative_to(source).with_suffix("").as_posix()
                 for p in source.rglob("*.md"))
    howto = [n for n in ids if n.startswith("howto/")]
    projects = {n: project_of(n, howto) for n in ids}
    for name, keep in (("both", None), ("alone-backend", BACKEND), ("alone-product", PRODUCT)):
        for note_id, project in projects.items():
            if keep is not None and project not in ("", keep):
                continue
            target = out / name / f"{note_id}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            text = (source / f"{note_id}.md").read_text(encoding="utf-8")
            target.write_text(with_project(parse_note(text), project) if project else text,
                              encoding="utf-8")
    return projects


def folder_of(out: Path, project: str) -> Path:
    """A clone of the project (a ``.git/config`` naming its remote), where questions are
    asked from."""
    folder = out / "clones" / project.rsplit("/", 1)[-1]
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    (folder / ".git" / "config").write_text(f'[remote "origin"]\n\turl = https://{project}\n')
    return folder


def open_store(out: Path, name: str) -> Notes:
    config = load_config(out / name, out / "state" / name)
    return Notes(dataclasses.replace(config, usage_log=False, semantic=False),
                 notify=lambda _: None, front="lib")


def questions() -> list[dict[str, Any]]:
    found = []
    for path in QUESTIONS:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(json.loads(line))
    return found


def named(text: str, note_ids: list[str]) -> set[str]:
    return {n for n in note_ids if re.search(rf"(?<![\w/-]){re.escape(n)}(?![\w/-])", text)}


def ask(notes: Notes, question: dict[str, Any], folder: Path | None, note_ids: list[str]
        ) -> dict[str, Any]:
    """The notes each rung answers with, asked from inside ``folder``'s project (None:
    from no project, every note searched)."""
    context = "\n".join(question.get("context") or []) or None
    suggested = [h.note for h in notes.suggest(question["question"], 5, context).hits]
    recalled = {g.note for g in notes.recall(question["question"], 1000, context).groups}
    payload = json.dumps({"prompt": question["question"], "session_id": "bench",
                          "cwd": str(folder or ""), "hook_event_name": "UserPromptSubmit"})
    hooked = named(run_hook(notes, payload, str(folder or "")), note_ids)
    return {"suggest": suggested, "recall": recalled, "hook": hooked}


def measure(out: Path) -> dict[str, Any]:
    projects = build(out)
    note_ids = sorted(projects, key=len, reverse=True)
    both = open_store(out, "both")
    asked = questions()
    figures: dict[str, Any] = {"notes": {p or "none": sum(v == p for v in projects.values())
                                         for p in (BACKEND, PRODUCT, "")},
                               "questions": len(asked)}
    unscoped = [ask(both, question, None, note_ids) for question in asked]
    for project, alone_name in ((BACKEND, "alone-backend"), (PRODUCT, "alone-product")):
        folder = folder_of(out, project)
        inside = both.in_project(project)
        alone = open_store(out, alone_name)
        others = {n for n, p in projects.items() if p not in ("", project)}
        crossings = {"suggest": 0, "recall": 0, "hook": 0}
        hits = {kind: {"shared store": 0, "alone": 0}
                for kind in ("suggest@1", "suggest@5", "recall", "hook")}
        own = 0
        for question in asked:
            seen = ask(inside, question, folder, note_ids)
            for rung in crossings:
                crossings[rung] += len(set(seen[rung]) & others)
            if projects.get(question["note"]) not in ("", project):
                continue
            own += 1
            for label, answers in (("shared store", seen),
                                   ("alone", ask(alone, question, folder, note_ids))):
                gold = question["note"]
                hits["suggest@1"][label] += answers["suggest"][:1] == [gold]
                hits["suggest@5"][label] += gold in answers["suggest"]
                hits["recall"][label] += gold in answers["recall"]
                hits["hook"][label] += gold in answers["hook"]
        alone.close()
        without = {rung: sum(len(set(seen[rung]) & others) for seen in unscoped)
                   for rung in crossings}
        figures[project] = {"own questions": own, "other-project notes in answers": crossings,
                            "without scopes": without, "hits": hits}
    both.close()
    return figures


def report(figures: dict[str, Any]) -> str:
    counts = figures["notes"]
    lines = [f"store: {counts[BACKEND]} notes of {BACKEND}, {counts[PRODUCT]} of {PRODUCT}, "
             f"{counts['none']} of no project; {figures['questions']} questions, each asked "
             "inside both projects", "",
             "project | own questions | other-project notes in suggest / recall / hook "
             "(without scopes) | hits in the shared store (alone): suggest@1, suggest@5, "
             "recall, hook"]
    for project in (BACKEND, PRODUCT):
        row = figures[project]
        cross, without = row["other-project notes in answers"], row["without scopes"]
        own = row["own questions"]
        hits = ", ".join(f"{h['shared store'] / own:.1%} ({h['alone'] / own:.1%})"
                         for h in row["hits"].values())
        lines.append(f"{project} | {own} | {cross['suggest']} / {cross['recall']} / "
                     f"{cross['hook']} ({without['suggest']} / {without['recall']} / "
                     f"{without['hook']}) | {hits}")
    return "\n".join(lines)


def main() -> int:
    out = Path(tempfile.mkdtemp(prefix="notes-projects-bench-"))
    try:
        figures = measure(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(figures, indent=1) if "--json" in sys.argv else report(figures))
    crossed = sum(sum(figures[p]["other-project notes in answers"].values())
                  for p in (BACKEND, PRODUCT))
    lower = [p for p in (BACKEND, PRODUCT) for h in figures[p]["hits"].values()
             if h["shared store"] < h["alone"]]
    return 1 if crossed or lower else 0


if __name__ == "__main__":
    sys.exit(main())
