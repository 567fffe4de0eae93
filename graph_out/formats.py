"""The two artifact formats other programs read: graph.json's `graph` attributes and brief.json.

This module owns them: their shape (TypedDicts), how a build makes them from the assembled nodes,
and how a reader loads brief.json back (one validation here, instead of guards in every reader).
The node-link body of graph.json (nodes, edges, byte-stable encoding) is `graph_out.graph_json`.
Both files are canonical JSON (sorted keys), so the same graph always gives the same bytes.
docs/architecture.md describes every field.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, TypedDict

from vault_kg.core import model as m

Node = dict[str, Any]


class Counts(TypedDict):
    nodes: int
    edges: int
    sources: int
    unresolved: int
    unresolved_calls: int
    quarantined: int
    stale: int
    pending: int
    by_kind: dict[str, int]
    by_relation: dict[str, int]


class GraphAttrs(TypedDict, total=False):
    """graph.json's `graph` object. The first ten keys are always there; passes add the rest
    (`stale` and `anchor_issues` from the anchors pass, `likely_duplicates` from the model pass),
    and ranking adds `stamp`: which graph the ranks and which the communities describe (they differ
    while a hook's deferred clustering runs; see `vault_kg.update.ranking_policy`)."""

    scope: str
    kind: str
    root: str
    schema_version: int
    built_with: str
    god_nodes: list[str]
    communities: list[dict[str, Any]]
    counts: Counts
    skipped: list[dict[str, str]]
    quarantined: list[list[str]]
    stale: list[dict[str, Any]]
    anchor_issues: list[dict[str, Any]]
    likely_duplicates: list[list[str]]
    stamp: dict[str, str]


class BriefNode(TypedDict):
    id: str
    label: str
    summary: str
    source: str
    line: int | None


class Convention(TypedDict):
    id: str
    label: str
    summary: str
    source: str
    tags: list[str]


class Brief(TypedDict):
    """brief.json: what a session start needs without loading the graph."""

    scope: str
    root: str
    god_nodes: list[BriefNode]
    counts: Counts
    stale: list[dict[str, Any]]
    conventions: list[Convention]


def counts_of(nodes: dict[str, Node], edges: int, sources: int, by_relation: dict[str, int]) -> Counts:
    kinds = Counter(str(a.get("kind")) for a in nodes.values())
    statuses = Counter(a.get("status") for a in nodes.values())
    return {
        "nodes": len(nodes),
        "edges": edges,
        "sources": sources,
        "unresolved": kinds.get(m.UNRESOLVED, 0),
        "unresolved_calls": sum(int(a["unresolved_calls"] or 0) for a in nodes.values() if "unresolved_calls" in a),
        "quarantined": statuses.get(m.QUARANTINED, 0),
        "stale": statuses.get(m.STALE, 0),
        "pending": statuses.get(m.PENDING, 0),
        "by_kind": dict(sorted(kinds.items())),
        "by_relation": by_relation,
    }


BUILT_ATTRS = ("scope", "kind", "root", "schema_version", "built_with", "god_nodes", "communities", "counts", "skipped", "quarantined")


def pass_attrs(graph: dict[str, Any]) -> dict[str, Any]:
    """What the passes added to a `graph` object: what a run that does not run them (a hook's
    link patch, the job that finishes its work) carries over. Not `stamp`, which ranking writes."""
    return {k: v for k, v in graph.items() if k not in BUILT_ATTRS and k != "stamp"}


def graph_attrs(
    scope: str,
    kind: str,
    root: Path,
    built_with: str,
    nodes: dict[str, Node],
    gods: list[str],
    communities: list[dict[str, Any]],
    counts: Counts,
    skipped: Iterable[tuple[str, str]],
    extra: dict[str, Any],
) -> GraphAttrs:
    """The `graph` object; `extra` holds what the passes add, and wins over nothing above but itself."""
    attrs: GraphAttrs = {
        "scope": scope,
        "kind": kind,
        "root": str(root),
        "schema_version": m.SCHEMA_VERSION,
        "built_with": built_with,
        "god_nodes": gods,
        "communities": communities,
        "counts": counts,
        "skipped": [{"source": source, "reason": reason} for source, reason in skipped],
        "quarantined": sorted([a["source"], a.get("quarantine", "")] for a in nodes.values() if a.get("status") == m.QUARANTINED and a.get("source")),
    }
    attrs.update(extra)  # type: ignore[typeddict-item]
    return attrs


def is_convention(attrs: Node) -> bool:
    """A live or pending `convention/*` note is listed in brief.json (see `brief_of`)."""
    if attrs.get("kind") != m.NOTE:
        return False
    tags = attrs.get("tags") or ()
    if "convention/" not in "\0".join(tags):  # no tag holds it anywhere: none starts with it (brief.json asks this of every node)
        return False
    return any(t.startswith("convention/") for t in tags)


def brief_of(attrs: GraphAttrs, nodes: dict[str, Node]) -> Brief:
    """brief.json from the graph attributes: god nodes with their summaries, counts, stale notes,
    and the live `convention/*` notes."""
    return brief_from(attrs, nodes, sorted((nid, a) for nid, a in nodes.items() if is_convention(a)))


def brief_from(attrs: GraphAttrs, nodes: Mapping[str, Node], conventions: list[tuple[str, Node]]) -> Brief:
    """`brief_of` from the nodes it names (`nodes`: at least the god nodes) and the convention
    notes (id and attributes, by id), which an incremental update reads from the cache."""
    return {
        "scope": attrs["scope"],
        "root": attrs["root"],
        "god_nodes": [
            {
                "id": nid,
                "label": nodes[nid].get("label", nid),
                "summary": nodes[nid].get("summary") or nodes[nid].get("doc") or "",
                "source": nodes[nid].get("source", ""),
                "line": nodes[nid].get("line"),
            }
            for nid in attrs["god_nodes"]
        ],
        "counts": attrs["counts"],
        "stale": attrs.get("stale", []),
        "conventions": [
            {"id": nid, "label": a.get("label", nid), "summary": a.get("summary", ""), "source": a.get("source", ""), "tags": [t for t in a.get("tags", []) if t.startswith("convention/")]}
            for nid, a in conventions
            if a.get("status") not in (m.STALE, m.SUPERSEDED, m.QUARANTINED)
        ],
    }


def read_brief(path: Path) -> Brief | None:
    """brief.json as written by a build, or None when it is missing or not one (a reader never guards again).

    Entries of `god_nodes` and `conventions` that are not objects are dropped; `stale` is kept as
    it is (its items are the anchors pass's objects)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    for key in ("god_nodes", "conventions"):
        if key in data:
            items = data[key]
            data[key] = [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    return data  # type: ignore[return-value]
