"""A note's tags changed: its tag nodes and the tag hierarchy patched into the last graph (for `link_patch`).

A tag node is shared: the fold gives it the attributes of the first note (by path) that uses it and
lists every note that does (`sources`). The hierarchy (`a/b/c` under `a/b` under `a`) is derived
from which tags exist and which note uses each first (`extract.notes.add_tag_hierarchy`): it is
computed here before and after the edit from the tag nodes of the last graph, and each owner whose
`tag_parent` edges differ has its edge group derived again. Tag nodes are left alone by the passes
(the anchors pass marks notes, sections and entities), so the last graph's are the fold's.
"""

from __future__ import annotations

from typing import Any

from vault_kg.storage.cache import nodes_of_kind
from vault_kg.core import model as m
from vault_kg.core.adapter import Resolution
from vault_kg.update.edge_groups import by_owner

__all__ = ["TAG_META", "patch_tags", "tag_ids"]

TAG_META = ("fm_tags", "inline_tags")  # extraction meta that only says which tags a note uses


def tag_ids(nodes: dict[str, dict[str, Any]]) -> set[str]:
    return {nid for nid, attrs in nodes.items() if attrs.get("kind") == m.TAG}


def patch_tags(rel: str, old: m.Extraction, new: m.Extraction, nodes: dict[str, dict[str, Any]], changed: dict[str, dict[str, Any] | None], parents: dict[str, list[dict[str, Any]]]) -> bool:
    """Fill `changed` (node id → attributes, None: gone) with the tag nodes the edit changes and
    `parents` (owner → all its `tag_parent` edges) for the owners whose share changed. False when
    the last graph does not look like the fold of these notes (the whole route then decides)."""
    gone, added = tag_ids(old.nodes) - tag_ids(new.nodes), tag_ids(new.nodes) - tag_ids(old.nodes)
    if not gone and not added:
        return True
    from extract.notes import add_tag_hierarchy

    tags = nodes_of_kind(nodes, m.TAG)
    before_owners = _owners(tags)
    used: dict[str, dict[str, Any] | None] = {}
    for tid in sorted(gone | added):
        node = nodes.get(tid)
        if tid in gone and (node is None or rel not in node.get("sources", ())) or node is not None and node.get("kind") != m.TAG:
            return False
        sources = sorted(set(node.get("sources", ()) if node else ()) - {rel} | ({rel} if tid in added else set()))
        label = (new.nodes.get(tid) or old.nodes[tid])["label"]
        used[tid] = {"kind": m.TAG, "label": label, "source": sources[0], "sources": sources} if sources else None
    after_owners = _owners({**tags, **used})
    before, after = Resolution(), Resolution()
    add_tag_hierarchy(before_owners, before)
    add_tag_hierarchy(after_owners, after)
    for tid in sorted(used.keys() | before.nodes.keys() | after.nodes.keys()):
        if tid in used and used[tid] is not None:
            changed[tid] = used[tid]
        elif tid in after.nodes:
            if tid in used or before.nodes.get(tid) != after.nodes[tid]:
                changed[tid] = {k: v for k, v in after.nodes[tid].items() if k != "shared"}  # as the fold takes it
        elif tid in used or tid in before.nodes:
            changed[tid] = None
    old_edges, new_edges = by_owner(before.derived), by_owner(after.derived)
    for owner in sorted(old_edges.keys() | new_edges.keys()):
        if old_edges.get(owner) != new_edges.get(owner):
            parents[owner] = new_edges.get(owner, [])
    return True


def _owners(nodes: dict[str, dict[str, Any] | None]) -> dict[str, str]:
    """Each tag a note uses → the first note (by path) that uses it, from the folded tag nodes."""
    return {attrs["label"]: attrs["sources"][0] for attrs in nodes.values() if attrs is not None and attrs.get("kind") == m.TAG and attrs.get("sources")}
