"""graph.json: networkx node-link data (directed multigraph), canonical and byte-stable."""

from __future__ import annotations

from typing import Any, Iterable

import orjson

JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def node_link(graph_attrs: dict[str, Any], nodes: dict[str, dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """Node-link data readable by `networkx.node_link_graph(data, edges="edges")`.

    Nodes are sorted by id; edges come grouped by owning file (owners sorted, each group sorted by
    source, target, relation), so the same graph always gives the same bytes.
    """
    return {
        "directed": True,
        "multigraph": True,
        "graph": graph_attrs,
        "nodes": [{"id": nid, **nodes[nid]} for nid in sorted(nodes)],
        "edges": edges,
    }


def encode_group(edges: list[dict[str, Any]]) -> bytes:
    """One owner's edge group as canonical JSON (the unit the cache hashes and graph.json splices).

    Copied to its exact size: orjson's bytes keep the buffer they were written in (about 4 KB
    for a small group), and a build keeps one group per note until it writes graph.json."""
    return memoryview(orjson.dumps(edges, option=JSON_OPTIONS)).tobytes()


def encode_node_link(data: dict[str, Any], groups: Iterable[bytes]) -> bytes:
    """The bytes of `store.dumps_json(data, indent=False)` for node-link `data`, with the edges
    spliced in from groups already encoded by `encode_group` (in owner order) instead of
    `data["edges"]`, so no edge is encoded twice.
    """
    graph_attrs = data["graph"]
    rows = orjson.dumps(data["nodes"], option=JSON_OPTIONS)
    graph = orjson.dumps(graph_attrs, option=JSON_OPTIONS)
    parts: list[bytes | memoryview] = [b'{"directed":true,"edges":[']
    for group in groups:
        if len(group) > 2:
            if len(parts) > 1:
                parts.append(b",")
            parts.append(memoryview(group)[1:-1])
    parts += [b'],"graph":', graph, b',"multigraph":true,"nodes":', rows, b"}\n"]
    return b"".join(parts)


def to_networkx(data: dict[str, Any]):
    """The graph as a `networkx.MultiDiGraph` (keys are the relation names)."""
    import networkx as nx

    return nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")
