"""Whether an update of a scope would find nothing to do, answered read-only and without the graph code.

`probe` makes the same decision as the route's `scan` stage: the cache's file stats against a
fresh listing, the artifacts' stat, the outside inputs the passes recorded, and the passes' mode
checks (through a cache stand-in that refuses writes). Anything it does not recognize (a changed
file, an artifact touched by hand, a cache of another version, a pass that would write, a writer
holding the scope) returns None and the full route decides again, under the scope's lock. The
CLI's fast path of `kg update` (`vault_kg.cli.noop_update`) asks it before typer is imported.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_kg.core.scopes import Scope
from vault_kg.storage.cache_file import CacheError, ReadOnlyCache, begin_read, has_sources, schema_version

if TYPE_CHECKING:
    from extract.vault_scan import Stats

__all__ = ["probe"]


def _source_stats(kind: str, root: Path) -> tuple[Stats | None, list[Any]]:
    """Every source's path, size and mtime in path order (None when one could not be stat'ed),
    and the skipped files: what the engine's `scan` compares with the cache."""
    if kind == "vault":
        from extract.vault_scan import list_source_stats

        return list_source_stats(root)
    from extract.code_scan import list_sources as list_code

    listed, skipped = list_code(root)
    base = os.path.join(root, "")  # plain string joins: pathlib costs more than the stat
    rels, sizes, mtimes = sorted(listed), [], []
    for rel in rels:
        try:
            st = os.stat(base + rel)
        except OSError:
            return None, skipped
        sizes.append(st.st_size)
        mtimes.append(st.st_mtime_ns)
    return (rels, sizes, mtimes), skipped


def _same_stats(con: Any, fresh: Stats) -> bool:
    """Whether the cache holds exactly these paths with these sizes and mtimes: its packed
    snapshot against the listing packed the same way, or (no snapshot) its rows one by one."""
    from vault_kg.storage.cache_file import source_stats
    from vault_kg.storage.stat_snapshot import pack, read

    snapshot = read(con)
    if snapshot is None:
        return list(zip(*fresh)) == source_stats(con)
    try:
        return pack(*fresh) == snapshot
    except OverflowError:
        return False


def _unchanged_sources(scope: Scope, con: Any, cache: ReadOnlyCache) -> list[Any] | None:
    """The skipped files when every source is the one the cache holds (same paths, sizes and
    mtimes, same skips) and no pass asks for more; None otherwise."""
    if not has_sources(con) or _mode_changed(scope, cache):
        return None
    fresh, skipped = _source_stats(scope.kind, scope.root)
    if fresh is None or not _same_stats(con, fresh):
        return None
    if [[s.relpath, s.reason] for s in skipped] != (cache.get_meta("skipped", []) or []):
        return None
    return skipped


def _mode_changed(scope: Scope, cache: ReadOnlyCache) -> bool:
    """The passes' own `check_mode`, through a cache that refuses writes (a write means: not a no-op)."""
    from vault_kg.update.noop_checks import pass_modules

    return any(p.check_mode(scope, cache) or cache.wrote for p in pass_modules(scope.kind))


def _leftovers(layout: Any) -> bool:
    """Whether `engine._locked_run` would sweep a temp file (the names it sweeps, nothing else)."""
    from vault_kg.update.noop_checks import SWEPT

    return any(any(folder.glob(f".{name}.*.tmp")) for where, names in SWEPT for folder in (getattr(layout, where),) for name in names)


def _writer_active(layout: Any) -> bool:
    """Whether another process holds the scope's writer lock (`store.scope_lock`: an flock on
    `kg-out/.lock`), probed without waiting and without importing filelock."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(layout.lock, os.O_RDONLY)
    except OSError:
        return False  # no lock file: no writer ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _writable(layout: Any) -> bool:
    db = layout.cache_db
    return all(not path.exists() or os.access(path, os.W_OK) for path in (layout.out, layout.cache, db, Path(f"{db}-wal"), Path(f"{db}-shm")))


def probe(scope: Scope) -> Any | None:
    """The `RunResult` of an update of `scope` that finds nothing to do, or None when it would
    do something (or when that cannot be told without writing)."""
    from vault_kg.storage.layout import Layout
    from vault_kg.storage.cache_file import SCHEMA, connect
    from vault_kg.update.run_result import RunResult, fill_counts
    from vault_kg.update.noop_checks import artifacts_current, deps_changed

    started = time.perf_counter()
    layout = Layout(scope.out)
    db = layout.cache_db
    if not db.is_file() or not (layout.out / ".gitignore").exists():
        return None
    if _leftovers(layout):
        return None  # a killed writer's temp files: the full route sweeps them
    if _writer_active(layout):
        return None  # the full route waits its turn (KG_LOCK_TIMEOUT), as every writer does
    if not _writable(layout):
        return None  # the full route says which file is read-only; opening it here could leave
        # a read-only `-shm` behind (SQLite gives it the database file's mode)
    try:
        con = connect(db, readonly=True)
    except CacheError:
        return None
    try:
        begin_read(con)  # every read below sees the same commit
        if schema_version(con) != SCHEMA:
            return None
        cache = ReadOnlyCache(con)
        skipped = _unchanged_sources(scope, con, cache)
        if skipped is None:
            return None
        if not artifacts_current(layout, cache) or cache.wrote:
            return None
        if deps_changed(cache.get_meta("deps", {}) or {}) or cache.get_meta("retry", False):
            return None
        result = RunResult(scope.name, scope.kind)
        fill_counts(result, cache)
        result.skipped = skipped
    except CacheError:
        return None
    finally:
        con.close()
    result.seconds = time.perf_counter() - started
    return result
