"""Every source's (path, size, mtime) packed in one row, so a no-op `kg update` reads one value.

The no-op probe (`vault_kg.cli.noop_update`) compares a fresh listing's stats with the cache's;
reading them as 10,000 rows costs more than listing and stat'ing the vault. So the cache keeps
them packed as well (`stat_snapshot`: the paths joined by NUL, which no file name holds, and the
sizes and mtimes as two arrays of int64), and the probe packs its listing the same way and
compares bytes.

Exact by construction: triggers on `sources` record every path whose row is inserted, deleted
or whose stat changes (`stat_dirty`), in the same transaction, whatever code made the change;
`refresh`, run by every commit, patches those paths into the snapshot from their rows (or
packs the table again when many changed) and clears the list. A snapshot with pending paths is
not used (an older kg wrote the table): the probe then reads the rows.
"""

from __future__ import annotations

import sqlite3
from array import array
from bisect import bisect_left

__all__ = ["DDL", "Packed", "pack", "read", "refresh"]

DDL = """
CREATE TABLE IF NOT EXISTS stat_snapshot(rels BLOB, sizes BLOB, mtimes BLOB);
CREATE TABLE IF NOT EXISTS stat_dirty(rel TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS stat_dirty_insert AFTER INSERT ON sources WHEN EXISTS (SELECT 1 FROM stat_snapshot)
BEGIN INSERT INTO stat_dirty SELECT NEW.rel WHERE NOT EXISTS (SELECT 1 FROM stat_dirty WHERE rel = NEW.rel); END;
CREATE TRIGGER IF NOT EXISTS stat_dirty_update AFTER UPDATE OF rel, size, mtime ON sources WHEN EXISTS (SELECT 1 FROM stat_snapshot)
BEGIN
INSERT INTO stat_dirty SELECT OLD.rel WHERE NOT EXISTS (SELECT 1 FROM stat_dirty WHERE rel = OLD.rel);
INSERT INTO stat_dirty SELECT NEW.rel WHERE NOT EXISTS (SELECT 1 FROM stat_dirty WHERE rel = NEW.rel);
END;
CREATE TRIGGER IF NOT EXISTS stat_dirty_delete AFTER DELETE ON sources WHEN EXISTS (SELECT 1 FROM stat_snapshot)
BEGIN INSERT INTO stat_dirty SELECT OLD.rel WHERE NOT EXISTS (SELECT 1 FROM stat_dirty WHERE rel = OLD.rel); END;
"""
# The triggers stay quiet while there is no snapshot (a cold build: `refresh` packs the whole
# table then anyway). No `INSERT OR IGNORE` in them: the statement that fires a trigger imposes
# its own conflict policy on the trigger's statements (an upsert's would fail on a repeat).

Packed = tuple[bytes, bytes, bytes]


def pack(rels: list[str], sizes: list[int], mtimes: list[int]) -> Packed:
    """Paths in sorted order (SQLite's order of TEXT: UTF-8 bytes, i.e. code points) with their
    sizes and mtimes; OverflowError for a value outside int64."""
    return "\0".join(rels).encode("utf-8"), array("q", sizes).tobytes(), array("q", mtimes).tobytes()


def read(con: sqlite3.Connection) -> Packed | None:
    """The snapshot, or None when there is none, it has pending paths, or the cache predates it."""
    try:
        if con.execute("SELECT EXISTS (SELECT 1 FROM stat_dirty)").fetchone()[0]:
            return None
        row = con.execute("SELECT rels, sizes, mtimes FROM stat_snapshot").fetchone()
    except sqlite3.OperationalError:
        return None
    return (bytes(row[0]), bytes(row[1]), bytes(row[2])) if row else None


def refresh(con: sqlite3.Connection) -> None:
    """Bring the snapshot up to date with `sources` (inside the caller's transaction)."""
    dirty = [rel for (rel,) in con.execute("SELECT rel FROM stat_dirty ORDER BY rel")]
    row = con.execute("SELECT rels, sizes, mtimes FROM stat_snapshot").fetchone()
    if row is not None and not dirty:
        return
    try:
        if row is not None and len(dirty) * 32 < len(row[1]) // 8 + 256:  # a few paths: patch them
            packed = _patched(con, row, dirty)
        else:
            rows = con.execute("SELECT rel, size, mtime FROM sources ORDER BY rel").fetchall()
            packed = pack([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    except (OverflowError, TypeError):
        packed = None  # a stat that does not fit: no snapshot, the probe reads the rows
    con.execute("DELETE FROM stat_snapshot")
    if packed is not None:
        con.execute("INSERT INTO stat_snapshot VALUES (?, ?, ?)", packed)
    con.execute("DELETE FROM stat_dirty")


def _patched(con: sqlite3.Connection, row: tuple[bytes, bytes, bytes], dirty: list[str]) -> Packed:
    """The snapshot with each dirty path's row as it is now (changed, added or gone)."""
    rels = bytes(row[0]).decode("utf-8").split("\0") if row[0] else []
    sizes, mtimes = array("q", bytes(row[1])), array("q", bytes(row[2]))
    for rel in dirty:
        now = con.execute("SELECT size, mtime FROM sources WHERE rel=?", (rel,)).fetchone()
        i = bisect_left(rels, rel)
        present = i < len(rels) and rels[i] == rel
        if now is None:
            if present:
                del rels[i], sizes[i], mtimes[i]
        elif present:
            sizes[i], mtimes[i] = now
        else:
            rels.insert(i, rel)
            sizes.insert(i, now[0])
            mtimes.insert(i, now[1])
    return "\0".join(rels).encode("utf-8"), sizes.tobytes(), mtimes.tobytes()
