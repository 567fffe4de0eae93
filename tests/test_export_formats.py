"""Every export read back by what reads that format: ids, kinds, relations, confidence, anchors survive."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from typing import Any

import networkx as nx
import pytest

from graph_factory import build_example_graph, make_graph
from graph_out.export import FORMATS, export

NASTY_ID = 'note:we\'ird "folder"/a\\b <c> #d |e| `f`\nline.md'


def nasty_graph() -> dict[str, Any]:
    """Ids and text with every character the formats quote differently, and a typed LLM relation."""
    data = make_graph(40, seed=9)
    first = data["nodes"][0]
    old = first["id"]
    first.update(
        id=NASTY_ID,
        label='Wé\'ird "label" <b>#1</b> | `x` & {y}',
        kind="note",
        anchor={"locator": "src/a.py › class A › method b", "hash": "ab" * 32},
        summary="line one\nline two\ttab \\ backslash ' quote",
        status="stale",
    )
    for e in data["edges"]:
        e["source"] = NASTY_ID if e["source"] == old else e["source"]
        e["target"] = NASTY_ID if e["target"] == old else e["target"]
    data["edges"].append({"source": NASTY_ID, "target": data["nodes"][1]["id"], "key": "depends_on", "relation": "depends_on", "confidence": "AMBIGUOUS", "score": 0.3, "owner": "x.md", "line": None})
    return data


@pytest.fixture(scope="module", params=["factory", "nasty", "example"])
def graph(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if request.param == "factory":
        return make_graph(80, seed=4)
    if request.param == "nasty":
        return nasty_graph()
    return build_example_graph(tmp_path_factory.mktemp("example-export"))


def edge_multiset(data: dict[str, Any]) -> Counter[tuple[str, str, str, str]]:
    return Counter((e["source"], e["target"], e["relation"], e["confidence"]) for e in data["edges"])


def kinds(data: dict[str, Any]) -> dict[str, str]:
    return {n["id"]: n["kind"] for n in data["nodes"]}


def anchors(data: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {n["id"]: n["anchor"] for n in data["nodes"] if isinstance(n.get("anchor"), dict)}


def test_graphml_round_trips_through_networkx(graph: dict[str, Any]) -> None:
    g = nx.read_graphml(io.StringIO(export(graph, "graphml")), force_multigraph=True)
    assert isinstance(g, nx.MultiDiGraph)
    assert {n: a["kind"] for n, a in g.nodes(data=True)} == kinds(graph)
    back = Counter((u, v, a["relation"], a["confidence"]) for u, v, a in g.edges(data=True))
    assert back == edge_multiset(graph)
    assert {n: json.loads(a["anchor"]) for n, a in g.nodes(data=True) if "anchor" in a} == anchors(graph)
    some = next(n for n in graph["nodes"] if n.get("tags"))
    assert json.loads(g.nodes[some["id"]]["tags"]) == some["tags"]
    assert json.loads(g.graph["god_nodes"]) == graph["graph"]["god_nodes"]


def test_gexf_round_trips_through_networkx(graph: dict[str, Any]) -> None:
    g = nx.read_gexf(io.StringIO(export(graph, "gexf")))
    assert {n: a["kind"] for n, a in g.nodes(data=True)} == kinds(graph)
    assert {n: a["label"] for n, a in g.nodes(data=True)} == {n["id"]: n.get("label") or n["id"] for n in graph["nodes"]}
    back = Counter((u, v, a["relation"], a["confidence"]) for u, v, a in g.edges(data=True))
    assert back == edge_multiset(graph)
    assert {n: json.loads(a["anchor"]) for n, a in g.nodes(data=True) if "anchor" in a} == anchors(graph)


# ---- Cypher: a small reader for exactly the statements the exporter writes ------------------------

CYPHER_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*')|(?P<name>`(?:[^`]|``)*`)|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<word>[A-Za-z_]\w*)|(?P<sym>[{}\[\]:,()\-<>;.=+]))""", re.S)


def cypher_tokens(text: str) -> list[tuple[str, Any]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = CYPHER_TOKEN.match(text, pos)
        assert m, f"cannot tokenize Cypher at: {text[pos : pos + 40]!r}"
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "str":
            value = json.loads('"' + value[1:-1].replace('"', '\\"').replace("\\'", "'") + '"')
        elif kind == "name":
            value = value[1:-1].replace("``", "`")
        elif kind == "num":
            value = float(value) if re.search(r"[.eE]", value) else int(value)
        out.append((kind, value))
    return out


def cypher_value(tokens: list[tuple[str, Any]], i: int) -> tuple[Any, int]:
    kind, value = tokens[i]
    if kind in ("str", "num"):
        return value, i + 1
    if kind == "word" and value in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[value], i + 1
    if value == "[":
        items, i = [], i + 1
        while tokens[i][1] != "]":
            item, i = cypher_value(tokens, i)
            items.append(item)
            if tokens[i][1] == ",":
                i += 1
        return items, i + 1
    if value == "{":
        out, i = {}, i + 1
        while tokens[i][1] != "}":
            key = tokens[i][1]
            assert tokens[i + 1][1] == ":"
            out[key], i = cypher_value(tokens, i + 2)
            if tokens[i][1] == ",":
                i += 1
        return out, i + 1
    raise AssertionError(f"unexpected Cypher token {tokens[i]}")


def read_cypher(text: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    nodes: dict[str, dict[str, Any]] = {}
    rels: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line or line.startswith("//") or line.startswith("CREATE CONSTRAINT"):
            continue
        assert line.endswith(";"), line
        t = cypher_tokens(line)
        words = [v for k, v in t if k == "word"]
        if words[0] == "MERGE":  # MERGE (n:KgNode {id: '…'}) SET n:`Kind` SET n += {…};
            ident, _ = cypher_value(t, 5)
            label = t[t.index(("word", "SET")) + 3][1]
            props, _ = cypher_value(t, len(t) - 2 - _map_len(t))
            nodes[ident["id"]] = {**props, "_label": label}
        else:  # MATCH (a:KgNode {id: …}), (b:KgNode {id: …}) MERGE (a)-[r:`TYPE` {eid: …}]->(b) SET r += {…};
            a, i = cypher_value(t, 5)
            b, i = cypher_value(t, i + 6)
            j = t.index(("sym", "["))
            rtype = t[j + 3][1]
            key, _ = cypher_value(t, j + 4)
            props, _ = cypher_value(t, len(t) - 2 - _map_len(t))
            rels.append({**props, **key, "source": a["id"], "target": b["id"], "type": rtype})
    return nodes, rels


def _map_len(t: list[tuple[str, Any]]) -> int:
    """Tokens in the trailing `{…}` map (before the final `;`)."""
    depth, j = 0, len(t) - 2
    while True:
        if t[j] == ("sym", "}"):
            depth += 1
        elif t[j] == ("sym", "{"):
            depth -= 1
            if depth == 0:
                return len(t) - 2 - j
        j -= 1


def test_cypher_round_trips_through_a_parser(graph: dict[str, Any]) -> None:
    nodes, rels = read_cypher(export(graph, "cypher"))
    assert {k: v["kind"] for k, v in nodes.items()} == kinds(graph)
    assert all(v["_label"] == v["kind"].title() for v in nodes.values())
    assert Counter((r["source"], r["target"], r["relation"], r["confidence"]) for r in rels) == edge_multiset(graph)
    assert all(r["type"] == r["relation"].upper() for r in rels)
    assert len({r["eid"] for r in rels}) == len(rels)
    assert {k: {"locator": v["anchor_locator"], "hash": v["anchor_hash"]} for k, v in nodes.items() if "anchor_locator" in v} == anchors(graph)
    by_id = {n["id"]: n for n in graph["nodes"]}
    for nid, props in nodes.items():
        assert props.get("summary", "") == (by_id[nid].get("summary") or "")
        assert props.get("tags", []) == (by_id[nid].get("tags") or [])


# ---- JSON Canvas --------------------------------------------------------------------------------


def test_obsidian_canvas_follows_json_canvas_1_0(graph: dict[str, Any]) -> None:
    canvas = json.loads(export(graph, "obsidian-canvas"))
    assert set(canvas) == {"nodes", "edges"}
    ids = [n["id"] for n in canvas["nodes"]]
    assert len(ids) == len(set(ids))
    for n in canvas["nodes"]:
        assert n["type"] in {"text", "file", "link", "group"}
        assert all(isinstance(n[k], int) for k in ("x", "y", "width", "height"))
        assert n["width"] > 0 and n["height"] > 0
        assert {"text": "text", "file": "file", "link": "url", "group": "label"}[n["type"]] in n or n["type"] == "group"
        assert n.get("color") in (None, "1", "2", "3", "4", "5", "6")
    graph_nodes = [n for n in canvas["nodes"] if n["type"] != "group"]
    assert {n["id"] for n in graph_nodes} == set(kinds(graph))
    by_id = {n["id"]: n for n in graph["nodes"]}
    for n in graph_nodes:
        src = by_id[n["id"]]
        if n["type"] == "file":
            assert src["kind"] == "note" and n["file"] == src["source"]
        else:
            assert f"kind: {src['kind']}" in n["text"]
            if isinstance(src.get("anchor"), dict):
                assert src["anchor"]["locator"] in n["text"] and src["anchor"]["hash"] in n["text"]
    known = set(ids)
    back = Counter()
    for e in canvas["edges"]:
        assert e["fromNode"] in known and e["toNode"] in known
        relation, _, conf = e["label"].partition(" (")
        back[(e["fromNode"], e["toNode"], relation, conf.rstrip(")") or "EXTRACTED")] += 1
    assert back == edge_multiset(graph)


# ---- Mermaid ------------------------------------------------------------------------------------


def mermaid_unescape(text: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), text)


def read_mermaid(text: str) -> tuple[dict[str, dict[str, Any]], list[tuple[str, str, str, str]]]:
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    meta: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    classes: dict[str, str] = {}
    edges = []
    for line in lines[1:]:
        line = line.strip()
        if m := re.fullmatch(r"%% (n\d+) (\{.*\})", line):
            meta[m.group(1)] = json.loads(m.group(2))
        elif m := re.fullmatch(r'(n\d+)\["([^"]*)"\]', line):
            labels[m.group(1)] = mermaid_unescape(m.group(2))
        elif m := re.fullmatch(r'(n\d+) (-->|-\.->)\|"([^"]*)"\| (n\d+)', line):
            text_ = mermaid_unescape(m.group(3))
            relation, _, conf = text_.partition(" (")
            conf = conf.rstrip(")") or "EXTRACTED"
            assert (m.group(2) == "-->") == (conf == "EXTRACTED")
            edges.append((m.group(1), m.group(4), relation, conf))
        elif m := re.fullmatch(r"class ([n\d,]+) (k_\w+)", line):
            for sid in m.group(1).split(","):
                classes[sid] = m.group(2)[2:]
        else:
            assert re.fullmatch(r"classDef k_\w+ [^;]+", line), f"unexpected Mermaid line: {line!r}"
    nodes = {meta[s]["id"]: {**meta[s], "label": labels[s], "class": classes[s]} for s in meta}
    ids = {s: meta[s]["id"] for s in meta}
    return nodes, [(ids[a], ids[b], r, c) for a, b, r, c in edges]


def test_mermaid_round_trips_through_a_parser(graph: dict[str, Any]) -> None:
    text = export(graph, "mermaid")
    nodes, edges = read_mermaid(text)
    assert {k: v["kind"] for k, v in nodes.items()} == kinds(graph)
    assert all(v["class"] == v["kind"] for v in nodes.values())
    assert Counter(edges) == edge_multiset(graph)
    assert {k: v["anchor"] for k, v in nodes.items() if "anchor" in v} == anchors(graph)
    by_id = {n["id"]: n for n in graph["nodes"]}
    for nid, node in nodes.items():
        assert node["label"].startswith(str(by_id[nid].get("label") or nid).replace("\n", " "))


def test_exports_are_deterministic_and_reject_unknown_formats() -> None:
    data = make_graph(30, seed=2)
    shuffled = json.loads(json.dumps(data))
    shuffled["nodes"].reverse()
    shuffled["edges"].reverse()
    for fmt in FORMATS:
        assert export(data, fmt) == export(shuffled, fmt), fmt
    with pytest.raises(ValueError, match="unknown export format"):
        export(data, "dot")
