"""graph.json written as the change: a splice of the old file equals encoding the new graph whole."""

from __future__ import annotations

import random
from typing import Any

import orjson

from graph_out.graph_json import JSON_OPTIONS, Pieces, encode_group, encode_indexed, encode_node_link, splice


def _data(nodes: dict[str, dict[str, Any]], graph: dict[str, Any]) -> dict[str, Any]:
    return {"directed": True, "multigraph": True, "graph": graph, "nodes": [{"id": k, **nodes[k]} for k in sorted(nodes)], "edges": []}


def _groups(rng: random.Random) -> dict[str, bytes]:
    owners = sorted(rng.sample(range(60), rng.randint(0, 8)))
    return {f"o{i:02d}.md": encode_group([{"owner": f"o{i:02d}.md", "source": "a", "target": f"t{k}"} for k in range(rng.randint(0, 2))]) for i in owners}


def test_a_splice_gives_the_bytes_of_the_whole_encoding() -> None:
    """Random graphs, random changes (nodes and groups added, replaced, removed, emptied; the
    first, the last, all of them; the `graph` object replaced or kept): the spliced file and its
    pieces are the whole encoding's. Kills: a lost or doubled comma, a run cut one byte off, a
    removed piece kept, pieces that do not describe the new file."""
    rng = random.Random(11)
    for trial in range(400):
        nodes = {f"n{i:03d}": {"kind": "note", "label": "x" * rng.randint(0, 9)} for i in rng.sample(range(40), rng.randint(0, 10))}
        groups = _groups(rng)
        graph = {"counts": rng.random()}
        old, pieces = encode_indexed(_data(nodes, graph), groups)
        assert old == encode_node_link(_data(nodes, graph), groups.values()) and pieces.size == len(old)
        node_changes: dict[str, bytes | None] = {}
        for _ in range(rng.randint(0, 6)):
            nid = f"n{rng.randrange(40):03d}"
            if nid in nodes and rng.random() < 0.4:
                del nodes[nid]
                node_changes[nid] = None
            else:
                nodes[nid] = {"kind": "tag", "label": "y" * rng.randint(0, 4)}
                node_changes[nid] = orjson.dumps({"id": nid, **nodes[nid]}, option=JSON_OPTIONS)
        group_changes: dict[str, bytes | None] = {}
        for owner, blob in _groups(rng).items():
            groups[owner] = group_changes[owner] = blob
        for owner in [o for o in groups if rng.random() < 0.1]:
            del groups[owner]
            group_changes[owner] = None
        groups = dict(sorted((o, b) for o, b in groups.items()))
        new_graph = {"counts": -1} if rng.random() < 0.5 else graph
        parts, after = splice(memoryview(old), pieces, group_changes, node_changes, None if new_graph is graph else orjson.dumps(new_graph, option=JSON_OPTIONS))
        expected, expected_pieces = encode_indexed(_data(nodes, new_graph), groups)
        assert b"".join(parts) == expected, f"trial {trial}"
        assert after == expected_pieces and Pieces.from_bytes(after.to_bytes()) == after
