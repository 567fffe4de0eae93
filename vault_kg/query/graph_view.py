"""A scope's assembled graph as queries see it: read from the cache's SQLite tables on demand.

Queries touch a handful of nodes, so they read rows by index instead of parsing graph.json:
a `kg query` on a 10,000-note vault stays a fraction of a second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from vault_kg.core import model as m
from vault_kg.storage.layout import Layout
from vault_kg.storage.cache import GraphReader
from vault_kg.core.agent_hints import ask
from vault_kg.core.errors import KgError
from vault_kg.query.shared_reads import KeptReads
from vault_kg.core.scopes import Scope

__all__ = ["GraphView", "HIDDEN_STATUSES", "WALK_SKIPS", "load_view", "read_time_check"]

HIDDEN_STATUSES = {m.STALE, m.SUPERSEDED}
WALK_SKIPS = (m.TAGGED, m.TAG_PARENT)  # relations a query's expansion never follows
_UNREAD = object()


class _Nodes:
    """Mapping-like, read-through access to node rows.

    Rows as stored come from `kept` (shared by every view of the same cache file, see
    `vault_kg.query.shared_reads`); each `_Nodes` serves its own copies with the read-time check applied,
    so a server's next call checks anchored code again.
    """

    def __init__(self, reader: GraphReader, on_load: Any = None, kept: KeptReads | None = None) -> None:
        self._reader = reader
        self._kept = kept if kept is not None else KeptReads()
        self._cache: dict[str, dict[str, Any] | None] = {}
        self._on_load = on_load or (lambda node: node)  # read-time freshness (vault scopes)

    def get(self, nid: str, default: Any = None) -> Any:
        if nid not in self._cache:
            row = self._kept.rows.get(nid, _UNREAD)
            if row is _UNREAD:
                self._kept.make_room_for_rows(1)
                row = self._kept.rows[nid] = self._reader.node(nid)
            self._serve(nid, row)
        found = self._cache[nid]
        return default if found is None else found

    def prefetch(self, ids: list[str]) -> None:
        """Load the rows of `ids` not yet seen in one query."""
        unseen = {nid for nid in ids if nid not in self._cache}
        self._kept.make_room_for_rows(len(unseen))
        rows = {nid: self._kept.rows.get(nid, _UNREAD) for nid in unseen}
        missing = sorted(nid for nid, row in rows.items() if row is _UNREAD)
        if missing:
            found = self._reader.nodes_many(missing)
            for nid in missing:
                rows[nid] = self._kept.rows[nid] = found.get(nid)
        for nid, row in rows.items():
            self._serve(nid, row)

    def _serve(self, nid: str, row: Any) -> None:
        self._cache[nid] = None if row is None else self._on_load(dict(row))

    def __getitem__(self, nid: str) -> dict[str, Any]:
        found = self.get(nid)
        if found is None:
            raise KeyError(nid)
        return found

    def __contains__(self, nid: object) -> bool:
        return isinstance(nid, str) and self.get(nid) is not None


class _Adjacency:
    def __init__(self, fetch) -> None:
        self._fetch = fetch
        self._cache: dict[str, list[dict[str, Any]]] = {}

    def get(self, nid: str, default: Any = None) -> list[dict[str, Any]]:
        if nid not in self._cache:
            self._cache[nid] = self._fetch(nid)
        return self._cache[nid]


@dataclass
class GraphView:
    scope: Scope
    reader: GraphReader
    nodes: _Nodes = field(init=False)
    out_edges: _Adjacency = field(init=False)
    in_edges: _Adjacency = field(init=False)
    kept: KeptReads = field(default_factory=KeptReads)  # what it read, shared with views of the same cache file

    def __post_init__(self) -> None:
        self.nodes = _Nodes(self.reader, read_time_check(self.scope), self.kept)
        self.out_edges = _Adjacency(self.reader.out_edges)
        self.in_edges = _Adjacency(self.reader.in_edges)

    def forget_rows(self) -> None:
        """Serve fresh copies of the node rows from now on, so the next read checks anchored code
        again (a long-running server reuses its views between calls; the rows as stored stay)."""
        self.nodes = _Nodes(self.reader, read_time_check(self.scope), self.kept)

    @property
    def graph(self) -> dict[str, Any]:
        return self.reader.meta("graph", {}) or {}

    as_of: Any = None

    def visible(self, nid: str, include_stale: bool = False) -> bool:
        """Served as current? With `as_of` set: valid on that date (its window), whatever its status."""
        node = self.nodes.get(nid, {})
        if self.as_of is not None:
            from vault_kg.anchors.dates import valid_at

            return valid_at(node, self.as_of)
        return include_stale or node.get("status") not in HIDDEN_STATUSES

    def neighbours(self, nid: str) -> list[tuple[dict[str, Any], str]]:
        """Edges touching `nid` both ways, with the other end's row already loaded."""
        pairs = [(e, e["target"]) for e in self.out_edges.get(nid)] + [(e, e["source"]) for e in self.in_edges.get(nid)]
        self.nodes.prefetch([other for _, other in pairs])
        return pairs

    def walk_edges(self, nid: str) -> list[tuple[float, str, str]]:
        """(edge score, other end, the edge's JSON) of each edge of `neighbours`, in its order,
        without the tag-hub relations (`WALK_SKIPS`) and without loading the other ends: a
        query's expansion never follows those edges, loads only the ends it may score, and
        decodes only the edges of the hits it shows."""
        steps = self.kept.walks.get(nid)
        if steps is None:
            steps = self._walk_steps(nid)
            self.kept.keep_walk(nid, steps)
        return steps

    def _walk_steps(self, nid: str) -> list[tuple[float, str, str]]:
        steps = []
        for data in self.reader.walk_edges(nid, WALK_SKIPS):
            e = orjson.loads(data)
            steps.append((float(e.get("score") or 0.0), e["target"] if e["source"] == nid else e["source"], data))
        return steps

    def find(self, name: str, include_stale: bool = True) -> list[str]:
        """Node ids a user-typed name may mean: id, path, title, alias, tag, symbol name."""
        if name in self.nodes:
            return [name]
        for prefix in ("note:", "tag:", "file:", "entity:"):
            if prefix + name in self.nodes:
                return [prefix + name]
        key = name.strip().lower()
        if key.startswith("#") and m.tag_id(key[1:]) in self.nodes:
            return [m.tag_id(key[1:])]
        stripped = key[:-3] if key.endswith(".md") else key
        exact: list[str] = []
        loose: list[str] = []
        for nid, kind, label_lc, source, status in self.reader.iter_nodes():
            if not include_stale and status in HIDDEN_STATUSES:
                continue
            source_lc = (source or "").lower()
            if kind == m.NOTE and (source_lc[:-3] == stripped or source_lc.rsplit("/", 1)[-1][:-3] == stripped):
                exact.append(nid)
            elif label_lc == key:
                loose.append(nid)
        if exact:
            return sorted(exact)
        if not loose:
            loose = self._by_alias(key, include_stale)
        preferred = [nid for nid in loose if self.nodes[nid].get("kind") not in (m.UNRESOLVED, m.TAG)]
        return sorted(preferred or loose)

    def _by_alias(self, key: str, include_stale: bool) -> list[str]:
        rows = self.reader.mentioning(key)
        found = []
        for nid, data in rows:
            node = orjson.loads(data)
            if not include_stale and node.get("status") in HIDDEN_STATUSES:
                continue
            if key in (a.lower() for a in node.get("aliases", []) or []):
                found.append(nid)
        return found

    def resolve_one(self, name: str, include_stale: bool = True) -> str:
        found = self.find(name, include_stale)
        if not found:
            raise KgError(f"no node named '{name}' in scope '{self.scope.name}'; try `{ask('query', question=name)}` to search")
        if len(found) > 1:
            shown = ", ".join(found[:8]) + (" …" if len(found) > 8 else "")
            raise KgError(f"'{name}' is ambiguous in scope '{self.scope.name}': {shown}; pass one of these ids")
        return found[0]


def read_time_check(scope: Scope) -> Any:
    """A vault's notes anchored to code are checked as they are read (`vault_kg.anchors.freshness`)."""
    if scope.kind != "vault":
        return None
    from vault_kg.anchors.freshness import Freshness

    return Freshness(scope.root).apply


def load_view(scope: Scope, kept: KeptReads | None = None) -> GraphView:
    """A view of the scope's cache file; `kept`: what other views of the same state of that file
    read (see `vault_kg.query.shared_reads`)."""
    layout = Layout(scope.out)
    if not layout.cache_db.exists():
        raise KgError(f"{scope.out}: no graph yet for scope '{scope.name}'; run `kg build`")
    try:
        reader = GraphReader(layout.cache_db)
        if reader.meta("graph") is None:
            raise KgError(f"{layout.cache_db}: no graph built yet for scope '{scope.name}'; run `kg build`")
    except KgError:
        raise
    except Exception as exc:
        raise KgError(f"{layout.cache_db}: unreadable ({exc}); run `kg build --force` to rebuild it") from exc
    return GraphView(scope, reader, kept=kept if kept is not None else KeptReads())
