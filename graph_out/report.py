"""GRAPH_REPORT.md: what an agent or a person reads first. God nodes lead; no timestamps (byte-stable)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, NamedTuple

__all__ = ["MAX_ROWS", "ReportParts", "import_cycles", "render_report", "render_report_from"]

MAX_ROWS = 50


def _cell(text: Any, limit: int = 120) -> str:
    value = " ".join(str(text or "").split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return value.replace("|", "\\|")


def render_report(data: dict[str, Any]) -> str:
    """GRAPH_REPORT.md from graph.json's content (node-link `data`)."""
    g = data["graph"]
    nodes = {n["id"]: n for n in data["nodes"]}
    unresolved = [n for n in data["nodes"] if n.get("kind") == "unresolved"]
    if g["kind"] == "vault":
        unresolved.sort(key=lambda n: (-len(n.get("referrers", [])), n["id"]))
    quarantined = [n for n in data["nodes"] if n.get("status") == "quarantined"]
    stale = sorted((n for n in data["nodes"] if n.get("status") == "stale"), key=lambda n: n["id"])
    ignored = sorted((n for n in data["nodes"] if n.get("frontmatter_error")), key=lambda n: n["id"])
    parts = ReportParts(nodes, unresolved[:MAX_ROWS], len(unresolved), quarantined, stale[:MAX_ROWS], len(stale), ignored[:MAX_ROWS], len(ignored))
    return render_report_from(g, parts, _code_sections(data, nodes) if g["kind"] == "code" else [])


class ReportParts(NamedTuple):
    """What the report reads besides the `graph` object: the nodes it names (`lookup`: god nodes
    and community members, by id), the first dangling links (most referrers first) and their
    count, the quarantined nodes, the first stale ones (by id) and their count, and the first notes
    whose frontmatter was ignored (by id) and their count.
    A build takes them from its nodes; an incremental update reads them from the cache."""

    lookup: Mapping[str, dict[str, Any]]
    unresolved: list[dict[str, Any]]
    unresolved_count: int
    quarantined: list[dict[str, Any]]
    stale: list[dict[str, Any]]
    stale_count: int
    ignored: list[dict[str, Any]]
    ignored_count: int


def render_report_from(g: dict[str, Any], parts: ReportParts, code: list[str]) -> str:
    """GRAPH_REPORT.md from the `graph` object and the parts it reads (`code`: a code scope's sections)."""
    nodes, counts = parts.lookup, g.get("counts", {})
    lines = [
        f"# Graph report: {g['scope']} ({g['kind']})",
        "",
        f"{counts.get('sources', 0)} sources · {counts.get('nodes', 0)} nodes · {counts.get('edges', 0)} edges · "
        f"{counts.get('unresolved', 0)} unresolved · {counts.get('quarantined', 0)} quarantined · "
        f"{counts.get('stale', 0)} stale · {counts.get('pending', 0)} pending",
        "",
        "## God nodes",
        "",
        "Weighted PageRank over meaning edges (links, mentions, calls, inheritance); tags, files, sections and tests excluded.",
        "",
        "| # | node | rank | community | summary | source |",
        "|---|---|---|---|---|---|",
    ]
    for i, nid in enumerate(g.get("god_nodes", []), 1):
        n = nodes[nid]
        where = f"{n.get('source', '')}:{n.get('line') or 1}"
        lines.append(f"| {i} | {_cell(n.get('label'))} | {n.get('rank', 0):.3f} | {n.get('community', '')} | {_cell(n.get('summary') or n.get('doc'))} | `{where}` |")
    lines += ["", "## Communities", ""]
    stamp = g.get("stamp") or {}
    if stamp.get("graph") != stamp.get("communities"):
        lines += ["Provisional: these communities were computed on an earlier graph (new notes have none yet); the clustering of this one runs in the background, or with the next `kg update`.", ""]
    lines += ["| id | name | size | cohesion | top members |", "|---|---|---|---|---|"]
    for c in g.get("communities", [])[:MAX_ROWS]:
        members = ", ".join(_cell(nodes[x].get("label"), 40) for x in c.get("members_top", [])[:5])
        lines.append(f"| {c['id']} | {_cell(c['name'], 60)} | {c['size']} | {c['cohesion']:.2f} | {members} |")
    if len(g.get("communities", [])) > MAX_ROWS:
        lines.append(f"| … | {len(g['communities']) - MAX_ROWS} more | | | |")
    lines += code
    lines += _unresolved_section(g["kind"], parts.unresolved, parts.unresolved_count)
    lines += ["", f"## Quarantined ({len(parts.quarantined)})", ""]
    lines += [f"- `{n.get('source')}`: {_cell(n.get('quarantine'), 200)}" for n in parts.quarantined] or ["None."]
    if parts.ignored_count:
        lines += ["", f"## Properties ignored ({parts.ignored_count})", "", "Frontmatter that is not valid YAML: the notes' text and links are in the graph, their properties are not.", ""]
        lines += [f"- `{n.get('source')}` {_cell(n['frontmatter_error'], 200)}" for n in parts.ignored[:MAX_ROWS]]
    if parts.stale_count:  # pending waits for the model: its state is said once, in the counts
        lines += ["", f"## Stale ({parts.stale_count})", ""]
        lines += [f"- `{n['id']}`: {_cell(n.get('stale_reason'), 160)}" for n in parts.stale[:MAX_ROWS]]
    duplicates = g.get("likely_duplicates") or []
    if duplicates:
        lines += ["", f"## Likely duplicate entities ({len(duplicates)}, never merged)", ""]
        lines += [f"- `{d[0]}` ~ `{d[1]}`: {d[2]}" for d in duplicates[:MAX_ROWS]]
    skipped = g.get("skipped") or []
    if skipped:
        lines += ["", f"## Skipped files ({len(skipped)})", ""]
        lines += [f"- `{s['source']}`: {s['reason']}" for s in skipped[:MAX_ROWS]]
    lines += ["", "## Node kinds and relations", ""]
    lines += [f"- {k}: {v}" for k, v in counts.get("by_kind", {}).items()]
    lines += [f"- {k}: {v}" for k, v in counts.get("by_relation", {}).items()]
    lines.append("")
    return "\n".join(lines)


def _unresolved_section(kind: str, shown: list[dict[str, Any]], count: int) -> list[str]:
    """The first dangling links (a vault: most referrers first) or unresolved references (code)."""
    if kind == "vault":
        title = f"## Dangling links ({count})"
        body = [f"- `[[{n.get('label')}]]` from {', '.join('`' + r + '`' for r in n.get('referrers', [])[:5])}" for n in shown[:MAX_ROWS]]
    else:
        title = f"## Unresolved references ({count})"
        body = [f"- `{n.get('label')}`" for n in shown[:MAX_ROWS]]
    return ["", title, ""] + (body or ["None."])


def _code_sections(data: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> list[str]:
    languages = Counter(n.get("language") for n in data["nodes"] if n.get("kind") == "file" and n.get("language"))
    lines = ["", "## Languages", ""]
    lines += [f"- {lang}: {count} files" for lang, count in sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))] or ["None."]
    per_file: Counter[str] = Counter()
    for n in data["nodes"]:
        if n.get("unresolved_calls"):
            per_file[n.get("source", "")] += int(n["unresolved_calls"])
    lines += ["", f"## Unresolved calls per file ({sum(per_file.values())} in all)", ""]
    lines += [f"- `{f}`: {c}" for f, c in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_ROWS]] or ["None."]
    cycles = import_cycles(data)
    lines += ["", f"## Import cycles ({len(cycles)})", ""]
    lines += [f"- {' → '.join(c + [c[0]])}" for c in cycles[:MAX_ROWS]] or ["None."]
    return lines


def import_cycles(data: dict[str, Any], limit: int = 200) -> list[list[str]]:
    """File-level import cycles (strongly connected components, each reported as one cycle)."""
    import networkx as nx

    owner_of = {n["id"]: n.get("source") for n in data["nodes"]}
    g = nx.DiGraph()
    for e in data["edges"]:
        if e["relation"] != "imports":
            continue
        a, b = owner_of.get(e["source"]), owner_of.get(e["target"])
        if a and b and a != b and not e["target"].startswith("external:"):
            g.add_edge(a, b)
    cycles = []
    for component in sorted((sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1), key=lambda c: c[0]):
        try:
            cycle = nx.find_cycle(g.subgraph(component), source=component[0])
            cycles.append([u for u, _ in cycle])
        except nx.NetworkXNoCycle:
            continue
        if len(cycles) >= limit:
            break
    return cycles
