"""Leiden in the background, after a hook left a scope's communities describing an earlier graph.

The hook's update (`RunSettings(defer=WHOLE_GRAPH)`) either writes graph.json with fresh
ranks and provisional communities, or (a one-note link patch) leaves ranks and artifacts owed
(`vault_kg.update.deferred_work`), and calls `launch`. This job first ranks what is owed, under the scope's
lock, through an update that works from the cache alone (`owed.finish_owed`; the artifacts wait for
the clustering, so they are written once). It then clusters a
snapshot of the committed graph (read-only, without the scope's lock, so the agent's next edit
never waits for Leiden), installs the answer in the cache if the graph is still the one it
clustered, and then runs a short update (`owed.finish_owed` again) that writes the artifacts with it. If another edit
landed meanwhile, it clusters again (a few rounds at most; the next update finishes the job
otherwise). At most one job runs and one waits per scope, like the graph.html renders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from vault_kg.core.scopes import Scope
from vault_kg.jobs.launcher import CHECKOUT, lock_held, one_runs_one_waits, reported, spawn
from vault_kg.storage.layout import Layout

__all__ = ["QUEUED_GRACE_S", "QUIET_MAX_S", "QUIET_S", "ROUNDS", "after_run", "install", "launch", "main", "owed", "quiet", "running", "settle", "snapshot"]

ROUNDS = 3
QUEUED_GRACE_S = 60.0  # a job that has not taken its lock this long after launch never will
QUIET_S = float(os.environ.get("KG_JOB_QUIET_S", "0.5"))  # the job waits this long after the last hook edit
QUIET_MAX_S = 5.0  # ... but no longer than this, so a steady stream of edits is settled every few seconds


def _lock_names(out: Path) -> tuple[Path, Path]:
    return Layout(out).communities_lock, Layout(out).communities_waiting


def running(out: Path) -> bool:
    """Whether a background clustering of `out` is launched, running or waiting to run."""
    import time

    try:
        if time.time() - Layout(out).communities_queued.stat().st_mtime < QUEUED_GRACE_S:
            return True
    except OSError:
        pass
    return any(lock_held(path) for path in _lock_names(out))


def after_run(scope: Scope, result: Any) -> None:
    """Start the background job when this run deferred the clustering or a link patch's ranks."""
    if result.extra.get("communities") == "deferred" or result.extra.get("whole_graph") == "deferred":
        launch(scope)


def launch(scope: Scope) -> None:
    """Start a detached job, unless one waits to start (it will read this edit); its output goes
    to `kg-out/communities.log`."""
    layout = Layout(scope.out)
    layout.last_edit.touch()
    if lock_held(layout.communities_waiting):
        return
    layout.communities_queued.touch()
    spawn(["-m", "vault_kg.jobs.clustering", scope.name, scope.kind, str(scope.root), str(scope.out)], log=layout.communities_log, cwd=CHECKOUT)


def quiet(out: Path, quiet_s: float = QUIET_S, at_most: float = QUIET_MAX_S) -> None:
    """Wait until no hook edit touched `out` for `quiet_s` seconds (at most `at_most` in all):
    edits an agent makes back to back are settled once, and meanwhile never wait for the job."""
    import time

    start = time.monotonic()
    while True:
        try:
            age = time.time() - Layout(out).last_edit.stat().st_mtime
        except OSError:
            return
        left = min(quiet_s - age, at_most - (time.monotonic() - start))
        if left <= 0:
            return
        time.sleep(left)


def snapshot(out: Path) -> tuple[str, dict[str, dict[str, Any]], Any, dict[str, float]] | None:
    """(digest, nodes, edge table, ranks) of the committed graph when its communities are behind."""

    from vault_kg.update import centrality as rank
    from vault_kg.storage.layout import Layout
    from vault_kg.storage.cache import ranking_snapshot
    from vault_kg.update.ranking_policy import BLOB, unpack

    db = Layout(out).cache_db
    if not db.is_file():
        return None
    found = ranking_snapshot(db, BLOB, lambda stored: (lambda last: last is not None and last[4] != last[0])(unpack(stored)))
    if found is None:
        return None
    stored, encoded, nodes = found
    last = unpack(stored)
    assert last is not None
    table = rank.EdgeTable.from_bytes(encoded)
    if sorted(nodes) != table.ids or rank.ranking_digest(nodes, table) != last[0]:
        return None  # not one consistent graph: the next update clusters inline
    return last[0], nodes, table, last[1]


def install(out: Path, digest: str, ranks: dict[str, float], assignment: dict[str, int], communities: list[dict[str, Any]]) -> bool:
    """Store the clustering if the cache still holds the graph it was computed on."""
    from vault_kg.storage.cache import ScopeCache
    from vault_kg.update.noop_checks import OWED, owed_owners
    from vault_kg.update.ranking_policy import BLOB, store, unpack

    cache = ScopeCache(Layout(out).cache_db)
    try:
        if cache.recreated:
            return False
        cache.begin()
        last = unpack(cache.get_blob(BLOB))
        if last is None or last[0] != digest or owed_owners(cache):  # an edit a hook stored since
            cache.rollback()
            return False
        store(cache, (digest, ranks, assignment, communities, digest))
        cache.set_meta(OWED, {**(cache.get_meta(OWED) or {}), "owners": []})  # the artifacts: written by the short update that follows (`owed.finish_owed`)
        cache.commit()
        return True
    finally:
        cache.close()


def settle(scope: Scope) -> bool:
    """Finish what the hook deferred, cluster the scope's current graph and write it out; True
    when its ranks, communities and artifacts describe the graph the cache holds."""
    from vault_kg.update import centrality as rank
    from vault_kg.update.engine import run
    from vault_kg.update.run_state import COMMUNITIES, RunSettings

    for _ in range(ROUNDS):
        if owed(scope.out):
            # what hooks deferred: carried and spliced (`owed_settle`), or ranked in full with the
            # artifacts waiting for the clustering below (`deferred_work.finish_owed`)
            run(scope, paths=[], settings=RunSettings(defer=COMMUNITIES, clustering_next=True, html_later=True))
        found = snapshot(scope.out) if _clustering_waits(scope.out) else None
        if found is None:
            if owed(scope.out):
                continue  # an edit deferred more meanwhile
            return True
        digest, nodes, table, ranks = found
        assignment, communities = rank.communities(nodes, table, ranks)
        if not install(scope.out, digest, ranks, assignment, communities):
            continue
        result = run(scope, paths=[], settings=RunSettings(defer=COMMUNITIES, html_later=True))  # an edit that landed meanwhile is clustered next round
        if result.extra.get("communities") != "deferred" and not owed(scope.out):
            return True
    return False


def _clustering_waits(out: Path) -> bool:
    """Whether the stored communities describe an earlier graph than the ranks (read from the
    stamps alone; a cache that keeps none is looked at whole by `snapshot`)."""
    from vault_kg.storage.cache import meta_value
    from vault_kg.update.ranking_policy import STAMPS

    db = Layout(out).cache_db
    if not db.is_file():
        return False
    found = meta_value(db, STAMPS)
    return found is None or found[0] != found[1]


def owed(out: Path) -> bool:
    """Whether a hook left ranks and artifacts behind the graph in `out`'s cache (`vault_kg.update.deferred_work`)."""

    from vault_kg.storage.cache import meta_value
    from vault_kg.update.noop_checks import OWED

    db = Layout(out).cache_db
    if not db.is_file():
        return False
    return meta_value(db, OWED) is not None


def main(argv: list[str]) -> None:
    name, kind, root, out = argv
    scope = Scope(name, kind, Path(root), Path(out))
    lock, waiting = _lock_names(scope.out)
    with one_runs_one_waits(lock, waiting, tried=lambda: Layout(scope.out).communities_queued.unlink(missing_ok=True)) as mine:  # one already waiting sees this graph
        if mine:
            quiet(scope.out)
            settle(scope)


if __name__ == "__main__":
    from vault_kg.core.secrets import redact_output

    redact_output()  # its output is its log under kg-out/
    os.nice(10)  # a background nicety: the agent's next hook must not wait on it
    with reported("communities"):
        main(sys.argv[1:])
