"""Every link between the docs lands: a linked Markdown file exists, and a ``#anchor`` names a
heading of the file it points to (GitHub's anchors: lower case, punctuation dropped, spaces as
hyphens). Sections move between the user pages and the lab log (docs/lab/); a link left
behind fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])
LINK = re.compile(r"\]\(([^)\s]*?)(?:#([^)\s]+))?\)")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#{1,6} (.*)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken(page: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf-8"))  # code is not a link
    wrong = []
    for target, anchor in LINK.findall(text):
        if target.startswith(("http:", "https:", "mailto:")):
            continue
        dest = (page.parent / target).resolve() if target else page
        if not dest.exists():
            wrong.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            wrong.append(f"{target}#{anchor}: no such heading")
    return wrong


def test_every_link_between_the_docs_lands() -> None:
    found = {str(p.relative_to(ROOT)): broken(p) for p in PAGES}
    assert {page: wrong for page, wrong in found.items() if wrong} == {}


def test_a_moved_section_is_caught(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Kept here\n\n[ok](#kept-here) [gone](#moved) "
                                   "[file](b.md#x) `[code](nowhere.md)`\n")
    assert broken(tmp_path / "a.md") == ["#moved: no such heading", "b.md: no such file"]
