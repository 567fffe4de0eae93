"""graph.html: one self-contained, offline page to look at a scope's graph.

The page is this module's template plus `assets/graph.css` and `assets/graph.js` (written here, no
third-party script, no network) and the graph itself as compact columnar JSON inside a
``<script type="application/json">`` block. Positions come from :mod:`graph_out.layout`, so the
browser draws at once and the same graph always gives a byte-identical file.

The page is drawn when someone looks (`kg html`, a build), not after every edit; it records which
graph.json it drew (the CRC-32 of its bytes) and loads one sibling file kg rewrites with every
graph.json, `graph-state.js`. When the two differ the page says it is behind and how to redraw it.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from .layout import community_of, compute_layout, node_radius, rank_of

LOD_THRESHOLD = 2500
GOD_NODES_SHOWN = 25
COMMUNITY_TOP = 12


STATE_SCRIPT = "graph-state.js"


def render_html(data: dict[str, Any], digest: int | None = None) -> str:
    """The whole page for a graph.json dict (networkx node-link, ``edges`` key); `digest`: the
    CRC-32 of the graph.json bytes it came from (the page compares it with graph-state.js)."""
    payload = build_payload(data)
    payload["meta"]["digest"] = digest
    css = _asset("graph.css")
    js = _asset("graph.js")
    meta = payload["meta"]
    title = f"{meta['scope'] or 'graph'} · vault-kg"
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            '<meta name="generator" content="',
            html.escape(str(meta["built_with"])),
            '">\n',
            "<title>",
            html.escape(title),
            "</title>\n<style>\n",
            css,
            "</style>\n</head>\n<body>\n",
            _BODY.replace("{scope}", html.escape(str(meta["scope"] or "graph"))),
            f'<script src="{STATE_SCRIPT}"></script>\n',
            '<script type="application/json" id="kg-data">',
            script_json(payload),
            "</script>\n",
            "<script>\n",
            js,
            "</script>\n</body>\n</html>\n",
        ]
    )


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>`, `&` or JS line separators."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def build_payload(data: dict[str, Any]) -> dict[str, Any]:
    """The page's data: nodes as columns (compact, fast to parse), edges as index columns."""
    graph = data.get("graph") or {}
    nodes = sorted(data.get("nodes") or [], key=lambda n: str(n["id"]))
    positions, discs = compute_layout(data)
    index = {str(n["id"]): i for i, n in enumerate(nodes)}
    kinds = _vocabulary(str(n.get("kind") or "node") for n in nodes)
    statuses = _vocabulary(["live", *(str(n.get("status") or "live") for n in nodes)])
    raw_edges = [e for e in data.get("edges") or [] if str(e.get("source")) in index and str(e.get("target")) in index]
    raw_edges.sort(key=lambda e: (index[str(e["source"])], index[str(e["target"])], str(_relation(e)), str(e.get("owner") or ""), e.get("line") or 0))
    relations = _vocabulary(_relation(e) for e in raw_edges)
    confidences = _vocabulary(str(e.get("confidence") or "EXTRACTED") for e in raw_edges)

    kind_ix = {k: i for i, k in enumerate(kinds)}
    status_ix = {k: i for i, k in enumerate(statuses)}
    columns: dict[str, list[Any]] = {
        k: [] for k in ("id", "label", "kind", "status", "community", "rank", "size", "x", "y", "source", "line", "end_line", "summary", "tags", "aliases", "anchor", "scope", "note")
    }
    for n in nodes:
        nid = str(n["id"])
        x, y = positions[nid]
        anchor = n.get("anchor")
        columns["id"].append(nid)
        columns["label"].append(str(n.get("label") or nid))
        columns["kind"].append(kind_ix[str(n.get("kind") or "node")])
        columns["status"].append(status_ix[str(n.get("status") or "live")])
        columns["community"].append(community_of(n))
        columns["rank"].append(round(rank_of(n), 4))
        columns["size"].append(node_radius(rank_of(n)))
        columns["x"].append(x)
        columns["y"].append(y)
        columns["source"].append(str(n.get("source") or ""))
        columns["line"].append(_int(n.get("line")))
        columns["end_line"].append(_int(n.get("end_line")))
        columns["summary"].append(str(n.get("summary") or ""))
        columns["tags"].append([str(t) for t in n.get("tags") or []])
        columns["aliases"].append([str(a) for a in n.get("aliases") or []])
        columns["anchor"].append(_anchor_text(anchor))
        columns["scope"].append(str(n.get("scope") or ""))
        columns["note"].append(str(n.get("quarantine") or n.get("stale_reason") or ""))

    edges: dict[str, list[int]] = {"s": [], "t": [], "rel": [], "conf": []}
    rel_ix = {r: i for i, r in enumerate(relations)}
    conf_ix = {c: i for i, c in enumerate(confidences)}
    for e in raw_edges:
        edges["s"].append(index[str(e["source"])])
        edges["t"].append(index[str(e["target"])])
        edges["rel"].append(rel_ix[_relation(e)])
        edges["conf"].append(conf_ix[str(e.get("confidence") or "EXTRACTED")])

    return {
        "meta": {
            "scope": str(graph.get("scope") or ""),
            "kind": str(graph.get("kind") or ""),
            "root": str(graph.get("root") or ""),
            "built_with": str(graph.get("built_with") or "vault-kg"),
            "schema_version": graph.get("schema_version"),
        },
        "lod_threshold": LOD_THRESHOLD,
        "kinds": kinds,
        "statuses": statuses,
        "relations": relations,
        "confidences": confidences,
        "nodes": columns,
        "edges": edges,
        "communities": _communities(graph, nodes, index, discs),
        "god_nodes": _god_nodes(graph, nodes, index),
    }


def _communities(graph: dict[str, Any], nodes: list[dict[str, Any]], index: dict[str, int], discs: dict[int, tuple[float, float, float]]) -> list[dict[str, Any]]:
    """One entry per community present in the nodes, named by the engine or by its top members."""
    declared = {c.get("id"): c for c in graph.get("communities") or [] if isinstance(c, dict)}
    members: dict[int, list[dict[str, Any]]] = {}
    for n in nodes:
        members.setdefault(community_of(n), []).append(n)
    out = []
    for cid in sorted(members, key=lambda c: (-len(members[c]), c)):
        ranked = sorted(members[cid], key=lambda n: (-rank_of(n), str(n["id"])))
        top = [index[str(n["id"])] for n in ranked[:COMMUNITY_TOP]]
        info = declared.get(cid, {})
        name = str(info.get("name") or " / ".join(str(n.get("label") or n["id"]) for n in ranked[:3]))
        x, y, r = discs[cid]
        out.append({"id": cid, "name": "unassigned" if cid < 0 else name, "size": len(ranked), "cohesion": float(info.get("cohesion") or 0.0), "x": x, "y": y, "r": r, "top": top})
    return out


def _god_nodes(graph: dict[str, Any], nodes: list[dict[str, Any]], index: dict[str, int]) -> list[int]:
    """The engine's god nodes; when it named none, the best-ranked non-hub nodes."""
    named = [index[str(g)] for g in graph.get("god_nodes") or [] if str(g) in index]
    if named:
        return named[:GOD_NODES_SHOWN]
    ranked = sorted((n for n in nodes if n.get("kind") not in ("tag", "section", "file")), key=lambda n: (-rank_of(n), str(n["id"])))
    return [index[str(n["id"])] for n in ranked[:GOD_NODES_SHOWN] if rank_of(n) > 0]


def _relation(edge: dict[str, Any]) -> str:
    return str(edge.get("relation") or edge.get("key") or "related")


def _vocabulary(values: Any) -> list[str]:
    seen: list[str] = []
    known: set[str] = set()
    for v in values:
        if v not in known:
            known.add(v)
            seen.append(v)
    return sorted(seen)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _anchor_text(anchor: Any) -> str:
    if isinstance(anchor, dict) and anchor.get("locator"):
        digest = str(anchor.get("hash") or "")
        return f"{anchor['locator']}" + (f"  (hash {digest[:12]})" if digest else "")
    return ""


def _asset(name: str) -> str:
    text = resources.files("graph_out").joinpath("assets", name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "<!--" in text:
        raise ValueError(f"graph_out/assets/{name}: must not contain '</script' or '<!--'")
    return text


_BODY = """<aside id="side">
<header><h1>vault-kg · <span class="scope">{scope}</span></h1><div id="stats"></div></header>
<div class="searchbox"><input id="search" type="search" placeholder="Search notes, tags, entities  ( / )" autocomplete="off" spellcheck="false" aria-label="Search nodes"></div>
<ul id="results" role="listbox"></ul>
<div class="scroll">
<details open><summary>God nodes</summary><ul class="list" id="gods"></ul></details>
<details open><summary>Communities</summary><ul class="list" id="comms"></ul></details>
<details><summary>Node kind</summary><div class="checks" id="f-kind"></div></details>
<details><summary>Relation</summary><div class="checks" id="f-rel"></div></details>
<details><summary>Confidence</summary><div class="checks" id="f-conf"></div></details>
<details><summary>Scope</summary><select id="f-scope" aria-label="Scope"></select></details>
<details><summary>Tag namespace</summary><div class="chips" id="f-ns"></div></details>
</div>
</aside>
<main id="stage">
<canvas id="view"></canvas>
<div id="toolbar"><button id="btn-fit" title="Fit the graph">Fit</button><button id="btn-expand">Expand all</button><button id="btn-collapse">Collapse all</button></div>
<div id="lodnote"></div>
<div id="behind" hidden></div>
<div id="legend">
<span><i style="border:2px dashed #ff9f43"></i>stale</span>
<span><i style="border:2px dotted #8b95a5;background:#0f1217"></i>unresolved</span>
<span><i style="border:2px dashed #aab"></i>superseded</span>
</div>
<div id="tip"></div>
<div id="toast"></div>
</main>
<aside id="panel" hidden></aside>
"""
