"""Secrets never enter the graph: every extraction passes through `redact_extraction` on its way out.

graph.json, GRAPH_REPORT.md, brief.json, the full-text index and every query, hook or MCP answer
are built from extractions, so redacting here (labels, summaries, frontmatter properties,
headings, docstrings, signatures, link text, search text) covers them all at once. Ids made
from free text (tags, dangling link targets, entity names) are redacted too; paths, locators and
content hashes are left alone: a path or a digest is not a credential, and anchors must still
match the files.
"""

from __future__ import annotations

import bisect
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.secrets import redact, redact_data, trigger_starts

ID_KEYS = frozenset({"source", "target", "owner", "key", "relation", "anchor", "sources", "referrers", "locator"})


# Ids made from free text (a tag, a link target, a name the model read) rather than from a path
# or a locator: a secret typed there would otherwise become an id in every artifact.
TEXT_ID_PREFIXES = ("tag:", "unresolved:", "entity:")


def _attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if k in ID_KEYS else redact_data(v)) for k, v in attrs.items()}


def _id(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(TEXT_ID_PREFIXES):
        return redact(value)
    return value


def _edge(edge: dict[str, Any]) -> dict[str, Any]:
    out = _attrs(edge)
    out["source"], out["target"] = _id(edge.get("source")), _id(edge.get("target"))
    return out


def _ref(ref: m.Ref) -> m.Ref:
    return m.Ref(ref.source, redact(ref.target), ref.relation, ref.line, {**_attrs(ref.attrs), **({"key": redact(ref.attrs["key"])} if "key" in ref.attrs else {})})


def _dirty(parts: list[Any]) -> set[int]:
    """Indices of the parts in whose `repr` a secret may hide (one trigger scan over them all)."""
    reprs = [repr(part) for part in parts]
    starts, offset = [], 0
    for text in reprs:
        starts.append(offset)
        offset += len(text) + 1
    return {bisect.bisect_right(starts, hit) - 1 for hit in trigger_starts("\x00".join(reprs))}


def redact_extraction(extraction: m.Extraction) -> m.Extraction:
    """The same extraction with every secret-shaped span in its text replaced by a placeholder.

    Code metadata other than docstrings holds locators that resolution matches against node ids,
    so only `meta["code"]["docs"]` is redacted there. Nearly every string is clean: one trigger
    scan over all of them (`_dirty`) picks the nodes, edges, references and meta entries that
    may hold a secret, and only those are rebuilt (the rest would come out equal).
    """
    nodes, edges, refs = list(extraction.nodes.items()), extraction.edges, extraction.refs
    meta = dict(extraction.meta)
    code = meta.pop("code", None)
    metas = list(meta.items())
    dirty = _dirty([*nodes, *edges, *((r.target, r.attrs) for r in refs), *metas])
    if dirty:
        extraction.nodes = dict((_id(nid), _attrs(attrs)) if i in dirty else (nid, attrs) for i, (nid, attrs) in enumerate(nodes))
        first = len(nodes)
        extraction.edges = [_edge(edge) if first + i in dirty else edge for i, edge in enumerate(edges)]
        first += len(edges)
        extraction.refs = [_ref(ref) if first + i in dirty else ref for i, ref in enumerate(refs)]
        first += len(refs)
        meta = {key: redact_data(value) if first + i in dirty else value for i, (key, value) in enumerate(metas)}
    if isinstance(code, dict):
        meta["code"] = {**code, "docs": redact_data(code["docs"])} if "docs" in code else code
    extraction.meta = meta
    extraction.text = redact(extraction.text)
    extraction.warnings = [redact(w) for w in extraction.warnings]
    if extraction.quarantine:
        extraction.quarantine = redact(extraction.quarantine)
    return extraction
