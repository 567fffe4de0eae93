"""Secrets never enter the graph: every extraction passes through `redact_extraction` on its way out.

graph.json, GRAPH_REPORT.md, brief.json, the full-text index and every query, hook or MCP answer
are built from extractions, so redacting here (labels, summaries, frontmatter properties,
headings, docstrings, signatures, link text, search text) covers them all at once. Ids made
from free text (tags, dangling link targets, entity names) are redacted too; paths, locators and
content hashes are left alone: a path or a digest is not a credential, and anchors must still
match the files.
"""

from __future__ import annotations

from typing import Any

from vault_kg.core import model as m
from vault_kg.core.secrets import redact, redact_data

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


def redact_extraction(extraction: m.Extraction) -> m.Extraction:
    """The same extraction with every secret-shaped span in its text replaced by a placeholder.

    Code metadata other than docstrings holds locators that resolution matches against node ids,
    so only `meta["code"]["docs"]` is redacted there.
    """
    extraction.nodes = {_id(nid): _attrs(attrs) for nid, attrs in extraction.nodes.items()}
    extraction.edges = [_edge(edge) for edge in extraction.edges]
    extraction.refs = [
        m.Ref(ref.source, redact(ref.target), ref.relation, ref.line, {**_attrs(ref.attrs), **({"key": redact(ref.attrs["key"])} if "key" in ref.attrs else {})})
        for ref in extraction.refs
    ]
    meta = dict(extraction.meta)
    code = meta.pop("code", None)
    meta = redact_data(meta)
    if isinstance(code, dict):
        meta["code"] = {**code, "docs": redact_data(code["docs"])} if "docs" in code else code
    extraction.meta = meta
    extraction.text = redact(extraction.text)
    extraction.warnings = [redact(w) for w in extraction.warnings]
    if extraction.quarantine:
        extraction.quarantine = redact(extraction.quarantine)
    return extraction
