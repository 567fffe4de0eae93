"""Writing anchors and repairing them: `kg anchor`, `reanchor`, `accept`, `supersede`, `retire`.

Every change is a frontmatter edit written through `vault_kg.notes.vault_write.write_note` (path guard,
secrets, the frontmatter contract when the note met it before), and every change appends one
entry to the note's `history:` list, never rewriting earlier entries. Anything that cannot be
done exactly as asked is refused with the candidates listed, and nothing is written.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_kg.core import model as m
from vault_kg.anchors.spans import MAX_SOURCE_BYTES, SymbolCache, is_markdown, qualname, split_locator, supported, supported_extensions, symbol_name
from vault_kg.anchors.dates import parse_date, today
from vault_kg.anchors.evaluate import NoteIndex, cache_path, load_records
from vault_kg.core.config import Config, load_config
from vault_kg.core.errors import KgError
from vault_kg.core.agent_text import shell_arg
from vault_kg.core.safe_read import inside, read_regular
from vault_kg.notes.frontmatter_edit import EditableFrontmatter
from vault_kg.core.scopes import Scope
from vault_kg.core.vault_guard import safe_relpath
from vault_kg.notes.vault_write import prepare_note, write_note

__all__ = [
    "MAX_CANDIDATES",
    "NoteText",
    "accept",
    "add_anchor",
    "format_accept",
    "format_anchor",
    "format_reanchor",
    "format_retire",
    "format_supersede",
    "read_note",
    "reanchor",
    "resolve_note",
    "retire",
    "supersede",
    "wikilink",
    "write",
]

_DUPLICATE = re.compile(r" \(\d+\)$")
MAX_CANDIDATES = 10


# ------------------------------------------------------------------ notes as editable frontmatter


@dataclass
class NoteText:
    rel: str
    front: EditableFrontmatter
    contract: bool
    original: str  # the text read: the write is refused if the note no longer holds it

    @property
    def fm(self) -> dict[str, Any]:
        """The frontmatter as the graph reads it; repairs change this, `render` writes only the change."""
        return self.front.data

    def render(self) -> str:
        return self.front.render()

    def history(self) -> list[Any]:
        history = self.fm.get("history")
        if history is None:
            return []
        if not isinstance(history, list):
            raise KgError(f"{self.rel}: `history:` is not a list; fix it by hand first (nothing written)")
        return history

    def append_history(self, entry: dict[str, Any]) -> None:
        stamped = {"at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"), **entry}
        self.fm["history"] = [*self.history(), stamped]

    def anchors(self) -> list[Any]:
        anchors = self.fm.get("anchors")
        if anchors is None:
            return []
        if not isinstance(anchors, list):
            raise KgError(f"{self.rel}: `anchors:` is not a list; fix it by hand first (nothing written)")
        return anchors


def read_note(vault: Path, rel: str) -> NoteText:
    from vault_kg.notes.vault_write import meets_contract, read_current

    text = read_current(vault, rel)
    if text is None:
        raise KgError(f"{rel}: cannot read the note (it is gone)")
    return NoteText(rel, EditableFrontmatter(rel, text), meets_contract(rel, text), text)


def write(vault: Path, notes: list[NoteText]) -> None:
    """Validate every note first, then write them, holding every note's write lock: a refusal
    leaves all of them untouched, and a note another program changed since it was read is
    refused, never overwritten."""
    from vault_kg.core.safe_write import locked

    texts = [(n, n.render()) for n in notes]
    with locked(vault, [safe_relpath(vault, n.rel) for n in notes]):
        for note, text in texts:
            prepare_note(vault, note.rel, text, contract=note.contract)
        for note, text in texts:
            write_note(vault, note.rel, text, based_on=note.original, contract=note.contract)


def resolve_note(vault: Scope, name: str) -> str:
    """The vault path of a note named by path, file name or alias; refuses unknown or ambiguous names."""
    raw = name.strip().replace("\\", "/")
    if Path(raw).is_absolute():
        try:
            raw = Path(raw).resolve().relative_to(vault.root.resolve()).as_posix()
        except ValueError:
            raise KgError(f"{name}: not inside the vault {vault.root}") from None
    for candidate in (raw, raw + ".md"):
        if candidate.lower().endswith(".md") and (vault.root / candidate).is_file():
            safe_relpath(vault.root, candidate)
            return candidate
    cache = SymbolCache(cache_path(vault))
    records, _ = load_records(vault, cache)
    cache.save()
    found = NoteIndex(records).lookup(raw)
    if not found:
        raise KgError(f"no note '{name}' in {vault.root}; pass its path relative to the vault, like notes/Topic.md")
    if len(found) > 1:
        raise KgError(f"'{name}' names several notes ({', '.join(found[:MAX_CANDIDATES])}); pass one path")
    return found[0]


def wikilink(rel: str) -> str:
    return f"[[{rel[:-3] if rel.lower().endswith('.md') else rel}]]"


def _refresh(vault: Scope, rels: list[str]) -> None:
    """Bring an already built vault graph up to date with the notes just written."""
    from vault_kg.storage.layout import Layout
    from vault_kg.jobs.html_render import after_run as render_after
    from vault_kg.update.engine import run

    if Layout(vault.out).cache_db.exists():
        render_after(vault.out, run(vault, paths=[vault.root / rel for rel in rels]))


# ------------------------------------------------------------------ kg anchor


def _locate(path_part: str, project: str | None, cfg: Config, cwd: Path) -> tuple[str, Path, str]:
    """(project, project root, file path inside it) for the PATH of `--to PATH::SYMBOL`; a path
    that leaves the project (`..`, or a symlink out of it) is refused before anything is read."""
    name, root, rel = _find_project_file(path_part, project, cfg, cwd)
    if rel.startswith("../") or rel == ".." or Path(rel).is_absolute() or not inside(root / rel, root):
        raise KgError(f"{path_part}: leads outside project '{name}' ({root}); anchor a file inside it")
    return name, root, rel


def _find_project_file(path_part: str, project: str | None, cfg: Config, cwd: Path) -> tuple[str, Path, str]:
    if project is not None:
        if project not in cfg.projects:
            raise KgError(f"project '{project}' is not registered (registered: {', '.join(sorted(cfg.projects)) or 'none'}); `kg project add PATH --name {project}`")
        root = cfg.projects[project].resolve()
        given = Path(path_part).expanduser()
        if given.is_absolute():
            try:
                return project, root, given.resolve().relative_to(root).as_posix()
            except ValueError:
                raise KgError(f"{path_part}: not inside project '{project}' ({root})") from None
        return project, root, Path(os.path.normpath(path_part)).as_posix()
    absolute = (cwd / Path(path_part).expanduser()).resolve()
    for name, root in sorted(cfg.projects.items()):
        try:
            return name, root.resolve(), absolute.relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
    hits = [(n, r.resolve()) for n, r in sorted(cfg.projects.items()) if (r / path_part).is_file() and inside(r / path_part, r)]
    if len(hits) == 1:
        return hits[0][0], hits[0][1], Path(os.path.normpath(path_part)).as_posix()
    known = ", ".join(sorted(cfg.projects)) or "none registered"
    raise KgError(f"{path_part}: not inside a registered project ({known}); pass --project NAME or register it with `kg project add`")


def _pick_symbol(rel: str, symbol: str, hashes: dict[str, str]) -> str:
    symbol = symbol.strip()
    if is_markdown(rel):
        wanted = f"{rel}#{symbol}"
        if wanted in hashes:
            return wanted
        found = [loc for loc in hashes if loc.partition("#")[2].lower() == symbol.lower()]
        kind = "heading or table row"
    else:
        full = symbol if symbol.startswith(rel + m.LOCATOR_SEP) else f"{rel}{m.LOCATOR_SEP}{symbol}"
        if m.LOCATOR_SEP in symbol:
            found = [loc for loc in hashes if loc == full]
        else:
            found = [loc for loc in hashes if _DUPLICATE.sub("", qualname(loc)) == symbol]
            if not found and "." not in symbol:
                found = [loc for loc in hashes if symbol_name(loc) == symbol]
        kind = "symbol"
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise KgError(f"{rel}: `{symbol}` is ambiguous; candidates: " + "; ".join(sorted(found)[:MAX_CANDIDATES]) + " (pass the full locator after ::)")
    near = [loc for loc in hashes if symbol.lower().split(".")[-1] in symbol_name(loc).lower()] or list(hashes)
    shown = "; ".join(sorted(near)[:MAX_CANDIDATES]) or "none (the file defines nothing anchorable)"
    raise KgError(f"{rel}: no {kind} `{symbol}`; candidates: {shown}")


def add_anchor(vault: Scope, note: str, target: str, project: str | None = None, cwd: Path | None = None, cfg: Config | None = None) -> dict[str, Any]:
    """Anchor a note to `PATH::SYMBOL`, `PATH#Heading`, `PATH#<first cell>` or `[[Other Note]]`."""
    cfg = cfg or load_config()
    rel = resolve_note(vault, note)
    doc = read_note(vault.root, rel)
    anchors = doc.anchors()
    doc.history()
    stripped = target.strip()
    if (stripped.startswith("[[") and stripped.endswith("]]")) or stripped.startswith("note:"):
        other = resolve_note(vault, stripped[2:-2] if stripped.startswith("[[") else stripped[5:])
        if other == rel:
            raise KgError(f"{rel}: a note cannot anchor to itself")
        entry: dict[str, Any] = {"note": wikilink(other)}
        if any(isinstance(a, dict) and a.get("note") and _resolves_to(vault, a["note"], other) for a in anchors):
            return {"note": rel, "anchor": entry, "changed": False}
        doc.fm["anchors"] = [*anchors, entry]
        doc.append_history({"action": "anchor", "note": entry["note"]})
        write(vault.root, [doc])
        _refresh(vault, [rel])
        return {"note": rel, "anchor": entry, "changed": True}
    if "::" in stripped:
        path_part, _, symbol = stripped.partition("::")
    elif "#" in stripped:
        path_part, _, symbol = stripped.partition("#")
    else:
        raise KgError(f"'{target}': give PATH::SYMBOL (code), PATH#Heading or PATH#<first cell> (markdown), or [[Note]]")
    if not symbol.strip():
        raise KgError(f"'{target}': nothing after `::`/`#`; name the symbol, heading or row")
    name, root, relpath = _locate(path_part, project, cfg, cwd or Path.cwd())
    if not supported(relpath):
        raise KgError(f"{relpath}: not a supported language ({supported_extensions()}); anchor a supported file")
    if "#" in stripped and "::" not in stripped and not is_markdown(relpath):
        raise KgError(f"{relpath}: `#` anchors name markdown headings or rows; use {relpath}::SYMBOL for code")
    absolute = root / relpath
    if not absolute.is_file():
        raise KgError(f"{absolute}: no such file in project '{name}'")
    cache = SymbolCache(cache_path(vault))
    found = cache.lookup(str(absolute), relpath)
    locator = _pick_symbol(relpath, symbol, found.hashes)
    entry = {"project": name, "locator": locator, "hash": found.hashes[locator]}
    cache.save()
    same = [a for a in anchors if isinstance(a, dict) and a.get("project") == name and a.get("locator") == locator]
    if same and same[0].get("hash") == entry["hash"]:
        return {"note": rel, "anchor": entry, "changed": False}
    doc.fm["anchors"] = [entry if a in same else a for a in anchors] if same else [*anchors, entry]
    doc.append_history({"action": "anchor", **entry})
    write(vault.root, [doc])
    _refresh(vault, [rel])
    return {"note": rel, "anchor": entry, "changed": True}


# ------------------------------------------------------------------ kg accept / kg reanchor


def _code_anchors(doc: NoteText, cfg: Config) -> list[tuple[int, dict[str, Any], Path]]:
    """(position, entry, project root) of each code/markdown anchor; bad entries refuse the repair."""
    out = []
    for i, item in enumerate(doc.anchors()):
        if isinstance(item, dict) and "note" in item:
            continue
        if not isinstance(item, dict) or not all(str(item.get(k) or "").strip() for k in ("project", "locator")):
            raise KgError(f"{doc.rel}: anchor {i + 1} lacks `project` or `locator`; fix or remove it by hand, or re-create it with `kg anchor` (nothing written)")
        project = str(item["project"])
        if project not in cfg.projects:
            raise KgError(f"{doc.rel}: anchor {i + 1} names project '{project}', which is not registered; `kg project add PATH --name {project}` (nothing written)")
        path, _ = split_locator(str(item["locator"]))
        if not supported(path):
            raise KgError(f"{doc.rel}: anchor {i + 1}: `{path}` is not a supported language; remove that anchor (nothing written)")
        out.append((i, item, cfg.projects[project].resolve()))
    return out


def accept(vault: Scope, note: str, cfg: Config | None = None) -> dict[str, Any]:
    """The meaning survived the edit: take each changed symbol's current hash; leave the body alone."""
    cfg = cfg or load_config()
    rel = resolve_note(vault, note)
    doc = read_note(vault.root, rel)
    doc.history()
    cache = SymbolCache(cache_path(vault))
    anchors = list(doc.anchors())
    accepted = []
    for i, item, root in _code_anchors(doc, cfg):
        locator = str(item["locator"])
        path, _ = split_locator(locator)
        found = cache.lookup(str(root / path), path)
        if found.missing:
            raise KgError(f"{rel}: {item['project']}:{path} no longer exists; `kg reanchor {shell_arg(rel)}` or `kg retire {shell_arg(rel)} --reason ...` (nothing written)")
        current = found.hashes.get(locator)
        if current is None:
            raise KgError(f"{rel}: symbol not found: {locator}; `kg reanchor {shell_arg(rel)}` to follow it (nothing written)")
        if current != item.get("hash"):
            anchors[i] = {**item, "hash": current}
            accepted.append({"action": "accept", "project": item["project"], "locator": locator, "hash": current, "previous": str(item.get("hash") or "")})
    cache.save()
    return _commit_anchors(vault, rel, doc, anchors, accepted, "accepted")


def _commit_anchors(vault: Scope, rel: str, doc: Any, anchors: list[Any], entries: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Write the repaired anchors with one history entry each and refresh the graph (or nothing)."""
    if not entries:
        return {"note": rel, key: [], "changed": False}
    doc.fm["anchors"] = anchors
    for entry in entries:
        doc.append_history(entry)
    write(vault.root, [doc])
    _refresh(vault, [rel])
    return {"note": rel, key: entries, "changed": True}


def _project_files(root: Path, markdown: bool) -> list[str]:
    if not markdown:
        from extract.code_scan import list_sources

        return list_sources(root)[0]
    from extract.code_scan import SKIP_DIRS

    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        base = Path(folder).relative_to(root).as_posix()
        found.extend(f"{base}/{f}".lstrip("./") if base != "." else f for f in files if is_markdown(f))
    return sorted(found)


def _same_name(cache: SymbolCache, root: Path, name: str, markdown: bool) -> dict[str, str]:
    """Every span in the project named `name` (locator → hash). Files that do not contain the
    name's bytes are never parsed."""
    needle = name.encode("utf-8")
    out: dict[str, str] = {}
    for relpath in _project_files(root, markdown):
        absolute = str(root / relpath)
        seen = cache.cached(absolute)
        found = None
        if seen is not None:
            found = cache.lookup(absolute, relpath)
        else:
            try:
                data = read_regular(absolute, MAX_SOURCE_BYTES, root=root, trust_folders=True)
            except OSError:
                continue
            if needle not in data:
                continue
            found = cache.lookup(absolute, relpath, data)
        out.update({loc: h for loc, h in found.hashes.items() if symbol_name(loc) == name})
    return out


def reanchor(vault: Scope, note: str, cfg: Config | None = None) -> dict[str, Any]:
    """Follow moved symbols: exact locator, else exactly one same-name, same-hash symbol in the repo."""
    cfg = cfg or load_config()
    rel = resolve_note(vault, note)
    doc = read_note(vault.root, rel)
    doc.history()
    cache = SymbolCache(cache_path(vault))
    anchors = list(doc.anchors())
    moves = []
    for i, item, root in _code_anchors(doc, cfg):
        locator, digest = str(item["locator"]), str(item.get("hash") or "")
        path, _ = split_locator(locator)
        found = cache.lookup(str(root / path), path)
        if not found.missing and found.hashes.get(locator) == digest:
            continue
        name = symbol_name(locator)
        named = _same_name(cache, root, name, is_markdown(path))
        same = sorted(loc for loc, h in named.items() if h == digest)
        if len(same) == 1:
            anchors[i] = {**item, "locator": same[0]}
            moves.append({"action": "reanchor", "project": item["project"], "locator": same[0], "from": locator, "hash": digest})
            continue
        cache.save()
        if len(same) > 1:
            raise KgError(
                f"{rel}: `{name}` with the same hash is at several places; candidates: {'; '.join(same[:MAX_CANDIDATES])}; anchor one with `kg anchor {shell_arg(rel)} --to PATH::SYMBOL` (nothing written)"
            )
        if locator in named:
            raise KgError(f"{rel}: {locator} is still there but its text changed; if the note still holds, `kg accept {shell_arg(rel)}` (nothing written)")
        if named:
            listed = "; ".join(f"{loc} (hash differs)" for loc in sorted(named)[:MAX_CANDIDATES])
            raise KgError(f"{rel}: no symbol `{name}` with the anchored hash in project '{item['project']}'; candidates: {listed}; re-anchor with `kg anchor` (nothing written)")
        nearby = sorted(found.hashes)[:MAX_CANDIDATES] if not found.missing else []
        listed = "; ".join(nearby) if nearby else f"none ({path} is gone)"
        raise KgError(
            f"{rel}: no symbol named `{name}` in project '{item['project']}' (renamed or deleted?); candidates in {path}: {listed}; re-anchor with `kg anchor` or `kg retire` (nothing written)"
        )
    cache.save()
    return _commit_anchors(vault, rel, doc, anchors, moves, "moved")


# ------------------------------------------------------------------ kg supersede / kg retire


def supersede(vault: Scope, old: str, new: str, on: str | None = None, cfg: Config | None = None) -> dict[str, Any]:
    """OLD gives way to NEW on `on` (default today): both kept, windows closed and opened."""
    cfg = cfg or load_config()
    day = parse_date(on) if on else today(cfg)
    old_rel, new_rel = resolve_note(vault, old), resolve_note(vault, new)
    if old_rel == new_rel:
        raise KgError(f"{old_rel}: a note cannot supersede itself")
    old_doc, new_doc = read_note(vault.root, old_rel), read_note(vault.root, new_rel)
    old_doc.history()
    new_doc.history()
    current = old_doc.fm.get("superseded_by")
    if current:
        if _resolves_to(vault, current, new_rel):
            return {"old": old_rel, "new": new_rel, "on": day.isoformat(), "changed": False}
        raise KgError(f"{old_rel}: already superseded by {current}; one note has one successor (supersede {current} instead)")
    chain = [new_rel]
    probe = new_doc
    while probe.fm.get("superseded_by"):
        nxt = resolve_note(vault, str(probe.fm["superseded_by"]).strip("[]"))
        if nxt == old_rel:
            raise KgError(f"refused: {' → '.join([old_rel, *chain, old_rel])} would be a supersession cycle (nothing written)")
        if nxt in chain:
            break
        chain.append(nxt)
        probe = read_note(vault.root, nxt)
    supersedes = new_doc.fm.get("supersedes") or []
    if not isinstance(supersedes, list):
        supersedes = [supersedes]
    old_doc.fm["superseded_by"] = wikilink(new_rel)
    old_doc.fm["valid_to"] = day
    old_doc.append_history({"action": "superseded", "by": wikilink(new_rel), "on": day.isoformat()})
    new_doc.fm["supersedes"] = [*supersedes, wikilink(old_rel)]
    if not new_doc.fm.get("valid_from"):
        new_doc.fm["valid_from"] = day
    new_doc.append_history({"action": "supersede", "of": wikilink(old_rel), "on": day.isoformat()})
    write(vault.root, [old_doc, new_doc])
    _refresh(vault, [old_rel, new_rel])
    return {"old": old_rel, "new": new_rel, "on": day.isoformat(), "changed": True}


def _resolves_to(vault: Scope, name: Any, rel: str) -> bool:
    try:
        return resolve_note(vault, str(name).strip("[]")) == rel
    except KgError:
        return False


def retire(vault: Scope, note: str, reason: str, on: str | None = None, cfg: Config | None = None) -> dict[str, Any]:
    """Close a note's validity window without a successor: it stays, no longer current."""
    cfg = cfg or load_config()
    if not reason.strip():
        raise KgError("--reason is required: say why the note no longer holds")
    day = parse_date(on) if on else today(cfg)
    rel = resolve_note(vault, note)
    doc = read_note(vault.root, rel)
    doc.history()
    if doc.fm.get("retired"):
        raise KgError(f"{rel}: already retired ({doc.fm['retired']}); nothing written")
    doc.fm["valid_to"] = day
    doc.fm["retired"] = " ".join(reason.split())
    doc.append_history({"action": "retire", "reason": doc.fm["retired"], "on": day.isoformat()})
    write(vault.root, [doc])
    _refresh(vault, [rel])
    return {"note": rel, "on": day.isoformat(), "reason": doc.fm["retired"], "changed": True}


def format_anchor(r: dict[str, Any]) -> str:
    a = r["anchor"]
    target = a.get("note") or f"{a['project']}:{a['locator']}"
    return f"{r['note']}: {'anchored to' if r['changed'] else 'already anchored to'} {target}"


def format_reanchor(r: dict[str, Any]) -> str:
    return "\n".join([f"{r['note']}: {m['from']} → {m['locator']}" for m in r["moved"]]) or f"{r['note']}: every anchor holds; nothing to do"


def format_accept(r: dict[str, Any]) -> str:
    return "\n".join(f"{r['note']}: accepted {a['locator']}" for a in r["accepted"]) or f"{r['note']}: no anchor changed; nothing to accept"


def format_supersede(r: dict[str, Any]) -> str:
    return f"{r['old']} superseded by {r['new']} on {r['on']}" + ("" if r["changed"] else " (already; nothing written)")


def format_retire(r: dict[str, Any]) -> str:
    return f"{r['note']} retired on {r['on']}: {r['reason']}"
