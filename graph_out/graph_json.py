"""graph.json: networkx node-link data (directed multigraph), canonical and byte-stable.

A graph.json is written whole by a build (`encode_node_link`), which also says where each of its
pieces lies (`Pieces`: every owner's edge group and every node, with their lengths in bytes);
an update that changed a few groups and nodes writes the new file from the old one's unchanged
runs and the changed pieces (`splice`), with the same bytes a whole encoding would give.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import orjson

__all__ = ["JSON_OPTIONS", "Pieces", "encode_group", "encode_node", "encode_node_link", "node_link", "splice", "to_networkx"]

JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
HEAD = b'{"directed":true,"edges":['
GRAPH = b'],"graph":'
NODES = b',"multigraph":true,"nodes":['
TAIL = b"]}\n"


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


def encode_node(nid: str, attrs: dict[str, Any]) -> bytes:
    """One node as graph.json holds it (`{"id": ..., **attrs}`, keys sorted)."""
    return orjson.dumps({"id": nid, **attrs}, option=JSON_OPTIONS)


@dataclass
class Pieces:
    """Where the pieces of one graph.json lie: the non-empty edge groups (owners in file order)
    and the nodes (ids in file order) with their lengths in bytes (a group without its brackets),
    and the length of the `graph` object between them. Offsets follow from the lengths."""

    owners: list[str]
    group_lengths: array
    ids: list[str]
    node_lengths: array
    graph_length: int

    @property
    def size(self) -> int:
        """The file's length in bytes."""
        commas = max(0, len(self.owners) - 1) + max(0, len(self.ids) - 1)
        return len(HEAD) + len(GRAPH) + len(NODES) + len(TAIL) + sum(self.group_lengths) + sum(self.node_lengths) + commas + self.graph_length

    @property
    def graph_start(self) -> int:
        return len(HEAD) + sum(self.group_lengths) + max(0, len(self.owners) - 1) + len(GRAPH)

    def to_bytes(self) -> bytes:
        return marshal.dumps((self.owners, self.group_lengths.tobytes(), self.ids, self.node_lengths.tobytes(), self.graph_length))

    @classmethod
    def from_bytes(cls, blob: bytes) -> "Pieces":
        owners, groups, ids, nodes, graph = marshal.loads(blob)
        return cls(owners, array("q", groups), ids, array("q", nodes), graph)


def encode_node_link(data: dict[str, Any], groups: Mapping[str, bytes] | Iterable[bytes]) -> bytes:
    """The bytes of `store.dumps_json(data, indent=False)` for node-link `data`, with the edges
    spliced in from groups already encoded by `encode_group` (in owner order) instead of
    `data["edges"]`, so no edge is encoded twice. (`encode_indexed` also says where each piece lies.)
    """
    graph = orjson.dumps(data["graph"], option=JSON_OPTIONS)
    rows = orjson.dumps(data["nodes"], option=JSON_OPTIONS)
    blobs = groups.values() if isinstance(groups, Mapping) else groups
    return b"".join([HEAD, b",".join(memoryview(g)[1:-1] for g in blobs if len(g) > 2), GRAPH, graph, NODES[:-1], rows, TAIL[1:]])


def encode_indexed(data: dict[str, Any], groups: Mapping[str, bytes]) -> tuple[bytes, Pieces]:
    """`encode_node_link`, and where each edge group and node lies in the bytes (`Pieces`).

    Nodes are encoded one by one (their lengths are what an update needs to splice them):
    the same bytes as one list, at about three times the (small) cost."""
    graph = orjson.dumps(data["graph"], option=JSON_OPTIONS)
    kept = [(owner, memoryview(blob)[1:-1]) for owner, blob in groups.items() if len(blob) > 2]
    rows = [orjson.dumps(n, option=JSON_OPTIONS) for n in data["nodes"]]
    pieces = Pieces([o for o, _ in kept], array("q", [len(g) for _, g in kept]), [n["id"] for n in data["nodes"]], array("q", map(len, rows)), len(graph))
    return b"".join([HEAD, b",".join(g for _, g in kept), GRAPH, graph, NODES, b",".join(rows), TAIL]), pieces


def splice(old: memoryview, pieces: Pieces, groups: Mapping[str, bytes | None], nodes: Mapping[str, bytes | None], graph: bytes | None) -> tuple[list[bytes | memoryview], Pieces]:
    """The parts of a new graph.json: `old` (the file `pieces` describes) with these owners' edge
    groups and these nodes replaced, added or (None, or an empty group) removed, and the `graph`
    object replaced (None: kept). Unchanged runs are views of `old`, never copied; the new
    `Pieces` describes the result. Equal to encoding the new graph whole."""
    parts: list[bytes | memoryview] = [HEAD]
    at = len(HEAD)
    changes = {owner: (blob[1:-1] if blob is not None and len(blob) > 2 else None) for owner, blob in groups.items()}
    owners, group_lengths, at = _spliced(old, at, pieces.owners, pieces.group_lengths, changes, parts)
    parts.append(GRAPH)
    at += len(GRAPH)
    parts.append(graph if graph is not None else old[at : at + pieces.graph_length])
    at += pieces.graph_length + len(NODES)
    parts.append(NODES)
    ids, node_lengths, at = _spliced(old, at, pieces.ids, pieces.node_lengths, nodes, parts)
    parts.append(TAIL)
    return parts, Pieces(owners, group_lengths, ids, node_lengths, len(graph) if graph is not None else pieces.graph_length)


def _spliced(old: memoryview, start: int, names: list[str], lengths: array, changes: Mapping[str, bytes | memoryview | None], parts: list[bytes | memoryview]) -> tuple[list[str], array, int]:
    """One comma-joined sequence of `old` from `start` (the pieces `names`, `lengths`) with
    `changes` applied, appended to `parts` as runs of `old` and new pieces; the new names and
    lengths, and where the old sequence ended."""
    new_names: list[str] = []
    new_lengths = array("q")
    out: list[bytes | memoryview] = []
    done, at = 0, start  # names[:done] are placed; `at`: where names[done] starts in `old`

    def keep(upto: int) -> None:
        nonlocal done, at
        if upto > done:
            span = sum(lengths[done:upto]) + (upto - done - 1)
            out.append(old[at : at + span])
            new_names.extend(names[done:upto])
            new_lengths.extend(lengths[done:upto])
            at += span + 1
            done = upto

    for name in sorted(changes):
        i = bisect_left(names, name, done)
        keep(i)
        if i < len(names) and names[i] == name:  # replaced or removed: skip its old bytes
            at += lengths[i] + 1
            done = i + 1
        piece = changes[name]
        if piece is not None:
            out.append(piece)
            new_names.append(name)
            new_lengths.append(len(piece))
    keep(len(names))
    for k, part in enumerate(out):
        if k:
            parts.append(b",")
        parts.append(part)
    end = start + sum(lengths) + max(0, len(names) - 1)
    return new_names, new_lengths, end


def to_networkx(data: dict[str, Any]):
    """The graph as a `networkx.MultiDiGraph` (keys are the relation names)."""
    import networkx as nx

    return nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")
