"""What `kg query` prints: under the best hits the passages that answer, then more hits, then edges.

Every hit has a header line (label, kind, `file:line`) and its summary; a hit reached by the walk
has its route (`via`). Under the first hits go their passages (`vault_kg.query.passages_for`
chooses them: by meaning where vectors exist, else by the question's words), verbatim, with
their heading path and lines. The budget is spent in that order of use: the first three hits'
headers, their passages (the best hit's two best, then one each for the next two, then the
rest), the other hits' headers, and last the edges between hits that are not already printed
as a route. Every printed line costs its characters plus its newline (4 characters a token);
when anything is cut the notice's room is reserved first, and the notice says what was cut.
"""

from __future__ import annotations

from typing import Any

import orjson

from vault_kg.core import model as m
from vault_kg.core.agent_hints import ask, option, parameter
from vault_kg.core.agent_text import one_line
from vault_kg.query.graph_view import GraphView
from vault_kg.query.passage_choice import Chosen, choose, cost_of, passage_lines, snippet, window

__all__ = ["CHARS_PER_TOKEN", "FLAGGED", "PASSAGE_HITS", "estimate_tokens", "format_hit", "format_query", "render", "status_flag"]

CHARS_PER_TOKEN = 4
PASSAGE_HITS = 5  # hits whose passages may be printed
HEADS_FIRST = 3  # hits whose headers come before any passage
SLOTS = [(0, 0), (0, 1), (1, 0), (2, 0), (1, 1), (3, 0), (4, 0), (2, 1)]  # (hit, passage) in the order the budget buys them
MIN_WINDOW = 160  # characters: a passage cut shorter than this is not worth printing
SHARE = 0.45  # the most of the budget one passage may take


FLAGGED = (m.STALE, m.SUPERSEDED, m.QUARANTINED)  # `pending` is the model's state, said once (`kg stats`), never per line


def status_flag(status: Any) -> str:
    """` [STALE]` and the like after a name, for what is not current knowledge; "" otherwise."""
    return f" [{status.upper()}]" if status in FLAGGED else ""


def estimate_tokens(text: str) -> int:
    """The token estimate every budget in kg uses: about four characters a token, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def render(
    question: str,
    ordered: list[tuple[str, str]],
    seeds: set[tuple[str, str]],
    scored: dict[tuple[str, str], float],
    via: dict[tuple[str, str], str],
    views: dict[str, GraphView],
    budget: int,
    vectors: dict[str, Any],
    multi: bool,
) -> dict[str, Any]:
    """The answer's data, fitted to `budget` tokens as `format_query` prints it."""
    limit = budget * CHARS_PER_TOKEN
    hits = _hits(question, ordered, seeds, scored, via, views, limit, multi)
    wanted = [sum(1 for i, _ in SLOTS if i == n) for n in range(len(hits))]
    chosen = [choose(views[h["scope"]], h, question, vectors, wanted[i]) if wanted[i] and h["seed"] else [] for i, h in enumerate(hits)]
    for hit, passages in zip(hits, chosen):
        label = str(hit.get("label") or "")
        hit["passages"] = [p.as_dict(label) for p in passages]
    full = _answer(question, budget, hits, _edges_among(hits, via, views), 0, 0, multi)
    if len(hits) == len(ordered) and estimate_tokens(format_query(full) + "\n") <= budget:
        return full
    return _packed(question, budget, hits, chosen, len(ordered), via, views, multi)


def _hits(
    question: str,
    ordered: list[tuple[str, str]],
    seeds: set[tuple[str, str]],
    scored: dict[tuple[str, str], float],
    via: dict[tuple[str, str], str],
    views: dict[str, GraphView],
    limit: int,
    multi: bool,
) -> list[dict[str, Any]]:
    """Hit dicts in order, read until their headers alone fill the budget (files are read for snippets)."""
    from vault_kg.query.search import query_terms

    terms = [t[:-1] if len(t) > 4 and t.endswith("s") else t for t in query_terms(question)]
    hits, used = [], 0
    for key in ordered:
        view = views[key[0]]
        node = view.nodes[key[1]]
        hit = {
            "scope": key[0],
            "id": key[1],
            "kind": node.get("kind"),
            "label": node.get("label"),
            "source": node.get("source"),
            "line": node.get("line"),
            "summary": node.get("summary") or node.get("doc") or "",
            "snippet": "",
            "score": round(scored[key], 4),
            "seed": key in seeds,
            "status": node.get("status", m.LIVE),
        }
        if key in via:
            e = orjson.loads(via[key])
            hit["via"] = {"source": e["source"], "relation": e["relation"], "target": e["target"], "confidence": e.get("confidence")}
        if not hit["seed"]:
            hit["line"], hit["snippet"] = snippet(view.scope, node, terms)
        hits.append(hit)
        used += len(format_hit(hit, multi)) + 1
        if used > limit:
            break
    return hits


def _packed(
    question: str, budget: int, hits: list[dict[str, Any]], chosen: list[list[Chosen]], total: int, via: dict[tuple[str, str], str], views: dict[str, GraphView], multi: bool
) -> dict[str, Any]:
    """Spend the budget in order of use (see the module doc); the notice's room first."""
    room = budget * CHARS_PER_TOKEN - (len(_notice(10**6, 10**6, budget)) + 1)
    share = max(MIN_WINDOW, int(budget * CHARS_PER_TOKEN * SHARE))
    shown = [dict(h, passages=[]) for h in hits]
    heads = 0
    for hit in shown[:HEADS_FIRST]:
        cost = len(format_hit(hit, multi)) + 1
        if cost > room:
            if heads == 0:  # the best hit always shows, shortened to the room there is
                shown[0] = _shrink(hit, room - 1, multi)
                room -= len(format_hit(shown[0], multi)) + 1
                heads = 1
            break
        room -= cost
        heads += 1
    for i, j in SLOTS:
        if i >= heads or j >= len(chosen[i]) or room < MIN_WINDOW:
            continue
        block = window(chosen[i][j], question, min(room, share), label=str(shown[i].get("label") or ""))
        if block is not None:
            shown[i]["passages"].append(block)
            room -= cost_of(block)
    for hit in shown:
        hit["passages"].sort(key=lambda p: p["rank"])
    for hit in shown[heads:]:
        cost = len(format_hit(hit, multi)) + 1
        if cost > room:
            break
        room -= cost
        heads += 1
    shown = shown[:heads]
    edges = _edges_among(shown, via, views)
    kept = 0
    if edges and len("edges:") + 1 <= room:
        room -= len("edges:") + 1
        for e in edges:
            cost = len(_format_edge(e)) + 1
            if cost > room:
                break
            room -= cost
            kept += 1
    return _answer(question, budget, shown, edges[:kept], total - heads, len(edges) - kept, multi)


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


def _edges_among(hits: list[dict[str, Any]], via: dict[tuple[str, str], str], views: dict[str, GraphView]) -> list[dict[str, Any]]:
    """Edges between two printed hits that no printed route already shows, seeds' first."""
    ids = {(h["scope"], h["id"]) for h in hits}
    routes = {(h["scope"], h["via"]["source"], h["via"]["relation"], h["via"]["target"]) for h in hits if h.get("via")}
    seeds = {(h["scope"], h["id"]) for h in hits if h["seed"]}
    edges = []
    for scope_name, nid in sorted(ids):
        for e in views[scope_name].out_edges.get(nid, []):
            if (scope_name, e["target"]) in ids and (scope_name, nid, e["relation"], e["target"]) not in routes:
                edges.append({"scope": scope_name, "source": nid, "relation": e["relation"], "target": e["target"], "confidence": e.get("confidence"), "line": e.get("line")})
    return sorted(edges, key=lambda e: (e["scope"], e["source"]) not in seeds or (e["scope"], e["target"]) not in seeds)


def _answer(question: str, budget: int, hits: list[dict[str, Any]], edges: list[dict[str, Any]], cut_hits: int, cut_edges: int, multi: bool) -> dict[str, Any]:
    for hit in hits:
        for p in hit.get("passages", []):
            p.pop("rank", None)
        if hit.get("passages"):
            hit["line"] = hit["passages"][0]["first"]  # the `file:line` printed: where the answer is
    answer = {"question": question, "budget": budget, "hits": hits, "edges": edges, "truncated": cut_hits, "truncated_edges": cut_edges, "multi_scope": multi}
    answer["tokens"] = estimate_tokens(format_query(answer) + "\n")
    return answer


def format_hit(hit: dict[str, Any], multi: bool = False) -> str:
    passages = hit.get("passages") or []
    where = f"{one_line(hit['source'])}:{passages[0]['first'] if passages else hit.get('line')}" if hit.get("source") else one_line(hit["id"])
    scope = f"[{one_line(hit['scope'])}] " if multi else ""
    flag = status_flag(hit.get("status"))
    head = f"{'*' if hit['seed'] else '-'} {scope}{one_line(hit['label'])} ({hit['kind']}){flag} — {where}"
    parts = [head]
    if hit.get("summary"):
        parts.append(f"    {one_line(hit['summary'])}")
    if hit.get("snippet") and hit["snippet"] != hit.get("summary"):
        parts.append(f"    > {one_line(hit['snippet'])}")
    if hit.get("via"):
        v = hit["via"]
        parts.append(f"    via {one_line(v['source'])} —{v['relation']}→ {one_line(v['target'])}")
    for p in passages:
        parts.extend(passage_lines(p))
    return "\n".join(parts)


def _format_edge(e: dict[str, Any]) -> str:
    return f"  {one_line(e['source'])} —{e['relation']}→ {one_line(e['target'])}" + (f" (line {e['line']})" if e.get("line") else "")


def _notice(cut_hits: int, cut_edges: int, budget: int) -> str:
    what = " and ".join(part for part in (f"{cut_hits} more hits" if cut_hits else "", f"{cut_edges} more edges" if cut_edges else "") if part)
    return f"[truncated: {what} past the {budget}-token budget; raise {parameter('budget')} to see them]"


def format_query(answer: dict[str, Any]) -> str:
    """The answer as printed; `render` has already fitted every line of it into the budget."""
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
