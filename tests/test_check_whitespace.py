"""A documented choice of `notes check` (docs/reliability.md): a hand edit that changes only
trailing spaces or blank lines between history entries goes unnoticed, as it changes no word;
one character changed inside an entry is reported. And the reliability report keeps its
hand-written end when its figures are made again."""

from __future__ import annotations

from pathlib import Path

from conftest import RunCli
from reliability import KEPT, Figures, write_report

NOTE = "infra/redis"


def test_whitespace_between_entries_is_not_a_change(run_cli: RunCli, store_dir: Path,
                                                    figures: Figures) -> None:
    """Hand edits of white space only in the history (a documented choice)"""
    for title, body, day in (("one", "first", "2026-11-01"), ("two", "second", "2026-11-02")):
        assert run_cli("log", NOTE, "--title", title, "--date", day, input=body).returncode == 0
    path = store_dir / f"{NOTE}.md"
    text = path.read_text()
    path.write_text(text.replace("first\n", "first   \n\n\n").replace("second\n", "second \t\n"))
    quiet = run_cli("check")
    assert quiet.returncode == 0 and "no problems found" in quiet.stdout, quiet
    path.write_text(path.read_text().replace("first   \n", "firsT\n"))
    changed = run_cli("check").stdout  # an error or a warning, as the integrity check rates it
    assert "2026-11-01-one" in changed and "[history-changed]" in changed, changed
    figures.add("trailing spaces or tabs added to an entry's lines / blank lines added "
                "between entries", "not reported (a choice: they change no word)")
    figures.add("one letter changed inside an entry", "reported, with the line")


def test_the_report_keeps_its_hand_written_end(tmp_path: Path) -> None:
    target = tmp_path / "reliability.md"
    target.write_text(f"# old figures\n\n{KEPT}\n\n## Prose\n\nkept as written\n")
    write_report(target, 0)
    made = target.read_text()
    assert "# old figures" not in made and made.startswith("# Reliability figures")
    assert made.endswith(f"{KEPT}\n\n## Prose\n\nkept as written\n")
