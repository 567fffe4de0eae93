"""Anchored knowledge: what an anchor is, and which notes it makes dirty, decided without a model.

A note's frontmatter may carry `anchors:`, each `{project, locator, hash}` (a code symbol or a
markdown span in a registered project) or `{note: "[[Other Note]]"}` (this note rests on another
one). Recomputing every anchor against the files as they are now says, per note, one reason it is
dirty: `artifact missing`, `symbol not found`, `hash changed: <locator>`, or `propagated from <id>`
(dirtiness follows `anchored_to` edges from a note to the notes resting on it, and to what was
extracted from it, and stops at superseded notes). This module holds that evaluation; it serves
`kg check` and the PostToolUse hook (`anchor_check`) and the vault build (`anchor_pass`).
Validity windows (`valid_from`, `valid_to`, ...) are `anchor_dates`.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from vault_kg.anchors.dates import as_date, valid_at
from vault_kg.anchors.spans import Lookup, SymbolCache, is_markdown, split_locator, supported, supported_extensions
from vault_kg.core import model as m
from vault_kg.core.agent_text import shell_arg
from vault_kg.core.scopes import Scope
from vault_kg.storage.layout import Layout

__all__ = [
    "Anchor",
    "Dirty",
    "Evaluation",
    "NoteIndex",
    "REPAIR_ACTIONS",
    "Resolver",
    "WINDOW_KEYS",
    "anchor_reason",
    "cache_path",
    "evaluate",
    "load_records",
    "owned_stale",
    "owners_from_nodes",
    "parse_anchors",
    "record_from_bytes",
    "record_from_frontmatter",
]

_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
WINDOW_KEYS = ("valid_from", "valid_to", "superseded_by", "supersedes", "retired")
REPAIR_ACTIONS = ("anchor", "accept", "reanchor")


# ------------------------------------------------------------------ note records


def record_from_frontmatter(relpath: str, fm: dict[str, Any], title: str | None = None, aliases: list[str] | None = None) -> dict[str, Any]:
    """What staleness needs from a note's frontmatter (JSON-safe, cacheable)."""
    record: dict[str, Any] = {"title": title or posixpath.splitext(posixpath.basename(relpath))[0]}
    if aliases:
        record["aliases"] = list(aliases)
    if "anchors" in fm:
        record["anchors"] = fm["anchors"]
    for key in WINDOW_KEYS:
        if fm.get(key) not in (None, "", []):
            record[key] = fm[key]
    history = fm.get("history")
    if isinstance(history, list):
        written: dict[str, str] = {}
        for entry in history:
            if isinstance(entry, dict) and entry.get("action") in REPAIR_ACTIONS and entry.get("hash"):
                written[f"{entry.get('project', '')}:{entry.get('locator', '')}"] = str(entry["hash"])
        if written:
            record["written"] = written
    return record


def record_from_bytes(relpath: str, data: bytes) -> dict[str, Any]:
    """Read a note's frontmatter only (no markdown scan): fast enough for thousands of notes."""
    from extract.notes import json_safe, parse_frontmatter, split_frontmatter

    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        return {"title": relpath, "error": f"not UTF-8 text (byte {exc.start}); re-save the note as UTF-8"}
    fm_text, _, _ = split_frontmatter(text)
    if fm_text is None:
        return record_from_frontmatter(relpath, {})
    try:
        fm = json_safe(parse_frontmatter(fm_text))
    except ValueError as exc:
        return {"title": relpath, "error": f"{exc}; fix the frontmatter"}
    raw_title = fm.get("title")
    aliases = fm.get("aliases") or fm.get("alias") or []
    aliases = [str(a) for a in ([aliases] if isinstance(aliases, str) else aliases if isinstance(aliases, list) else []) if a]
    return record_from_frontmatter(relpath, fm, str(raw_title).strip() if raw_title else None, aliases)


def load_records(vault: Scope, cache: SymbolCache) -> tuple[dict[str, dict[str, Any]], int]:
    """Every note's record; unchanged notes (size + mtime) come from the cache unread."""
    from extract.notes import MAX_NOTE_BYTES, VaultAdapter

    from vault_kg.core.safe_read import read_regular

    sources, _ = VaultAdapter().list_sources(vault.root)
    records: dict[str, dict[str, Any]] = {}
    reads = 0
    for rel in sources:
        path = vault.root / rel
        try:
            st = os.stat(path)
        except OSError:
            continue
        record = cache.note(rel, st)
        if record is None:
            try:
                record = record_from_bytes(rel, read_regular(path, MAX_NOTE_BYTES + 1, root=vault.root, trust_folders=True))
            except OSError as exc:
                record = {"title": rel, "error": f"unreadable ({exc.strerror}); check its permissions"}
            reads += 1
            cache.put_note(rel, st, record)
        records[rel] = record
    cache.forget_notes(set(sources))
    return records, reads


class NoteIndex:
    """Which note a name means, the way a wikilink resolves: path, file name, alias (any case)."""

    def __init__(self, records: dict[str, dict[str, Any]]) -> None:
        self.records = records
        self._by_key: dict[str, list[str]] | None = None

    @property
    def by_key(self) -> dict[str, list[str]]:
        """Built on the first lookup: most vaults have few anchors, and an update need not pay."""
        if self._by_key is None:
            self._by_key = {}
            for rel in sorted(self.records):
                stem = rel[:-3] if rel.lower().endswith(".md") else rel
                keys = {stem.lower(), posixpath.basename(stem).lower()}
                keys.update(str(a).lower() for a in self.records[rel].get("aliases", []) or [])
                for key in keys:
                    self._by_key.setdefault(key, []).append(rel)
        return self._by_key

    def lookup(self, name: Any) -> list[str]:
        raw = str(name or "").strip()
        if raw.startswith("[[") and raw.endswith("]]"):
            raw = raw[2:-2].split("|", 1)[0].split("#", 1)[0]
        raw = raw.removeprefix("note:").strip().lstrip("/")
        if raw.lower().endswith(".md"):
            raw = raw[:-3]
        found = self.by_key.get(raw.lower(), [])
        exact = [rel for rel in found if rel[:-3].lower() == raw.lower()]
        return exact or found

    def one(self, name: Any) -> str | None:
        found = self.lookup(name)
        if not found:
            return None
        return min(found, key=lambda p: (p.count("/"), len(p), p))


# ------------------------------------------------------------------ anchors


@dataclass(frozen=True)
class Anchor:
    index: int
    kind: str  # "code", "markdown" or "note"
    project: str = ""
    locator: str = ""
    path: str = ""
    hash: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.project}:{self.locator}"


def parse_anchors(relpath: str, raw: Any, projects: dict[str, Path], written: dict[str, str] | None = None) -> tuple[list[Anchor], list[str]]:
    """Validate a note's `anchors:` list; each bad entry becomes one issue line, never a crash."""
    if raw is None:
        return [], []
    fix = f"re-create it with `kg anchor {shell_arg(relpath)} --to PATH::SYMBOL`"
    if not isinstance(raw, list):
        return [], [f"{relpath}: `anchors:` must be a list of {{project, locator, hash}} entries; {fix}"]
    anchors: list[Anchor] = []
    issues: list[str] = []
    for i, item in enumerate(raw, 1):
        where = f"{relpath}: anchor {i}"
        if not isinstance(item, dict):
            issues.append(f"{where}: not a mapping (got `{str(item)[:60]}`); {fix}")
            continue
        if "note" in item:
            if not str(item.get("note") or "").strip():
                issues.append(f'{where}: `note:` is empty; name the note it rests on, e.g. `note: "[[Other Note]]"`')
                continue
            anchors.append(Anchor(i, "note", note=str(item["note"]).strip()))
            continue
        missing = [k for k in ("project", "locator", "hash") if item.get(k) is None or not str(item[k]).strip()]
        if missing:
            issues.append(f"{where}: missing `{'`, `'.join(missing)}`; {fix}")
            continue
        project, locator, digest = str(item["project"]).strip(), str(item["locator"]).strip(), str(item["hash"]).strip()
        if project not in projects:
            known = ", ".join(sorted(projects)) or "none"
            issues.append(f"{where}: project '{project}' is not registered (registered: {known}); `kg project add PATH --name {project}` or fix the anchor")
            continue
        path, _ = split_locator(locator)
        if path.startswith(("/", "~")) or ".." in path.split("/"):
            issues.append(f"{where}: `{path}` leaves the project folder; anchors name files inside the project")
            continue
        if not supported(path):
            issues.append(f"{where}: `{path}` is not in a supported language ({supported_extensions()}); anchor a supported file or remove the anchor")
            continue
        if not _HASH_RE.match(digest):
            issues.append(f"{where}: hash `{digest[:20]}` is not a SHA-256 hex digest (edited by hand?); run `kg accept {shell_arg(relpath)}` after checking the note")
            continue
        previous = (written or {}).get(f"{project}:{locator}")
        if previous is not None and previous != digest:
            issues.append(f"{where}: hash differs from the one kg wrote ({previous[:12]}…), edited by hand; run `kg accept {shell_arg(relpath)}` after checking the note")
            continue
        anchors.append(Anchor(i, "markdown" if is_markdown(path) else "code", project, locator, path, digest))
    return anchors, issues


def anchor_reason(anchor: Anchor, found: Lookup | None) -> str | None:
    """Why a code or markdown anchor is dirty against `found`, or None when it holds."""
    if found is None:
        return None
    if found.missing:
        return f"artifact missing: {anchor.project}:{anchor.path}"
    current = found.hashes.get(anchor.locator)
    if current is None:
        return f"symbol not found: {anchor.locator}"
    if current != anchor.hash:
        return f"hash changed: {anchor.locator}"
    return None


# ------------------------------------------------------------------ evaluation


@dataclass
class Dirty:
    reason: str
    project: str = ""
    via: list[str] = field(default_factory=list)


@dataclass
class Evaluation:
    notes: int = 0
    anchors: int = 0
    dirty: dict[str, Dirty] = field(default_factory=dict)  # note relpath → why
    issues: list[dict[str, str]] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)  # note relpath → why not current
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)  # (source rel, target rel, relation, owner rel)
    anchored: dict[str, list[str]] = field(default_factory=dict)  # note relpath → ["project:locator"]
    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # absolute path → (project, relpath)
    parsed: dict[str, list[Anchor]] = field(default_factory=dict)


Resolver = Callable[[str, str], Lookup | None]


def _current(record: dict[str, Any], as_of: dt.date | None, now: dt.date) -> str | None:
    """None when the note is current (now, or on `as_of`); else why it is not."""
    if as_of is not None:
        return None if valid_at(record, as_of) else "not valid on that date"
    if record.get("superseded_by"):
        return f"superseded by {record['superseded_by']}"
    if record.get("retired"):
        return f"retired: {record['retired']}"
    end = as_date(record.get("valid_to"))
    if end is not None and end <= now:
        return f"valid until {end.isoformat()}"
    return None


def evaluate(
    records: dict[str, dict[str, Any]],
    projects: dict[str, Path],
    resolve: Resolver,
    as_of: dt.date | None = None,
    now: dt.date | None = None,
    only_projects: set[str] | None = None,
) -> Evaluation:
    """Recompute every anchor of every current note; propagate; one reason per dirty note."""
    now = now or dt.date.today()
    ev = Evaluation(notes=len(records))
    index = NoteIndex(records)
    dependents: dict[str, list[str]] = {}
    current: set[str] = set()
    roots = {name: str(Path(path).resolve()) for name, path in projects.items()}
    for rel in sorted(records):
        record = records[rel]
        if record.get("error"):
            ev.issues.append({"source": rel, "message": f"{rel}: unreadable: {record['error']}"})
            continue
        anchors, issues = parse_anchors(rel, record.get("anchors"), projects, record.get("written"))
        ev.issues.extend({"source": rel, "message": msg} for msg in issues)
        ev.parsed[rel] = anchors
        why_not = _current(record, as_of, now)
        successor = record.get("superseded_by")
        if successor:
            target = index.one(successor)
            if target is None:
                ev.issues.append({"source": rel, "message": f"{rel}: `superseded_by: {successor}` names no note; fix it or run `kg supersede` again"})
            else:
                ev.edges.append((target, rel, m.SUPERSEDES, rel))
        if why_not is not None:
            if as_of is None:
                ev.superseded[rel] = why_not
            continue
        current.add(rel)
        for anchor in anchors:
            if anchor.kind == "note":
                target = index.one(anchor.note)
                ev.anchors += 1
                if target is None:
                    ev.dirty.setdefault(rel, Dirty(f"artifact missing: note {anchor.note}"))
                elif target != rel:
                    ev.edges.append((rel, target, m.ANCHORED_TO, rel))
                    dependents.setdefault(target, []).append(rel)
                continue
            ev.anchored.setdefault(rel, []).append(anchor.key)
            if only_projects is not None and anchor.project not in only_projects:
                continue
            ev.anchors += 1
            absolute = os.path.join(roots[anchor.project], anchor.path)
            ev.files[absolute] = (anchor.project, anchor.path)
            reason = anchor_reason(anchor, resolve(absolute, anchor.path))
            if reason is not None and rel not in ev.dirty:
                ev.dirty[rel] = Dirty(reason, anchor.project)
    queue = sorted(ev.dirty)
    while queue:
        rel = queue.pop(0)
        for dependent in sorted(dependents.get(rel, [])):
            if dependent in ev.dirty or dependent not in current:
                continue
            ev.dirty[dependent] = Dirty(f"propagated from {m.note_id(rel)}", ev.dirty[rel].project, [*ev.dirty[rel].via, rel])
            queue.append(dependent)
    return ev


def owned_stale(dirty_notes: Iterable[str], owners: dict[str, list[str]]) -> dict[str, str]:
    """Nodes extracted from dirty notes (entities, sections): stale when every note they come from is.

    An entity another live note also asserts stays live: that note still vouches for it.
    """
    dirty = set(dirty_notes)
    out: dict[str, str] = {}
    for nid in sorted(owners):
        sources = owners[nid]
        if sources and all(s in dirty for s in sources):
            out[nid] = f"propagated from {m.note_id(sorted(sources)[0])}"
    return out


def owners_from_nodes(nodes: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for nid, attrs in nodes.items():
        if attrs.get("kind") in (m.ENTITY, m.SECTION):
            sources = attrs.get("sources") or ([attrs["source"]] if attrs.get("source") else [])
            owners[nid] = sorted(set(sources))
    return owners


def cache_path(vault: Scope) -> Path:
    return Layout(vault.out).anchors_cache
