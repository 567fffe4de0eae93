"""Read-only queries of a scope's cache for readers that must stay light (the hooks, status lines).

The standard library only (sqlite3, json, marshal): push-recall, the Stop hook's credit, read-time
freshness and the model worker's status read the cache without importing the cache's own code
(`vault_kg.storage.cache`, which a writer opens). Every query a reader outside storage needs is a
named function here; nobody else speaks SQL.
"""

from __future__ import annotations

import json
import marshal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vault_kg.storage.layout import cache_db

__all__ = [
    "CacheError",
    "Connection",
    "DatabaseError",
    "anchored_note_rows",
    "note_rows",
    "note_rows_waiting",
    "open_cache",
    "open_db",
    "search_names",
    "sources_llm_status",
]

CacheError = sqlite3.Error  # what a reader catches when the cache is locked, gone or corrupt
DatabaseError = sqlite3.DatabaseError  # ... when what it read is not a cache (or a search string FTS5 refuses)
Connection = sqlite3.Connection


def open_db(db: Path, timeout: float = 5) -> Connection:
    """The cache file `db`, read-only (`CacheError` when it cannot be opened)."""
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout)


def open_cache(root: Path, timeout: float = 5) -> Connection | None:
    """The cache of the scope at `root` (default artifact folder), read-only; None when there is none."""
    db = cache_db(root)
    if not db.is_file():
        return None
    try:
        return open_db(db, timeout)
    except sqlite3.Error:
        return None


def anchored_note_rows(con: Connection) -> Iterator[tuple[str, dict[str, Any]]]:
    """(note id, node) of every note whose row mentions `"anchored"`, by id (the caller keeps the
    ones whose `anchored` attribute is set)."""
    for nid, data in con.execute("SELECT id, data FROM nodes WHERE kind='note' AND data LIKE '%\"anchored\"%' ORDER BY id"):
        yield nid, json.loads(data)


def note_rows(con: Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """These nodes' rows (the ones that exist), by id."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {nid: json.loads(data) for nid, data in con.execute(f"SELECT id, data FROM nodes WHERE id IN ({marks}) ORDER BY id", ids)}


def search_names(con: Connection, match: str, weights: tuple[float, ...], limit: int) -> list[tuple[str, str]]:
    """(node id, owner) of the full-text index's best rows for an FTS5 `match`, BM25 with these column `weights`."""
    rank = f"bm25(0, 0, {', '.join(str(w) for w in weights)})"
    return con.execute("SELECT node_id, owner FROM docs WHERE docs MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?", (match, rank, limit)).fetchall()


def note_rows_waiting(out: Path) -> list[tuple[str, float, int, str, dict[str, Any]]]:
    """(note path, rank, mtime in ns, status, the model pass's state) of every pending or stale
    note (the state read only for stale notes: pending ones are waiting by their status)."""
    con = open_db(out / "cache" / "index.sqlite", timeout=60)
    try:
        rows = con.execute(
            "SELECT n.source, n.rank, s.mtime, n.status, CASE n.status WHEN 'stale' THEN s.ext END "
            "FROM nodes n JOIN sources s ON s.rel = n.source WHERE n.kind = 'note' AND n.status IN ('pending', 'stale')"
        )
        return [(rel, rank, mtime, status, (marshal.loads(ext)[5].get("llm") or {}) if ext is not None else {}) for rel, rank, mtime, status, ext in rows]
    finally:
        con.close()


def sources_llm_status(out: Path) -> Iterator[dict[str, Any]]:
    """The model pass's state of every source (from the part of each extraction every load decodes)."""
    con = open_db(out / "cache" / "index.sqlite", timeout=60)
    try:
        for (core,) in con.execute("SELECT ext FROM sources"):
            yield marshal.loads(core)[5].get("llm") or {}
    finally:
        con.close()
