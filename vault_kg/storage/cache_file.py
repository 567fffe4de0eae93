"""The cache file's format version and how it is opened, apart from `vault_kg.storage.cache` (which
re-exports both) so the no-op probe checks the version without importing the cache's code."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA", "CacheError", "ReadOnlyCache", "begin_read", "connect", "has_sources", "schema_version", "source_stats"]

CacheError = sqlite3.Error

SCHEMA = 13  # 13: attachments are sources; a frontmatter that does not parse keeps the body; 12: markdown links keep the target as written; wikilinks with a table-escaped pipe


def connect(path: Path, readonly: bool = False, journal: str = "WAL") -> sqlite3.Connection:
    if readonly:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None)
        con.execute("PRAGMA mmap_size=1073741824")  # queries read index pages in place, no copies
    else:
        con = sqlite3.connect(str(path), timeout=60, isolation_level=None)
        con.execute(f"PRAGMA journal_mode={journal}")
        con.execute("PRAGMA synchronous=NORMAL")
    return con


def begin_read(con: sqlite3.Connection) -> None:
    """Start a read transaction: every read after it sees the same commit."""
    con.execute("BEGIN")


def schema_version(con: sqlite3.Connection) -> int:
    return int(con.execute("PRAGMA user_version").fetchone()[0])


def has_sources(con: sqlite3.Connection) -> bool:
    return bool(con.execute("SELECT EXISTS (SELECT 1 FROM sources)").fetchone()[0])


def source_stats(con: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """Every cached source's (path, size, mtime), in path order (SQLite orders TEXT by its UTF-8
    bytes, which is Python's code point order)."""
    return con.execute("SELECT rel, size, mtime FROM sources ORDER BY rel").fetchall()


class ReadOnlyCache:
    """The part of `ScopeCache` a no-op decision reads; a write marks the probe as not a no-op."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.wrote = False

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default  # what orjson wrote (`ScopeCache.set_meta`); json is imported already

    def set_meta(self, key: str, value: Any) -> None:
        self.wrote = True
