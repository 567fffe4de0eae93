"""Questions over one or more scopes: `query`, `path`, `explain`, `god_nodes`, `neighbors`, `stats`.

Every answer is plain data (dicts) that the CLI prints, the MCP server returns and the hooks inject;
the text renderers live beside them so all three interfaces say the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from vault_kg.core import model as m
from vault_kg.storage.layout import Layout
from vault_kg.core.errors import KgError
from vault_kg.query.answer import CHARS_PER_TOKEN, estimate_tokens, format_hit, format_query
from vault_kg.query.answer import status_flag
from vault_kg.query.ask import HUB_KINDS, MAX_BUDGET, MAX_DEPTH, query
from vault_kg.query.graph_view import WALK_SKIPS, GraphView
from vault_kg.query.passage_choice import SNIPPET_CHARS, SNIPPET_READ_BYTES, snippet
from vault_kg.core.agent_hints import option, parameter
from vault_kg.core.agent_text import one_line
from vault_kg.core.memory_kinds import is_episodic

__all__ = [
    "CHARS_PER_TOKEN",
    "DEPENDS_RELATIONS",
    "HUB_KINDS",
    "HUB_RELATIONS",
    "MAX_BUDGET",
    "MAX_DEPTH",
    "SNIPPET_CHARS",
    "SNIPPET_READ_BYTES",
    "affected",
    "estimate_tokens",
    "explain",
    "format_affected",
    "format_explain",
    "format_god_nodes",
    "format_hit",
    "format_neighbors",
    "format_path",
    "format_query",
    "format_stats",
    "god_nodes",
    "neighbors",
    "path",
    "query",
    "snippet",
    "stats",
    "view_label",
]

HUB_RELATIONS = frozenset(WALK_SKIPS)  # never followed by a query's expansion; `path` only as a last resort


def _status_flag(node: dict[str, Any]) -> str:
    return status_flag(node.get("status"))


def path(view: GraphView, a: str, b: str, include_stale: bool = False, max_visit: int = 200_000) -> dict[str, Any]:
    """Shortest meaningful path, direction kept; tag hubs only when nothing else connects A and B.

    Breadth-first over the cache's edge index (edges followed both ways), bounded by `max_visit`.
    """
    src = view.resolve_one(a, include_stale)
    dst = view.resolve_one(b, include_stale)
    for allow_hubs in (False, True):
        hops = _bfs(view, src, dst, allow_hubs, include_stale, max_visit)
        if hops is not None:
            steps = [src] + [h["to"] for h in hops]
            return {"from": src, "to": dst, "found": True, "steps": steps, "hops": hops, "via_hubs": allow_hubs, "labels": {n: view.nodes[n].get("label", n) for n in steps}}
    return {"from": src, "to": dst, "found": False, "steps": [], "hops": [], "via_hubs": False}


def _bfs(view: GraphView, src: str, dst: str, allow_hubs: bool, include_stale: bool, max_visit: int) -> list[dict[str, Any]] | None:
    if src == dst:
        return []
    parent: dict[str, tuple[str, dict[str, Any]]] = {}
    seen = {src}
    frontier = [src]
    while frontier and len(seen) < max_visit:
        nxt: list[str] = []
        for node in frontier:
            if node != src and not allow_hubs and view.nodes[node].get("kind") in HUB_KINDS:
                continue
            for e, other in sorted(view.neighbours(node), key=lambda eo: (eo[1], eo[0]["relation"])):
                if other in seen or not view.visible(other, include_stale):
                    continue
                if not allow_hubs and (e["relation"] in HUB_RELATIONS or (view.nodes[other].get("kind") in HUB_KINDS and other != dst)):
                    continue
                seen.add(other)
                parent[other] = (node, e)
                if other == dst:
                    return _unwind(parent, src, dst)
                nxt.append(other)
        frontier = nxt
    return None


def _unwind(parent: dict[str, tuple[str, dict[str, Any]]], src: str, dst: str) -> list[dict[str, Any]]:
    hops = []
    node = dst
    while node != src:
        prev, e = parent[node]
        hops.append({"from": prev, "to": node, "relation": e["relation"], "forward": e["source"] == prev, "confidence": e.get("confidence"), "owner": e.get("owner"), "line": e.get("line")})
        node = prev
    return list(reversed(hops))


def format_path(answer: dict[str, Any]) -> str:
    if not answer["found"]:
        return f"no path between {one_line(answer['from'])} and {one_line(answer['to'])}"
    out = [one_line(answer["labels"][answer["steps"][0]]) + f"  ({one_line(answer['steps'][0])})"]
    for hop in answer["hops"]:
        arrow = f"—{hop['relation']}→" if hop["forward"] else f"←{hop['relation']}—"
        where = f"  [{one_line(hop['owner'])}:{hop['line']}]" if hop.get("line") else ""
        out.append(f"  {arrow} {one_line(answer['labels'][hop['to']])}  ({one_line(hop['to'])}){where}")
    out.append(f"{len(answer['hops'])} hop(s)" + (" (only through tag hubs: no other path exists)" if answer["via_hubs"] else ""))
    return "\n".join(out)


def explain(view: GraphView, name: str, include_stale: bool = False, as_of: str | None = None) -> dict[str, Any]:
    view.as_of = as_of
    nid = view.resolve_one(name, True)
    node = dict(view.nodes[nid])
    if not view.visible(nid, include_stale):
        if as_of is not None:
            raise KgError(f"'{nid}' was not valid on {as_of}; drop --as-of to see it")
        raise KgError(f"'{nid}' is {node.get('status')}: not served as current; pass {option('include_stale')} to see it")
    outgoing: dict[str, list[dict[str, Any]]] = {}
    incoming: dict[str, list[dict[str, Any]]] = {}
    for e in view.out_edges.get(nid, []):
        if view.visible(e["target"], include_stale):
            outgoing.setdefault(e["relation"], []).append(
                {"id": e["target"], "label": view.nodes[e["target"]].get("label"), "line": e.get("line"), "confidence": e.get("confidence"), "status": view.nodes[e["target"]].get("status", m.LIVE)}
            )
    for e in view.in_edges.get(nid, []):
        if view.visible(e["source"], include_stale):
            incoming.setdefault(e["relation"], []).append(
                {
                    "id": e["source"],
                    "label": view.nodes[e["source"]].get("label"),
                    "line": e.get("line"),
                    "confidence": e.get("confidence"),
                    "owner": e.get("owner"),
                    "status": view.nodes[e["source"]].get("status", m.LIVE),
                }
            )
    return {"scope": view.scope.name, "node": node, "outgoing": outgoing, "incoming": incoming}


def format_explain(answer: dict[str, Any]) -> str:
    n = answer["node"]
    out = [f"{one_line(n.get('label'))} ({n.get('kind')}){_status_flag(n)}", f"  id: {one_line(n['id'])}"]
    if n.get("source"):
        span = f"{n.get('line') or 1}" + (f"-{n['end_line']}" if n.get("end_line") else "")
        out.append(f"  source: {one_line(n['source'])}:{span}")
    for key in ("summary", "doc", "signature", "quarantine", "stale_reason", "superseded_reason"):
        if n.get(key):
            out.append(f"  {key}: {one_line(n[key])}")
    for key in ("tags", "aliases", "sources", "referrers", "anchored"):
        if n.get(key) and isinstance(n[key], list):
            out.append(f"  {key}: {', '.join(one_line(x) for x in n[key])}")
    if n.get("anchor"):
        out.append(f"  anchor: {one_line(n['anchor'].get('locator'))} #{one_line(n['anchor'].get('hash'))[:12]}")
    out.append(f"  rank: {n.get('rank', 0):.3f}  community: {n.get('community', '-')}")
    for _title, groups, arrow in (("outgoing", answer["outgoing"], "→"), ("incoming", answer["incoming"], "←")):
        for relation in sorted(groups):
            items = groups[relation]
            shown = ", ".join(f"{one_line(i['label'])}{status_flag(i['status'])}" + (f" (line {i['line']})" if i.get("line") else "") for i in items[:12])
            more = f" … +{len(items) - 12}" if len(items) > 12 else ""
            out.append(f"  {arrow} {relation} ({len(items)}): {shown}{more}")
    return "\n".join(out)


def god_nodes(view: GraphView, n: int = 10, include_stale: bool = False) -> list[dict[str, Any]]:
    n = max(1, min(int(n), 200))
    ids = [nid for nid in view.graph.get("god_nodes", []) if view.visible(nid, include_stale)]
    if len(ids) < n:
        ids += [nid for nid in view.reader.ranked(n + len(ids)) if nid not in ids and view.visible(nid, include_stale)][: n - len(ids)]
    return [
        {
            "id": nid,
            "label": view.nodes[nid].get("label"),
            "kind": view.nodes[nid].get("kind"),
            "rank": view.nodes[nid].get("rank", 0.0),
            "summary": view.nodes[nid].get("summary") or view.nodes[nid].get("doc") or "",
            "source": view.nodes[nid].get("source"),
            "line": view.nodes[nid].get("line"),
            "community": view.nodes[nid].get("community"),
            "status": view.nodes[nid].get("status", m.LIVE),
        }
        for nid in ids[:n]
    ]


def format_god_nodes(rows: list[dict[str, Any]], with_rank: bool = True) -> str:
    lines = []
    for i, r in enumerate(rows, 1):
        rank = f" {r['rank']:.3f}" if with_rank else ""
        lines.append(f"{i:>2}. {one_line(r['label'])} ({r['kind']}){rank} — {one_line(r['source'])}:{r['line'] or 1}" + (f"\n    {one_line(r['summary'])}" if r["summary"] else ""))
    return "\n".join(lines) or "no nodes"


def neighbors(view: GraphView, name: str, relation: str | None = None, direction: str = "both", limit: int = 50, include_stale: bool = False) -> dict[str, Any]:
    nid = view.resolve_one(name, include_stale)
    limit = max(1, min(int(limit), 500))
    rows = []
    if direction in ("out", "both"):
        rows += [("out", e, e["target"]) for e in view.out_edges.get(nid, [])]
    if direction in ("in", "both"):
        rows += [("in", e, e["source"]) for e in view.in_edges.get(nid, [])]
    result = []
    for way, e, other in rows:
        if relation and e["relation"] != relation:
            continue
        if not view.visible(other, include_stale):
            continue
        result.append(
            {
                "direction": way,
                "relation": e["relation"],
                "id": other,
                "label": view.nodes[other].get("label"),
                "kind": view.nodes[other].get("kind"),
                "confidence": e.get("confidence"),
                "line": e.get("line"),
            }
        )
    result.sort(key=lambda r: (r["direction"], r["relation"], r["id"]))
    return {"id": nid, "neighbors": result[:limit], "total": len(result)}


def format_neighbors(answer: dict[str, Any]) -> str:
    lines = [f"{r['direction']:>3} {r['relation']}: {one_line(r['label'])} ({one_line(r['id'])})" + (f" line {r['line']}" if r.get("line") else "") for r in answer["neighbors"]]
    more = answer["total"] - len(answer["neighbors"])
    return "\n".join([f"{answer['total']} neighbours of {one_line(answer['id'])}:", *lines] + ([f"… {more} more; raise {parameter('limit')}"] if more > 0 else []))


def stats(view: GraphView) -> dict[str, Any]:
    g = view.graph
    layout = Layout(view.scope.out)
    built = layout.cache_db.stat().st_mtime
    counts = dict(g.get("counts", {}))
    return {"scope": view.scope.name, "kind": g.get("kind"), "root": g.get("root"), "built_at": built, "communities": len(g.get("communities", [])), **counts}


def format_stats(s: dict[str, Any]) -> str:
    import datetime as dt

    when = dt.datetime.fromtimestamp(s["built_at"]).strftime("%Y-%m-%d %H:%M")
    lines = [
        f"scope {s['scope']} ({s['kind']}) at {s['root']}, built {when}",
        f"  {s.get('sources', 0)} sources · {s.get('nodes', 0)} nodes · {s.get('edges', 0)} edges · {s['communities']} communities",
        f"  {s.get('unresolved', 0)} unresolved · {s.get('quarantined', 0)} quarantined · {s.get('stale', 0)} stale · {s.get('pending', 0)} pending",
        "  nodes: " + ", ".join(f"{k} {v}" for k, v in s.get("by_kind", {}).items()),
        "  edges: " + ", ".join(f"{k} {v}" for k, v in s.get("by_relation", {}).items()),
    ]
    if s.get("model"):
        lines.append(f"  {s['model']}")
    return "\n".join(lines)


DEPENDS_RELATIONS = {m.CALLS, m.IMPORTS, m.INHERITS, m.IMPLEMENTS, m.CONTAINS, m.ANCHORED_TO, m.LINKS_TO, m.EMBEDS}


def affected(view: GraphView, name: str, depth: int = 3, limit: int = 500, include_stale: bool = False, vault: Path | None = None, budget: int | None = None) -> dict[str, Any]:
    """What depends on a node: callers, importers, subclasses, anchored notes, transitively.

    Walks incoming dependency edges (`calls`, `imports`, `inherits`, `implements`,
    `anchored_to`, links) up to `depth` hops; for a class, its methods' dependants count too
    (through `contains`). Each hit says how it depends and at which hop. On a code scope the
    symbol may be named `PATH::Client.fetch`, and `notes` lists the vault notes (of `vault`, else
    the configured one) anchored to it or to any code hit, closest first. Anchored notes come
    first, then the dependants, closest first; `budget` (tokens) cuts the answer to fit, saying
    what it cut.
    """
    answer = _affected(view, name, depth, limit, include_stale)
    answer["affected"].sort(key=lambda h: (h["relation"] != m.ANCHORED_TO, h["hop"]))
    if view.scope.kind == "code":
        from vault_kg.anchors.affected_notes import default_vault, vault_notes

        hops = {answer["id"]: 0, **{h["id"]: h["hop"] for h in answer["affected"]}}
        notes = vault_notes(view.scope.name, list(hops), vault or default_vault())
        answer["notes"] = sorted(notes, key=lambda n: (hops.get(n["via"], 0), n["id"]))
    answer["total"] = len(answer["affected"])
    if budget is not None:
        _fit_affected(answer, max(100, min(int(budget), MAX_BUDGET)))
    return answer


def _fit_affected(answer: dict[str, Any], budget: int) -> None:
    """Keep the notes, then the dependants, while the printed answer fits `budget` tokens (the
    notice's room reserved when anything must go)."""
    answer["budget"] = budget
    if estimate_tokens(format_affected(answer) + "\n") <= budget:
        return
    notes, hits = answer.get("notes", []), answer["affected"]
    room = budget * CHARS_PER_TOKEN - len(_affected_notice(10**6, 10**6, budget)) - 1
    room -= sum(len(line) + 1 for line in _affected_heads(answer))
    kept_notes = kept_hits = 0
    for n in notes:
        cost = len(_note_line(n)) + 1
        if cost > room:
            break
        room, kept_notes = room - cost, kept_notes + 1
    if kept_notes == len(notes):
        for h in hits:
            cost = len(_hit_line(h)) + 1
            if cost > room:
                break
            room, kept_hits = room - cost, kept_hits + 1
    answer["cut_notes"], answer["cut"] = len(notes) - kept_notes, len(hits) - kept_hits
    if "notes" in answer:
        answer["notes"] = notes[:kept_notes]
    answer["affected"] = hits[:kept_hits]


def _affected(view: GraphView, name: str, depth: int, limit: int, include_stale: bool) -> dict[str, Any]:
    from vault_kg.anchors.affected_notes import dotted_symbol

    root = (view.scope.kind == "code" and not view.find(name, include_stale) and dotted_symbol(view, name)) or view.resolve_one(name, include_stale)
    depth = max(1, min(int(depth), MAX_DEPTH))
    limit = max(1, min(int(limit), 5000))
    targets = [root] + [e["target"] for e in view.out_edges.get(root, []) if e["relation"] == m.CONTAINS]
    seen = set(targets)
    hits: list[dict[str, Any]] = []
    frontier = targets
    for hop in range(1, depth + 1):
        nxt: list[str] = []
        for node in frontier:
            for e in sorted(view.in_edges.get(node, []), key=lambda e: (e["source"], e["relation"])):
                other = e["source"]
                if e["relation"] not in DEPENDS_RELATIONS or e["relation"] == m.CONTAINS or other in seen:
                    continue
                if not view.visible(other, include_stale) or is_episodic(view.nodes[other]):
                    continue
                seen.add(other)
                n = view.nodes[other]
                hits.append(
                    {
                        "id": other,
                        "label": n.get("label"),
                        "kind": n.get("kind"),
                        "relation": e["relation"],
                        "via": node,
                        "hop": hop,
                        "source": n.get("source"),
                        "line": e.get("line") or n.get("line"),
                        "status": n.get("status", m.LIVE),
                    }
                )
                nxt.append(other)
                if len(hits) >= limit:
                    return {"id": root, "depth": depth, "affected": hits, "truncated": True}
        frontier = nxt
    return {"id": root, "depth": depth, "affected": hits, "truncated": False}


def _note_line(n: dict[str, Any]) -> str:
    return f"  {one_line(n['label'])} ({one_line(n['source'])})" + status_flag(n["status"]) + f" —anchored_to→ {one_line(n['via'])}"


def _hit_line(h: dict[str, Any]) -> str:
    return f"  {'  ' * (h['hop'] - 1)}{one_line(h['label'])} ({h['kind']}){status_flag(h['status'])} —{h['relation']}→ {one_line(view_label(h['via']))} — {one_line(h['source'])}:{h['line'] or 1}"


def _affected_heads(answer: dict[str, Any]) -> list[str]:
    """The section lines `format_affected` prints whatever is cut: the notes' (when any), the dependants'."""
    total, notes = answer.get("total", len(answer["affected"])), len(answer.get("notes", [])) + answer.get("cut_notes", 0)
    heads = [f"{notes} vault note(s) anchored to it or its dependants:"] if notes else []
    if not total:
        return [*heads, f"nothing depends on {one_line(answer['id'])} (within {answer['depth']} hops)"]
    return [*heads, f"{total} dependants of {one_line(answer['id'])} (depth {answer['depth']}), closest first:"]


def _affected_notice(cut_notes: int, cut: int, budget: int) -> str:
    what = " and ".join(part for part in (f"{cut_notes} more notes" if cut_notes else "", f"{cut} more dependants" if cut else "") if part)
    return f"[truncated: {what} past the {budget}-token budget; raise {parameter('budget')} to see them]"


def format_affected(answer: dict[str, Any]) -> str:
    """Anchored notes first, then the dependants closest first (`affected` already cut both to its budget)."""
    heads = _affected_heads(answer)
    notes = [_note_line(n) for n in answer.get("notes", [])]
    out = [heads[0], *notes, heads[1]] if len(heads) == 2 else [heads[0]]
    out += [_hit_line(h) for h in answer["affected"]]
    if answer.get("cut") or answer.get("cut_notes"):
        out.append(_affected_notice(answer.get("cut_notes", 0), answer.get("cut", 0), answer["budget"]))
    elif answer["truncated"]:
        out.append(f"[truncated at {len(answer['affected'])} dependants: lower {parameter('depth')}]")
    return "\n".join(out)


def view_label(nid: str) -> str:
    return nid.split(":", 1)[1] if nid.split(":", 1)[0] in ("note", "file", "tag", "entity") else nid
