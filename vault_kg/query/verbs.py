"""Questions over one or more scopes: `query`, `path`, `explain`, `god_nodes`, `neighbors`, `stats`.

Every answer is plain data (dicts) that the CLI prints, the MCP server returns and the hooks inject;
the text renderers live beside them so all three interfaces say the same thing.
"""

from __future__ import annotations

import heapq
from pathlib import Path
from typing import Any

import orjson

from vault_kg.core import model as m
from vault_kg.query import search
from vault_kg.storage.layout import Layout
from vault_kg.core.errors import KgError
from vault_kg.query.graph_view import WALK_SKIPS, GraphView, load_view
from vault_kg.core.scopes import Scope
from vault_kg.core.agent_hints import ask, option, parameter
from vault_kg.core.agent_text import one_line
from vault_kg.core.safe_read import read_regular
from vault_kg.core.memory_kinds import Filters, is_episodic

__all__ = [
    "CHARS_PER_TOKEN",
    "DEPENDS_RELATIONS",
    "FILTERED_SEED_FACTOR",
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
HUB_KINDS = {m.TAG, m.UNRESOLVED, m.EXTERNAL}
MAX_BUDGET = 50_000
MAX_DEPTH = 6
SNIPPET_CHARS = 160
SNIPPET_READ_BYTES = 2_000_000
CHARS_PER_TOKEN = 4
FILTERED_SEED_FACTOR = 60  # a filtered query reads this many candidates per seed before filtering


def _status_flag(node: dict[str, Any]) -> str:
    status = node.get("status")
    return f" [{status.upper()}]" if status in (m.STALE, m.SUPERSEDED, m.PENDING, m.QUARANTINED) else ""


def snippet(scope: Scope, node: dict[str, Any], terms: list[str]) -> tuple[int | None, str]:
    """The line of the node's span that best matches the question, verbatim and cut short."""
    source = node.get("source")
    if not source or node.get("kind") in HUB_KINDS:
        return node.get("line"), ""
    try:
        raw = read_regular(scope.root / source, SNIPPET_READ_BYTES, root=scope.root)
    except OSError:  # gone, unreadable, or not a regular file inside the scope: no snippet
        return node.get("line"), ""
    lines = raw.decode("utf-8", "replace").splitlines()
    start = max(1, int(node.get("line") or 1))
    end = min(len(lines), int(node.get("end_line") or len(lines)))
    best, best_score = None, 0
    in_frontmatter = False
    for number in range(start, end + 1):
        text = lines[number - 1]
        if number == 1 and text.strip() == "---" and node.get("kind") == m.NOTE:
            in_frontmatter = True
            continue
        if in_frontmatter:
            if text.strip() == "---":
                in_frontmatter = False
            continue
        lowered = text.lower()
        score = sum(lowered.count(t) for t in terms)
        if score > best_score:
            best, best_score = number, score
    if best is None:
        return start, ""
    return best, one_line(lines[best - 1], SNIPPET_CHARS + 1)  # the file itself may hold a secret


def _stem_terms(question: str) -> list[str]:
    terms = search.query_terms(question)
    return [t[:-1] if len(t) > 4 and t.endswith("s") else t for t in terms]


def query(
    scopes: list[Scope],
    question: str,
    budget: int = 1500,
    include_stale: bool = False,
    depth: int = 2,
    seeds: int = 8,
    as_of: str | None = None,
    views: list[GraphView] | None = None,
    filters: Filters | None = None,
) -> dict[str, Any]:
    """BM25 seeds, then a bounded best-first expansion ranked by relevance × edge confidence.

    `as_of` answers with what was valid on that date (validity windows), not the live tips;
    `views` lets a long-running server pass graphs it already holds open; `filters` narrows every
    hit (tag, folder, kind, date); without them journal days stay out (`memory_kinds`).
    """
    filters = filters or Filters()
    if not question.strip():
        raise KgError(f"empty question; try `{ask('query', question='payments retries')}`")
    budget = max(100, min(int(budget), MAX_BUDGET))
    depth = max(0, min(int(depth), MAX_DEPTH))
    views = views if views is not None else [load_view(s) for s in scopes]
    for view in views:
        view.as_of = as_of
    terms = _stem_terms(question)
    scored: dict[tuple[str, str], float] = {}
    via: dict[tuple[str, str], str] = {}
    seed_keys: list[tuple[str, str]] = []
    all_hits: list[tuple[float, GraphView, str]] = []
    hidden: list[str] = []  # matches not served as current (stale or superseded)
    for view in views:
        found = search.search(view.reader, question, limit=seeds * (FILTERED_SEED_FACTOR if filters.narrowing else 6))
        view.nodes.prefetch([nid for nid, _ in found])
        for nid, score in found:
            if nid in view.nodes and filters.admits(view.nodes[nid], view.scope.root):
                if view.visible(nid, include_stale):
                    all_hits.append((score, view, nid))
                else:
                    hidden.append(nid)
    top = max((h[0] for h in all_hits), default=1.0) or 1.0
    all_hits.sort(key=lambda h: (-h[0], h[1].scope.name, h[2]))
    by_name = {v.scope.name: v for v in views}
    for score, view, nid in all_hits[:seeds]:
        key = (view.scope.name, nid)
        scored[key] = score / top
        seed_keys.append(key)
    _expand(by_name, seed_keys, scored, via, depth, include_stale, filters)
    ordered = seed_keys + sorted((k for k in scored if k not in seed_keys), key=lambda k: (-scored[k], k))
    answer = _render_query(question, ordered, set(seed_keys), scored, via, by_name, terms, budget, multi=len(views) > 1)
    if not answer["hits"] and hidden:
        answer["hidden_matches"] = len(hidden)
    return answer


def _expand(
    views: dict[str, GraphView], seed_keys: list[tuple[str, str]], scored: dict[tuple[str, str], float], via: dict[tuple[str, str], str], depth: int, include_stale: bool, filters: Filters
) -> None:
    """Best-first from the seeds, up to `depth` hops: a neighbour scores its parent's relevance ×
    the edge's score × 0.5 and keeps its best route (the edge's JSON) in `via`. Tag hubs are never
    followed.

    An end is loaded only when its edge could raise its score; the ends of one node's edges are
    loaded in one read, then judged in edge order exactly as if each had been read alone.
    """
    frontier = [(-scored[k], 0, k) for k in seed_keys]
    heapq.heapify(frontier)
    expanded: set[tuple[str, str]] = set()
    while frontier:
        neg, hops, key = heapq.heappop(frontier)
        if key in expanded or hops >= depth:
            continue
        expanded.add(key)
        view = views[key[0]]
        steps = []
        for score, other, e in view.walk_edges(key[1]):
            relevance = -neg * score * 0.5
            if relevance > scored.get((key[0], other), 0.0):
                steps.append((e, other, relevance))
        view.nodes.prefetch([other for _, other, _ in steps])
        for e, other, relevance in steps:
            if not view.visible(other, include_stale):
                continue
            node = view.nodes[other]
            if node.get("kind") in HUB_KINDS or not filters.admits(node, view.scope.root):
                continue
            okey = (key[0], other)
            if relevance > scored.get(okey, 0.0):
                scored[okey] = relevance
                via[okey] = e
                heapq.heappush(frontier, (-relevance, hops + 1, okey))


def estimate_tokens(text: str) -> int:
    """The token estimate every budget in kg uses: about four characters a token, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _render_query(
    question: str,
    ordered: list[tuple[str, str]],
    seeds: set[tuple[str, str]],
    scored: dict[tuple[str, str], float],
    via: dict[tuple[str, str], str],
    views: dict[str, GraphView],
    terms: list[str],
    budget: int,
    multi: bool,
) -> dict[str, Any]:
    """Fit the whole printed answer (hits, edges block, truncation notice) into `budget` tokens.

    Every printed line costs its characters plus its newline. Hits come first in rank order (seeds
    first), the edges among the shown hits fill what is left, and when anything is cut the notice's
    room is reserved first so the answer with its notice still fits.
    """
    limit = budget * CHARS_PER_TOKEN
    candidates: list[tuple[dict[str, Any], int]] = []
    used = 0
    for key in ordered:  # snippets read files: stop as soon as the full budget is spent
        hit = _hit(key, seeds, scored, via, views, terms)
        cost = len(format_hit(hit, multi)) + 1
        candidates.append((hit, cost))
        used += cost
        if used > limit:
            break
    if len(candidates) == len(ordered):
        edges = _edges_among([h for h, _ in candidates], views)
        if used + _edges_cost(edges) <= limit:
            return _answer(question, budget, [h for h, _ in candidates], edges, 0, 0, multi)
    room = limit - (len(_notice(len(ordered), 10**9, budget)) + 1)
    hits: list[dict[str, Any]] = []
    used = 0
    for hit, cost in candidates:
        if used + cost > room:
            if not hits:  # the best seed always shows, shortened to the room there is
                hit = _shrink(hit, room - 1, multi)
                hits.append(hit)
                used += len(format_hit(hit, multi)) + 1
            break
        hits.append(hit)
        used += cost
    edges = _edges_among(hits, views)
    shown = 0
    if edges and used + len("edges:") + 1 <= room:
        used += len("edges:") + 1
        for e in edges:
            cost = len(_format_edge(e)) + 1
            if used + cost > room:
                break
            used += cost
            shown += 1
    return _answer(question, budget, hits, edges[:shown], len(ordered) - len(hits), len(edges) - shown, multi)


def _hit(key: tuple[str, str], seeds: set[tuple[str, str]], scored: dict[tuple[str, str], float], via: dict[tuple[str, str], str], views: dict[str, GraphView], terms: list[str]) -> dict[str, Any]:
    view = views[key[0]]
    node = view.nodes[key[1]]
    line, text = snippet(view.scope, node, terms)
    hit = {
        "scope": key[0],
        "id": key[1],
        "kind": node.get("kind"),
        "label": node.get("label"),
        "source": node.get("source"),
        "line": line,
        "summary": node.get("summary") or node.get("doc") or "",
        "snippet": text,
        "score": round(scored[key], 4),
        "seed": key in seeds,
        "status": node.get("status", m.LIVE),
    }
    if key in via:
        e = orjson.loads(via[key])
        hit["via"] = {"source": e["source"], "relation": e["relation"], "target": e["target"], "confidence": e.get("confidence")}
    return hit


def _shrink(hit: dict[str, Any], room: int, multi: bool) -> dict[str, Any]:
    """The hit cut down to `room` characters: snippet and route go first, then summary, then label."""
    hit = dict(hit)
    for field in ("snippet", "via", "summary", "label", "source"):
        over = len(format_hit(hit, multi)) - room
        if over <= 0:
            break
        if field == "via":
            hit.pop("via", None)
        elif hit.get(field):
            text = one_line(hit[field])
            keep = len(text) - over - 1
            hit[field] = one_line(text, keep) if keep >= 8 else ("" if field in ("snippet", "summary") else one_line(text, 8))
    return hit


def _edges_among(hits: list[dict[str, Any]], views: dict[str, GraphView]) -> list[dict[str, Any]]:
    ids = {(h["scope"], h["id"]) for h in hits}
    edges = []
    for scope_name, nid in sorted(ids):
        for e in views[scope_name].out_edges.get(nid, []):
            if (scope_name, e["target"]) in ids:
                edges.append({"scope": scope_name, "source": nid, "relation": e["relation"], "target": e["target"], "confidence": e.get("confidence"), "line": e.get("line")})
    return edges


def _edges_cost(edges: list[dict[str, Any]]) -> int:
    return len("edges:") + 1 + sum(len(_format_edge(e)) + 1 for e in edges) if edges else 0


def _answer(question: str, budget: int, hits: list[dict[str, Any]], edges: list[dict[str, Any]], cut_hits: int, cut_edges: int, multi: bool) -> dict[str, Any]:
    answer = {"question": question, "budget": budget, "hits": hits, "edges": edges, "truncated": cut_hits, "truncated_edges": cut_edges, "multi_scope": multi}
    answer["tokens"] = estimate_tokens(format_query(answer) + "\n")
    return answer


def format_hit(hit: dict[str, Any], multi: bool = False) -> str:
    where = f"{one_line(hit['source'])}:{hit['line']}" if hit.get("source") else one_line(hit["id"])
    scope = f"[{one_line(hit['scope'])}] " if multi else ""
    flag = f" [{hit['status'].upper()}]" if hit.get("status") not in (None, m.LIVE) else ""
    head = f"{'*' if hit['seed'] else '-'} {scope}{one_line(hit['label'])} ({hit['kind']}){flag} — {where}"
    parts = [head]
    if hit.get("summary"):
        parts.append(f"    {one_line(hit['summary'])}")
    if hit.get("snippet") and hit["snippet"] != hit.get("summary"):
        parts.append(f"    > {one_line(hit['snippet'])}")
    if hit.get("via"):
        v = hit["via"]
        parts.append(f"    via {one_line(v['source'])} —{v['relation']}→ {one_line(v['target'])}")
    return "\n".join(parts)


def _format_edge(e: dict[str, Any]) -> str:
    return f"  {one_line(e['source'])} —{e['relation']}→ {one_line(e['target'])}" + (f" (line {e['line']})" if e.get("line") else "")


def _notice(cut_hits: int, cut_edges: int, budget: int) -> str:
    what = " and ".join(part for part in (f"{cut_hits} more hits" if cut_hits else "", f"{cut_edges} more edges" if cut_edges else "") if part)
    return f"[truncated: {what} past the {budget}-token budget; raise {parameter('budget')} to see them]"


def format_query(answer: dict[str, Any]) -> str:
    """The answer as printed; `_render_query` has already fitted every line of it into the budget."""
    if not answer["hits"] and answer.get("hidden_matches"):
        return (
            f"no current matches for {one_line(answer['question'], 200)!r}: {answer['hidden_matches']} stale or superseded "
            f"match(es) are hidden; pass {option('include_stale')} to see them flagged, and `{ask('check')}` says why"
        )
    if not answer["hits"]:
        return f"no matches for {one_line(answer['question'], 200)!r}; try other words or `{ask('god_nodes')}`"
    out = [format_hit(h, answer["multi_scope"]) for h in answer["hits"]]
    if answer["edges"]:
        out.append("edges:")
        out += [_format_edge(e) for e in answer["edges"]]
    if answer["truncated"] or answer.get("truncated_edges"):
        out.append(_notice(answer["truncated"], answer.get("truncated_edges", 0), answer["budget"]))
    return "\n".join(out)


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
            shown = ", ".join(f"{one_line(i['label'])}{' [' + i['status'].upper() + ']' if i['status'] != m.LIVE else ''}" + (f" (line {i['line']})" if i.get("line") else "") for i in items[:12])
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
    return "\n".join(lines)


DEPENDS_RELATIONS = {m.CALLS, m.IMPORTS, m.INHERITS, m.IMPLEMENTS, m.CONTAINS, m.ANCHORED_TO, m.LINKS_TO, m.EMBEDS}


def affected(view: GraphView, name: str, depth: int = 3, limit: int = 500, include_stale: bool = False, vault: Path | None = None) -> dict[str, Any]:
    """What depends on a node: callers, importers, subclasses, anchored notes, transitively.

    Walks incoming dependency edges (`calls`, `imports`, `inherits`, `implements`,
    `anchored_to`, links) up to `depth` hops; for a class, its methods' dependants count too
    (through `contains`). Each hit says how it depends and at which hop. On a code scope the
    symbol may be named `PATH::Client.fetch`, and `notes` lists the vault notes (of `vault`, else
    the configured one) anchored to it or to any code hit.
    """
    answer = _affected(view, name, depth, limit, include_stale)
    if view.scope.kind == "code":
        from vault_kg.anchors.affected_notes import default_vault, vault_notes

        locators = [answer["id"]] + [h["id"] for h in answer["affected"]]
        answer["notes"] = vault_notes(view.scope.name, locators, vault or default_vault())
    return answer


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


def format_affected(answer: dict[str, Any]) -> str:
    notes = [
        f"  {one_line(n['label'])} ({one_line(n['source'])})" + (f" [{n['status'].upper()}]" if n["status"] != m.LIVE else "") + f" —anchored_to→ {one_line(n['via'])}" for n in answer.get("notes", [])
    ]
    tail = [f"{len(notes)} vault note(s) anchored to it or its dependants:", *notes] if notes else []
    if not answer["affected"]:
        return "\n".join([f"nothing depends on {one_line(answer['id'])} (within {answer['depth']} hops)", *tail])
    out = [f"{len(answer['affected'])} dependants of {one_line(answer['id'])} (depth {answer['depth']}):"]
    for h in answer["affected"]:
        flag = f" [{h['status'].upper()}]" if h["status"] != m.LIVE else ""
        out.append(f"  {'  ' * (h['hop'] - 1)}{one_line(h['label'])} ({h['kind']}){flag} —{h['relation']}→ {one_line(view_label(h['via']))} — {one_line(h['source'])}:{h['line'] or 1}")
    if answer["truncated"]:
        out.append(f"[truncated at {len(answer['affected'])} dependants: lower {parameter('depth')}]")
    return "\n".join(out + tail)


def view_label(nid: str) -> str:
    return nid.split(":", 1)[1] if nid.split(":", 1)[0] in ("note", "file", "tag", "entity") else nid
