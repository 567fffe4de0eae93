"""The vault's anchored notes, read straight from the scope cache's node rows (read-only, stdlib
only): for push-recall's anchored-file bypass, the Stop hook's credit, and read-time freshness.

A note's `anchored` attribute (written by the anchors pass) lists `project:locator` keys; the
file is the locator's path part (`src/retry.py › class Client` → `src/retry.py`, `README.md#Setup`
→ `README.md`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from vault_kg.core.config import OUT_DIRNAME

LOCATOR_SEP = " › "
CACHE_DB = ("cache", "index.sqlite")


def open_cache(vault: Path, timeout: float = 5) -> sqlite3.Connection | None:
    db = vault.joinpath(OUT_DIRNAME, *CACHE_DB)
    if not db.is_file():
        return None
    try:
        return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout)
    except sqlite3.Error:
        return None


def anchored_file(key: str) -> tuple[str, str]:
    """(project, file path) of an `anchored` key."""
    project, _, locator = str(key).partition(":")
    return project, locator.split(LOCATOR_SEP, 1)[0].split("#", 1)[0]


def iter_anchored(con: sqlite3.Connection) -> Iterator[tuple[str, dict[str, Any], list[tuple[str, str]]]]:
    """(note id, node, anchored (project, file) pairs) for every anchored note, by id."""
    for nid, data in con.execute("SELECT id, data FROM nodes WHERE kind='note' AND data LIKE '%\"anchored\"%' ORDER BY id"):
        node = json.loads(data)
        files = [anchored_file(k) for k in node.get("anchored") or ()]
        if files:
            yield nid, node, files
