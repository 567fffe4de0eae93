"""The fold: every extraction's nodes into one graph, and each owner's edges finalized into its group.

Shared by the route's `resolve` and `assemble` stages and by the one-note link patch, which
derives a few owners' groups again the way a whole assembly would.
"""

from __future__ import annotations

from typing import Any

from vault_kg.core import model as m
from vault_kg.core.adapter import Resolution, ScopeAdapter
from vault_kg.storage.cache import Kept, ScopeCache
from vault_kg.update import centrality as rank
from vault_kg.update.run_result import RunResult

__all__ = ["LOOKUP_BLOB", "assemble_nodes", "dirty_owners", "finalize_edges", "finalize_groups", "raw_edges", "resolve_references"]


LOOKUP_BLOB = "note_index"  # the note index the last whole resolution looked links up in


def resolve_references(
    adapter: ScopeAdapter, extractions: dict[str, m.Extraction], previous: dict[str, m.Extraction | None], per_source: dict[str, Any], cache: ScopeCache
) -> tuple[Resolution, set[str] | None]:
    """The resolution, and the sources whose own resolution was redone (None: all of them)."""
    incremental = getattr(adapter, "resolve_incremental", None)
    if incremental is None:
        return adapter.resolve(extractions), None
    resolution, recomputed = incremental(extractions, previous, per_source)
    cache.put_resolutions((rel, value) for rel, value in recomputed.items() if rel in extractions)
    if resolution.lookup is not None:  # for the next one-note link patch (`link_patch`)
        cache.put_blob(LOOKUP_BLOB, resolution.lookup)
    return resolution, set(recomputed)


def dirty_owners(kept: Kept, nodes: dict[str, dict[str, Any]], previous: dict[str, Any], recomputed: set[str], derived_sigs: dict[str, str]) -> set[str]:
    """Owners whose edge group must be derived again: their source or its resolution changed,
    the derived edges they own changed, or a kept edge of theirs points at a node that is gone."""
    dirty = set(previous) | recomputed
    dirty.update(o for o in derived_sigs.keys() | kept.derived.keys() if derived_sigs.get(o) != kept.derived.get(o))
    dirty.update(rank.owners_of_rows_to(kept.table, set(kept.table.ids) - nodes.keys()))
    return dirty


def assemble_nodes(extractions: dict[str, m.Extraction], resolution: Resolution) -> dict[str, dict[str, Any]]:
    """Fold the nodes of every extraction (sorted by source) and of the resolution.

    A shared node (a tag, an entity) takes its attributes from its first source and lists all.
    """
    nodes: dict[str, dict[str, Any]] = {}
    for rel in sorted(extractions):
        for nid, attrs in extractions[rel].nodes.items():
            existing = nodes.get(nid)
            if existing is None:
                node = dict(attrs)
                if node.pop("shared", None):
                    node["sources"] = [rel]
                nodes[nid] = node
            elif "sources" in existing:
                existing["sources"].append(rel)
    for nid, attrs in resolution.nodes.items():
        if nid in nodes:
            nodes[nid].update(attrs)
        else:
            node = dict(attrs)
            node.pop("shared", None)
            nodes[nid] = node
    return nodes


def raw_edges(extractions: dict[str, m.Extraction], resolution: Resolution, derived: dict[str, list[dict[str, Any]]], owners: set[str] | None) -> dict[str, list[dict[str, Any]]]:
    """Each owner's edges before finalizing: its extraction's, its resolution's, the derived ones.

    `owners` None means all of them; otherwise only those (and the adapter must keep every
    extraction's edges owned by that extraction's source, which makes the lookup direct).
    """
    raw: dict[str, list[dict[str, Any]]] = {}
    if owners is None:
        for rel in sorted(extractions):
            for e in extractions[rel].edges:
                raw.setdefault(e["owner"], []).append(e)
    else:
        raw = {o: list(extractions[o].edges) if o in extractions else [] for o in owners}
    for e in resolution.edges:
        owner = e["owner"]
        if owners is None:
            raw.setdefault(owner, []).append(e)
        elif owner in raw:
            raw[owner].append(e)
    for owner in sorted(resolution.owned) if owners is None else sorted(owners & resolution.owned.keys()):
        raw.setdefault(owner, []).extend(resolution.owned[owner])
    for owner, edges in derived.items():
        if owners is None or owner in raw:
            raw.setdefault(owner, []).extend(edges)
    return raw


def finalize_groups(raw: dict[str, list[dict[str, Any]]], nodes: dict[str, dict[str, Any]], result: RunResult | None = None) -> dict[str, list[dict[str, Any]]]:
    """`finalize_edges` for every owner in `raw` (an empty list for an owner left with none).

    Parallel duplicates from one owner (the same link twice) become one edge with `lines`. An
    edge's `key` is its relation, or `relation@owner` when a file other than the source node's
    own file asserts it, so keys are unique without looking at the rest of the graph.
    """
    dropped = 0
    grouped: dict[str, list[dict[str, Any]]] = {}
    for owner in sorted(raw):
        grouped[owner] = finalize_edges(owner, raw[owner], nodes)
        dropped += sum(1 for e in raw[owner] if e["source"] not in nodes or e["target"] not in nodes)
    if dropped and result is not None:
        result.warnings.append(f"{dropped} edge(s) pointed at nodes no source owns; dropped")
    return grouped


def finalize_edges(owner: str, edges: list[dict[str, Any]], nodes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One owner's edges, sorted, duplicates folded into `lines`, each with its `key`.

    Edges whose ends no source owns are dropped (the caller counts them).
    """
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in edges:
        source_node = nodes.get(e["source"])
        if source_node is None or e["target"] not in nodes:
            continue
        key = (e["source"], e["target"], e["relation"])
        first = merged.get(key)
        if first is None:
            own = source_node.get("source") == owner and source_node.get("kind") != m.ENTITY  # an entity's first source depends on the vault
            e["key"] = e["relation"] if own else f"{e['relation']}@{owner}"
            merged[key] = e
        elif first is not e:
            lines = first.setdefault("lines", [first.get("line")])
            lines.extend(e.get("lines") or [e.get("line")])
    group = []
    for key in sorted(merged):
        edge = merged[key]
        if "lines" in edge:
            edge["lines"] = sorted({x for x in edge["lines"] if x is not None})
        group.append(edge)
    return group
