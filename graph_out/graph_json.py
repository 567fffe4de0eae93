"""graph.json: networkx node-link data (directed multigraph), canonical and byte-stable."""

from __future__ import annotations

from typing import Any


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


def to_networkx(data: dict[str, Any]):
    """The graph as a `networkx.MultiDiGraph` (keys are the relation names)."""
    import networkx as nx

    return nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")
