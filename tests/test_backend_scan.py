"""The fast listing of note files agrees with Store.files() on every rule."""

from __future__ import annotations

import os
from pathlib import Path

from memory import load_config
from memory.index.scan import note_stats
from memory.state.store import Store


def test_same_files_as_the_store(store_dir: Path, tmp_path: Path) -> None:
    (store_dir / ".hidden").mkdir()
    (store_dir / ".hidden" / "x.md").write_text("hidden")
    (store_dir / ".dot.md").write_text("hidden file")
    (store_dir / "notes.txt").write_text("not a note")
    (store_dir / "deep" / "er").mkdir(parents=True)
    (store_dir / "deep" / "er" / "n.md").write_text("# n\n")
    outside = tmp_path / "outside.md"
    outside.write_text("outside")
    os.symlink(outside, store_dir / "escape.md")
    os.symlink(store_dir / "glossary.md", store_dir / "inside-link.md")
    os.symlink(store_dir / "deep", store_dir / "linked-folder")
    os.symlink(store_dir / "deep", store_dir / "folder-link.md")
    os.symlink(tmp_path / "missing.md", store_dir / "broken.md")
    store = Store(load_config(store_dir))
    expected = store.files()
    assert note_stats(store.root) == {f.note_id: (str(f.path), f.mtime_ns, f.size)
                                      for f in expected}
    ids = {f.note_id for f in expected}
    assert "deep/er/n" in ids and "glossary" in ids
    # a link to another note of the store is that note's second name: indexed once
    assert not ids & {"escape", ".dot", "broken", "folder-link", "linked-folder/er/n",
                      "inside-link"}
