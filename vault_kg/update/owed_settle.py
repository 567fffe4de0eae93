"""Settle what hooks deferred at the cost of what they changed: carried ranks, spliced artifacts.

The PostToolUse hook stores an edit in the query tables and leaves the rest owed
(`vault_kg.update.deferred_work`): the owners whose edge rows the rank's edge table lacks, and the
nodes whose bytes in graph.json are behind their rows. The background job's update ends here
(`deferred_work.finish_owed`) when it can:

- the edge table gets the owed owners' rows (`centrality.patched`), and ranks and communities
  are carried forward from the last ones (`vault_kg.update.rank_state`: PageRank warm-started,
  a shown rank rewritten only when it moved past the tolerance, new nodes joining a neighbour's
  community), unless a full recompute is due; an edit that changed no edge and no node's class
  (prose) computes nothing;
- the query tables get the ranks and communities that moved, nothing else;
- graph.json is written as the change (`vault_kg.update.graph_splice`): the owed groups, the nodes
  whose rows, ranks or communities moved, and the `graph` object; GRAPH_REPORT.md and brief.json
  are written from the cache's rows (the few the report and the brief name) and counts.

No extraction is loaded and no node row is read but those it writes or names. When it cannot
(no carried state or recorded pieces, a full recompute due, a table it cannot patch) it returns
False and the full route settles.
"""

from __future__ import annotations

from typing import Any

from graph_out import formats
from graph_out.graph_json import encode_node
from graph_out.report import MAX_ROWS, ReportParts, render_report_from
from vault_kg import __version__
from vault_kg.core import store
from vault_kg.update import graph_splice, rank_state
from vault_kg.update.noop_checks import OWED
from vault_kg.update.run_state import Run

__all__ = ["settle_carried"]


def settle_carried(run: Run, owed: dict[str, Any]) -> bool:
    """Settle `owed` (the cache's `OWED` meta) by carrying and splicing; False: the full route does it."""
    cache, layout = run.cache, run.layout
    pieces = graph_splice.pieces_of(cache, layout)
    state = rank_state.load(cache)
    last = cache.get_meta("graph", {}) or {}
    if pieces is None or state is None or not last:
        return False
    changed = set(owed.get("nodes", []))
    columns = cache.node_columns(changed)
    classes = {nid: rank_state.node_class(*columns[nid]) for nid in columns}
    index = {nid: i for i, nid in enumerate(state.ids)}
    ranked = bool(owed["owners"]) or any(nid not in index or nid not in columns or classes[nid] != state.cls[index[nid]] for nid in changed)
    if ranked:
        carried = _carry(run, state, owed, classes, changed)
        if carried is None:
            return False
        moved, gods, communities = carried.moved, carried.gods, None
    else:
        moved, gods, communities = sorted(changed), list(last.get("god_nodes", [])), last.get("communities", [])
    _write(run, owed, last, pieces, moved, gods, communities, ranked)
    return True


def _carry(run: Run, state: rank_state.RankState, owed: dict[str, Any], classes: dict[str, int], changed: set[str]) -> rank_state.Carried | None:
    """The edge table with the owed owners' rows and the ranks carried over it (stored), or None
    when a full recompute is due or the table cannot be patched."""
    import orjson

    from vault_kg.update.centrality import EdgeTable, patched

    cache = run.cache
    table = cache.raw_blob("table")
    if table is None:
        return None
    old = EdgeTable.from_bytes(table)
    if old.ids != state.ids:
        return None
    gone = {nid for nid in changed if nid not in classes}
    ids = sorted((set(old.ids) - gone) | set(classes))
    fresh = {owner: orjson.loads(blob) for owner, blob in cache.groups_of(owed["owners"]).items()}
    fresh.update({owner: [] for owner in owed["owners"] if owner not in fresh})
    owners = sorted((set(old.owners) - {o for o, g in fresh.items() if not g}) | {o for o, g in fresh.items() if g})
    new = patched(old, dict.fromkeys(ids), owners, fresh)
    if new is None:
        return None
    carried = rank_state.carry(state, new, classes, changed)
    if carried.full_reason is not None:
        run.result.extra["full_recompute"] = carried.full_reason
        return None
    cache.put_table(new)
    cache.put_blob(rank_state.BLOB, carried.state.to_bytes())
    shown = dict(zip(carried.state.ids, carried.state.shown.tolist()))
    community = dict(zip(carried.state.ids, carried.state.community.tolist()))
    cache.put_ranks({nid: (shown[nid], community[nid] if community[nid] >= 0 else None) for nid in carried.moved})
    run.table, run.result.extra["ranking"] = new, "carried"
    run.state["carried"] = carried
    return carried


def _write(run: Run, owed: dict[str, Any], last: dict[str, Any], pieces: Any, moved: list[str], gods: list[str], communities: list[dict[str, Any]] | None, ranked: bool) -> None:
    """graph.json spliced, the report and the brief from the cache, the run's result, OWED cleared."""
    cache, layout, result = run.cache, run.layout, run.result
    carried = run.state.get("carried")
    if communities is None:
        assert carried is not None and run.table is not None  # `_carry` left both
        communities = rank_state.community_rows(carried.state, run.table, lambda ids: {nid: row[0].get("label", nid) for nid, row in cache.node_rows(ids).items()})
    rows = cache.report_rows(MAX_ROWS)
    attrs = _graph_attrs(run, last, gods, communities, rows, carried)
    named = set(gods) | {nid for c in communities[:MAX_ROWS] for nid in c.get("members_top", [])[:5]}
    lookup = {nid: _placed(row) for nid, row in cache.node_rows(named | set(moved)).items()}
    groups = cache.groups_of(owed["owners"]) if ranked else {}
    nodes: dict[str, bytes | None] = {nid: (encode_node(nid, lookup[nid]) if nid in lookup else None) for nid in moved}
    digest = graph_splice.write_spliced(cache, layout, pieces, {o: groups.get(o) for o in owed["owners"]}, nodes, graph_splice.graph_attrs_bytes(attrs))
    result.graph_digest = digest
    result.written.append(str(layout.graph_json))
    report = render_report_from(attrs, _report_parts(lookup, rows, attrs), [])
    if store.write_if_changed(layout.report, report.encode()):
        result.written.append(str(layout.report))
    conventions = [(nid, a) for nid, a in rows["conventions"] if formats.is_convention(a)]
    brief = formats.brief_from(attrs, lookup, conventions)  # type: ignore[arg-type]
    store.write_if_changed(layout.brief, store.dumps_json(brief))
    _state_script(run, attrs, digest)
    cache.set_meta("graph", attrs)
    cache.set_meta(OWED, None)
    cache.set_meta("retry", False)
    counts = attrs["counts"]
    result.nodes, result.edges, result.pending = counts["nodes"], counts["edges"], counts.get("pending", 0)
    result.sources, result.unresolved = counts["sources"], counts["unresolved"] + counts.get("unresolved_calls", 0)
    result.quarantined = [tuple(q) for q in attrs.get("quarantined", [])]
    result.extra["whole_graph"] = "settled"
    run.done = True


def _placed(row: tuple[dict[str, Any], float | None, int | None]) -> dict[str, Any]:
    """A node row with its rank and community, as graph.json and the report hold it."""
    attrs, rank, community = row
    return {**attrs, "rank": rank or 0.0, **({} if community is None else {"community": community})}


def _graph_attrs(run: Run, last: dict[str, Any], gods: list[str], communities: list[dict[str, Any]], rows: dict[str, Any], carried: Any) -> dict[str, Any]:
    """graph.json's `graph` object for the settled graph: counts from the cache, the passes' parts as they were."""
    cache, scope = run.cache, run.scope
    kinds, statuses = cache.node_tallies()
    before = last.get("counts", {})
    table = run.table
    edges = table.row_count() if table is not None else before.get("edges", 0)
    by_relation = table.relation_counts() if table is not None else before.get("by_relation", {})
    counts = {
        "nodes": sum(kinds.values()),
        "edges": edges,
        "sources": before.get("sources", 0),
        "unresolved": kinds.get("unresolved", 0),
        "unresolved_calls": before.get("unresolved_calls", 0),
        "quarantined": statuses.get("quarantined", 0),
        "stale": statuses.get("stale", 0),
        "pending": statuses.get("pending", 0),
        "by_kind": dict(sorted(kinds.items())),
        "by_relation": by_relation,
    }
    quarantined = {nid: a for nid, a in rows["quarantined"]}
    skipped = [(s["source"], s["reason"]) for s in last.get("skipped", [])]
    attrs = dict(formats.graph_attrs(scope.name, scope.kind, scope.root, f"vault-kg {__version__}", quarantined, gods, communities, counts, skipped, formats.pass_attrs(last)))  # type: ignore[arg-type]
    stamp = dict(last.get("stamp") or {})
    if carried is not None:
        stamp["carried"] = carried.state.edits
    if stamp:
        attrs["stamp"] = stamp
    return attrs


def _report_parts(lookup: dict[str, dict[str, Any]], rows: dict[str, Any], attrs: dict[str, Any]) -> ReportParts:
    """What the report lists besides god nodes and communities, from the cache's rows."""
    counts = attrs["counts"]
    unresolved = [{"id": nid, **a} for nid, a in rows["unresolved"]]
    quarantined = [{"id": nid, **a} for nid, a in rows["quarantined"]]
    stale = [{"id": nid, **a} for nid, a in rows["stale"]]
    ignored = [{"id": nid, **a} for nid, a in rows["ignored"]]
    return ReportParts(lookup, unresolved, counts["unresolved"], quarantined, stale, counts["stale"], ignored, rows["ignored_count"])


def _state_script(run: Run, attrs: dict[str, Any], digest: int) -> None:
    """graph-state.js, for a graph.html drawn earlier to say it is behind (not when graph.html is off)."""
    from vault_kg.update.html_page import html_mode, write_state

    if html_mode(attrs["counts"]["nodes"], later=True) != "off":
        write_state(run.layout.out, digest, attrs["counts"])
