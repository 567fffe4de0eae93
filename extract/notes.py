"""The deterministic pass over a vault: frontmatter, tags, wikilinks, headings. No model.

`VaultAdapter` is the vault's implementation of `vault_kg.core.adapter.ScopeAdapter`. Extraction is a
pure function of a note's bytes; resolution (which note a `[[link]]` means) needs the whole vault
and runs on every assembly, which is what lets a dangling link resolve once its target appears.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import posixpath
import re
from pathlib import Path
from typing import Any, Mapping

from vault_kg.core import model as m
from vault_kg.core.adapter import Resolution, SourceSkip
from vault_kg.core.secrets import redact

from . import vault_scan
from .attachments import extract_attachment, reads_bytes
from .frontmatter import MAX_FRONTMATTER_CHARS, FrontmatterError, frontmatter_line, parse_frontmatter, split_frontmatter  # noqa: F401  (re-exported)
from .links import Link, normalize_tag, scan_markdown
from .prose import raw_prose_lines
from .stated_entities import reads_names, redacted_lines, stated_entities
from .vault_scan import SKIP_DIRS  # noqa: F401  (re-exported: the folders the scanner never reads)
from .redaction import redact_extraction

MAX_NOTE_BYTES = int(os.environ.get("KG_MAX_NOTE_BYTES", str(5 * 1024 * 1024)))
MAX_SEARCH_CHARS = 20_000
FM_OPEN_RE = re.compile(r"^-{3,}[ \t]*\r?$", re.MULTILINE)
FM_META = ("fm_digest", "fm_title")  # extraction meta that only says which frontmatter text gave the fields (see `FmFields`)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class VaultAdapter:
    """Notes are `*.md` files under the vault, and every other file is an attachment; hidden
    folders and `kg-out/` are never read."""

    kind = "vault"
    edges_owned_by_source = True  # every edge an extraction holds is owned by that note
    parallel_extract = True  # `extract` is a pure function of the bytes (see vault_kg.update.extract_pool)

    def list_sources(self, root: Path) -> tuple[list[str], list[SourceSkip]]:
        return vault_scan.list_sources(root)

    def is_source(self, root: Path, relpath: str) -> bool:
        return vault_scan.is_source(root, relpath)

    def extract(self, relpath: str, data: bytes, previous: m.Extraction | None = None) -> m.Extraction:
        """`previous`: the note's last extraction, whose frontmatter fields are reused when its
        frontmatter text is unchanged (a body edit parses no YAML: an agent's edit imports none)."""
        if not m.is_note_path(relpath):
            return extract_attachment(relpath, data, content_hash(data), _link_ref)
        return extract_note(relpath, data, previous)

    def reads(self, relpath: str) -> bool:
        """Whether extracting `relpath` needs its bytes: an attachment but a canvas is a stat (see `extract.attachments`)."""
        return reads_bytes(relpath)

    def resolve(self, extractions: dict[str, m.Extraction]) -> Resolution:
        return resolve_vault(extractions)

    def resolve_incremental(self, extractions: dict[str, m.Extraction], previous: dict[str, m.Extraction | None], per_source: dict[str, Any]) -> tuple[Resolution, dict[str, Any]]:
        return resolve_vault_incremental(extractions, previous, per_source)

    def search_text(self, node_id: str, attrs: dict[str, Any], extraction: m.Extraction) -> str:
        if attrs.get("kind") == m.NOTE and node_id == m.note_id(extraction.source):
            return extraction.text
        return ""


def note_title_from_path(relpath: str) -> str:
    return posixpath.splitext(posixpath.basename(relpath))[0]


def _quarantined(relpath: str, digest: str, reason: str, size: int) -> m.Extraction:
    nid = m.note_id(relpath)
    title = note_title_from_path(relpath)
    node = {
        "kind": m.NOTE,
        "label": title,
        "source": relpath,
        "line": 1,
        "status": m.QUARANTINED,
        "quarantine": reason,
        "summary": "",
        "tags": [],
        "aliases": [],
    }
    return m.Extraction(
        source=relpath,
        hash=digest,
        nodes={nid: node},
        text=title,
        quarantine=reason,
        meta={"title": title, "aliases": [], "headings": [], "size": size},
    )


def json_safe(value: Any, depth: int = 0) -> Any:
    """Frontmatter values as JSON-friendly data (dates as ISO strings, keys as strings)."""
    if depth > 20:
        return str(value)[:200]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(v, depth + 1) for v in value]
    return str(value)


def _string_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"[,\s]+", value) if part]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    return [str(value)]


def _alias_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _key_line(fm_text: str, key: str) -> int:
    """File line of a top-level frontmatter key (the `---` opener is line 1)."""
    match = re.search(rf"^{re.escape(key)}\s*:", fm_text, re.MULTILINE)
    return fm_text.count("\n", 0, match.start()) + 2 if match else 1


class FmFields:
    """What a note's extraction takes from its frontmatter, and the digest of the text it came from."""

    __slots__ = ("digest", "title", "aliases", "summary", "summary_present", "tags", "props")

    def __init__(self, digest: str | None, title: Any, aliases: list[str], summary: str, summary_present: bool, tags: list[str], props: dict[str, Any]) -> None:
        self.digest, self.title, self.aliases, self.summary = digest, title, aliases, summary
        self.summary_present, self.tags, self.props = summary_present, tags, props

    @classmethod
    def parsed(cls, fm_text: str | None, fm: dict[str, Any]) -> "FmFields":
        summary_raw = fm.get("summary")
        title = fm.get("title")
        return cls(
            _fm_digest(fm_text),
            str(title) if title else None,  # stripped with the heading or file name it may stand for
            sorted(set(_alias_list(fm.get("aliases")) + _alias_list(fm.get("alias")))),
            "" if summary_raw is None else str(json_safe(summary_raw)).strip(),
            summary_raw is not None,
            _frontmatter_tags(fm),
            {str(k): json_safe(v) for k, v in fm.items() if k not in {"summary", "tags", "tag", "aliases", "alias", "title"}},
        )

    @classmethod
    def kept(cls, fm_text: str | None, previous: m.Extraction | None) -> "FmFields | None":
        """The fields `previous` (the note's last extraction) took from this same frontmatter text, or None."""
        if previous is None or previous.quarantine or fm_text is None or "frontmatter_error" in previous.meta:
            return None
        meta = previous.meta
        if meta.get("fm_digest") is None or meta.get("fm_digest") != _fm_digest(fm_text):
            return None
        node = previous.nodes.get(m.note_id(previous.source)) or {}
        return cls(
            meta["fm_digest"],
            meta.get("fm_title"),
            list(meta.get("aliases", [])),
            meta.get("summary", ""),
            meta.get("summary_present", False),
            list(meta.get("fm_tags", [])),
            dict(node.get("props", {})),
        )


def _fm_digest(fm_text: str | None) -> str | None:
    return None if fm_text is None else hashlib.blake2b(fm_text.encode(), digest_size=16).hexdigest()


def _parse(data: bytes, previous: m.Extraction | None = None) -> tuple[str, str | None, FmFields, Any, FrontmatterError | None] | str:
    """(text, frontmatter text, frontmatter fields, markdown scan, why the frontmatter was ignored)
    of a note, or why it is quarantined. Frontmatter that does not parse is ignored, not fatal: the
    body still builds, as Obsidian still shows it. The fields are `previous`'s when the frontmatter
    text is the one it came from."""
    if len(data) > MAX_NOTE_BYTES:
        return f"note is {len(data) / 1e6:.1f} MB, over the {MAX_NOTE_BYTES / 1e6:.0f} MB cap; split it or raise KG_MAX_NOTE_BYTES"
    if b"\x00" in data[:8192]:
        return "binary content (NUL bytes) in a .md file; move it out of the vault or rename it"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start}); re-save the note as UTF-8"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fm_text, body, body_line = split_frontmatter(text)
    fields = FmFields.kept(fm_text, previous)
    problem: FrontmatterError | None = None
    if fields is None:
        fm: dict[str, Any] = {}
        if fm_text is not None:
            try:
                fm = parse_frontmatter(fm_text, frontmatter_line(text, fm_text))
            except FrontmatterError as exc:
                problem = exc
        fields = FmFields.parsed(fm_text, fm)
    try:
        scan = scan_markdown(body, body_line)
    except RecursionError:
        return "note structure too deeply nested to scan"
    return text, fm_text, fields, scan, problem


def frontmatter_warning(relpath: str, problem: FrontmatterError) -> str:
    """The one line a build prints for a note whose properties were ignored: file, line, fix."""
    return f"{relpath}:{problem.line}: properties ignored ({problem.problem}); {problem.fix}; the note's text and links are read"


def _frontmatter_tags(fm: dict[str, Any]) -> list[str]:
    tags: list[str] = []
    for raw in _string_list(fm.get("tags")) + _string_list(fm.get("tag")):
        tag = normalize_tag(raw)
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def extract_note(relpath: str, data: bytes, previous: m.Extraction | None = None) -> m.Extraction:
    """Extract one note. Never raises: unreadable input is quarantined with a reason. `previous`
    (the note's last extraction) lends its frontmatter fields when the frontmatter is unchanged."""
    digest = content_hash(data)
    parsed = _parse(data, previous)
    if isinstance(parsed, str):
        return _quarantined(relpath, digest, parsed, len(data))
    text, fm_text, fields, scan, problem = parsed
    nid = m.note_id(relpath)
    h1 = next((h.text for h in scan.headings if h.level == 1), None)
    title = str(fields.title or h1 or note_title_from_path(relpath)).strip()
    aliases, summary, fm_tags, props = fields.aliases, fields.summary, fields.tags, fields.props
    inline_tags = [tag for tag, _ in scan.tags]
    all_tags = sorted(set(fm_tags) | set(inline_tags))
    lines = text.count("\n") + 1

    node: dict[str, Any] = {
        "kind": m.NOTE,
        "label": title,
        "source": relpath,
        "line": 1,
        "end_line": lines,
        "summary": summary,
        "tags": all_tags,
        "aliases": aliases,
        "status": m.LIVE,
    }
    if props:
        node["props"] = props
    if problem:
        node["frontmatter_error"] = f"line {problem.line}: {problem.problem}; {problem.fix}"
    nodes: dict[str, dict[str, Any]] = {nid: node}
    edges: list[dict[str, Any]] = []
    tags_line = _key_line(fm_text, "tags") if fm_text else 1
    seen_tags: set[str] = set()
    for tag, line in [(t, tags_line) for t in fm_tags] + scan.tags:
        if tag in seen_tags:
            continue
        seen_tags.add(tag)
        nodes[m.tag_id(tag)] = {"kind": m.TAG, "label": tag, "source": relpath, "shared": True}
        edges.append(m.edge(nid, m.tag_id(tag), m.TAGGED, relpath, line))

    prose = redacted_lines(raw_prose_lines(text))
    named = stated_entities(prose, props, redacted=True) if reads_names(relpath) else []
    refs = [_link_ref(nid, relpath, link) for link in scan.links]
    unread = fm_text if problem and fm_text else ""  # properties that do not parse are still words a search can find
    search = " \n".join([title, " ".join(aliases), summary, " ".join(all_tags), unread, " ".join(h.text for h in scan.headings), "\n".join(scan.prose)])
    return redact_extraction(
        m.Extraction(
            source=relpath,
            hash=digest,
            nodes=nodes,
            edges=edges,
            refs=refs,
            text=search[:MAX_SEARCH_CHARS],
            warnings=[frontmatter_warning(relpath, problem)] if problem else [],
            meta={
                "title": title,
                "aliases": aliases,
                "summary": summary,
                "fm_tags": fm_tags,
                "inline_tags": sorted(set(inline_tags)),
                "has_frontmatter": fm_text is not None,
                **({"frontmatter_error": {"line": problem.line, "reason": problem.problem, "fix": problem.fix}} if problem else {}),
                "summary_present": fields.summary_present,
                "fm_digest": fields.digest,
                "fm_title": fields.title,
                "headings": [[h.level, h.text, h.line] for h in scan.headings],
                "blocks": scan.blocks,
                "size": len(data),
                "named": named,
                "prose": prose,  # the redacted prose lines, for the model pass's `annotate` (which drops them)
            },
        )
    )


def _link_ref(nid: str, relpath: str, link: Link) -> m.Ref:
    target = redact(link.target)  # a dangling target becomes an id (`unresolved:…`), and so does its key
    attrs: dict[str, Any] = {}
    if link.markdown:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), target))
        # relative to the note first; then as written, the way Obsidian's "shortest path" and
        # "absolute path in vault" link formats mean it (from the root, by name or path suffix)
        attrs["written"] = posixpath.normpath(_strip_md(target)).lower().lstrip("/")
        target = joined
        attrs["path"] = True
    elif not target:
        target = relpath
        attrs["path"] = True
    if link.heading:
        attrs["heading"] = link.heading
    if link.block:
        attrs["block"] = link.block
    if link.label:
        attrs["label"] = link.label
    if link.optional:
        attrs["optional"] = True
    if link.raw:  # a file named with its `%20`s as written: tried when the decoded name finds nothing
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), link.raw))
        attrs["raw"] = [_strip_md(joined).lower().lstrip("/"), posixpath.normpath(_strip_md(link.raw)).lower().lstrip("/")]
    attrs["key"] = _strip_md(target).lower().lstrip("/")
    return m.Ref(nid, target, m.EMBEDS if link.embed else m.LINKS_TO, link.line, attrs)


def _strip_md(target: str) -> str:
    target = target.strip().replace("\\", "/")
    return target[:-3] if target.lower().endswith(".md") else target


class NoteIndex:
    """Obsidian-style lookup: vault path, file name and `aliases`, all case-insensitive."""

    def __init__(self, extractions: Mapping[str, m.Extraction], aliases: dict[str, list[str]] | None = None) -> None:
        """`aliases` (note → its aliases, every note) stands in for reading them from each
        extraction: a one-note link patch (`vault_kg.update.link_patch`) has them from the node table,
        and `extractions` then only needs to answer for the notes whose headings a link names."""
        self.extractions = extractions
        self.by_path: dict[str, str] = {}
        self.by_stem: dict[str, list[str]] = {}
        self.by_alias: dict[str, list[str]] = {}
        by_path, by_stem, by_alias = self.by_path, self.by_stem, self.by_alias
        # `_strip_md(relpath).lower()` and `posixpath.basename`, spelled out: a link patch builds
        # this over every note of the vault on each edit (tests/test_notes_extract.py checks it)
        for relpath in sorted(extractions if aliases is None else aliases):
            path = relpath.strip().replace("\\", "/")
            key = path.lower()
            if key.endswith(".md"):
                key = path[:-3].lower()
            by_path[key] = relpath
            stem = key[key.rfind("/") + 1 :]
            same = by_stem.get(stem)
            if same is None:
                by_stem[stem] = [relpath]
            else:
                same.append(relpath)
            for alias in extractions[relpath].hot("aliases", []) if aliases is None else aliases[relpath]:
                by_alias.setdefault(alias.lower(), []).append(relpath)

    @classmethod
    def from_tables(cls, tables: tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]], extractions: Mapping[str, m.Extraction]) -> "NoteIndex":
        """The index a whole resolution built (`lookup_tables`), kept by the cache: a one-note
        patch reads it instead of every note's path and aliases (`vault_kg.update.link_patch`)."""
        index = cls.__new__(cls)
        index.extractions = extractions
        index.by_path, index.by_stem, index.by_alias = tables
        return index

    @staticmethod
    def path_key(relpath: str) -> str:
        """The key `by_path` holds a note under (its path, lowercased, without `.md`)."""
        key = relpath.strip().replace("\\", "/").lower()
        return key[:-3] if key.endswith(".md") else key

    def lookup_tables(self) -> tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]]:
        return self.by_path, self.by_stem, self.by_alias

    def set_aliases(self, relpath: str, before: list[str], after: list[str]) -> None:
        """A note's aliases went from `before` to `after` (the lists its extractions hold)."""
        for alias in before:
            holders = self.by_alias.get(alias.lower(), [])
            if relpath in holders:
                holders.remove(relpath)
                if not holders:
                    del self.by_alias[alias.lower()]
        for alias in after:
            holders = self.by_alias.setdefault(alias.lower(), [])
            holders.append(relpath)
            holders.sort()

    def headings(self, relpath: str) -> list[list[Any]]:
        """A note's headings, read only for notes that a `[[Note#Heading]]` link points at."""
        return self.extractions[relpath].meta.get("headings", [])

    def lookup(self, target: str, is_path: bool = False, written: str | None = None) -> list[str]:
        """Candidates for a link key. A markdown link (`is_path`) is its relative path, else the
        path as `written` from the root, by file name or path suffix; never an alias."""
        key = _strip_md(target).lower().lstrip("/")
        if key in self.by_path:
            return [self.by_path[key]]
        if not is_path:
            return self._by_name(key, aliases=True)
        if not written:
            return []
        if written in self.by_path:
            return [self.by_path[written]]
        return self._by_name(written, aliases=False)

    def _by_name(self, key: str, aliases: bool) -> list[str]:
        if "/" in key:
            suffix = "/" + key
            return sorted(p for k, p in self.by_path.items() if k.endswith(suffix))
        return self.by_stem.get(key) or (self.by_alias.get(key) if aliases else None) or []


def _pick(candidates: list[str], owner: str = "") -> str:
    """Obsidian's tie-break for same-named notes: the shortest path, then alphabetical. For
    same-named attachments, the one nearest the linking note first (in its folder, then below
    it: where Obsidian's "same folder as current file" and "in subfolder" attachment settings put
    them), then the shortest path, which finds a vault-wide attachment folder."""
    if len(candidates) == 1:
        return candidates[0]
    if not m.is_note_path(candidates[0]):
        folder = posixpath.dirname(owner)
        below = folder + "/" if folder else ""
        return min(candidates, key=lambda p: (posixpath.dirname(p) != folder, not p.startswith(below), p.count("/"), len(p), p))
    return min(candidates, key=lambda p: (p.count("/"), len(p), p))


def answer_keys(ext: m.Extraction) -> set[str]:
    """Every lookup key under which a note can be found: path, path suffixes, file name, aliases."""
    key = _strip_md(ext.source).lower()
    parts = key.split("/")
    keys = {"/".join(parts[i:]) for i in range(len(parts))}
    keys.update(alias.lower() for alias in ext.hot("aliases", []))
    return keys


def ref_key(ref: m.Ref) -> str:
    key = ref.attrs.get("key")
    return key if key is not None else _strip_md(ref.target).lower().lstrip("/")


def resolve_vault(extractions: dict[str, m.Extraction]) -> Resolution:
    resolution, _ = resolve_vault_incremental(extractions, {rel: None for rel in extractions}, {})
    return resolution


def resolve_vault_incremental(extractions: dict[str, m.Extraction], previous: dict[str, m.Extraction | None], per_source: dict[str, Any]) -> tuple[Resolution, dict[str, Any]]:
    """Re-resolve only the links a change can affect; reuse every other note's cached result.

    `previous` maps each changed, added or removed note to its old extraction (None when new).
    A link is affected when it lives in a changed note or its target key is a key some changed
    note answers to, before or after the change (name, path suffix, alias; headings follow the
    note). Returns the resolution and the per-source entries that were recomputed.
    """
    affected: set[str] = set()
    for rel, old in previous.items() if per_source else ():  # nothing cached: every note is linked anew
        if old is not None:
            affected |= answer_keys(old)
        if rel in extractions:
            affected |= answer_keys(extractions[rel])
    index = NoteIndex(extractions)
    recomputed: dict[str, Any] = {}
    for rel in sorted(extractions):
        cached = per_source.get(rel)
        if cached is None or rel in previous or not affected.isdisjoint(cached["keys"]):
            cached = link_source(rel, extractions[rel].refs, index)
            recomputed[rel] = cached
            per_source[rel] = cached
    for rel in list(per_source):
        if rel not in extractions:
            del per_source[rel]
    res = Resolution()
    for rel in sorted(extractions):
        cached = per_source[rel]
        res.owned[rel] = cached["edges"]
        for uid, label in cached["unresolved"]:
            node = res.nodes.get(uid)
            if node is None:
                res.nodes[uid] = {"kind": m.UNRESOLVED, "label": label, "source": rel, "referrers": [rel], "status": m.LIVE}
            elif node["referrers"][-1] != rel:
                node["referrers"].append(rel)
        for sid, target_path, text, line in cached["sections"]:
            if sid not in res.nodes:
                title = extractions[target_path].hot("title", target_path)
                res.nodes[sid] = {"kind": m.SECTION, "label": f"{title} › {text}", "source": target_path, "line": line, "status": m.LIVE}
                res.derived.append(m.edge(m.note_id(target_path), sid, m.HAS_SECTION, target_path, line))
    _add_tag_parents(extractions, res)
    res.lookup = index.lookup_tables()
    return res, recomputed


def link_source(owner: str, refs: list[m.Ref], index: NoteIndex) -> dict[str, list[Any]]:
    """One note's links resolved: its edges, the dangling targets and the sections it points at,
    and the lookup keys of all its links (which tell the next update whether a change touches it)."""
    edges: list[dict[str, Any]] = []
    unresolved: list[tuple[str, str]] = []
    sections: list[tuple[str, str, str, int]] = []
    for ref in refs:
        target_path, count, heading_text, heading_line = _resolve_ref(ref, index, owner)
        extra = {k: v for k, v in ref.attrs.items() if k in {"heading", "block", "label"}}
        if target_path is None:
            if ref.attrs.get("optional"):
                continue  # `[site](example.com)`: a link only when such a file exists
            uid = m.unresolved_id(ref_key(ref).strip())
            unresolved.append((uid, _strip_md(ref.target).strip()))
            edges.append(m.edge(ref.source, uid, ref.relation, owner, ref.line, **extra))
            continue
        confidence = m.AMBIGUOUS if count > 1 else m.EXTRACTED
        if count > 1:
            extra["candidates"] = count
        if not m.is_note_path(target_path):  # an attachment: `#page=3` and the like are the viewer's business
            edges.append(m.edge(ref.source, m.attachment_id(target_path), ref.relation, owner, ref.line, confidence=confidence, **extra))
            continue
        target = m.note_id(target_path)
        if ref.attrs.get("heading") and heading_text is None:
            extra["unresolved_heading"] = ref.attrs["heading"]
        if heading_text is not None:
            target = m.section_id(target_path, heading_text)
            sections.append((target, target_path, heading_text, heading_line))
        edges.append(m.edge(ref.source, target, ref.relation, owner, ref.line, confidence=confidence, **extra))
    definite = {(e["target"], e["relation"]) for e in edges if e["confidence"] == m.EXTRACTED}
    for e in edges:  # a link that one occurrence names for sure is not ambiguous because another guessed
        if e["confidence"] == m.AMBIGUOUS and (e["target"], e["relation"]) in definite:
            e["confidence"], e["score"] = m.EXTRACTED, m.CONFIDENCE_SCORE[m.EXTRACTED]
            e.pop("candidates", None)
    keys = {ref_key(r) for r in refs} | {r.attrs["written"] for r in refs if r.attrs.get("written")} | {k for r in refs for k in r.attrs.get("raw", ())}
    return {"edges": edges, "unresolved": unresolved, "sections": sections, "keys": sorted(keys)}


def _resolve_ref(ref: m.Ref, index: NoteIndex, owner: str = "") -> tuple[str | None, int, str | None, int | None]:
    """(target note path or None, number of candidates, matched heading text, heading line)."""
    candidates = index.lookup(ref.target, bool(ref.attrs.get("path")), ref.attrs.get("written"))
    if not candidates and ref.attrs.get("raw"):
        candidates = index.lookup(*ref.attrs["raw"][:1], True, ref.attrs["raw"][1])
    if not candidates:
        return None, 0, None, None
    target = _pick(candidates, owner)
    heading = ref.attrs.get("heading")
    if heading:
        wanted = heading.lower()
        for _, text, line in index.headings(target):
            if text.lower() == wanted:
                return target, len(candidates), text, line
    return target, len(candidates), None, None


def _add_tag_parents(extractions: dict[str, m.Extraction], res: Resolution) -> None:
    owners: dict[str, str] = {}
    for relpath in sorted(extractions):
        for attrs in extractions[relpath].nodes.values():
            if attrs.get("kind") == m.TAG:
                owners.setdefault(attrs["label"], relpath)
    add_tag_hierarchy(owners, res)


def add_tag_hierarchy(owners: dict[str, str], res: Resolution) -> None:
    """`a/b/c` under `a/b` under `a`: a parent no note uses becomes a node, and each edge is owned
    by the first note (by path) of the first tag (by name) whose chain reaches it. `owners` maps
    every tag a note uses to the first note (by path) that uses it."""
    linked: set[str] = set()
    for tag in sorted(owners):
        owner = owners[tag]
        child = tag
        while "/" in child and child not in linked:
            linked.add(child)
            parent = child.rsplit("/", 1)[0]
            pid = m.tag_id(parent)
            if parent not in owners and pid not in res.nodes:
                res.nodes[pid] = {"kind": m.TAG, "label": parent, "source": owner, "shared": True}
            res.derived.append(m.edge(m.tag_id(child), pid, m.TAG_PARENT, owner))
            child = parent
