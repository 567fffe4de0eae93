"""The vault's frontmatter contract: a one-line `summary`, namespaced tags, a `scope/` tag.

Read-only: uses the cached extraction when a note is unchanged (stat fast path) and extracts
in memory otherwise, so linting never writes and never needs a build first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from vault_kg.core import model as m
from vault_kg.storage.layout import Layout
from vault_kg.core.scopes import Scope

__all__ = ["Problem", "check_note", "format_lint", "lint"]


@dataclass(frozen=True)
class Problem:
    source: str
    rule: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "rule": self.rule, "message": self.message}


def check_note(ext: m.Extraction) -> list[Problem]:
    """Contract violations of one note, each with what to do about it."""
    rel = ext.source
    if ext.quarantine:
        return [Problem(rel, "quarantined", f"quarantined: {ext.quarantine}")]
    meta = ext.meta
    problems: list[Problem] = []
    if not meta.get("has_frontmatter"):
        return [Problem(rel, "frontmatter", "no frontmatter; add `---` with `summary:` and `tags:` (including a `scope/...` tag)")]
    summary = meta.get("summary", "")
    if not meta.get("summary_present") or not summary:
        problems.append(Problem(rel, "summary", "missing `summary`; add a one-line summary to the frontmatter"))
    elif "\n" in summary:
        problems.append(Problem(rel, "summary", "`summary` spans several lines; make it one line"))
    tags = list(meta.get("fm_tags", [])) + [t for t in meta.get("inline_tags", []) if t not in meta.get("fm_tags", [])]
    for tag in tags:
        if "/" not in tag:
            problems.append(Problem(rel, "tag-namespace", f"tag `{tag}` is not namespaced; use e.g. `topic/{tag}`"))
    if not any(t.startswith("scope/") for t in tags):
        problems.append(Problem(rel, "scope-tag", "no `scope/` tag; add e.g. `scope/global` or `scope/<project>`"))
    return problems


def _cached_extractions(layout: Layout) -> dict[str, tuple[int, int, m.Extraction]]:
    """Extractions from the cache (read-only), keyed by source with the stat they were made at."""
    from vault_kg.storage.cache import read_extractions

    return read_extractions(layout.cache_db)


def lint(scope: Scope) -> dict[str, Any]:
    from extract.notes import MAX_NOTE_BYTES

    from vault_kg.core.safe_read import read_regular
    from vault_kg.update.engine import adapter_for

    adapter = adapter_for(scope.kind)
    cached = _cached_extractions(Layout(scope.out))
    sources, skips = adapter.list_sources(scope.root)
    problems: list[Problem] = []
    extractions: dict[str, m.Extraction] = {}
    for rel in sources:
        path = scope.root / rel
        try:
            st = os.stat(path)
        except OSError:
            continue
        size, mtime, ext = cached.get(rel, (None, None, None))
        if ext is None or size != st.st_size or mtime != st.st_mtime_ns:
            try:
                ext = adapter.extract(rel, read_regular(path, MAX_NOTE_BYTES + 1, root=scope.root, trust_folders=True))
            except OSError as exc:
                problems.append(Problem(rel, "unreadable", f"unreadable ({exc.strerror}); check its permissions"))
                continue
        extractions[rel] = ext
        problems.extend(check_note(ext))
    advice: list[dict[str, str]] = []
    try:
        from extract.entities import likely_duplicates  # type: ignore[import-not-found]

        names = sorted({str(ent.get("name", "")) for e in extractions.values() for ent in (e.meta.get("llm_result") or {}).get("entities", []) if ent.get("name")})
        advice = [{"a": a, "b": b, "reason": r} for a, b, r in likely_duplicates(names)]
    except ImportError:
        pass
    return {
        "scope": scope.name,
        "notes": len(sources),
        "problems": [p.as_dict() for p in problems],
        "skipped": [{"source": s.relpath, "reason": s.reason} for s in skips],
        "advice": advice,
    }


def format_lint(report: dict[str, Any]) -> str:
    lines = [f"{p['source']}: {p['message']}" for p in report["problems"]]
    lines += [f"{s['source']}: skipped: {s['reason']}" for s in report["skipped"]]
    lines += [f"advice: entities `{a['a']}` and `{a['b']}` look alike ({a['reason']}); merge the notes by hand if they are one thing" for a in report["advice"]]
    notes_with = len({p["source"] for p in report["problems"]})
    lines.append(f"{report['notes']} notes · {len(report['problems'])} problems in {notes_with} notes")
    return "\n".join(lines)
