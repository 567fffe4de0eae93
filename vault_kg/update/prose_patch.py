"""A prose edit of one note, patched into the graph instead of running the whole route.

The PostToolUse hook updates one note after every agent edit. Most such edits change only prose:
the note's links, tags, headings, aliases, frontmatter and model status stay as they were, and
the graph differs from the last one in one or two attributes of one node (`end_line`, and
`summary` when brief.json and the report do not show it). The whole route
(`vault_kg.update.engine`) would still load every cached extraction, fold every node, hash every node
row and encode all of graph.json to find that out. This stage finds it out from the one note:

- the new extraction is compared with the cached one; everything but `PATCHABLE` node
  attributes and `FREE_META` must be equal (edges, references, nodes, meta, no quarantine, no
  unverified model answer), so resolution, assembly, ranking, communities, counts, the report
  and the brief are those of the last run by construction;
- the anchors pass (which reads every note's frontmatter and the anchored code) would find what
  it found last time: its inputs are unchanged (the recorded dependencies are checked by the
  scan) and it last ran today (`anchor_pass.DAY_META`);
- the note's node row is patched in the cache, its search text replaced, and its node's bytes
  replaced in graph.json (found by encoding the node as the last run wrote it: the encoding holds
  the node id, so it occurs once), which is then written atomically as a whole.

Another kind of edit of the note (a link, a tag, an alias, a shown summary) goes to the link patch
(`vault_kg.update.link_patch`); anything else (a new or removed note, a graph.json that is not the one the
cache wrote, an inline graph.html) is left to the whole route, which decides again.
The result is byte-identical to the whole route's (tests/test_note_patch.py, and the property
test's `paths` and `hook` modes, which compare with a from-scratch build after every step).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from graph_out.graph_json import encode_node
from vault_kg.core import model as m
from vault_kg.core.safe_read import read_regular
from vault_kg.update.noop_checks import deps_changed, owed_owners
from vault_kg.update.run_result import fill_counts
from vault_kg.update.run_state import Run
from vault_kg.update.stages import update_search_index

__all__ = ["FREE_META", "NodePatch", "PATCHABLE", "SHOWN", "patch_prose_edit"]

PATCHABLE = ("end_line", "summary")  # node attributes only the node's own row, its search text and graph.json read
FREE_META = ("size", "summary", "fm_digest", "fm_title")  # extraction meta no other stage reads (the frontmatter's digest: its fields are compared)
SHOWN = ("summary",)  # ... except that brief.json and the report show these of god nodes and conventions


def patch_prose_edit(run: Run) -> None:
    """The route's stage after `finish_owed`: finish the run here when it is one note's prose edit."""
    rel = _candidate(run)
    if rel is None:
        return
    _, st = run.to_read[0]
    try:
        data = read_regular(run.scope.root / rel, root=run.scope.root, trust_folders=True)
    except OSError:
        return  # the whole route says what is wrong with it
    digest = hashlib.sha256(data).hexdigest()
    hook = run.request.settings.defers_whole_graph
    blocked = not run.nothing_changed() and not (hook and _owed_only(run))  # a deferred clustering waits: only the link patch may run
    if blocked and run.stats.get(rel)[2] == digest:
        return
    if run.stats.get(rel)[2] == digest:  # touched, same bytes: what the whole route concludes too
        run.cache.touch_source(rel, st.st_size, st.st_mtime_ns)
        _finish(run, [])
        return
    old = run.cache.load_extraction(rel)
    new = run.adapter.extract(rel, data, previous=old)  # type: ignore[call-arg]  (a vault's: an unchanged frontmatter is not parsed again)
    for p in run.passes:
        new = p.annotate(run, rel, data, new)
    patch = None if blocked else _node_patch(run, rel, old, new)
    if patch is None:
        from vault_kg.update.link_patch import patch_link_edit

        patch_link_edit(run, rel, st, old, new)  # more than prose: a link edit, patched, or the whole route
        return
    if hook:
        _defer(run, rel, st, new, patch)
        return
    from vault_kg.update import graph_splice  # here: a hook leaves graph.json to its job

    placed = {"rank": patch.rank or 0.0} | ({} if patch.community is None else {"community": patch.community})
    pieces = graph_splice.pieces_of(run.cache, run.layout)
    if pieces is None or graph_splice.node_bytes_at(run.layout, pieces, patch.nid) != encode_node(patch.nid, {**patch.before, **placed}):
        return  # graph.json is not the one the cache describes: the whole route writes it
    run.cache.put_source(rel, st.st_size, st.st_mtime_ns, new.hash, new)
    run.cache.put_node_attrs(patch.nid, patch.after)
    _finish(run, [rel])
    if patch.before != patch.after:
        run.result.graph_digest = graph_splice.write_spliced(run.cache, run.layout, pieces, {}, {patch.nid: encode_node(patch.nid, {**patch.after, **placed})}, None)
        run.result.written.append(str(run.layout.graph_json))
    _record_note(run, new)


def _defer(run: Run, rel: str, st: Any, new: m.Extraction, patch: "NodePatch") -> None:
    """A hook's prose edit: the note's rows now, its bytes in graph.json owed to the background
    job (`deferred_work.owe`), which writes graph.json once for a burst of edits."""
    from vault_kg.update.deferred_work import owe

    run.cache.put_source(rel, st.st_size, st.st_mtime_ns, new.hash, new)
    run.cache.put_node_attrs(patch.nid, patch.after)
    _finish(run, [rel])
    if patch.before != patch.after:
        owe(run.cache, [], [patch.nid], 0, run.cache.get_meta("graph", {}) or {})
        run.result.extra["whole_graph"] = "deferred"
    run.result.extra["ranking"] = "reused"
    update_search_index(run.cache, run.adapter, {rel: new}, [rel], [], False)
    issues = (run.cache.get_meta("graph", {}) or {}).get("anchor_issues", [])
    run.result.warnings.extend(i["message"] for i in issues if i.get("source") == rel)
    run.result.warnings.extend(new.warnings)


def _owed_only(run: Run) -> bool:
    """Whether what waits is only what hooks owe the background job (not a deferred clustering)."""
    from vault_kg.update.ranking_policy import stamps

    if owed_owners(run.cache) is None or not _clustering_pending(run):
        return False
    last = stamps(run.cache)
    return last is None or last[0] == last[1]


def _candidate(run: Run) -> str | None:
    """The one note this run may patch, decided before reading it; None: the whole route."""
    if run.scope.kind != "vault" or run.full_listing or run.rebuild_all or run.request.refresh or run.request.force:
        return None
    if len(run.to_read) != 1 or run.removed or not (run.nothing_changed() or _clustering_pending(run)):
        return None
    rel = run.to_read[0][0]
    if run.stats.get(rel) is None:
        return None
    from vault_kg.anchors.dates import today
    from vault_kg.anchors.build_pass import DAY_META
    from vault_kg.core.config import load_config
    from vault_kg.core.errors import KgError
    from vault_kg.update.html_page import html_mode

    try:
        day = today(load_config()).isoformat()
    except KgError:
        return None
    if run.cache.get_meta(DAY_META) != day:
        return None
    counts = (run.cache.get_meta("graph", {}) or {}).get("counts", {})
    return rel if html_mode(counts.get("nodes", 0), run.request.settings.html_later) != "inline" else None


def _clustering_pending(run: Run) -> bool:
    """Whether the one thing the last run left to do is what a hook deferred: the clustering
    (`ranking`), or a link patch's ranks and artifacts (`owed`). The link patch ranks again as the
    whole route would (or defers again), the prose patch (which keeps the last ranks and
    communities) may not run. No pass asks for another run today (`retry`)."""
    from vault_kg.update.ranking_policy import stamps

    if not run.artifacts_ok or run.rebuild_all or not run.cache.get_meta("retry", False) or deps_changed(run.cache.get_meta("deps", {}) or {}):
        return False
    if owed_owners(run.cache) is not None:
        return True
    last = stamps(run.cache)
    return last is not None and last[0] != last[1]


@dataclass
class NodePatch:
    """The edited note's node row before and after, and where ranking placed it."""

    nid: str
    before: dict[str, Any]
    after: dict[str, Any]
    rank: float
    community: int | None


def _node_patch(run: Run, rel: str, old: Any, new: m.Extraction) -> NodePatch | None:
    """The note's node row patched, when only `PATCHABLE` attributes of that node changed."""
    nid = m.note_id(rel)
    if old is None or old.quarantine or new.quarantine or nid not in new.nodes or new.nodes[nid].get("kind") != m.NOTE:
        return None
    if (new.hot("llm") or {}).get("status") == "answered":
        return None  # the model pass verifies new answers in `enrich`
    if _without(old.meta, FREE_META) != _without(new.meta, FREE_META) or old.edges != new.edges or list(old.refs) != list(new.refs):
        return None
    if old.nodes.keys() != new.nodes.keys() or any(old.nodes[n] != new.nodes[n] for n in new.nodes if n != nid):
        return None
    if _without(old.nodes[nid], PATCHABLE) != _without(new.nodes[nid], PATCHABLE):
        return None
    row = run.cache.node_row(nid)
    if row is None or any(row[0].get(k) != old.nodes[nid].get(k) for k in PATCHABLE):
        return None
    if any(old.nodes[nid].get(k) != new.nodes[nid].get(k) for k in SHOWN) and _shown(run, nid, row[0]):
        return None
    after = _without(row[0], PATCHABLE) | {k: new.nodes[nid][k] for k in PATCHABLE if k in new.nodes[nid]}
    return NodePatch(nid, row[0], after, row[1], row[2])


def _shown(run: Run, nid: str, attrs: dict[str, Any]) -> bool:
    """Whether brief.json or the report shows this note (a god node, or a convention note)."""
    from graph_out.formats import is_convention

    return nid in ((run.cache.get_meta("graph", {}) or {}).get("god_nodes") or []) or is_convention(attrs)


def _without(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def _finish(run: Run, extracted: list[str]) -> None:
    """The run's result as `record` leaves it, from the counts the last run recorded."""
    fill_counts(run.result, run.cache)
    run.result.extracted = extracted
    run.done = True


def _record_note(run: Run, new: m.Extraction) -> None:
    """What `write_artifacts` and `record` do for this edit: graph.json's recorded stat, the
    note's search text, its warnings, graph-state.js, a graph.html render."""
    from vault_kg.update.html_page import BACKGROUND, html_mode, write_state

    result, layout, cache, rel = run.result, run.layout, run.cache, new.source
    result.extra["ranking"] = "reused"
    update_search_index(cache, run.adapter, {rel: new}, [rel], [], False)
    issues = (cache.get_meta("graph", {}) or {}).get("anchor_issues", [])
    result.warnings.extend(i["message"] for i in issues if i.get("source") == rel)
    result.warnings.extend(new.warnings)
    mode = html_mode(result.nodes, run.request.settings.html_later)
    if not result.written:
        return
    if mode != "off":
        write_state(layout.out, result.graph_digest, {"nodes": result.nodes, "edges": result.edges})
    if mode == "background":
        result.extra["html"] = BACKGROUND  # the caller wakes the render
