"""A note's front matter: the YAML block between its opening ``---`` lines, parsed safely.

Bounded before it is trusted: at most 64,000 characters, and at most 10,000 values or as many
characters once YAML aliases are expanded (a "billion laughs" is refused, sized in the
composed form only); never raises: each problem is a :class:`Problem` with its line. PyYAML
is imported when a note is first parsed. Split out of :mod:`memory.model.note`, which calls
:func:`front_matter` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import yaml


_FM_OPEN = re.compile(r"^-{3,}[ \t]*\r?$")
_MAX_FRONT_MATTER_CHARS = 64_000  # also the bound of its scalars' text, aliases expanded
MAX_FRONT_MATTER_VALUES = 10_000  # scalars, lists and mappings, aliases expanded


@dataclass(frozen=True)
class Problem:
    """A format problem found while parsing: 1-based line, a code and a message."""

    line: int
    code: str
    message: str
    severity: Literal["error", "warning"] = "error"


def _yaml() -> Any:
    import yaml

    return yaml


def _yaml_loader() -> Any:
    yml = _yaml()
    return getattr(yml, "CSafeLoader", yml.SafeLoader)  # as python-frontmatter


def front_matter(lines: list[str], problems: list[Problem]) -> tuple[dict[str, Any], int, bool]:
    """Return (metadata, first body line, whether front matter was present)."""
    if not lines or not _FM_OPEN.match(lines[0].lstrip("\ufeff").rstrip("\n")):
        problems.append(Problem(1, "no-front-matter", "no YAML front matter; add a "
                                      "'---' block with at least a title", "warning"))
        return {}, 0, False
    close = next((i for i in range(1, len(lines)) if _FM_OPEN.match(lines[i].rstrip("\n"))), None)
    if close is None:
        problems.append(Problem(1, "front-matter-unclosed",
                                      "front matter opened with '---' but never closed; "
                                      "add a closing '---' line"))
        return {}, 0, False
    return _load_yaml("".join(lines[1:close]), problems), close + 1, True


def _load_yaml(raw: str, problems: list[Problem]) -> dict[str, Any]:
    if len(raw) > _MAX_FRONT_MATTER_CHARS:
        problems.append(Problem(2, "front-matter-too-large",
                                      f"front matter is over {_MAX_FRONT_MATTER_CHARS:,} "
                                      "characters; keep it to a title, tags and aliases"))
        return {}
    yml = _yaml()
    loader = _yaml_loader()(raw)
    try:
        node = loader.get_single_node()
        over = _expansion_over(node) if node is not None else None
        if over is not None:
            problems.append(Problem(2 + over, "front-matter-too-large",
                                          "front matter expands to over "
                                          f"{MAX_FRONT_MATTER_VALUES:,} values or "
                                          f"{_MAX_FRONT_MATTER_CHARS:,} characters (YAML "
                                          "aliases repeat what they name); it is ignored: "
                                          "keep it to a title, tags and aliases"))
            return {}
        data = loader.construct_document(node) if node is not None else None
    except yml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 2 + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or "invalid YAML"
        problems.append(Problem(line, "bad-yaml", f"front matter is not valid YAML "
                                      f"({reason}); fix the YAML between the '---' lines"))
        return {}
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. a date 2026-02-30
        problems.append(Problem(2, "bad-yaml", f"front matter is not valid YAML "
                                      f"({exc}); fix the YAML between the '---' lines"))
        return {}
    finally:
        loader.dispose()
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(Problem(2, "bad-yaml", "front matter is not a mapping; write "
                                      "'key: value' lines such as 'title: …'"))
        return {}
    return {str(k): v for k, v in data.items()}


def _expansion_over(root: yaml.Node) -> int | None:
    """The 0-based line (in the front matter) of the top-level key where the document,
    aliases expanded, passes MAX_FRONT_MATTER_VALUES values or _MAX_FRONT_MATTER_CHARS
    characters; None within bounds. Each node is sized once (an alias is the same node), so
    this costs the composed size, never the expanded one (a billion laughs stays cheap)."""
    yml = _yaml()
    sizes: dict[int, tuple[int, int]] = {}
    values = chars = 0
    pairs = root.value if isinstance(root, yml.MappingNode) else [(root, None)]
    for key, value in pairs:
        for node in (key, value):
            if node is not None:
                more_values, more_chars = _expanded_size(node, sizes)
                values, chars = values + more_values, chars + more_chars
        if values > MAX_FRONT_MATTER_VALUES or chars > _MAX_FRONT_MATTER_CHARS:
            return int(key.start_mark.line)
    return None


def _expanded_size(root: yaml.Node, sizes: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(values, scalar characters) under ``root`` with aliases expanded, capped just past
    the bounds; iterative (no recursion limit), a cycle (``&a [*a]``) counts once."""
    yml = _yaml()
    cap_values, cap_chars = MAX_FRONT_MATTER_VALUES + 1, _MAX_FRONT_MATTER_CHARS + 1
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _yaml_children(node)
        if not done:
            if id(node) in open_nodes:
                continue
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        values = 1 + sum(sizes.get(id(c), (1, 0))[0] for c in children)
        chars = (len(node.value) if isinstance(node, yml.ScalarNode) else 0) + \
            sum(sizes.get(id(c), (1, 0))[1] for c in children)
        sizes[id(node)] = (min(values, cap_values), min(chars, cap_chars))
        open_nodes.discard(id(node))
    return sizes[id(root)]


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    yml = _yaml()
    if isinstance(node, yml.SequenceNode):
        return list(node.value)
    if isinstance(node, yml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
