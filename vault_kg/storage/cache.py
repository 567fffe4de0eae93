"""A scope's rebuildable cache: one SQLite file holding everything that makes updates cheap.

- `sources`: per file its size, mtime, content hash, extraction and resolution (the
  stat fast path and the per-file work that an update reuses);
- `docs`: the FTS5 full-text index (BM25) that seeds queries;
- `nodes` / `edges`: the assembled graph, indexed for queries that touch a few nodes;
- `meta`: god nodes, communities, counts, and the stat of the artifacts last written.

One transaction per run: a crash leaves the previous consistent state, and since the artifacts
are written before the commit, the next run simply redoes the work. Delete it any time.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sqlite3
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Callable, Iterable, Iterator

import orjson

from vault_kg.storage import stat_snapshot
from vault_kg.storage.cache_file import SCHEMA, connect
from vault_kg.core.errors import KgError
from vault_kg.core.model import HOT_META, Extraction

__all__ = [
    "COLD_FIELDS",
    "DDL",
    "DOC_ROWS",
    "Deferred",
    "EDGE_INDEXES",
    "EDGE_INDEX_DDL",
    "GraphReader",
    "Kept",
    "KnownSources",
    "NodeRows",
    "STAT_INDEX",
    "ScopeCache",
    "StoredExtraction",
    "StoredGroups",
    "decode_extraction",
    "encode_extraction",
    "meta_value",
    "nodes_of_kind",
    "nodes_of_kinds",
    "peek_meta",
    "problem",
    "ranking_snapshot",
    "read_extractions",
]

# Every file's stat without the extraction blobs beside it: the no-op probe and a full listing
# read all of them, and a scan of the table would page through every row's blobs to get there.
STAT_INDEX = "CREATE INDEX IF NOT EXISTS sources_stat ON sources(rel, size, mtime, hash)"

DDL = """
CREATE TABLE sources(rel TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, hash TEXT, ext BLOB, cold BLOB, res BLOB, res_edges BLOB);
{STAT_INDEX};
CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB);
CREATE VIRTUAL TABLE docs USING fts5(node_id UNINDEXED, owner UNINDEXED, label, aliases, summary, body,
    tokenize='porter unicode61 remove_diacritics 2');
CREATE TABLE nodes(id TEXT PRIMARY KEY, kind TEXT, label_lc TEXT, source TEXT, status TEXT,
    rank REAL, community INTEGER, data TEXT, h TEXT);
CREATE INDEX nodes_label ON nodes(label_lc);
CREATE INDEX nodes_source ON nodes(source);
CREATE TABLE edges(owner TEXT, source TEXT, target TEXT, relation TEXT, data TEXT);
{edge_indexes}
CREATE TABLE owner_hash(owner TEXT PRIMARY KEY, h TEXT);
CREATE TABLE groups(owner TEXT PRIMARY KEY, data BLOB);
CREATE TABLE blobs(key TEXT PRIMARY KEY, value BLOB);
"""
# Which full-text rows each source owns: `docs` can only be searched by its indexed columns, so
# deleting one note's rows by `owner` would read every row of the index (20 ms and more at
# 10,000 notes, on every one-note update); through this table it deletes them by rowid.
DOC_ROWS = """
CREATE TABLE IF NOT EXISTS doc_rows(id INTEGER PRIMARY KEY, owner TEXT);
CREATE INDEX IF NOT EXISTS doc_rows_owner ON doc_rows(owner);
"""
# Built after the rows when the edge table starts empty (a cold build): sorting once is about
# twice as fast as growing three indexes row by row.
EDGE_INDEXES = {"edges_source": "source", "edges_target": "target", "edges_owner": "owner"}
EDGE_INDEX_DDL = "\n".join(f"CREATE INDEX {name} ON edges({column});" for name, column in EDGE_INDEXES.items())
DDL = DDL.format(STAT_INDEX=STAT_INDEX, edge_indexes=EDGE_INDEX_DDL)


@dataclass
class Kept:
    """What the last run left for the next update to reuse (see `vault_kg.update.edge_groups`): each owner's
    finalized edge group as encoded before the post-assembly passes, the derived-edge digests,
    the owners those passes touched, and the rank's edge table."""

    groups: dict[str, bytes]
    derived: dict[str, str]
    touched: list[str]
    table: Any


class StoredGroups(Mapping[str, bytes]):
    """Each owner's stored edge group, read from the cache when asked for (`load_kept(lazy=True)`):
    a hook's link patch reads a few; the list of owners is read only if something iterates."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self._owners: list[str] | None = None

    def __getitem__(self, owner: str) -> bytes:
        row = self.con.execute("SELECT data FROM groups WHERE owner=?", (owner,)).fetchone()
        if row is None:
            raise KeyError(owner)
        return row[0]

    def __contains__(self, owner: object) -> bool:
        return self.con.execute("SELECT 1 FROM groups WHERE owner=?", (owner,)).fetchone() is not None

    @property
    def owners(self) -> list[str]:
        if self._owners is None:
            self._owners = [owner for (owner,) in self.con.execute("SELECT owner FROM groups")]
        return self._owners

    def __iter__(self) -> Iterator[str]:
        return iter(self.owners)

    def __len__(self) -> int:
        return len(self.owners)


class NodeRows(MutableMapping[str, dict[str, Any]]):
    """Every node's attributes as the last run wrote them (without rank and community), each row
    read and decoded when first asked for (`load_nodes(lazy=True)`): a hook's link patch reads a
    few rows and the tag nodes (`of_kind`), never the rest, and the ids only if it iterates."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.rows: dict[str, dict[str, Any]] = {}
        self.gone: set[str] = set()  # deleted here, still in the table
        self._stored: dict[str, bool] = {}  # id -> has a row in the table

    def _in_table(self, nid: object) -> bool:
        if not isinstance(nid, str):
            return False
        if nid not in self._stored:
            self._stored[nid] = self.con.execute("SELECT 1 FROM nodes WHERE id=?", (nid,)).fetchone() is not None
        return self._stored[nid]

    def __getitem__(self, nid: str) -> dict[str, Any]:
        if nid not in self.rows:
            row = None if nid in self.gone else self.con.execute("SELECT data FROM nodes WHERE id=?", (nid,)).fetchone()
            if row is None:
                raise KeyError(nid)
            self._stored[nid] = True
            self.rows[nid] = orjson.loads(row[0])
        return self.rows[nid]

    def __setitem__(self, nid: str, attrs: dict[str, Any]) -> None:
        self.gone.discard(nid)
        self.rows[nid] = attrs

    def __delitem__(self, nid: str) -> None:
        if nid not in self:
            raise KeyError(nid)
        self.rows.pop(nid, None)
        if self._in_table(nid):
            self.gone.add(nid)

    def __contains__(self, nid: object) -> bool:
        return nid in self.rows or (nid not in self.gone and self._in_table(nid))

    def __iter__(self) -> Iterator[str]:
        stored = [nid for (nid,) in self.con.execute("SELECT id FROM nodes") if nid not in self.gone]
        return iter(stored + [nid for nid in self.rows if not self._in_table(nid)])

    def __len__(self) -> int:
        """Asked of the table as it is now (the caller may have written these rows since)."""
        row = lambda nid: self.con.execute("SELECT 1 FROM nodes WHERE id=?", (nid,)).fetchone() is not None  # noqa: E731
        stored = self.con.execute("SELECT count(*) FROM nodes").fetchone()[0]
        return stored - sum(1 for nid in self.gone if row(nid)) + sum(1 for nid in self.rows if not row(nid))

    def of_kind(self, kind: str) -> dict[str, dict[str, Any]]:
        found = {nid: orjson.loads(data) for nid, data in self.con.execute("SELECT id, data FROM nodes WHERE kind=?", (kind,)) if nid not in self.gone}
        for nid, attrs in found.items():
            self._stored[nid] = True
            self.rows.setdefault(nid, attrs)
        return {nid: attrs for nid, attrs in {**found, **self.rows}.items() if nid in self.rows and self.rows[nid].get("kind") == kind}


def nodes_of_kind(nodes: Mapping[str, dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    """The nodes of one kind, from a `NodeRows` without decoding the others."""
    if isinstance(nodes, NodeRows):
        return nodes.of_kind(kind)
    return {nid: attrs for nid, attrs in nodes.items() if attrs.get("kind") == kind}


class Deferred(Sequence):
    """A list built on first read from what the cache stored (`stored`, kept for re-encoding).

    An update re-derives a few sources; building every source's refs and decoding every
    source's resolved edges on each load would cost more than the rest of loading.
    """

    __slots__ = ("stored", "_build", "_items")

    def __init__(self, stored: Any, build: Callable[[Any], list[Any]]) -> None:
        self.stored = stored
        self._build = build
        self._items: list[Any] | None = None

    def _load(self) -> list[Any]:
        if self._items is None:
            self._items = self._build(self.stored)
        return self._items

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _fetched_edges(fetch: Callable[[], bytes]) -> list[Any]:
    return marshal.loads(fetch())


def _refs(raw: list[tuple[Any, ...]]) -> list[Any]:
    from vault_kg.core.model import Ref

    return [Ref(*r) for r in raw]


class StoredExtraction(Extraction):
    """An extraction loaded from the cache: `edges`, `refs` and the cold part of `meta` stay
    encoded until first read. Decoding them is most of a load's cost, and an update reads them
    for the few sources it re-derives; `nodes` and the hot meta are what every run needs."""

    def __init__(self, source: str, digest: str, nodes: dict[str, Any], quarantine: str | None, warnings: list[str], hot: dict[str, Any], cold: bytes | Callable[[], bytes]) -> None:
        self.source, self.hash, self.nodes = source, digest, nodes
        self.text, self.quarantine, self.warnings = "", quarantine, warnings
        self._hot, self._cold_source = hot, cold

    @property
    def _cold(self) -> bytes:
        """The encoded cold part (fetched from the cache on first need when loaded without it)."""
        if callable(self._cold_source):
            self._cold_source = self._cold_source()
        return self._cold_source

    def hot(self, key: str, default: Any = None) -> Any:
        if "meta" in self.__dict__:
            return self.meta.get(key, default)
        return self._hot.get(key, default)

    def __getattr__(self, name: str) -> Any:
        if name not in COLD_FIELDS:
            raise AttributeError(name)
        refs, cold, edges = marshal.loads(self._cold)
        self.__dict__.setdefault("refs", Deferred(refs, _refs))
        self.__dict__.setdefault("meta", {**self._hot, **cold})
        self.__dict__.setdefault("edges", edges)
        return self.__dict__[name]


COLD_FIELDS = ("edges", "refs", "meta")


def encode_extraction(ext: Any) -> tuple[bytes, bytes]:
    """An extraction as two marshal blobs (builtins only: faster to load than pickle), the part
    every load decodes and the part decoded on demand (see `StoredExtraction`); text left out."""
    if isinstance(ext, StoredExtraction) and not any(f in ext.__dict__ for f in COLD_FIELDS):
        cold = ext._cold
        hot = ext._hot
    else:
        if isinstance(ext.refs, Deferred):
            refs = ext.refs.stored
        else:
            refs = [(r.source, r.target, r.relation, r.line, r.attrs) for r in ext.refs]
        hot = {k: v for k, v in ext.meta.items() if k in HOT_META}
        cold = marshal.dumps((refs, {k: v for k, v in ext.meta.items() if k not in HOT_META}, ext.edges))
    return marshal.dumps((ext.source, ext.hash, ext.nodes, ext.quarantine, ext.warnings, hot)), cold


def decode_extraction(core: bytes, cold: bytes | Callable[[], bytes]) -> StoredExtraction:
    return StoredExtraction(*marshal.loads(core), cold)


_NOT_CORRUPTION = ("readonly", "read-only", "unable to open", "locked", "disk i/o", "permission", "access", "disk is full")


def _not_corruption(exc: sqlite3.OperationalError) -> bool:
    """True for failures of the file system or of another process, which recreating cannot fix."""
    message = str(exc).lower()
    return any(word in message for word in _NOT_CORRUPTION)


class KnownSources:
    """Each cached file's (size, mtime, hash): read row by row for the few files an update names,
    all at once only when a caller iterates (a folder, a full listing)."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self._all: dict[str, tuple[int, int, str]] | None = None

    def all(self) -> dict[str, tuple[int, int, str]]:
        if self._all is None:
            self._all = {rel: (size, mtime, digest) for rel, size, mtime, digest in self.con.execute("SELECT rel, size, mtime, hash FROM sources")}
        return self._all

    def get(self, rel: str, default: Any = None) -> Any:
        if self._all is not None:
            return self._all.get(rel, default)
        row = self.con.execute("SELECT size, mtime, hash FROM sources WHERE rel=?", (rel,)).fetchone()
        return tuple(row) if row else default

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self.get(rel) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())

    def __bool__(self) -> bool:
        if self._all is not None:
            return bool(self._all)
        return self.con.execute("SELECT EXISTS(SELECT 1 FROM sources)").fetchone()[0] == 1


def peek_meta(db: Path, key: str, timeout: float = 30) -> Any | None:
    """One value of a cache's meta table, read-only (no writer lock, no schema check): for status
    and brief readers that must not open or recreate the cache. None when absent or unreadable."""
    if not db.is_file():
        return None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout)
        try:
            row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return orjson.loads(row[0]) if row else None


def problem(db: Path, timeout: float = 30) -> str | None:
    """Why a cache cannot serve an update of one file (None: it can), read-only.

    An update of one file on a cache that must be recreated would build a graph of that file
    alone, so callers rebuild in full instead. A busy or locked cache is not a problem: the
    engine waits for it.
    """
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout)
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            graph = con.execute("SELECT 1 FROM meta WHERE key='graph'").fetchone() if version == SCHEMA else True
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        return f"{exc}" if "no such table" in str(exc) else None
    except sqlite3.DatabaseError as exc:
        return str(exc)
    if version != SCHEMA:
        return f"cache format {version}, expected {SCHEMA}"
    return None if graph else "no graph recorded"


def nodes_of_kinds(db: Path, kinds: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The node rows of these kinds in the last build, read-only (empty when there is none or it is unreadable)."""
    if not db.exists():
        return {}
    try:
        con = connect(db, readonly=True)
        try:
            marks = ",".join("?" * len(kinds))
            rows = con.execute(f"SELECT id, data FROM nodes WHERE kind IN ({marks})", kinds).fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return {}
    return {nid: orjson.loads(data) for nid, data in rows}


def read_extractions(db: Path) -> dict[str, tuple[int, int, Extraction]]:
    """Every cached extraction, read-only, keyed by source with the stat it was made at (empty when unreadable)."""
    if not db.exists():
        return {}
    try:
        con = connect(db, readonly=True)
        try:
            return {rel: (size, mtime, decode_extraction(core, cold)) for rel, size, mtime, core, cold in con.execute("SELECT rel, size, mtime, ext, cold FROM sources")}
        finally:
            con.close()
    except (sqlite3.DatabaseError, ValueError, EOFError, TypeError):
        return {}


def meta_value(db: Path, key: str) -> Any:
    """One value of a cache's meta table, read-only, on a file known to be a cache (errors raise; see `peek_meta`)."""
    con = connect(db, readonly=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    finally:
        con.close()
    return None if row is None else orjson.loads(row[0])


def ranking_snapshot(db: Path, blob: str, wanted: Callable[[Any], bool]) -> tuple[Any, bytes, dict[str, dict[str, Any]]] | None:
    """(the ranking blob, decoded; the edge table, encoded; every node row) of one commit, read-only;
    None when the cache is of another version, holds no ranking yet, or `wanted(ranking)` says no."""
    con = connect(db, readonly=True)
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
            return None
        con.execute("BEGIN")  # one read transaction: the blobs and the node rows of one commit
        blobs = dict(con.execute("SELECT key, value FROM blobs WHERE key IN (?, 'table')", (blob,)))
        if blob not in blobs or "table" not in blobs:
            return None
        last = marshal.loads(blobs[blob])
        if not wanted(last):
            return None
        nodes = {nid: orjson.loads(data) for nid, data in con.execute("SELECT id, data FROM nodes")}
        con.execute("COMMIT")
    finally:
        con.close()
    return last, blobs["table"], nodes


class ScopeCache:
    """Read/write access to a scope's cache file; `open()` recreates it when unusable."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con: sqlite3.Connection
        self.recreated = False
        self.fresh = False  # created by this process, in rollback-journal mode until its first commit
        self.open()

    def open(self) -> None:
        """Open the cache; a corrupt or foreign file is recreated, but a cache that cannot be
        written (read-only file or folder, locked, I/O error) is an error: it is never deleted."""
        self._refuse_unwritable()
        try:
            self.con = connect(self.path)
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            if version == SCHEMA:
                self.con.execute("SELECT count(*) FROM meta").fetchone()
                self.con.execute(STAT_INDEX)  # a cache written before the index existed gets it once
                self.con.executescript(stat_snapshot.DDL)  # and the packed stats, the same way
                self._add_doc_rows()
                return
        except sqlite3.OperationalError as exc:
            if _not_corruption(exc):
                raise KgError(f"{self.path}: cannot use the cache ({exc}); check its permissions and free space, or pass --out") from exc
            version = -1
        except sqlite3.DatabaseError:
            version = -1
        self._recreate(existed=version not in (0,))

    def _add_doc_rows(self) -> None:
        """A cache written before `doc_rows` existed gets it, filled from the index, in one transaction."""
        if self.con.execute("SELECT 1 FROM sqlite_master WHERE name='doc_rows'").fetchone():
            return
        self.con.execute("BEGIN IMMEDIATE")
        try:
            for statement in DOC_ROWS.strip().split(";"):
                if statement.strip():
                    self.con.execute(statement)
            self.con.execute("INSERT INTO doc_rows(id, owner) SELECT rowid, owner FROM docs WHERE NOT EXISTS (SELECT 1 FROM doc_rows)")
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def _refuse_unwritable(self) -> None:
        for path in (self.path.parent, self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            if path.exists() and not os.access(path, os.W_OK):
                raise KgError(f"{path}: the cache is read-only; make it writable (chmod u+w '{path}') or pass --out (it was left as it is)")

    def _recreate(self, existed: bool) -> None:
        try:
            self.con.close()
        except Exception:
            pass
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        # A new cache fills in one transaction (a cold build, ~200 MB at 10,000 notes): through
        # a rollback journal every page is written once, where WAL writes it twice (log, then
        # checkpoint). Killed mid-way, the journal rolls the file back to empty all the same.
        # The first commit turns WAL on, for readers running beside later updates.
        self.con = connect(self.path, journal="DELETE")
        self.con.executescript(DDL + DOC_ROWS + stat_snapshot.DDL + f"PRAGMA user_version={SCHEMA};")
        self.recreated = existed
        self.fresh = True

    def close(self) -> None:
        self.con.close()

    def begin(self) -> None:
        self.con.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        stat_snapshot.refresh(self.con)
        self.con.execute("COMMIT")
        if self.fresh:
            self.fresh = False
            try:
                self.con.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass  # a reader holds the file; the next `connect` turns WAL on

    def rollback(self) -> None:
        if self.con.in_transaction:
            self.con.execute("ROLLBACK")

    # sources ---------------------------------------------------------------------------------
    def stats(self) -> "KnownSources":
        return KnownSources(self.con)

    def load_all(self) -> tuple[dict[str, Any], dict[str, Any]]:
        extractions: dict[str, Any] = {}
        resolutions: dict[str, Any] = {}
        for rel, ext, res in self.con.execute("SELECT rel, ext, res FROM sources"):
            extractions[rel] = decode_extraction(ext, partial(self._column, "cold", rel))
            if res is not None:
                resolutions[rel] = {**marshal.loads(res), "edges": Deferred(partial(self._column, "res_edges", rel), _fetched_edges)}
        return extractions, resolutions

    def load_extraction(self, rel: str) -> Any | None:
        """One source's cached extraction, or None: what a one-note patch compares the new one with."""
        row = self.con.execute("SELECT ext, cold FROM sources WHERE rel=?", (rel,)).fetchone()
        return None if row is None else decode_extraction(row[0], row[1])

    def _column(self, column: str, rel: str) -> bytes:
        """One file's cold column, read when an update re-derives that file (during the run)."""
        return self.con.execute(f"SELECT {column} FROM sources WHERE rel=?", (rel,)).fetchone()[0]

    def put_source(self, rel: str, size: int, mtime: int, digest: str, extraction: Any) -> None:
        core, cold = encode_extraction(extraction)
        self.con.execute(
            "INSERT INTO sources(rel, size, mtime, hash, ext, cold, res, res_edges) VALUES (?,?,?,?,?,?,NULL,NULL) "
            "ON CONFLICT(rel) DO UPDATE SET size=excluded.size, mtime=excluded.mtime, hash=excluded.hash, ext=excluded.ext, cold=excluded.cold",
            (rel, size, mtime, digest, core, cold),
        )

    def put_extraction(self, rel: str, extraction: Any) -> None:
        """Replace a source's cached extraction, keeping its stat (for passes that enrich it)."""
        core, cold = encode_extraction(extraction)
        self.con.execute("UPDATE sources SET ext=?, cold=? WHERE rel=?", (core, cold, rel))

    def touch_source(self, rel: str, size: int, mtime: int) -> None:
        self.con.execute("UPDATE sources SET size=?, mtime=? WHERE rel=?", (size, mtime, rel))

    def put_resolutions(self, items: Iterable[tuple[str, Any]]) -> None:
        """Per-source resolutions; their edges go in a column of their own, decoded on demand."""
        rows = []
        for rel, value in items:
            edges = value["edges"]
            blob = marshal.dumps(list(edges))
            rows.append((marshal.dumps({k: v for k, v in value.items() if k != "edges"}), blob, rel))
        self.con.executemany("UPDATE sources SET res=?, res_edges=? WHERE rel=?", rows)

    def delete_sources(self, rels: Iterable[str]) -> None:
        self.con.executemany("DELETE FROM sources WHERE rel=?", [(r,) for r in rels])

    # meta ------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return orjson.loads(row[0]) if row else default

    def set_meta(self, key: str, value: Any) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, orjson.dumps(value, option=orjson.OPT_SORT_KEYS)))

    # full-text docs --------------------------------------------------------------------------
    def replace_docs(self, owners: Iterable[str], docs: Iterable[tuple[str, str, str, str, str, str]], clear: bool = False) -> None:
        """The full-text rows of `owners` replaced by `docs` (node id, owner, label, aliases,
        summary, body); `clear`: every row. Rows are found through `doc_rows`."""
        if clear:
            self.con.execute("DELETE FROM docs")
            self.con.execute("DELETE FROM doc_rows")
        else:
            marks = [(o,) for o in owners]
            gone = [row for (owner,) in marks for row in self.con.execute("SELECT id FROM doc_rows WHERE owner=?", (owner,))]
            self.con.executemany("DELETE FROM docs WHERE rowid=?", gone)
            self.con.executemany("DELETE FROM doc_rows WHERE owner=?", marks)
        start = self.con.execute("SELECT max(id) FROM doc_rows").fetchone()[0] or 0
        owned: list[tuple[int, str]] = []

        def numbered() -> Iterator[tuple[Any, ...]]:
            for rowid, doc in enumerate(docs, start + 1):
                owned.append((rowid, doc[1]))
                yield (rowid, *doc)

        self.con.executemany("INSERT INTO docs(rowid, node_id, owner, label, aliases, summary, body) VALUES (?,?,?,?,?,?,?)", numbered())
        self.con.executemany("INSERT INTO doc_rows(id, owner) VALUES (?,?)", owned)

    # kept groups (incremental assembly) -------------------------------------------------------
    def load_kept(self, lazy: bool = False) -> Kept | None:
        """The last run's groups, digests and edge table; None when any part is missing.

        `lazy` (a hook's link patch, which reads a few groups and never ranks): the groups are
        read one by one when asked for, and the table is not read (None). The table comes encoded:
        the update route decodes it (`vault_kg.update.centrality.with_table`)."""
        blobs = dict(self.con.execute("SELECT key, length(value) FROM blobs WHERE key IN ('table', 'kept')"))
        if "table" not in blobs or "kept" not in blobs:
            return None
        derived, touched = marshal.loads(self.con.execute("SELECT value FROM blobs WHERE key='kept'").fetchone()[0])
        if lazy:
            return Kept(StoredGroups(self.con), derived, touched, None)
        table = self.con.execute("SELECT value FROM blobs WHERE key='table'").fetchone()[0]
        return Kept(dict(self.con.execute("SELECT owner, data FROM groups")), derived, touched, table)

    def put_groups(self, groups: dict[str, bytes], clear: bool, gone: Iterable[str]) -> None:
        if clear:
            self.con.execute("DELETE FROM groups")
        self.con.executemany("DELETE FROM groups WHERE owner=?", [(o,) for o in gone])
        self.con.executemany("INSERT OR REPLACE INTO groups VALUES (?,?)", groups.items())

    def put_kept_state(self, derived: dict[str, str], touched: list[str]) -> None:
        self.con.execute("INSERT OR REPLACE INTO blobs VALUES ('kept', ?)", (marshal.dumps((derived, touched)),))

    def get_blob(self, key: str) -> Any:
        row = self.con.execute("SELECT value FROM blobs WHERE key=?", (key,)).fetchone()
        return marshal.loads(row[0]) if row else None

    def put_blob(self, key: str, value: Any) -> None:
        self.con.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, marshal.dumps(value)))

    def raw_blob(self, key: str) -> bytes | None:
        """A blob as stored (the edge table is stored as its own bytes, not marshalled)."""
        row = self.con.execute("SELECT value FROM blobs WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def groups_of(self, owners: Iterable[str]) -> dict[str, bytes]:
        """These owners' stored edge groups (an owner without one is left out)."""
        return {owner: data for owner in owners for (data,) in self.con.execute("SELECT data FROM groups WHERE owner=?", (owner,))}

    def drop_blob(self, key: str) -> None:
        self.con.execute("DELETE FROM blobs WHERE key=?", (key,))

    def put_table(self, table: Any) -> None:
        self.con.execute("INSERT OR REPLACE INTO blobs VALUES ('table', ?)", (table.to_bytes(),))

    # assembled graph -------------------------------------------------------------------------
    def sync_graph(
        self, nodes: dict[str, dict[str, Any]], groups: dict[str, list[dict[str, Any]]], encoded: dict[str, bytes], candidates: set[str] | None = None, node_candidates: set[str] | None = None
    ) -> None:
        """Bring the query tables to this graph, touching only rows whose content changed.

        `encoded` holds every owner's edge group serialized (for graph.json); its hash tells
        which owners changed. `candidates` limits that check to owners that may have changed
        (None: all); `groups` must hold the edges of every candidate still in `encoded`.
        `node_candidates` does the same for node rows (a one-note link patch knows which).
        Call it before ranking: node rows hold everything but rank and community, which
        `sync_ranks` writes. Rows stream into `executemany` from generators, so a cold build
        never holds every row's JSON text at once.
        """
        if node_candidates is None:
            old_nodes = dict(self.con.execute("SELECT id, h FROM nodes"))
        else:
            old_nodes = {nid: h for nid in sorted(node_candidates) for (h,) in self.con.execute("SELECT h FROM nodes WHERE id=?", (nid,))}
        self.con.executemany("DELETE FROM nodes WHERE id=?", [(n,) for n in old_nodes if n not in nodes])

        def node_rows() -> Iterator[tuple[Any, ...]]:
            for nid, attrs in nodes.items() if node_candidates is None else ((n, nodes[n]) for n in sorted(node_candidates) if n in nodes):
                data, digest = _node_data(attrs)
                if old_nodes.get(nid) != digest:
                    yield (nid, attrs.get("kind"), str(attrs.get("label", "")).lower(), attrs.get("source"), attrs.get("status"), None, None, data.decode(), digest)

        self.con.executemany("INSERT OR REPLACE INTO nodes VALUES (?,?,?,?,?,?,?,?,?)", node_rows())
        if candidates is None:
            old_owners = dict(self.con.execute("SELECT owner, h FROM owner_hash"))
            candidates = set(old_owners) | set(encoded)
        else:  # a few owners: their hashes only
            old_owners = {owner: h for owner in sorted(candidates) for (h,) in self.con.execute("SELECT h FROM owner_hash WHERE owner=?", (owner,))}
        hashes = []
        gone = []
        for owner in sorted(candidates):
            blob = encoded.get(owner)
            if blob is None:
                if owner in old_owners:
                    gone.append(owner)
                continue
            digest = hashlib.blake2b(blob, digest_size=12).hexdigest()
            if old_owners.get(owner) != digest:
                hashes.append((owner, digest))
        self.con.executemany("DELETE FROM edges WHERE owner=?", [(o,) for o, _ in hashes] + [(o,) for o in gone])
        self.con.executemany("DELETE FROM owner_hash WHERE owner=?", [(o,) for o in gone])
        bulk = not old_owners and self.con.execute("SELECT 1 FROM edges LIMIT 1").fetchone() is None
        if bulk:  # inside the run's transaction: a killed build rolls the drop back too
            for name in EDGE_INDEXES:
                self.con.execute(f"DROP INDEX {name}")
        self.con.executemany(
            "INSERT INTO edges VALUES (?,?,?,?,?)",
            ((owner, e["source"], e["target"], e["relation"], orjson.dumps(e, option=orjson.OPT_SORT_KEYS).decode()) for owner, _ in hashes for e in groups[owner]),
        )
        if bulk:
            for statement in EDGE_INDEX_DDL.splitlines():
                self.con.execute(statement)
        self.con.executemany("INSERT OR REPLACE INTO owner_hash VALUES (?,?)", hashes)

    def owners_linking_to(self, nid: str, prefix: str) -> set[str]:
        """Owners of an edge to `nid` or to any node whose id starts with `prefix` (its sections)."""
        rows = self.con.execute("SELECT DISTINCT owner FROM edges WHERE target=? OR (target >= ? AND target < ?)", (nid, prefix, prefix + "\U0010ffff"))
        return {owner for (owner,) in rows}

    def node_row(self, nid: str) -> tuple[dict[str, Any], float, int | None] | None:
        """One node's row: its attributes without rank and community, its rank, its community."""
        row = self.con.execute("SELECT data, rank, community FROM nodes WHERE id=?", (nid,)).fetchone()
        return None if row is None else (orjson.loads(row[0]), row[1], row[2])

    def load_nodes(self, lazy: bool = False) -> dict[str, dict[str, Any]] | NodeRows:
        """Every node's attributes as the last run left them (without rank and community): the
        assembled graph a one-note link patch starts from (`vault_kg.update.link_patch`); `lazy`: rows
        decoded when read (`NodeRows`)."""
        if lazy:
            return NodeRows(self.con)
        loads = orjson.loads
        return {nid: loads(data) for nid, data in self.con.execute("SELECT id, data FROM nodes")}

    def load_resolution(self, rel: str) -> dict[str, Any] | None:
        """One source's cached resolution (its edges decoded), or None."""
        row = self.con.execute("SELECT res, res_edges FROM sources WHERE rel=?", (rel,)).fetchone()
        if row is None or row[0] is None:
            return None
        return {**marshal.loads(row[0]), "edges": marshal.loads(row[1])}

    def put_node_attrs(self, nid: str, attrs: dict[str, Any]) -> None:
        """Replace one node's attributes (not its kind, label, source or status columns) as
        `sync_graph` writes them."""
        data, digest = _node_data(attrs)
        self.con.execute("UPDATE nodes SET data=?, h=? WHERE id=?", (data.decode(), digest, nid))

    def ranks_of(self, ids: list[str]) -> dict[str, tuple[float, int | None]]:
        """Rank and community of each of these nodes that has a row."""
        found: dict[str, tuple[float, int | None]] = {}
        for nid in ids:
            for rank, community in self.con.execute("SELECT rank, community FROM nodes WHERE id=?", (nid,)):
                found[nid] = (rank, community)
        return found

    def put_ranks(self, ranks: dict[str, tuple[float, int | None]]) -> None:
        """Set these nodes' rank and community columns (rows `sync_graph` just replaced)."""
        self.con.executemany("UPDATE nodes SET rank=?, community=? WHERE id=?", [(*value, nid) for nid, value in ranks.items()])

    def sync_ranks(self, nodes: dict[str, dict[str, Any]]) -> None:
        """Rank and community columns, once known (after `sync_graph`): only the rows that moved."""
        old = {nid: (rank, community) for nid, rank, community in self.con.execute("SELECT id, rank, community FROM nodes")}
        rows = []
        for nid, attrs in nodes.items():
            now = (attrs.get("rank", 0.0), attrs.get("community"))
            if old.get(nid) != now:
                rows.append((*now, nid))
        self.con.executemany("UPDATE nodes SET rank=?, community=? WHERE id=?", rows)

    # what an incremental settle reads instead of every node row (`vault_kg.update.owed_settle`) ---
    def node_rows(self, ids: Iterable[str]) -> dict[str, tuple[dict[str, Any], float | None, int | None]]:
        """These nodes' rows that exist: attributes (without rank and community), rank, community."""
        found: dict[str, tuple[dict[str, Any], float | None, int | None]] = {}
        wanted = sorted(set(ids))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.con.execute(f"SELECT id, data, rank, community FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            found.update((nid, (orjson.loads(data), rank, community)) for nid, data, rank, community in rows)
        return found

    def node_columns(self, ids: Iterable[str]) -> dict[str, tuple[str | None, str | None, str | None]]:
        """Kind, status and source of these nodes that exist (what ranking reads of a node), rows undecoded."""
        found: dict[str, tuple[str | None, str | None, str | None]] = {}
        wanted = sorted(set(ids))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.con.execute(f"SELECT id, kind, status, source FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            found.update((nid, (kind, status, source)) for nid, kind, status, source in rows)
        return found

    def node_tallies(self) -> tuple[dict[str, int], dict[str, int]]:
        """How many nodes of each kind and of each status (graph.json's counts), counted by SQLite."""
        kinds = {str(kind): n for kind, n in self.con.execute("SELECT kind, count(*) FROM nodes GROUP BY kind")}
        statuses = {status: n for status, n in self.con.execute("SELECT status, count(*) FROM nodes GROUP BY status") if status is not None}
        return kinds, statuses

    def report_rows(self, limit: int) -> dict[str, Any]:
        """What GRAPH_REPORT.md and brief.json list besides god nodes and communities, by SQL: the
        `limit` dangling targets with most referrers (then by id), the quarantined nodes, the first
        `limit` stale ones by id, the first `limit` notes whose frontmatter was ignored (and their count), and the convention notes' rows (the caller filters)."""
        rows = lambda sql, *args: [(nid, orjson.loads(data)) for nid, data in self.con.execute(sql, args)]  # noqa: E731
        return {
            "unresolved": rows("SELECT id, data FROM nodes WHERE kind='unresolved' ORDER BY coalesce(json_array_length(data, '$.referrers'), 0) DESC, id LIMIT ?", limit),
            "quarantined": rows("SELECT id, data FROM nodes WHERE status='quarantined' ORDER BY id"),
            "stale": rows("SELECT id, data FROM nodes WHERE status='stale' ORDER BY id LIMIT ?", limit),
            "ignored": rows("SELECT id, data FROM nodes WHERE json_extract(data, '$.frontmatter_error') IS NOT NULL ORDER BY id LIMIT ?", limit),
            "ignored_count": self.con.execute("SELECT count(*) FROM nodes WHERE json_extract(data, '$.frontmatter_error') IS NOT NULL").fetchone()[0],
            "conventions": rows("SELECT id, data FROM nodes WHERE kind='note' AND instr(data, '\"convention/') > 0 ORDER BY id"),
        }


def _node_data(attrs: dict[str, Any]) -> tuple[bytes, str]:
    """A node row's JSON and the digest that tells whether the row must be written again."""
    data = orjson.dumps(attrs, option=orjson.OPT_SORT_KEYS)
    return data, hashlib.blake2b(data, digest_size=12).hexdigest()


class GraphReader:
    """Read-only queries over the assembled graph in the cache (used by `kg query` and friends)."""

    def __init__(self, path: Path) -> None:
        self.con = connect(path, readonly=True)

    def node(self, nid: str) -> dict[str, Any] | None:
        row = self.con.execute("SELECT data, rank, community FROM nodes WHERE id=?", (nid,)).fetchone()
        if row is None:
            return None
        node = orjson.loads(row[0])
        node["id"] = nid
        node["rank"] = row[1]
        if row[2] is not None:
            node["community"] = row[2]
        return node

    def nodes_many(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Several node rows in one query (the query expansion's batch read)."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for nid, data, rank, community in self.con.execute(f"SELECT id, data, rank, community FROM nodes WHERE id IN ({marks})", chunk):
                node = orjson.loads(data)
                node["id"] = nid
                node["rank"] = rank
                if community is not None:
                    node["community"] = community
                found[nid] = node
        return found

    def out_edges(self, nid: str) -> list[dict[str, Any]]:
        return [orjson.loads(r[0]) for r in self.con.execute("SELECT data FROM edges WHERE source=?", (nid,))]

    def in_edges(self, nid: str) -> list[dict[str, Any]]:
        return [orjson.loads(r[0]) for r in self.con.execute("SELECT data FROM edges WHERE target=?", (nid,))]

    def walk_edges(self, nid: str, skip: tuple[str, ...]) -> list[str]:
        """The JSON of the edges out of `nid`, then into it, in the order `out_edges`/`in_edges`
        give them, without the relations in `skip` (a query's walk never follows them)."""
        marks = ",".join("?" * len(skip))
        return [
            r[0]
            for sql in (f"SELECT data FROM edges WHERE source=? AND relation NOT IN ({marks})", f"SELECT data FROM edges WHERE target=? AND relation NOT IN ({marks})")
            for r in self.con.execute(sql, (nid, *skip))
        ]

    def mentioning(self, text: str) -> Iterator[tuple[str, str]]:
        """(id, row JSON) of every node whose row holds `text` anywhere (a scan: the caller checks where)."""
        yield from self.con.execute("SELECT id, data FROM nodes WHERE data LIKE ?", (f"%{text}%",))

    def ranked(self, limit: int) -> list[str]:
        """The ids of the `limit` best-ranked nodes with a rank, best first, ties by id."""
        return [nid for (nid,) in self.con.execute("SELECT id FROM nodes WHERE rank > 0 ORDER BY rank DESC, id LIMIT ?", (limit,))]

    def note_rows(self) -> Iterator[tuple[str, str]]:
        """(id, row JSON) of every note node, by id."""
        yield from self.con.execute("SELECT id, data FROM nodes WHERE kind='note' ORDER BY id")

    def source_hashes(self) -> dict[str, str]:
        """Every source's content hash, by path (what the passage job compares with its record)."""
        return dict(self.con.execute("SELECT rel, hash FROM sources"))

    def nodes_of_source(self, rel: str, kinds: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
        """(id, row) of the nodes of these kinds a source owns, by id."""
        marks = ",".join("?" * len(kinds))
        rows = self.con.execute(f"SELECT id, data FROM nodes WHERE source=? AND kind IN ({marks}) ORDER BY id", (rel, *kinds))
        return [(nid, orjson.loads(data)) for nid, data in rows]

    def by_label(self, label_lc: str) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT id FROM nodes WHERE label_lc=?", (label_lc,))]

    def iter_nodes(self) -> Iterator[tuple[str, str, str, str, str]]:
        yield from self.con.execute("SELECT id, kind, label_lc, source, status FROM nodes")

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return orjson.loads(row[0]) if row else default

    def search(self, match: str, weights: tuple[float, ...], limit: int) -> list[tuple[str, float]]:
        """BM25 best first, ties by node id. Ranking through FTS5's `rank` column lets it sort
        inside the index scan (about twice as fast as ordering on a bm25() expression); a few
        extra rows make the tie-break at the cut independent of that internal order."""
        sql = "SELECT node_id, -rank FROM docs WHERE docs MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?"
        rank = f"bm25(0, 0, {', '.join(str(w) for w in weights)})"
        rows = [(r[0], float(r[1])) for r in self.con.execute(sql, (match, rank, limit + 16))]
        rows.sort(key=lambda r: (-r[1], r[0]))
        return rows[:limit]

    def close(self) -> None:
        self.con.close()
