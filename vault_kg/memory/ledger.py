"""`kg ledger`: which vault notes earn their keep, from the recall log and the anchored code.

Every knowledge note (journal days are episodic and left out) falls in one quadrant:

|                    | says more than the code | the code already says it |
|--------------------|-------------------------|--------------------------|
| surfaced           | working                 | redundant                |
| never surfaced     | dormant (insurance)     | prunable                 |

*Surfaced* means the recall log (`vault_kg.memory.recall_log`) names the note in something kg put in
front of an agent: a query or explain answer (CLI or MCP), the session brief, or push-recall.
Credit (the Stop hook) is counted and shown but is not surfacing.

*The code already says it*, deterministically: the note is anchored to code (`anchors:` with a
project and locator), every anchored span exists in the files as they are now, and at least
`CODE_SAYS_IT` (80%) of the note's distinct content words (summary and body, frontmatter left out;
lowercased, identifiers split at `_` and camelCase, stemmed, stopwords and words under three
letters dropped) occur among the words of the anchored spans (identifiers, comments and strings
alike). A note with no code anchor always says more than the code. Only *prunable* notes are safe
to clear: nothing ever surfaced them and the code holds what they say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from vault_kg.core.agent_text import one_line
from vault_kg.core.config import Config, load_config
from vault_kg.core.memory_kinds import is_episodic
from vault_kg.memory.push_recall import terms
from vault_kg.memory.recall_log import entries, log_path
from vault_kg.core.scopes import Scope

__all__ = ["CODE_SAYS_IT", "HEADINGS", "QUADRANTS", "Row", "SHOWN", "code_coverage", "format_ledger", "ledger", "words"]

CODE_SAYS_IT = 0.8
QUADRANTS = ("working", "redundant", "dormant", "prunable")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_FRONTMATTER_RE = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def words(text: str) -> set[str]:
    """`terms` with identifiers split: `fetchWithRetry` and `fetch_with_retry` give fetch, with, retry."""
    return terms(_CAMEL_RE.sub(" ", text).replace("_", " "))


@dataclass
class Row:
    id: str
    label: str
    source: str
    surfaced: int = 0
    credited: int = 0
    last_surfaced: float | None = None
    coverage: float | None = None  # share of the note's words found in its anchored code
    anchors: int = 0
    why: str = ""
    vias: dict[str, int] = field(default_factory=dict)

    @property
    def code_says_it(self) -> bool:
        return self.coverage is not None and self.coverage >= CODE_SAYS_IT

    @property
    def quadrant(self) -> str:
        if self.surfaced:
            return "redundant" if self.code_says_it else "working"
        return "prunable" if self.code_says_it else "dormant"


def code_coverage(vault: Path, rel: str, props: dict[str, Any], cfg: Config) -> tuple[float | None, int, str]:
    """(coverage, code anchors, why) for one note: None when the code cannot say what it says."""
    from extract.notes import MAX_NOTE_BYTES

    from vault_kg.anchors.spans import MAX_SOURCE_BYTES, is_markdown, spans_of, split_locator
    from vault_kg.core.safe_read import read_regular

    anchors = [a for a in props.get("anchors") or () if isinstance(a, dict) and a.get("project") and a.get("locator")]
    anchors = [a for a in anchors if not is_markdown(split_locator(str(a["locator"]))[0])]
    if not anchors:
        return None, 0, "not anchored to code"
    code: set[str] = set()
    for a in anchors:
        root = cfg.projects.get(str(a["project"]))
        path, _ = split_locator(str(a["locator"]))
        if root is None:
            return None, len(anchors), f"project {a['project']} is not registered"
        try:
            data = read_regular(root / path, MAX_SOURCE_BYTES, root=root)
        except OSError:
            return None, len(anchors), f"{a['project']}:{path} is missing"
        span = spans_of(path, data).get(str(a["locator"]))
        if span is None:
            return None, len(anchors), f"{a['locator']} is not in the code"
        lines = data.decode("utf-8", "replace").splitlines()
        code |= words("\n".join(lines[int(span["line"]) - 1 : int(span["end_line"])]))
    try:
        text = read_regular(vault / rel, MAX_NOTE_BYTES, root=vault).decode("utf-8", "replace")
    except OSError:
        return None, len(anchors), "unreadable"
    said = words(str(props.get("summary") or "") + "\n" + _FRONTMATTER_RE.sub("", text, count=1))
    if not said:
        return 1.0, len(anchors), "the note has no words of its own"
    coverage = round(len(said & code) / len(said), 3)
    return coverage, len(anchors), f"{len(said & code)} of its {len(said)} words are in the anchored code"


def ledger(vault: Scope, cfg: Config | None = None) -> dict[str, Any]:
    from vault_kg.query.graph_view import load_view

    cfg = cfg or load_config()
    view = load_view(vault)
    rows: dict[str, Row] = {}
    for nid, data in view.reader.note_rows():
        node = orjson.loads(data)
        if is_episodic(node) or node.get("status") == "quarantined":
            continue
        row = Row(nid, str(node.get("label") or nid), str(node.get("source") or ""))
        row.coverage, row.anchors, row.why = code_coverage(vault.root, row.source, node.get("props") or {}, cfg)
        rows[nid] = row
    for entry in entries(vault.root):
        for nid in entry["notes"]:
            row = rows.get(nid)
            if row is None:
                continue
            if entry["via"] == "credit":
                row.credited += 1
                continue
            row.surfaced += 1
            row.vias[entry["via"]] = row.vias.get(entry["via"], 0) + 1
            row.last_surfaced = max(row.last_surfaced or 0.0, float(entry.get("t") or 0.0))
    quadrants: dict[str, list[dict[str, Any]]] = {q: [] for q in QUADRANTS}
    for row in sorted(rows.values(), key=lambda r: (-r.surfaced, r.id)):
        quadrants[row.quadrant].append(
            {
                "id": row.id,
                "label": row.label,
                "source": row.source,
                "surfaced": row.surfaced,
                "credited": row.credited,
                "vias": dict(sorted(row.vias.items())),
                "last_surfaced": row.last_surfaced,
                "code_anchors": row.anchors,
                "coverage": row.coverage,
                "why": row.why,
            }
        )
    return {"vault": str(vault.root), "log": str(log_path(vault.root)), "threshold": CODE_SAYS_IT, "counts": {q: len(quadrants[q]) for q in QUADRANTS}, "quadrants": quadrants}


HEADINGS = {
    "working": "working: surfaced, and says more than the code",
    "redundant": "redundant: surfaced, but the code already says it",
    "dormant": "dormant: never surfaced; kept as insurance",
    "prunable": "prunable: never surfaced and already in the code (safe to clear)",
}
SHOWN = 15


def format_ledger(report: dict[str, Any]) -> str:
    counts = report["counts"]
    out = ["recall ledger: " + " · ".join(f"{counts[q]} {q}" for q in QUADRANTS) + f"  (log: {one_line(report['log'], 200)})"]
    for q in QUADRANTS:
        items = report["quadrants"][q]
        if not items:
            continue
        out.append(f"{HEADINGS[q]} ({len(items)})")
        for item in items[:SHOWN]:
            seen = f"surfaced {item['surfaced']}×" + (f", credited {item['credited']}×" if item["credited"] else "")
            cov = f", {item['coverage']:.0%} in code" if item["coverage"] is not None else ""
            out.append(f"  - {one_line(item['label'], 80)} ({one_line(item['source'], 160)}): {seen}{cov}")
        if len(items) > SHOWN:
            out.append(f"  … {len(items) - SHOWN} more; `kg ledger --json` lists all")
    return "\n".join(out)
