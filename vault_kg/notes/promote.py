"""`kg promote`: knowledge that keeps recurring across clients and projects belongs in `scope/global`.

A note's scope is read from its `client/<x>` and `scope/<x>` tags (`scope/global` is already
global). Something referenced from notes of N or more different scopes (a wikilink target, a
dangling link, a topic tag, an `entity:` node, an entity-to-entity relation, or the same
statement written again) is proposed for a global note, with every piece of evidence as
`note:line` and the line itself. Promotion only ever creates the new global note (through
`write_note(create=True)`); the client notes it cites are never touched.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import orjson

from extract.notes import MAX_NOTE_BYTES

from vault_kg.core import model as m
from vault_kg.storage.layout import Layout
from vault_kg.core.errors import KgError
from vault_kg.core.safe_read import read_regular
from vault_kg.core.scopes import Scope

__all__ = [
    "Candidate",
    "DEFAULT_MIN_SCOPES",
    "Evidence",
    "GLOBAL_TAG",
    "IGNORED_TAG_ROOTS",
    "LINK_RELATIONS",
    "MIN_STATEMENT_CHARS",
    "MIN_STATEMENT_WORDS",
    "PROMOTED_FOLDER",
    "QUOTE_CHARS",
    "SCOPE_PREFIXES",
    "draft",
    "find_candidate",
    "format_promoted",
    "format_suggestions",
    "load_graph",
    "normalize_statement",
    "note_name",
    "promote",
    "scopes_of",
    "suggest",
]

DEFAULT_MIN_SCOPES = 3
GLOBAL_TAG = "scope/global"
SCOPE_PREFIXES = ("client/", "scope/")
IGNORED_TAG_ROOTS = {"scope", "client", "type", "project", "status", "journal"}
LINK_RELATIONS = {m.LINKS_TO, m.EMBEDS}
MIN_STATEMENT_CHARS = 30
MIN_STATEMENT_WORDS = 5
QUOTE_CHARS = 200
PROMOTED_FOLDER = "global"

_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_WIKILINK_RE = re.compile(r"!?\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|([^\]]*))?\]\]")
_NON_WORD_RE = re.compile(r"[^\w]+", re.UNICODE)
_UNSAFE_NAME_RE = re.compile(r"[\\/:*?\"<>|#^\[\]]+")


@dataclass
class Evidence:
    note: str
    scope: str
    line: int | None
    text: str


@dataclass
class Candidate:
    id: str
    kind: str
    label: str
    scopes: list[str]
    evidence: list[Evidence] = field(default_factory=list)
    existing: str | None = None
    summary: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["notes"] = len({e.note for e in self.evidence})
        return data


def scopes_of(tags: list[str]) -> list[str]:
    """The client/project scopes a note belongs to (`client/acme` and `scope/acme` are both `acme`)."""
    found = []
    for tag in tags:
        if tag == GLOBAL_TAG or not tag.startswith(SCOPE_PREFIXES):
            continue
        name = tag.split("/", 2)[1]
        if name and name not in found:
            found.append(name)
    return sorted(found)


def load_graph(scope: Scope) -> dict[str, Any]:
    path = Layout(scope.out).graph_json
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError as exc:
        raise KgError(f"{path}: no graph yet; run `kg build` first") from exc
    except orjson.JSONDecodeError as exc:
        raise KgError(f"{path}: unreadable ({exc}); run `kg build --force`") from exc


class _Lines:
    """Note lines read on demand (only for notes that end up as evidence)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, list[str]] = {}

    def get(self, rel: str) -> list[str]:
        if rel not in self._cache:
            try:
                data = read_regular(self.root / rel, MAX_NOTE_BYTES, root=self.root)
                self._cache[rel] = data.decode("utf-8-sig", "replace").split("\n")
            except OSError:  # gone, or swapped for a FIFO, device or symlink out of the vault since the build
                self._cache[rel] = []
        return self._cache[rel]

    def quote(self, rel: str, line: int | None) -> str:
        lines = self.get(rel)
        if not line or line < 1 or line > len(lines):
            return ""
        text = " ".join(lines[line - 1].split())
        return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _tag_is_topical(tag: str) -> bool:
    return tag.split("/", 1)[0] not in IGNORED_TAG_ROOTS


def normalize_statement(line: str) -> str:
    """A line reduced to its words: list markers, link syntax, case and punctuation removed."""
    text = _LIST_MARK_RE.sub("", line)
    text = _WIKILINK_RE.sub(lambda mt: mt.group(2) or mt.group(1), text)
    return " ".join(_NON_WORD_RE.sub(" ", text.lower()).split())


def _statement_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(line, normalized) for the prose and list lines of a note (no frontmatter, headings, code, tables)."""
    out: list[tuple[int, str]] = []
    in_front = bool(lines) and lines[0].strip() == "---"
    fenced = False
    for number, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if in_front:
            if number > 1 and stripped == "---":
                in_front = False
            continue
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped.startswith(("#", "|", ">")):
            continue
        norm = normalize_statement(stripped)
        if len(norm) >= MIN_STATEMENT_CHARS and len(norm.split()) >= MIN_STATEMENT_WORDS:
            out.append((number, norm))
    return out


def suggest(scope: Scope, min_scopes: int = DEFAULT_MIN_SCOPES) -> list[Candidate]:
    """Everything referenced from notes of `min_scopes` or more client/project scopes."""
    if min_scopes < 2:
        raise KgError(f"--min {min_scopes}: promotion needs at least 2 scopes to call something recurring")
    graph = load_graph(scope)
    nodes = {n["id"]: n for n in graph["nodes"]}
    note_scopes = {nid: scopes_of(n.get("tags") or []) for nid, n in nodes.items() if n.get("kind") == m.NOTE}
    lines = _Lines(scope.root)
    refs: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    for e in graph.get("edges", []):
        relation, target, owner = e.get("relation"), e.get("target"), e.get("owner")
        source_note = m.note_id(owner) if owner else None
        if source_note not in note_scopes or not note_scopes[source_note]:
            continue
        target_node = nodes.get(target, {})
        if relation in LINK_RELATIONS:
            if target_node.get("kind") == m.SECTION:
                target = m.note_id(target_node.get("source", ""))
            if target == source_note:
                continue
            refs[target].append((owner, e.get("line")))
        elif relation == m.TAGGED and _tag_is_topical(target_node.get("label", "")):
            refs[target].append((owner, e.get("line")))
        elif relation == m.MENTIONS and target_node.get("kind") == m.ENTITY:
            refs[target].append((owner, e.get("line")))
        elif target_node.get("kind") == m.ENTITY and nodes.get(e.get("source"), {}).get("kind") == m.ENTITY:
            refs[f"fact:{e['source']} {relation} {target}"].append((owner, e.get("line")))
    for rel in sorted(n["source"] for nid, n in nodes.items() if nid in note_scopes and note_scopes[nid]):
        for number, norm in _statement_lines(lines.get(rel)):
            refs[f"statement:{norm}"].append((rel, number))
    titles = {n.get("label", "").lower() for nid, n in nodes.items() if n.get("kind") == m.NOTE and GLOBAL_TAG in (n.get("tags") or [])}
    candidates = []
    for target, hits in refs.items():
        candidate = _candidate(target, hits, nodes, note_scopes, titles, lines, min_scopes)
        if candidate is not None:
            candidates.append(candidate)
    candidates.sort(key=lambda c: (-len(c.scopes), -len(c.evidence), c.kind, c.label.lower(), c.id))
    return candidates


def _candidate(
    target: str,
    hits: list[tuple[str, int | None]],
    nodes: dict[str, dict[str, Any]],
    note_scopes: dict[str, list[str]],
    global_titles: set[str],
    lines: _Lines,
    min_scopes: int,
) -> Candidate | None:
    groups = sorted({g for owner, _ in hits for g in note_scopes[m.note_id(owner)]})
    if len(groups) < min_scopes:
        return None
    node = nodes.get(target, {})
    kind = node.get("kind", "")
    label = node.get("label", target)
    existing = None
    summary = node.get("summary", "") or ""
    if target.startswith("statement:"):
        kind, label = "statement", ""
    elif target.startswith("fact:"):
        src, relation, dst = target[len("fact:") :].split(" ", 2)
        kind, label = "fact", f"{nodes.get(src, {}).get('label', src)} {relation} {nodes.get(dst, {}).get('label', dst)}"
    elif kind == m.NOTE:
        if GLOBAL_TAG in (node.get("tags") or []):
            return None
        existing = node.get("source")
    elif kind == m.ENTITY and label.lower() in global_titles:
        return None
    elif kind == m.TAG:
        label = "#" + label
    seen: set[tuple[str, int | None]] = set()
    evidence = []
    for owner, line in sorted(hits, key=lambda h: (h[0], h[1] or 0)):
        if (owner, line) in seen:
            continue
        seen.add((owner, line))
        evidence.append(Evidence(owner, ", ".join(note_scopes[m.note_id(owner)]), line, lines.quote(owner, line)))
    if kind == "statement":
        label = _LIST_MARK_RE.sub("", evidence[0].text)
    return Candidate(target, kind, label, groups, evidence, existing, summary)


def find_candidate(candidates: list[Candidate], name: str) -> Candidate:
    key = name.strip().lower()
    for c in candidates:
        if key in (c.id.lower(), c.label.lower(), c.label.lower().lstrip("#"), (c.existing or "").lower()):
            return c
    matches = [c for c in candidates if key and key in c.label.lower()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise KgError(f"'{name}' matches {len(matches)} candidates ({', '.join(c.label for c in matches[:5])}); give the exact label or id")
    raise KgError(f"'{name}' does not recur across enough scopes to promote; see `kg promote --suggest` (or lower --min)")


def note_name(label: str) -> str:
    """A file name for the global note: the label without characters links and file systems reject."""
    name = " ".join(_UNSAFE_NAME_RE.sub(" ", label.lstrip("#")).split()).strip(" .")
    return name[:80].rstrip(" .") or "Promoted note"


def _wikilink(rel: str, title: str) -> str:
    return f"[[{rel[:-3] if rel.endswith('.md') else rel}|{title}]]"


def draft(candidate: Candidate, nodes: dict[str, dict[str, Any]], today: date | None = None) -> tuple[str, str]:
    """(title, note text) of the global draft: summary, tags, and links back to every piece of evidence."""
    from vault_kg.notes.vault_write import render_note

    title = note_name(candidate.label)
    notes = sorted({e.note for e in candidate.evidence})
    scopes = ", ".join(candidate.scopes)
    summary = candidate.summary or f"{candidate.label.lstrip('#')}: recurs in {len(notes)} notes across {scopes} (draft from kg promote)"
    tag_counts: dict[str, int] = defaultdict(int)
    for rel in notes:
        for tag in nodes.get(m.note_id(rel), {}).get("tags") or []:
            if _tag_is_topical(tag) and "/" in tag:
                tag_counts[tag] += 1
    tags = [GLOBAL_TAG, "status/draft"]
    if candidate.kind == m.TAG:
        tags.append(candidate.label.lstrip("#"))
    tags += sorted(t for t, n in tag_counts.items() if n * 2 >= len(notes) and t not in tags)
    body = [f"# {title}", ""]
    body.append(
        f"> Drafted by `kg promote` on {(today or date.today()).isoformat()} from {len(notes)} notes in {len(candidate.scopes)} scopes "
        f"({scopes}). Review it: keep what holds everywhere, then remove the `status/draft` tag."
    )
    if candidate.existing:
        body += ["", f"Generalises {_wikilink(candidate.existing, nodes.get(m.note_id(candidate.existing), {}).get('label', title))}; the client notes stay as they are."]
    elif candidate.kind == "statement":
        body += ["", candidate.label]
    body += ["", "## Evidence", ""]
    for e in candidate.evidence:
        label = nodes.get(m.note_id(e.note), {}).get("label", e.note)
        where = f", line {e.line}" if e.line else ""
        quote = f": `{e.text.replace('`', chr(39))}`" if e.text else ""
        body.append(f"- {_wikilink(e.note, label)} ({e.scope}{where}){quote}")
    extra = {"promoted_from": notes}
    return title, render_note(summary, tags, "\n".join(body), extra)


def promote(scope: Scope, name: str, min_scopes: int = DEFAULT_MIN_SCOPES, relpath: str | None = None) -> dict[str, Any]:
    """Create the global draft for one candidate; the notes it cites are left exactly as they are."""
    from vault_kg.notes.vault_write import write_note

    nodes = {n["id"]: n for n in load_graph(scope)["nodes"]}
    key = name.strip().lower()
    for node in nodes.values():
        names = [node.get("label", ""), node.get("source", ""), *(node.get("aliases") or [])]
        if node.get("kind") == m.NOTE and GLOBAL_TAG in (node.get("tags") or []) and key in (n.lower() for n in names):
            raise KgError(f"'{name}' is already a global note ({node['source']}); edit that note instead")
    candidate = find_candidate(suggest(scope, min_scopes), name)
    title, text = draft(candidate, nodes)
    rel = relpath or f"{PROMOTED_FOLDER}/{title}.md"
    path = write_note(scope.root, rel, text, create=True, promotion=True)
    return {"path": str(path), "relpath": rel, "candidate": candidate.as_dict()}


def format_suggestions(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "nothing recurs across enough client/project scopes to promote"
    out = []
    for row in rows:
        what = f"{row['kind']} {row['label']}" + (f" ({row['existing']})" if row.get("existing") else "")
        out.append(f"{what} — {row['notes']} notes in {len(row['scopes'])} scopes: {', '.join(row['scopes'])}")
        for e in row["evidence"]:
            out.append(f"    {e['note']}:{e['line'] or 1}  {e['text']}")
    out.append(f'{len(rows)} candidate(s); draft one with: kg promote "{rows[0]["label"].lstrip("#")}"')
    return "\n".join(out)


def format_promoted(d: dict[str, Any]) -> str:
    return f"drafted {d['relpath']} from {d['candidate']['notes']} notes in {len(d['candidate']['scopes'])} scopes; review it, then remove the status/draft tag"
