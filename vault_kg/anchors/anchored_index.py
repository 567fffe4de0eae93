"""The vault's anchored notes, read straight from the scope cache's node rows (read-only, stdlib
only): for push-recall's anchored-file bypass, the Stop hook's credit, and read-time freshness.

A note's `anchored` attribute (written by the anchors pass) lists `project:locator` keys; the
file is the locator's path part (`src/retry.py › class Client` → `src/retry.py`, `README.md#Setup`
→ `README.md`).
"""

from __future__ import annotations

from typing import Any, Iterator

from vault_kg.storage.light_reads import Connection, anchored_note_rows, open_cache

__all__ = ["LOCATOR_SEP", "anchored_file", "iter_anchored", "open_cache"]

LOCATOR_SEP = " › "


def anchored_file(key: str) -> tuple[str, str]:
    """(project, file path) of an `anchored` key."""
    project, _, locator = str(key).partition(":")
    return project, locator.split(LOCATOR_SEP, 1)[0].split("#", 1)[0]


def iter_anchored(con: Connection) -> Iterator[tuple[str, dict[str, Any], list[tuple[str, str]]]]:
    """(note id, node, anchored (project, file) pairs) for every anchored note, by id."""
    for nid, node in anchored_note_rows(con):
        files = [anchored_file(k) for k in node.get("anchored") or ()]
        if files:
            yield nid, node, files
