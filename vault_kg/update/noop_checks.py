"""The checks that tell a run it has nothing to do, light enough for the no-op probe.

The engine's `scan` stage and the read-only probe of a plain `kg update`
(`vault_kg.cli.noop_update`) ask the same questions: is graph.json the one this cache last wrote,
did an outside input a pass recorded change, did a killed writer leave temp files, does a pass
want every source read again. They live here, apart from the engine, so the probe answers them
without importing the engine (and the graph code it imports).
"""

from __future__ import annotations

import os
import zlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vault_kg.core.passes import Pass
    from vault_kg.storage.layout import Layout

__all__ = ["MetaStore", "OWED", "SWEPT", "artifacts_current", "deps_changed", "owed_owners", "pass_modules", "record_artifacts"]

OWED = "owed"  # meta while ranks and artifacts lag the query tables (`vault_kg.update.deferred_work`): {"owners": [...], "edges": count}; None once done
SWEPT = (("out", ("graph.json", "GRAPH_REPORT.md", "brief.json", "graph-state.js", ".gitignore")), ("cache", ("anchors.json",)))  # temp files a killed run leaves


class MetaStore(Protocol):
    """The cache's `meta` table (`vault_kg.storage.cache.ScopeCache`, or the probe's read-only view)."""

    def get_meta(self, key: str, default: Any = None) -> Any: ...
    def set_meta(self, key: str, value: Any) -> None: ...


def pass_modules(kind: str) -> tuple[Pass, ...]:
    """The feature passes of a scope kind, in the order they run (see `vault_kg.core.passes`).

    Imported here, by name, never from strings: the model pass, then the anchors pass."""
    if kind != "vault":
        return ()
    from extract import llm_pass

    from vault_kg.anchors import build_pass as anchor_pass

    return (llm_pass, anchor_pass)


def owed_owners(cache: MetaStore) -> list[str] | None:
    """The owners whose edge rows the stored edge table lacks (a hook's deferred link patch), or None when nothing is owed."""
    owed = cache.get_meta(OWED)
    return None if owed is None else list(owed["owners"])


def deps_changed(recorded: dict[str, list[int]]) -> bool:
    """Whether an outside input a pass recorded (`path → [size, mtime_ns]`) changed or is gone."""
    for path, stat in recorded.items():
        try:
            st = os.stat(path)
        except OSError:
            return True
        if [st.st_size, st.st_mtime_ns] != stat:
            return True
    return False


def record_artifacts(layout: Layout, cache: MetaStore, digest: int | None) -> None:
    st = layout.graph_json.stat()
    cache.set_meta("artifacts", {"graph_json": [st.st_size, st.st_mtime_ns], "changed": [st.st_ctime_ns, st.st_ino], "digest": digest, "report": layout.report.exists()})


def artifacts_current(layout: Layout, cache: MetaStore) -> bool:
    """True when graph.json is the one this cache last wrote: a stat match, no parse.

    Size and mtime can be put back by hand (`touch -d`), but not the inode change time: when that
    moved, the recorded content digest decides (and is recorded again when the content is the same).
    """
    recorded = cache.get_meta("artifacts")
    if not recorded or not layout.report.exists():
        return False
    try:
        st = layout.graph_json.stat()
    except OSError:
        return False
    if [st.st_size, st.st_mtime_ns] != recorded["graph_json"]:
        return False
    if recorded.get("changed") == [st.st_ctime_ns, st.st_ino]:
        return True
    try:
        same = recorded.get("digest") is not None and zlib.crc32(layout.graph_json.read_bytes()) == recorded["digest"]
    except OSError:
        return False
    if same:
        record_artifacts(layout, cache, recorded["digest"])
    return same
