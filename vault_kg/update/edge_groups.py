"""Per-owner edge groups, kept across runs so an update touches only the owners a change reaches.

An owner's group (its edges, finalized: sorted, duplicates folded, keyed) is a pure function of
its own extraction, its own resolution and the derived edges it owns, so the cache keeps each
group encoded and an update re-derives only the dirty ones. The rest stay encoded bytes: they go
into graph.json as they are, and into the rank's edge table as the rows it already has.

`OwnerGroups` is what post-assembly passes see as `ctx.edges_by_owner`: a mapping that decodes a
kept group the first time a pass reads it, and remembers which owners the passes touched (their
groups are encoded again, and the next update refreshes them, since pass edges are recomputed on
every run).
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterator

import orjson

from graph_out.graph_json import encode_group

__all__ = ["Edge", "OwnerGroups", "by_owner", "signatures"]

Edge = dict[str, Any]


class OwnerGroups:
    """owner → finalized edge list; kept groups decoded on first access."""

    def __init__(self, live: dict[str, list[Edge]], kept: dict[str, bytes], live_encoded: dict[str, bytes] | None = None) -> None:
        self.live = live
        self.kept = {owner: blob for owner, blob in kept.items() if owner not in live}
        self.live_encoded = live_encoded or {}
        self.accessed: set[str] = set()

    def _materialize(self, owner: str) -> None:
        if owner not in self.live:
            blob = self.kept.pop(owner, None)
            self.live[owner] = orjson.loads(blob) if blob is not None else []

    def __getitem__(self, owner: str) -> list[Edge]:
        if owner not in self:
            raise KeyError(owner)
        self.accessed.add(owner)
        self._materialize(owner)
        return self.live[owner]

    def get(self, owner: str, default: Any = None) -> Any:
        return self[owner] if owner in self else default

    def setdefault(self, owner: str, default: list[Edge]) -> list[Edge]:
        if owner not in self:
            self.live[owner] = default
        return self[owner]

    def __setitem__(self, owner: str, group: list[Edge]) -> None:
        self.accessed.add(owner)
        self.kept.pop(owner, None)
        self.live[owner] = group

    def __contains__(self, owner: object) -> bool:
        return owner in self.live or owner in self.kept

    def owners(self) -> list[str]:
        """Owners with at least one edge, sorted (the order of graph.json and the edge table)."""
        return sorted([o for o, g in self.live.items() if g] + list(self.kept))

    def __iter__(self) -> Iterator[str]:
        return iter(self.owners())

    def __len__(self) -> int:
        return len(self.owners())

    def group(self, owner: str) -> list[Edge]:
        """A group without counting it as touched by a pass."""
        self._materialize(owner)
        return self.live[owner]

    def encoded(self) -> dict[str, bytes]:
        """Every owner's final group as canonical JSON, in owner order: kept bytes, and the
        encodings of re-derived groups no pass touched since, reused."""
        out: dict[str, bytes] = {}
        for owner in self.owners():
            if owner in self.kept:
                out[owner] = self.kept[owner]
            elif owner in self.live_encoded and owner not in self.accessed:
                out[owner] = self.live_encoded[owner]
            else:
                out[owner] = encode_group(self.live[owner])
        return out

    def all_edges(self) -> list[Edge]:
        """Every edge, owner by owner (decodes every kept group: for small graphs and code scopes)."""
        return [e for owner in self.owners() for e in self.group(owner)]


def signatures(groups: dict[str, list[Edge]]) -> dict[str, str]:
    """A digest per owner of the derived edges it owns, to tell which owners' share changed."""
    return {owner: hashlib.blake2b(encode_group(edges), digest_size=12).hexdigest() for owner, edges in groups.items()}


def by_owner(edges: list[Edge], wanted: set[str] | None = None) -> dict[str, list[Edge]]:
    grouped: dict[str, list[Edge]] = {}
    for e in edges:
        owner = e["owner"]
        if wanted is None or owner in wanted:
            grouped.setdefault(owner, []).append(e)
    return grouped
