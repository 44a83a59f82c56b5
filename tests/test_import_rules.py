"""The house's import rules, read from the source (docs/architecture.md, "Layers"):

- whoosh and tantivy are imported only under memory/index/ (the backends);
- click is imported only by the CLI (memory/fronts/cli/), and fastmcp and the MCP server's
  other frameworks (mcp, mcp_types, starlette, uvicorn) only by the server
  (memory/fronts/mcp/: the server, its tools, its costs and its guards);
- nothing under memory/ but the front ends (memory/fronts/, and memory/__main__.py, which is
  ``python -m memory``: the CLI) imports memory.fronts: the arrows run down, from the fronts
  to the library, never back up;
- nothing under memory/ edits sys.path: what the library needs it imports as a package (the
  project's own measures live in benchmarks/, run with ``python -m benchmarks``);
- one write path into the notes tree: only memory/state/commit.py takes a note's write lock
  and calls the primitives that put a note file in place (docs/architecture.md, "Writing");
- one atomic-file helper: a file is renamed, linked or copied into place only by
  memory/state/safe_files.py (``write_atomic``, ``atomic_file``, ``create_new``) and the
  write path; the one exception says why.
- the prompt hook is one package, memory/hook/, imported only by the front ends that start it
  (the ``notes`` script, the CLI, the MCP server) and the bench that measures its answer; the
  part every hook process runs (its ``__init__`` and ``client``) imports, at the top, the
  standard library's few light modules and memory.locate only;
- ``Notes`` (memory/api.py) is the one composition root: no shipped module but memory/api.py
  and the two modules of its bases (memory/api_writes.py, memory/api_upkeep.py) reaches its
  parts (its private attributes, and the store, index, token counter and history it
  composes); they use its public methods. Only those three modules import the bases: a
  caller has ``Notes``, never half of it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY = ROOT / "memory"
ENTRY = Path("memory", "__main__.py")
SAFE_FILES = Path("memory", "state", "safe_files.py")
WRITE_PATH = Path("memory", "state", "commit.py")
NOTE_WRITES = {"locked", "replace_if_unchanged", "exchange"}  # a note's lock, its swap in
MOVES = {("os", "rename"), ("os", "replace"), ("os", "link"), ("os", "symlink"),
         ("shutil", "move"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile")}
MOVES_ALLOWED = {
    SAFE_FILES: "the atomic-file helpers",
    WRITE_PATH: "the note files: created, swapped, moved to the trash and back, renamed",
    Path("memory", "index", "locks.py"): "swap_in: the index's folders, which no file helper "
                                          "can swap",
}


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(MEMORY.rglob("*.py")):
        yield path.relative_to(ROOT), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every module an import statement names, at any depth (lazy imports too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)


def _is(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_search_engines_only_under_memory_index() -> None:
    wrong = [f"{path}:{line}: {name}" for path, tree in _modules()
             if path.parts[:2] != ("memory", "index")
             for line, name in _imported(tree)
             if _is(name, "whoosh") or _is(name, "tantivy")]
    assert wrong == []


FRAMEWORKS = {("memory", "fronts", "cli"): ("click",),
              ("memory", "fronts", "mcp"): ("fastmcp", "mcp", "mcp_types", "starlette",
                                            "uvicorn")}


def _framework_breaches(path: Path, tree: ast.Module) -> Iterator[str]:
    """Each import of a front end's framework outside that front end's package."""
    for home, frameworks in FRAMEWORKS.items():
        if path.parts[:3] != home:
            yield from (f"{path}:{line}: {name}" for line, name in _imported(tree)
                        if any(_is(name, f) for f in frameworks))


def test_each_front_end_alone_imports_its_framework() -> None:
    wrong = [breach for path, tree in _modules() for breach in _framework_breaches(path, tree)]
    assert wrong == []


def test_only_the_fronts_import_the_fronts() -> None:
    wrong = [f"{path}:{line}: {name}" for path, tree in _modules()
             if path.parts[:2] != ("memory", "fronts") and path != ENTRY
             for line, name in _imported(tree) if _is(name, "memory.fronts")]
    assert wrong == []


def test_no_sys_path_edits_in_the_library() -> None:
    wrong = [f"{path}:{node.lineno}" for path, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == "path"
             and isinstance(node.value, ast.Name) and node.value.id == "sys"]
    assert wrong == []


HOOK = Path("memory", "hook")
HOOK_USERS = (Path("memory", "fronts"), Path("memory", "bench"), HOOK)
# what a hook answered by the server may import before it asks (tests/test_hook_socket.py
# checks the whole process's list)
HOOK_LIGHT = {"__future__", "collections.abc", "typing", "json", "os", "socket", "stat",
              "struct", "sys", "time", "pathlib", "memory.locate"}


def _top_level_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """The modules imported when the module is (not those of a function, nor under
    ``if TYPE_CHECKING``)."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def test_only_the_fronts_and_the_bench_import_the_hook() -> None:
    wrong = [f"{path}:{line}: {name}" for path, tree in _modules()
             if not any(path.is_relative_to(user) for user in HOOK_USERS)
             for line, name in _imported(tree) if _is(name, "memory.hook")]
    assert wrong == []


def test_the_hook_process_imports_little_before_it_asks() -> None:
    light = [HOOK / "__init__.py", HOOK / "client.py", Path("memory", "fronts", "entry.py")]
    wrong = [f"{path}:{line}: {name}" for path, tree in _modules() if path in light
             for line, name in _top_level_imports(tree) if name not in HOOK_LIGHT]
    assert wrong == []


API = Path("memory", "api.py")
# Notes and its bases, by module: the reads in api.py, the writes and the upkeep beside it
NOTES_CLASSES = {API: "Notes", Path("memory", "api_writes.py"): "NotesWrites",
                 Path("memory", "api_upkeep.py"): "NotesUpkeep"}
NOTES_BASES = {"memory.api_writes", "memory.api_upkeep"}
# the parts Notes composes that still have public names inside its modules (its write path
# uses them); outside them they are as private as its underscored attributes
NOTES_PARTS = {"store", "index", "counter", "history", "ledger"}


def _notes_private() -> set[str]:
    """The underscored attributes Notes and its bases set on themselves (its private
    parts)."""
    private: set[str] = set()
    for path, name in NOTES_CLASSES.items():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        private |= {node.attr for node in ast.walk(cls) if isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and node.attr.startswith("_")}
    return private


def _reaches(tree: ast.Module, private: set[str]) -> Iterator[tuple[int, str]]:
    """``x._part`` of a private attribute of Notes on anything but ``self``, and
    ``notes.part`` (``self.notes.store``, ``reader.notes.index``) of a part it composes."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = ast.unparse(node.value)
        if node.attr in private and owner not in ("self", "cls"):
            yield node.lineno, f"{owner}.{node.attr}"
        elif node.attr in NOTES_PARTS and owner.split(".")[-1].lower().endswith("notes"):
            yield node.lineno, f"{owner}.{node.attr}"


def _shipped() -> Iterator[tuple[Path, ast.Module]]:
    yield from _modules()
    shim = ROOT / "mcp_server.py"
    yield Path(shim.name), ast.parse(shim.read_text(encoding="utf-8"), str(shim))


def test_only_the_api_reaches_the_parts_of_notes() -> None:
    private = _notes_private()
    assert {"_ladder", "_scope", "_usage"} <= private
    wrong = [f"{path}:{line}: {reach}" for path, tree in _shipped()
             if path not in NOTES_CLASSES for line, reach in _reaches(tree, private)]
    assert wrong == []


def test_only_notes_imports_its_bases() -> None:
    """``NotesWrites`` and ``NotesUpkeep`` are halves of ``Notes``, made only as it: no
    module but Notes' own imports them."""
    wrong = [f"{path}:{line}: {name}" for path, tree in _shipped()
             if path not in NOTES_CLASSES
             for line, name in _imported(tree) if any(_is(name, b) for b in NOTES_BASES)]
    assert wrong == []


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """The checks find each kind of breach in a module written for the purpose."""
    tree = ast.parse("import sys\nimport whoosh.index\n\ndef f():\n"
                     "    from memory.fronts import render\n    sys.path.insert(0, '.')\n")
    names = [name for _, name in _imported(tree)]
    assert any(_is(n, "whoosh") for n in names)
    assert any(_is(n, "memory.fronts") for n in names)
    assert any(isinstance(n, ast.Attribute) and n.attr == "path" for n in ast.walk(tree))
    hook = ast.parse("import dataclasses\nfrom memory.hook.answer import run_hook\n")
    assert [n for _, n in _top_level_imports(hook) if n not in HOOK_LIGHT] == \
        ["dataclasses", "memory.hook.answer"]
    assert any(_is(n, "memory.hook") for _, n in _imported(hook))
    framework = ast.parse("import click\n\ndef f():\n    from fastmcp import FastMCP\n")
    assert list(_framework_breaches(Path("memory", "api.py"), framework)) == \
        ["memory/api.py:1: click", "memory/api.py:4: fastmcp", "memory/api.py:4: fastmcp.FastMCP"]
    assert list(_framework_breaches(Path("memory", "fronts", "mcp", "tools.py"), framework)) == \
        ["memory/fronts/mcp/tools.py:1: click"]
    reaching = ast.parse("def f(notes, reader):\n    notes._ladder.suggest('x')\n"
                         "    reader.notes.store.load('a')\n    self._ladder.close()\n"
                         "    ladder.store.read_head('a')\n")
    assert [r for _, r in _reaches(reaching, _notes_private())] == \
        ["notes._ladder", "reader.notes.store"]
    halves = ast.parse("def f():\n    from memory.api_upkeep import NotesUpkeep\n")
    assert [n for _, n in _imported(halves) if any(_is(n, b) for b in NOTES_BASES)] == \
        ["memory.api_upkeep", "memory.api_upkeep.NotesUpkeep"]


def _called(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    """Every call ``a.b(...)`` or ``b(...)``: (line, ``a`` or "", ``b``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else ""
                yield node.lineno, owner, func.attr
            elif isinstance(func, ast.Name):
                yield node.lineno, "", func.id


def test_only_the_write_path_writes_notes() -> None:
    """A note is changed under its lock and put in place by a compare-and-swap: whoever
    takes the lock or swaps a file in besides memory/state/commit.py is a second write
    path (memory/state/safe_files.py defines the swap)."""
    wrong = [f"{path}:{line}: {name}" for path, tree in _modules()
             if path not in (WRITE_PATH, SAFE_FILES)
             for line, _, name in _called(tree) if name in NOTE_WRITES]
    assert wrong == []


def test_files_are_put_in_place_only_by_the_atomic_helpers() -> None:
    """Renames, links and copies into place are the helpers' (a temporary file, fsynced,
    renamed, the folder fsynced); a module that writes a file whole calls them."""
    wrong = [f"{path}:{line}: {owner}.{name}" for path, tree in _modules()
             if path not in MOVES_ALLOWED
             for line, owner, name in _called(tree) if (owner, name) in MOVES]
    assert wrong == []


def test_the_write_rules_catch_what_they_forbid() -> None:
    tree = ast.parse("import os\n\ndef f(store, a, b):\n    with store.locked('x'):\n"
                     "        os.replace(a, b)\n    replace_if_unchanged(a, 't', b)\n")
    calls = {(owner, name) for _, owner, name in _called(tree)}
    assert ("store", "locked") in calls and ("", "replace_if_unchanged") in calls
    assert ("os", "replace") in MOVES & calls
