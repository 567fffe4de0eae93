"""The vault's frontmatter contract: a one-line `summary`, namespaced tags, a `scope/` tag.

Read-only (but for `--fix`): uses the cached extraction when a note is unchanged (stat fast path)
and extracts in memory otherwise, so linting never needs a build first.

Two kinds of findings, counted first so an adopted vault gets a short report:

- problems, which cost the graph something: a note quarantined (binary, undecodable, huge), or
  properties that do not parse (the note's text and links are read, its properties are not);
- contract gaps: what kg's own notes carry and a hand-written note may lack (a summary, namespaced
  tags, a `scope/` tag). Day notes and the templates folder are not held to the contract.

Every piece of advice is one a guardrail accepts: a scope is `scope/<project>`, and knowledge
that holds everywhere goes through `kg promote`, never a hand-added `scope/global` (which the
PreToolUse guardrail and the note writers refuse). `kg lint --fix` applies only what is safe and
reviewable: quoting a property value that holds `: ` (`vault_kg.notes.lint_fix`; it prints each
change, and the vault's git history shows the diff).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from vault_kg.core import model as m
from vault_kg.core.scopes import Scope
from vault_kg.storage.layout import Layout

__all__ = ["CONTRACT_RULES", "Problem", "check_note", "exempt_from_contract", "format_lint", "lint", "note_extractions", "note_warnings", "templates_folder"]

CONTRACT_RULES = ("frontmatter", "summary", "tag-namespace", "scope-tag")
SCOPE_ADVICE = "add `scope/<project>` (or `kg promote` it, for knowledge that holds everywhere)"
MAX_SHOWN = 20  # per rule in the text report, unless --all


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
    broken = meta.get("frontmatter_error")
    if broken:
        return [Problem(rel, "frontmatter-yaml", f"line {broken['line']}: properties ignored ({broken['reason']}); {broken['fix']}")]
    problems: list[Problem] = []
    if not meta.get("has_frontmatter"):
        return [Problem(rel, "frontmatter", "no frontmatter; to put it in briefs and scoped queries, add `---` with a one-line `summary:` and `tags:` (with `scope/<project>`)")]
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
        problems.append(Problem(rel, "scope-tag", f"no `scope/` tag; {SCOPE_ADVICE}"))
    return problems


def templates_folder(root: Path) -> str:
    """The folder Obsidian's Templates (or Templater) plugin reads templates from ("" when none)."""
    from vault_kg.core.safe_read import read_regular

    for parts, key in (((".obsidian", "templates.json"), "folder"), ((".obsidian", "plugins", "templater-obsidian", "data.json"), "templates_folder")):
        try:
            data = json.loads(read_regular(root.joinpath(*parts), 256 * 1024).decode("utf-8", "replace"))
        except (OSError, ValueError):
            continue
        folder = data.get(key) if isinstance(data, dict) else None
        if isinstance(folder, str) and folder.strip().strip("/"):
            return folder.strip().strip("/")
    return ""


def exempt_from_contract(root: Path) -> Callable[[str], bool]:
    """Notes not held to the contract: day and week notes, and the templates folder."""
    from vault_kg.core.day_files import day_settings, period_of

    settings = day_settings(root)
    templates = templates_folder(root)
    prefix = templates + "/" if templates else None
    return lambda rel: period_of(rel, settings) is not None or (prefix is not None and rel.startswith(prefix))


def note_extractions(scope: Scope) -> tuple[dict[str, m.Extraction], list[Problem], list[Any]]:
    """Every note's extraction (the cache's when the note is unchanged), unreadable notes, the skips."""
    from extract.notes import MAX_NOTE_BYTES, extract_note
    from extract.vault_scan import list_notes
    from vault_kg.core.safe_read import read_regular
    from vault_kg.storage.cache import read_extractions

    cached = read_extractions(Layout(scope.out).cache_db)
    sources, skips = list_notes(scope.root)
    unreadable: list[Problem] = []
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
                ext = extract_note(rel, read_regular(path, MAX_NOTE_BYTES + 1, root=scope.root, trust_folders=True))
            except OSError as exc:
                unreadable.append(Problem(rel, "unreadable", f"unreadable ({exc.strerror}); check its permissions"))
                continue
        extractions[rel] = ext
    return extractions, unreadable, skips


def lint(scope: Scope, show_all: bool = False, fixed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Problems and contract gaps of every note, counted by rule; `show_all` lists every finding
    in the text report (the data always holds them all); `fixed`: what `kg lint --fix` changed."""
    extractions, problems, skips = note_extractions(scope)
    exempt = exempt_from_contract(scope.root)
    for rel, ext in extractions.items():
        found = check_note(ext)
        problems.extend(p for p in found if p.rule not in CONTRACT_RULES or not exempt(rel))
    counts = Counter(p.rule for p in problems)
    return {
        "scope": scope.name,
        "notes": len(extractions),
        "exempt": sum(1 for rel in extractions if exempt(rel)),
        "counts": dict(sorted(counts.items())),
        "problems": [p.as_dict() for p in problems],
        "fixable": sum(1 for p in problems if p.rule == "frontmatter-yaml" and "; quote the value: `" in p.message),
        "fixed": fixed or [],
        "skipped": [{"source": s.relpath, "reason": s.reason} for s in skips],
        "advice": _duplicate_advice(extractions),
        "all": show_all,
    }


def _duplicate_advice(extractions: dict[str, m.Extraction]) -> list[dict[str, str]]:
    try:
        from extract.entities import likely_duplicates
    except ImportError:
        return []
    names = sorted({str(ent.get("name", "")) for e in extractions.values() for ent in (e.meta.get("llm_result") or {}).get("entities", []) if ent.get("name")})
    return [{"a": a, "b": b, "reason": r} for a, b, r in likely_duplicates(names)]


def note_warnings(root: Path, rel: str) -> list[str]:
    """What a build says about one note as it is now (its properties ignored, and why): for the
    hook after an edit that the background refresh already took in."""
    from extract.notes import MAX_NOTE_BYTES, extract_note
    from vault_kg.core.safe_read import read_regular

    try:
        return extract_note(rel, read_regular(root / rel, MAX_NOTE_BYTES + 1, root=root)).warnings
    except OSError:
        return []


def format_lint(report: dict[str, Any]) -> str:
    """Counts first, then the problems, then the contract gaps (at most `MAX_SHOWN` a rule unless `all`)."""
    show_all = bool(report.get("all"))
    problems = report["problems"]
    gaps = [p for p in problems if p["rule"] in CONTRACT_RULES]
    serious = [p for p in problems if p["rule"] not in CONTRACT_RULES]
    lines = [f"fixed {f['source']}: quoted the value on line{'s' if len(f['lines']) > 1 else ''} {', '.join(map(str, f['lines']))}" for f in report.get("fixed", [])]
    if report.get("counts"):
        lines.append("found: " + ", ".join(f"{rule} {n}" for rule, n in report["counts"].items()))
    lines += _listed(serious, show_all)
    if report.get("fixable"):
        lines.append(f"{report['fixable']} of these can be fixed safely: `kg lint --fix` quotes the values and prints each change")
    if gaps:
        lines.append("contract gaps (the graph reads these notes all the same; kg's own notes carry a summary, namespaced tags and a `scope/` tag):")
        lines += _listed(gaps, show_all)
    lines += [f"{s['source']}: skipped: {s['reason']}" for s in report["skipped"]]
    lines += [f"advice: entities `{a['a']}` and `{a['b']}` look alike ({a['reason']}); merge the notes by hand if they are one thing" for a in report["advice"]]
    exempt = f" ({report['exempt']} of them day notes or templates, not held to the contract)" if report.get("exempt") else ""
    lines.append(f"{report['notes']} notes{exempt} · {len(problems)} problems in {len({p['source'] for p in problems})} notes")
    return "\n".join(lines)


def _listed(problems: list[dict[str, str]], show_all: bool) -> list[str]:
    by_rule: dict[str, list[dict[str, str]]] = {}
    for p in problems:
        by_rule.setdefault(p["rule"], []).append(p)
    lines: list[str] = []
    for rule, items in by_rule.items():
        shown = items if show_all else items[:MAX_SHOWN]
        lines += [f"{p['source']}: {p['message']}" for p in shown]
        if len(items) > len(shown):
            lines.append(f"… {len(items) - len(shown)} more `{rule}`; `kg lint --all` lists them")
    return lines
