"""The cache file's format version and how it is opened, apart from `vault_kg.storage.cache` (which
re-exports both) so the no-op probe checks the version without importing the cache's code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = 12  # 12: markdown links keep the target as written; wikilinks with a table-escaped pipe


def connect(path: Path, readonly: bool = False, journal: str = "WAL") -> sqlite3.Connection:
    if readonly:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None)
        con.execute("PRAGMA mmap_size=1073741824")  # queries read index pages in place, no copies
    else:
        con = sqlite3.connect(str(path), timeout=60, isolation_level=None)
        con.execute(f"PRAGMA journal_mode={journal}")
        con.execute("PRAGMA synchronous=NORMAL")
    return con
