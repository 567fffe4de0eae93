"""Exports of a graph.json to the formats other tools read: Gephi, Neo4j, Obsidian, Mermaid.

Each writer keeps node ids, kinds, relations, confidence and anchors wherever its format has room:
GraphML/GEXF as attributes (lists and dicts as JSON strings), Cypher as properties, JSON Canvas in
the node text and edge label, Mermaid in classes, edge labels and one ``%%`` comment per node.
Output is deterministic: nodes by id, edges by (source, target, relation, owner, line).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import networkx as nx

from .layout import compute_layout

FORMATS = ("graphml", "gexf", "cypher", "obsidian-canvas", "mermaid")
FLOAT_KEYS = {"rank", "score", "cohesion"}


def export(data: dict[str, Any], fmt: str) -> str:
    """The graph in ``fmt`` (one of :data:`FORMATS`) as text."""
    writers: dict[str, Callable[[dict[str, Any]], str]] = {
        "graphml": to_graphml,
        "gexf": to_gexf,
        "cypher": to_cypher,
        "obsidian-canvas": to_canvas,
        "mermaid": to_mermaid,
    }
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    return writers[fmt](data)


def sorted_nodes(data: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(data.get("nodes") or [], key=lambda n: str(n["id"]))


def sorted_edges(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Edges whose both ends exist, in a stable order."""
    ids = {str(n["id"]) for n in data.get("nodes") or []}
    edges = [e for e in data.get("edges") or [] if str(e.get("source")) in ids and str(e.get("target")) in ids]
    return sorted(edges, key=lambda e: (str(e["source"]), str(e["target"]), relation_of(e), str(e.get("owner") or ""), e.get("line") or 0))


def relation_of(edge: dict[str, Any]) -> str:
    return str(edge.get("relation") or edge.get("key") or "related")


# ---- GraphML / GEXF -----------------------------------------------------------------------------


def _flat(attrs: dict[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Attributes as the XML writers accept them: scalars kept, lists/dicts as JSON, None dropped."""
    out: dict[str, Any] = {}
    for key in sorted(attrs):
        value = attrs[key]
        if key in skip or value is None:
            continue
        if isinstance(value, (list, dict, tuple)):
            out[key] = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif key in FLOAT_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)
        elif isinstance(value, (str, int, float, bool)):
            out[key] = value
        else:
            out[key] = str(value)
    return out


def _xml_graph(data: dict[str, Any], edge_id_key: str) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    g.graph.update(_flat(data.get("graph") or {}))
    for n in sorted_nodes(data):
        g.add_node(str(n["id"]), **_flat(n, skip=("id",)))
    for i, e in enumerate(sorted_edges(data)):
        attrs = _flat(e, skip=("source", "target", "key"))
        attrs["relation"] = relation_of(e)
        attrs[edge_id_key] = f"e{i}"
        g.add_edge(str(e["source"]), str(e["target"]), key=relation_of(e), **attrs)
    return g


def to_graphml(data: dict[str, Any]) -> str:
    """GraphML (Gephi, yEd, Cytoscape): edge ids unique, the relation kept as the `relation` key."""
    g = _xml_graph(data, "eid")
    return "\n".join(nx.generate_graphml(g, edge_id_from_attribute="eid")) + "\n"


def to_gexf(data: dict[str, Any]) -> str:
    """GEXF 1.2 (Gephi): edge label = relation, weight = confidence score."""
    g = _xml_graph(data, "id")
    for _, _, attrs in g.edges(data=True):
        attrs["label"] = attrs["relation"]
        if "score" in attrs:
            attrs["weight"] = attrs["score"]
    return "\n".join(nx.generate_gexf(g)) + "\n"


# ---- Cypher -------------------------------------------------------------------------------------


def cypher_string(value: str) -> str:
    """A single-quoted Cypher string literal with every special character escaped."""
    out = []
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch in "\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def cypher_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "null"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(cypher_string(v) for v in value) + "]"
    if isinstance(value, (list, tuple, dict)):
        return cypher_string(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return cypher_string(str(value))


def cypher_name(name: str) -> str:
    """A backtick-quoted label / relationship type (backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _cypher_map(attrs: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{cypher_name(k)}: {cypher_value(v)}" for k, v in attrs.items()) + "}"


def to_cypher(data: dict[str, Any]) -> str:
    """Neo4j statements, one per line, idempotent (MERGE on ids) so re-running updates in place.

    Every node gets the label ``KgNode`` plus its kind (``Note``, ``Tag`` ...); its anchor becomes
    ``anchor_locator``/``anchor_hash`` (Neo4j properties cannot be maps). Relationship types are the
    relation in upper case; the exact relation is kept as a property.
    """
    lines = ["// vault-kg export: scope " + str((data.get("graph") or {}).get("scope") or ""), "CREATE CONSTRAINT kg_node_id IF NOT EXISTS FOR (n:KgNode) REQUIRE n.id IS UNIQUE;"]
    for n in sorted_nodes(data):
        props: dict[str, Any] = {}
        for key in sorted(n):
            value = n[key]
            if key == "id" or value is None:
                continue
            if key == "anchor" and isinstance(value, dict):
                props["anchor_locator"] = value.get("locator")
                props["anchor_hash"] = value.get("hash")
                continue
            props[key] = value
        props = {k: v for k, v in props.items() if v is not None}
        kind = str(n.get("kind") or "node")
        label = cypher_name(_type_name(kind, title=True))
        lines.append(f"MERGE (n:KgNode {{id: {cypher_string(str(n['id']))}}}) SET n:{label} SET n += {_cypher_map(props)};")
    seen: dict[str, int] = {}
    for e in sorted_edges(data):
        rel = relation_of(e)
        props = {k: e[k] for k in sorted(e) if k not in ("source", "target", "key") and e[k] is not None}
        props["relation"] = rel
        base = json.dumps([str(e["source"]), str(e["target"]), rel, e.get("owner"), e.get("line")])
        seen[base] = seen.get(base, 0) + 1
        eid = hashlib.sha1(f"{base}#{seen[base]}".encode()).hexdigest()[:16]
        lines.append(
            f"MATCH (a:KgNode {{id: {cypher_string(str(e['source']))}}}), "
            f"(b:KgNode {{id: {cypher_string(str(e['target']))}}}) "
            f"MERGE (a)-[r:{cypher_name(_type_name(rel))} {{eid: {cypher_string(eid)}}}]->(b) "
            f"SET r += {_cypher_map(props)};"
        )
    return "\n".join(lines) + "\n"


def _type_name(name: str, title: bool = False) -> str:
    """`depends_on` → `DEPENDS_ON` (relationship) or `note` → `Note` (label)."""
    clean = re.sub(r"[^0-9A-Za-z_]+", "_", name).strip("_") or "RELATED"
    if title:
        return "".join(part[:1].upper() + part[1:] for part in clean.split("_"))
    return clean.upper()


# ---- JSON Canvas (Obsidian) ---------------------------------------------------------------------

CANVAS_W, CANVAS_H = 260, 80
CANVAS_SCALE = 24.0
CONFIDENCE_COLOR = {"INFERRED": "3", "AMBIGUOUS": "1"}


def to_canvas(data: dict[str, Any]) -> str:
    """JSON Canvas 1.0: notes as `file` nodes pointing at the note, everything else as `text`;
    communities as `group` nodes behind their members; edges labelled with the relation (and the
    confidence when not EXTRACTED, which also sets the edge colour)."""
    positions, discs = compute_layout(data)
    nodes_out: list[dict[str, Any]] = []
    for cid, (cx, cy, r) in sorted(discs.items()):
        if cid < 0:
            continue
        size = int(2 * r * CANVAS_SCALE) + CANVAS_W
        nodes_out.append(
            {
                "id": f"community-{cid}",
                "type": "group",
                "x": int(cx * CANVAS_SCALE) - size // 2,
                "y": int(cy * CANVAS_SCALE) - size // 2,
                "width": size,
                "height": size,
                "label": _community_name(data, cid),
            }
        )
    for n in sorted_nodes(data):
        nid = str(n["id"])
        x, y = positions[nid]
        node: dict[str, Any] = {
            "id": nid,
            "x": int(x * CANVAS_SCALE) - CANVAS_W // 2,
            "y": int(y * CANVAS_SCALE) - CANVAS_H // 2,
            "width": CANVAS_W,
            "height": CANVAS_H,
        }
        if n.get("kind") == "note" and n.get("source"):
            node["type"] = "file"
            node["file"] = str(n["source"])
        else:
            node["type"] = "text"
            node["text"] = _canvas_text(n)
        if n.get("status") not in (None, "live"):
            node["color"] = "2"
        nodes_out.append(node)
    edges_out = []
    for i, e in enumerate(sorted_edges(data)):
        conf = str(e.get("confidence") or "EXTRACTED")
        edge = {"id": f"e{i}", "fromNode": str(e["source"]), "toNode": str(e["target"]), "toEnd": "arrow", "label": relation_of(e) + ("" if conf == "EXTRACTED" else f" ({conf})")}
        if conf in CONFIDENCE_COLOR:
            edge["color"] = CONFIDENCE_COLOR[conf]
        edges_out.append(edge)
    return json.dumps({"nodes": nodes_out, "edges": edges_out}, ensure_ascii=False, indent=1) + "\n"


def _canvas_text(n: dict[str, Any]) -> str:
    lines = [f"**{n.get('label') or n['id']}**", "", f"kind: {n.get('kind') or 'node'}", f"id: `{n['id']}`"]
    if n.get("status") not in (None, "live"):
        lines.append(f"status: {str(n['status']).upper()}")
    if n.get("source"):
        lines.append(f"source: {n['source']}" + (f":{n['line']}" if n.get("line") else ""))
    anchor = n.get("anchor")
    if isinstance(anchor, dict) and anchor.get("locator"):
        lines.append(f"anchor: {anchor['locator']} ({anchor.get('hash') or ''})")
    if n.get("summary"):
        lines += ["", str(n["summary"])]
    return "\n".join(lines)


def _community_name(data: dict[str, Any], cid: int) -> str:
    for c in (data.get("graph") or {}).get("communities") or []:
        if isinstance(c, dict) and c.get("id") == cid and c.get("name"):
            return str(c["name"])
    return f"community {cid}"


# ---- Mermaid ------------------------------------------------------------------------------------

MERMAID_ESCAPES = {'"': "#34;", "#": "#35;", "<": "#60;", ">": "#62;", "`": "#96;", "|": "#124;", "&": "#38;", "\n": " ", "\r": " "}


def mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label (entity codes for the characters it parses)."""
    return "".join(MERMAID_ESCAPES.get(ch, ch) for ch in text)


def to_mermaid(data: dict[str, Any]) -> str:
    """`flowchart LR` with ids n0, n1 … (safe whatever the node id), quoted labels, one class per
    kind, dotted arrows for INFERRED/AMBIGUOUS edges, and a `%% n0 {"id": …, "kind": …, "anchor": …}`
    comment per node so the real ids and anchors survive."""
    nodes = sorted_nodes(data)
    short = {str(n["id"]): f"n{i}" for i, n in enumerate(nodes)}
    lines = ["flowchart LR"]
    by_kind: dict[str, list[str]] = {}
    for n in nodes:
        sid = short[str(n["id"])]
        meta = {"id": str(n["id"]), "kind": str(n.get("kind") or "node")}
        if isinstance(n.get("anchor"), dict):
            meta["anchor"] = n["anchor"]
        lines.append(f"  %% {sid} {json.dumps(meta, ensure_ascii=False, sort_keys=True)}")
        label = str(n.get("label") or n["id"])
        if n.get("status") not in (None, "live"):
            label += f" [{str(n['status']).upper()}]"
        lines.append(f'  {sid}["{mermaid_text(label)}"]')
        by_kind.setdefault(_type_name(str(n.get("kind") or "node")).lower(), []).append(sid)
    for e in sorted_edges(data):
        conf = str(e.get("confidence") or "EXTRACTED")
        text = relation_of(e) + ("" if conf == "EXTRACTED" else f" ({conf})")
        arrow = "-->" if conf == "EXTRACTED" else "-.->"
        lines.append(f'  {short[str(e["source"])]} {arrow}|"{mermaid_text(text)}"| {short[str(e["target"])]}')
    for kind in sorted(by_kind):
        lines.append(f"  classDef k_{kind} {MERMAID_STYLE.get(kind, 'fill:#eef,stroke:#669')}")
        lines.append(f"  class {','.join(by_kind[kind])} k_{kind}")
    return "\n".join(lines) + "\n"


MERMAID_STYLE = {
    "note": "fill:#dbeafe,stroke:#2563eb",
    "tag": "fill:#fef3c7,stroke:#d97706",
    "section": "fill:#f1f5f9,stroke:#64748b",
    "entity": "fill:#dcfce7,stroke:#16a34a",
    "unresolved": "fill:#fff,stroke:#94a3b8,stroke-dasharray:3 3",
}
