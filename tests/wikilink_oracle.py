"""An independent oracle for the vault graph's links: Obsidian's link rules, implemented again.

Written from Obsidian's documented behaviour, not from `extract/links.py`, so a bug shared by an
incremental update and a from-scratch build (both use the engine) still shows up. The rules:

- `[[target]]`, `[[target|shown]]`, `[[target#Heading]]`, `[[target#^block]]`, `![[embed]]`; in a
  table row the pipe is escaped: `[[target\\|shown]]`. `[text](Some%20Note.md#Heading)` is a link
  too (URL-encoded). kg also reads `[[target^block]]` (DESIGN.md), which Obsidian writes `#^block`.
- Nothing inside fenced code or an inline code span is a link.
- Resolution is case-insensitive: a path from the vault root (with or without `.md`), then from
  the linking note's folder (a markdown link tries its folder first); then, for a bare name, the
  notes with that file name, and for `folder/name`, the notes whose path ends with it, the
  shortest path winning (more than one candidate is ambiguous); then a note's `aliases`. What none
  of these finds is unresolved.
- A note whose frontmatter is not valid YAML keeps its body (Obsidian shows it, with its links
  and backlinks, and only marks the properties invalid): its links count, its aliases do not. A
  note that is not UTF-8 (or holds NUL bytes) still exists as a link target, but contributes
  neither links nor aliases.
- Every other file of the vault (an image, a PDF, a canvas) is a link target too, named by its
  full file name (`[[map.png]]`, `![[img/map.png]]`, `![](../img/map.png)`); a markdown link to
  a file that is not a note is a link only when that file exists.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import yaml

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
MD_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\(([^()\s]+?\.[A-Za-z0-9]+)(?:#([^()\s]*))?\)")


@dataclass(frozen=True)
class Link:
    """One link as Obsidian would draw it: from a note to a note path, or to an unresolved name."""

    source: str
    embed: bool
    target: str | None  # vault-relative path of the note it lands on
    unresolved: str | None  # the (casefolded) name nothing answers to
    heading: str | None
    block: str | None
    label: str | None
    ambiguous: bool
    line: int


@dataclass
class Note:
    path: str
    aliases: list[str]
    body: str | None  # None when quarantined
    headings: set[str] = field(default_factory=set)  # casefolded


def read_vault(vault: Path) -> dict[str, Note]:
    """Every note, and every other file as a target with no body (symlinks are left out)."""
    notes: dict[str, Note] = {}
    for file in sorted(vault.rglob("*")):
        rel = file.relative_to(vault).as_posix()
        if any(part.startswith(".") or part in ("kg-out", "node_modules", "__pycache__") for part in rel.split("/")) or file.is_symlink() or not file.is_file():
            continue
        notes[rel] = parse_note(rel, file.read_bytes()) if rel.lower().endswith(".md") else Note(rel, [], None)
    return notes


def parse_note(rel: str, raw: bytes) -> Note:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Note(rel, [], None)
    if "\x00" in text:
        return Note(rel, [], None)
    text = text.lstrip("\ufeff")
    aliases: list[str] = []
    body = text
    if text.startswith("---\n") or text == "---":
        end = text.find("\n---", 3)
        if end != -1 and text[end + 4 : end + 5] in ("", "\n"):
            try:
                meta = yaml.safe_load(text[4:end])
            except (yaml.YAMLError, RecursionError):
                meta = None  # properties ignored, body kept
            found = meta.get("aliases") or [] if isinstance(meta, dict) else []
            aliases = [found] if isinstance(found, str) else [str(a) for a in found if a is not None] if isinstance(found, list) else []
            body = "\n" * text[: end + 5].count("\n") + text[end + 5 :]
    headings = {m.group(1).strip().casefold() for line in visible_lines(body) if (m := HEADING.match(line))}
    return Note(rel, aliases, body, headings)


def visible_lines(body: str) -> list[str]:
    """The body with fenced code blanked and inline code spans removed."""
    out: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = None
            out.append("")
            continue
        if opened:
            fence = opened.group(1)
            out.append("")
            continue
        out.append(CODE_SPAN.sub("", line))
    return out


def shortest(path: str) -> tuple[int, int, str]:
    """ "Shortest path" among same-named notes: fewest folders, then fewest characters, then A-Z."""
    return path.count("/"), len(path), path


class Resolver:
    def __init__(self, notes: dict[str, Note]) -> None:
        self.by_path = {(p[:-3] if p.lower().endswith(".md") else p).casefold(): p for p in notes}
        self.by_name: dict[str, list[str]] = {}  # last path component (no `.md`), case-folded: where a suffix can end
        for path in sorted(notes):
            self.by_name.setdefault(posixpath.basename((path[:-3] if path.lower().endswith(".md") else path).casefold()), []).append(path)
        self.by_alias: dict[str, list[str]] = {}
        for path, note in notes.items():
            for alias in note.aliases:
                self.by_alias.setdefault(alias.strip().casefold(), []).append(path)

    def resolve(self, target: str, source: str, markdown: bool = False) -> list[str]:
        """Candidate notes for a link target, best first (empty: unresolved).

        A markdown link is a file path: from the note's folder, then from the vault root, then
        by file name or path suffix (Obsidian's "shortest path" links); never an alias. A wikilink
        is tried as a path from the root (and, with a folder in it, from the note's folder), then
        by file name or path suffix, then by alias.
        """
        key = target.strip().casefold()
        if key.endswith("/"):
            return []  # `[[prime/#]]` names a folder: Obsidian looks for `prime/.md`, never `prime.md`
        if key.endswith(".md"):
            key = key[:-3]
        folder = posixpath.dirname(source).casefold()
        relative = posixpath.normpath(posixpath.join(folder, key))
        from_root = posixpath.normpath(key).lstrip("/")
        order = [relative, from_root] if markdown else [from_root] + ([relative] if "/" in key else [])
        for candidate in order:
            if candidate in self.by_path:
                return [self.by_path[candidate]]
        name = posixpath.normpath(key)
        if name.startswith(".."):
            return []  # leaves the vault
        suffix = "/" + name.lstrip("/")
        named = [p for p in self.by_name.get(posixpath.basename(suffix), []) if ("/" + (p[:-3] if p.lower().endswith(".md") else p).casefold()).endswith(suffix)]
        if named or markdown:
            return sorted(named, key=shortest)
        return sorted(self.by_alias.get(key, []), key=shortest)


def split_target(inner: str) -> tuple[str, str | None, str | None, str | None]:
    """`target#Heading|label` → (target, heading, block, label); `\\|` is a table's escaped pipe."""
    parts = re.split(r"\\?\|", inner, maxsplit=1)
    target, label = parts[0], (parts[1].strip() or None) if len(parts) > 1 else None
    heading = block = None
    cut = min((i for i in (target.find("#"), target.find("^")) if i != -1), default=-1)
    if cut != -1:
        target, sub = target[:cut], target[cut:]
        sub = sub.lstrip("#")
        if sub.startswith("^"):
            block = sub[1:].strip() or None
        else:
            heading = sub.strip() or None
    return target, heading, block, label


def links_of(note: Note, resolver: Resolver) -> list[Link]:
    if note.body is None:
        return []
    found: list[Link | None] = []
    for number, line in enumerate(visible_lines(note.body), 1):
        for match in WIKILINK.finditer(line):
            target, heading, block, label = split_target(match.group(2))
            found.append(_link(note.path, bool(match.group(1)), target, heading, block, label, number, resolver, False))
        for match in MD_LINK.finditer(line):
            target = unquote(match.group(3))
            if "://" in target:
                continue
            heading = unquote(match.group(4)).strip() or None if match.group(4) else None
            link = _link(note.path, bool(match.group(1)), target, heading, None, match.group(2).strip() or None, number, resolver, True)
            if link is not None and (link.target is not None or target.lower().endswith(".md")):
                found.append(link)  # a file that is not a note is a link only when it exists
    return [link for link in found if link is not None]


def _link(source: str, embed: bool, target: str, heading: str | None, block: str | None, label: str | None, line: int, resolver: Resolver, markdown: bool) -> Link | None:
    if not target.strip():
        if not (heading or block):
            return None
        target = source  # `[[#Heading]]`: a link to a heading of the note itself
    candidates = resolver.resolve(target, source, markdown)
    if candidates:
        return Link(source, embed, candidates[0], None, heading, block, label, len(candidates) > 1, line)
    name = target.strip().casefold()
    if markdown:  # named by where it would be, seen from the linking note
        name = posixpath.normpath(posixpath.join(posixpath.dirname(source).casefold(), name))
    return Link(source, embed, None, name[:-3] if name.endswith(".md") else name, heading, block, label, False, line)


def vault_links(vault: Path) -> list[Link]:
    notes = read_vault(vault)
    resolver = Resolver(notes)
    return [link for note in notes.values() for link in links_of(note, resolver)]


EdgeKey = tuple[str, str, str]  # (source note path, "links_to" | "embeds", target key)


def target_key(link: Link, headings: dict[str, set[str]]) -> str:
    """What the link lands on: `note:<path>`, `section:<path>#<heading>`, or `unresolved:<name>`."""
    if link.target is None:
        return f"unresolved:{link.unresolved}"
    if not link.target.lower().endswith(".md"):
        return f"attachment:{link.target}"
    if link.heading and link.heading.casefold() in headings.get(link.target, ()):
        return f"section:{link.target}#{link.heading.casefold()}"
    return f"note:{link.target}"


def expected_edges(vault: Path) -> dict[EdgeKey, tuple[frozenset[int], bool]]:
    """Links folded the way a multigraph keeps one edge per (source, relation, target): lines, ambiguous."""
    out: dict[EdgeKey, tuple[set[int], bool]] = {}  # ambiguous only if every occurrence is
    notes = read_vault(vault)
    resolver = Resolver(notes)
    headings = {path: note.headings for path, note in notes.items()}
    for link in (link for note in notes.values() for link in links_of(note, resolver)):
        key = (link.source, "embeds" if link.embed else "links_to", target_key(link, headings))
        lines, ambiguous = out.get(key, (set(), True))
        lines.add(link.line)
        out[key] = (lines, ambiguous and link.ambiguous)
    return {k: (frozenset(v[0]), v[1]) for k, v in out.items()}


def graph_edges(graph: dict) -> dict[EdgeKey, tuple[frozenset[int], bool]]:
    """The same view of a built graph.json (section ids casefolded after the `#`)."""
    out: dict[EdgeKey, tuple[frozenset[int], bool]] = {}
    for e in graph["edges"]:
        if e["relation"] not in ("links_to", "embeds") or e.get("via") == "llm":
            continue
        target = e["target"]
        if target.startswith("section:"):
            path, heading = target.split(":", 1)[1].split("#", 1)
            target = f"section:{path}#{heading.casefold()}"
        lines = frozenset([e["line"], *e.get("lines", [])])
        out[(e["source"].split(":", 1)[1], e["relation"], target)] = (lines, e["confidence"] == "AMBIGUOUS")
    return out


def differences(expected: dict, actual: dict, limit: int = 12) -> list[str]:
    """Readable lines for every edge one side has and the other lacks or holds differently."""
    out = []
    for key in sorted(set(expected) | set(actual)):
        if expected.get(key) != actual.get(key):
            out.append(f"{key}: oracle {_show(expected.get(key))} · graph {_show(actual.get(key))}")
    return out[:limit]


def _show(value: tuple[frozenset[int], bool] | None) -> str:
    if value is None:
        return "none"
    return f"lines {sorted(value[0])}" + (" AMBIGUOUS" if value[1] else "")
