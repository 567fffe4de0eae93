"""`kg lint --fix`: the one repair of a note's properties that is always safe, and nothing else.

YAML refuses a plain value that holds `: ` (`summary: Client profile for Acme: contacts, scope`),
the most common mistake in hand-written properties; quoting the value (`summary: "…"`) is what
the person meant. Each refused line is quoted in turn, and the note is written (through the
vault's guard) only when its frontmatter then parses; any other mistake is left for a person,
with the line and the fix `kg lint` names.
"""

from __future__ import annotations

import json
from typing import Any

from vault_kg.core.scopes import Scope
from vault_kg.notes.lint import note_extractions

__all__ = ["fix_frontmatter"]

MAX_FIX_ROUNDS = 20


def fix_frontmatter(scope: Scope) -> list[dict[str, Any]]:
    """Quote every property value YAML refused for holding `: ` (the one fix that is always safe),
    in notes whose frontmatter then parses; each change written through the vault's guard."""
    from extract.notes import extract_note
    from vault_kg.notes.vault_write import read_current, write_note

    extractions, _, _ = note_extractions(scope)
    done: list[dict[str, Any]] = []
    for rel, ext in sorted(extractions.items()):
        if not ext.meta.get("frontmatter_error"):
            continue
        text = read_current(scope.root, rel)
        if text is None:
            continue  # deleted since the listing
        new, lines = _quoted(rel, text)
        if not lines or extract_note(rel, new.encode("utf-8")).meta.get("frontmatter_error"):
            continue  # not that mistake, or not only that one: left for a person
        write_note(scope.root, rel, new, based_on=text, contract=False)  # refused if another program changed it since
        done.append({"source": rel, "lines": lines})
    return done


def _quoted(rel: str, text: str) -> tuple[str, list[int]]:
    """`text` with each refused `key: a: b` line quoted, and the lines changed ([] when none)."""
    from extract.notes import extract_note
    from extract.frontmatter import quoted_fix

    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    changed: list[int] = []
    for _ in range(MAX_FIX_ROUNDS):
        error = extract_note(rel, newline.join(lines).encode("utf-8")).meta.get("frontmatter_error")
        index = error["line"] - 1 if error else -1
        if not error or "mapping values" not in error["reason"] or not 0 <= index < len(lines) or quoted_fix(lines[index]) is None:
            break
        key, _, value = lines[index].partition(":")
        lines[index] = f"{key}: {json.dumps(value.strip(), ensure_ascii=False)}"
        changed.append(index + 1)
    return newline.join(lines), changed
