"""A tool call's rejected arguments, said in one sentence that names the fix.

fastmcp validates a call's arguments (pydantic) before the tool runs; its report is several
lines of pydantic text with a URL. :func:`argument_problem` turns the errors (pydantic's
``errors()``: plain dicts with ``loc``, ``type``, ``msg``, ``input``) and the tool's input
schema into ``bad arguments to suggest: limit must be a whole number, not 'abc'; fix that and
call again (its parameters are query (text, required), limit (whole number), context (text))``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KINDS = {"integer": "whole number", "string": "text", "number": "number",
         "boolean": "true or false", "array": "list", "object": "object"}
WANTED = (("int_", "a whole number"), ("string_", "text"), ("float_", "a number"),
          ("bool_", "true or false"))


def argument_problem(tool: str, schema: Mapping[str, Any],
                     errors: Iterable[Mapping[str, Any]]) -> str:
    """Pydantic's rejection of a call's arguments as one sentence naming the parameters."""
    problems = "; ".join(dict.fromkeys(_problem(error) for error in errors))
    return (f"bad arguments to {tool}: {problems}; fix that and call again "
            f"(its parameters are {_parameters(schema)})")


def _parameters(schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", []))
    described = []
    for name, spec in schema.get("properties", {}).items():
        notes = [KINDS.get(spec.get("type", ""), ""), "required" if name in required else ""]
        said = ", ".join(n for n in notes if n)
        described.append(f"{name} ({said})" if said else name)
    return ", ".join(described)


def _problem(error: Mapping[str, Any]) -> str:
    name = ".".join(str(part) for part in error.get("loc", ())) or "the arguments"
    kind = str(error.get("type", ""))
    if kind in ("missing_argument", "missing"):
        return f"{name} is missing"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        return f"{name} is not a parameter"
    wanted = next((w for prefix, w in WANTED if kind.startswith(prefix)), None)
    if wanted is None:
        return f"{name} is not valid ({str(error.get('msg', kind)).lower()})"
    value = error.get("input")
    shown = {list: "a list", dict: "an object", type(None): "null"}.get(type(value))
    return f"{name} must be {wanted}, not {shown or repr(value)[:40]}"
