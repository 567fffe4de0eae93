"""graph.html without a browser: self-contained, escaped, deterministic, faithful to graph.json."""

from __future__ import annotations

import copy
import json
import math
import random
import re
from typing import Any

import pytest

from graph_factory import make_graph
from graph_out.html import build_payload, render_html
from graph_out.layout import compute_layout

EVIL = "</script><script>alert(1)</script> <!-- & \u2028 \"quoted\" 'single'"


@pytest.fixture(scope="module")
def graph() -> dict[str, Any]:
    data = make_graph(120, seed=3)
    data["nodes"][0]["summary"] = EVIL
    data["nodes"][0]["label"] = "Evil </SCRIPT> label"
    return data


def embedded_payload(page: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="kg-data">(.*?)</script>', page, re.S)
    assert match, "no embedded graph data"
    return json.loads(match.group(1))


def test_same_graph_gives_same_bytes_whatever_the_input_order(graph: dict[str, Any]) -> None:
    first = render_html(graph)
    shuffled = copy.deepcopy(graph)
    random.Random(1).shuffle(shuffled["nodes"])
    random.Random(2).shuffle(shuffled["edges"])
    assert render_html(copy.deepcopy(graph)) == first
    assert render_html(shuffled) == first


def test_a_changed_graph_gives_a_different_page(graph: dict[str, Any]) -> None:
    changed = copy.deepcopy(graph)
    changed["nodes"][5]["status"] = "stale"
    assert render_html(changed) != render_html(graph)


def test_note_text_cannot_break_out_of_the_data_block(graph: dict[str, Any]) -> None:
    page = render_html(graph)
    assert page.lower().count("</script>") == 3  # graph-state.js, the data block and the code block, nothing else
    assert "<!--" not in page
    assert "\u2028" not in page
    payload = embedded_payload(page)
    i = payload["nodes"]["id"].index(graph["nodes"][0]["id"])
    assert payload["nodes"]["summary"][i] == EVIL
    assert payload["nodes"]["label"][i] == "Evil </SCRIPT> label"


def test_page_is_self_contained(graph: dict[str, Any]) -> None:
    """Nothing from the network, and one file from beside the page: graph-state.js, which kg writes."""
    page = render_html(graph)
    assert re.findall(r"<script[^>]*\ssrc=\"([^\"]*)\"", page) == ["graph-state.js"]
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"<[^>]*\s(src|href)\s*=", markup), "the page must not load anything"
    assert "<link" not in markup and "@import" not in page and "url(" not in page
    assert not re.search(r"https?://", page.split('id="kg-data">')[0])
    assert "fetch(" not in page and "XMLHttpRequest" not in page and "import(" not in page


def test_payload_is_faithful_to_graph_json(graph: dict[str, Any]) -> None:
    payload = build_payload(graph)
    nodes = payload["nodes"]
    assert sorted(nodes["id"]) == nodes["id"] == sorted(n["id"] for n in graph["nodes"])
    columns = {k: len(v) for k, v in nodes.items()}
    assert set(columns.values()) == {len(graph["nodes"])}
    by_id = {n["id"]: n for n in graph["nodes"]}
    for i, nid in enumerate(nodes["id"]):
        node = by_id[nid]
        assert payload["kinds"][nodes["kind"][i]] == node["kind"]
        assert payload["statuses"][nodes["status"][i]] == node["status"]
        assert nodes["community"][i] == node["community"]
        assert nodes["tags"][i] == node["tags"]
        assert math.isfinite(nodes["x"][i]) and math.isfinite(nodes["y"][i])
    edges = payload["edges"]
    assert len(edges["s"]) == len(graph["edges"])
    seen = sorted((nodes["id"][s], nodes["id"][t], payload["relations"][r], payload["confidences"][c]) for s, t, r, c in zip(edges["s"], edges["t"], edges["rel"], edges["conf"]))
    want = sorted((e["source"], e["target"], e["relation"], e["confidence"]) for e in graph["edges"])
    assert seen == want
    gods = [nodes["id"][i] for i in payload["god_nodes"]]
    assert gods == graph["graph"]["god_nodes"][: len(gods)] and gods
    assert {c["id"] for c in payload["communities"]} == {n["community"] for n in graph["nodes"]}


def test_layout_keeps_communities_together_and_nodes_apart(graph: dict[str, Any]) -> None:
    positions, discs = compute_layout(graph)
    assert set(positions) == {n["id"] for n in graph["nodes"]}
    inside = 0
    for n in graph["nodes"]:
        cx, cy, r = discs[n["community"]]
        x, y = positions[n["id"]]
        inside += math.hypot(x - cx, y - cy) <= r * 1.2
    assert inside / len(graph["nodes"]) > 0.9
    points = sorted(positions.values())
    assert len(set(points)) == len(points), "two nodes share a position"


def test_missing_optional_fields_still_render() -> None:
    bare = {
        "directed": True,
        "multigraph": True,
        "graph": {},
        "nodes": [{"id": "a"}, {"id": "b", "kind": "note", "community": 0}, {"id": "c", "label": None, "tags": None}],
        "edges": [{"source": "a", "target": "b"}, {"source": "a", "target": "gone"}],
    }
    payload = build_payload(bare)
    assert payload["nodes"]["id"] == ["a", "b", "c"]
    assert payload["relations"] == ["related"] and len(payload["edges"]["s"]) == 1
    assert "kg-data" in render_html(bare)


def test_empty_graph_renders() -> None:
    page = render_html({"graph": {"scope": "empty"}, "nodes": [], "edges": []})
    assert embedded_payload(page)["nodes"]["id"] == []
    assert "<title>empty · vault-kg</title>" in page


def test_malformed_values_do_not_break_the_page() -> None:
    data = make_graph(20, seed=1)
    data["nodes"][0]["rank"] = float("nan")
    data["nodes"][1]["rank"] = "high"
    data["nodes"][2]["community"] = "x"
    data["nodes"][3]["tags"] = None
    payload = build_payload(data)
    assert payload["nodes"]["rank"][:2] == [0.0, 0.0]
    assert payload["nodes"]["community"][2] == -1
    assert "kg-data" in render_html(data)
