"""`kg update` when nothing changed, answered without the CLI framework and without the graph code.

A no-op update is what session starts, watchers and habits run most, and its full route (typer and
click, the adapters' parsers, the engine's lock and transaction) costs several times the start of
Python itself. `probe` makes the same decision as the engine's `scan` stage, read-only: the cache's file
stats against a fresh listing, the artifacts' stat, the outside inputs the passes recorded, and the
passes' mode checks (through a cache stand-in that refuses writes). When nothing needs doing,
`main` prints exactly what `kg update` prints. Anything it does not recognize (file arguments,
another option, a changed file, an artifact touched by hand, a cache of another version, a pass
that would write, a writer holding the scope) returns None and the full route decides again,
under the scope's lock.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_kg.core.scopes import Scope

if TYPE_CHECKING:
    from extract.vault_scan import Stats

_VALUE_OPTIONS = {"--vault": "vault", "--out": "out", "--scope": "scope", "-s": "scope"}


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain `kg update` (no paths); None for anything else."""
    found: dict[str, Any] = {"vault": None, "out": None, "scope": [], "json": False}
    items = iter(argv)
    for item in items:
        if item == "--json":
            found["json"] = True
            continue
        name, eq, value = item.partition("=")
        key = _VALUE_OPTIONS.get(name)
        if key is None or (eq and name == "-s"):
            return None
        if not eq:
            value = next(items, None)
            if value is None or value.startswith("-"):
                return None
        if key == "scope":
            found["scope"].append(value)
        elif found[key] is not None:
            return None
        else:
            found[key] = Path(value)
    return found


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


def _same_stats(con: sqlite3.Connection, fresh: Stats) -> bool:
    """Whether the cache holds exactly these paths with these sizes and mtimes: its packed
    snapshot against the listing packed the same way, or (no snapshot) its rows one by one."""
    from vault_kg.storage.stat_snapshot import pack, read

    snapshot = read(con)
    if snapshot is None:
        # SQLite orders TEXT by its UTF-8 bytes, which is Python's code point order
        return list(zip(*fresh)) == con.execute("SELECT rel, size, mtime FROM sources ORDER BY rel").fetchall()
    try:
        return pack(*fresh) == snapshot
    except OverflowError:
        return False


def _unchanged_sources(scope: Scope, con: sqlite3.Connection, cache: "ReadOnlyCache") -> list[Any] | None:
    """The skipped files when every source is the one the cache holds (same paths, sizes and
    mtimes, same skips) and no pass asks for more; None otherwise."""
    if not con.execute("SELECT EXISTS (SELECT 1 FROM sources)").fetchone()[0] or _mode_changed(scope, cache):
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
    from vault_kg.core import store
    from vault_kg.storage.cache_file import SCHEMA, connect
    from vault_kg.update.run_result import RunResult, fill_counts
    from vault_kg.update.noop_checks import artifacts_current, deps_changed

    started = time.perf_counter()
    layout = store.Layout(scope.out)
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
    except sqlite3.Error:
        return None
    try:
        con.execute("BEGIN")  # every read below sees the same commit
        if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
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
    except sqlite3.Error:
        return None
    finally:
        con.close()
    result.seconds = time.perf_counter() - started
    return result


def print_results(results: list[Any], verb: str) -> None:
    """The one-line summary per scope that `kg build` and `kg update` print (`updating.format_run`)."""
    from vault_kg.jobs.scope_update import format_run

    for r in results:
        sys.stdout.write(format_run(r, verb) + "\n")


def main(argv: list[str]) -> int | None:
    """Run `kg update ARGV` when it is a no-op for every scope it names; None to take the full route."""
    collecting = gc.isenabled()
    gc.disable()  # the probe makes a few lists of every source; the cyclic GC would walk them over and over
    try:
        return _answer(argv)
    finally:
        if collecting:
            gc.enable()


def _answer(argv: list[str]) -> int | None:
    options = parse(argv)
    if options is None:
        return None
    try:
        from vault_kg.core import config as cfgmod
        from vault_kg.core.scopes import resolve_scopes

        cfg = cfgmod.load_config()
        scopes = resolve_scopes(options["scope"] or None, options["vault"], options["out"], cfg)
        results = []
        for scope in scopes:
            result = probe(scope)
            if result is None:
                return None
            results.append(result)
        for scope, result in zip(scopes, results):
            if scope.kind == "vault" and cfg.ollama_enabled and result.pending:
                from vault_kg.jobs.model_worker import notice

                line = notice(scope.out, result.pending)
                if line:
                    sys.stderr.write(f"kg: {line}\n")
    except Exception:
        return None  # the full route reports errors the way every command does
    if options["json"]:
        sys.stdout.write(json.dumps([r.as_dict() for r in results], indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        print_results(results, "updated")
    return 0
