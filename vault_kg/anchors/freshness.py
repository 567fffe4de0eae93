"""Freshness at read time: a note anchored to code is checked before it is served.

The graph marks a note stale when an update sees its anchored code change; a `git pull` or an
edit made outside the agent triggers no update, so every read path checks again. Each anchored
file is stat'ed; only when its size or mtime differ from what the anchor cache (`kg-out/
anchors.json`, the same `SymbolCache` that `kg check` uses) last saw is it read and its spans
hashed. A note whose anchor no longer holds (file missing, symbol gone, hash changed) is served
as stale: hidden by default, flagged with `--include-stale`, out of the brief's central notes
and listed with its stale notes. Note-to-note anchors are left to the next update.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_kg.core import model as m

__all__ = ["Freshness", "READ_TIME", "stale_now"]

READ_TIME = " (seen at read time; `kg update` records it)"


class Freshness:
    """Read-time anchor checks for one vault, loading the config and anchor cache on first need."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._ready = False
        self._projects: dict[str, Path] = {}
        self._cache: Any = None

    def _load(self) -> None:
        from vault_kg.anchors.spans import SymbolCache
        from vault_kg.core.config import load_config
        from vault_kg.core.errors import KgError
        from vault_kg.core.scopes import vault_scope
        from vault_kg.anchors.evaluate import cache_path

        self._ready = True
        try:
            self._projects = {name: Path(os.path.realpath(root)) for name, root in load_config().projects.items()}
            self._cache = SymbolCache(cache_path(vault_scope(self.vault)))
        except (KgError, OSError):
            self._projects = {}

    def reason(self, rel: str, raw_anchors: Any) -> str | None:
        """Why the note's code anchors no longer hold now, or None."""
        from vault_kg.anchors.evaluate import anchor_reason, parse_anchors

        if not self._ready:
            self._load()
        if self._cache is None:
            return None
        anchors, _ = parse_anchors(rel, raw_anchors, self._projects)
        for anchor in anchors:
            if anchor.kind == "note":
                continue
            absolute = os.path.join(str(self._projects[anchor.project]), anchor.path)
            why = anchor_reason(anchor, self._cache.lookup(absolute, anchor.path))
            if why:
                return why
        return None

    def apply(self, node: dict[str, Any]) -> dict[str, Any]:
        """The node, marked stale in place when its code moved on since the graph was built."""
        if node.get("kind") != m.NOTE or node.get("status") not in (None, m.LIVE, m.PENDING):
            return node
        raw = (node.get("props") or {}).get("anchors")
        if not raw or not node.get("source"):
            return node
        why = self.reason(str(node["source"]), raw)
        if why:
            node["status"] = m.STALE
            node["stale_reason"] = why + READ_TIME
        return node


def stale_now(vault: Path) -> list[dict[str, Any]]:
    """Anchored notes live in the graph whose code moved on since (for the session brief)."""
    from vault_kg.anchors.anchored_index import iter_anchored, open_cache

    con = open_cache(vault)
    if con is None:
        return []
    fresh = Freshness(vault)
    found = []
    try:
        for nid, node, anchored in iter_anchored(con):
            if node.get("status") not in (None, m.LIVE, m.PENDING):
                continue
            fresh.apply(node)
            if node.get("status") == m.STALE:
                found.append({"id": nid, "label": node.get("label", nid), "source": node.get("source"), "reason": node["stale_reason"], "project": anchored[0][0]})
    finally:
        con.close()
    return found
