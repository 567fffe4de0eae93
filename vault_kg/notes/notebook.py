"""Notes as a memory server's user sees them: read, list, append, edit, journal entries, recent activity.

The library verbs behind `kg note show|list|append|edit`, `kg journal add`, `kg recent` and the
MCP tools `read_note`, `list_notes`, `append_note`, `edit_note`, `journal_add` and `recent`.
Every write goes through `vault_write.change_note` (path guard, frontmatter contract, secret gate,
the `scope/global` guardrail, one kg writer per note, the change re-applied to what another program
wrote meanwhile); nothing here ever deletes a file. An edit is an exact-string
replacement, like an editor tool's: it refuses text that is not there and text that is there
more than once (unless every occurrence is meant). A note that met the frontmatter contract must
still meet it after the write; a note that never did may be appended to or edited as it is.
Journal days are written only by `journal_add` (append-only, secrets redacted).
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

from typing_extensions import NotRequired, TypedDict  # pydantic needs it for output schemas on Python < 3.12

from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope

__all__ = [
    "JOURNAL_DIR",
    "JournalEntry",
    "MAX_READ_BYTES",
    "NoteList",
    "NoteRow",
    "NoteText",
    "NoteWrite",
    "Recent",
    "append_note",
    "edit_note",
    "format_entry",
    "format_list",
    "format_read",
    "format_recent",
    "format_write",
    "journal_add",
    "list_notes",
    "note_path",
    "read_note",
    "recent",
]

MAX_READ_BYTES = 1_000_000
JOURNAL_DIR = "journal"


class NoteText(TypedDict):
    path: str
    node: str
    frontmatter: dict[str, Any] | None
    frontmatter_error: str | None
    body: str
    body_line: int
    text: str
    bytes: int
    modified: str


class NoteRow(TypedDict):
    path: str
    summary: str
    tags: list[str]
    modified: str


class NoteList(TypedDict):
    folder: str | None
    tag: str | None
    since_days: float | None
    total: int
    notes: list[NoteRow]


class NoteWrite(TypedDict):
    action: str
    path: str
    node: str
    bytes: int
    indexed: bool
    replaced: NotRequired[int]


class JournalEntry(TypedDict):
    day: str
    time: str
    project: str
    file: str
    line: int
    end_line: int
    text: str


class Recent(TypedDict):
    days: float
    notes: list[NoteRow]
    notes_total: int
    journal: list[JournalEntry]
    journal_total: int


def note_path(vault: Scope, name: str) -> str:
    """The vault path of a note named by path, file name, title or alias (one clear line if none or several)."""
    from vault_kg.notes.anchor_repair import resolve_note

    return resolve_note(vault, name)


def read_note(vault: Scope, name: str) -> NoteText:
    """The note's full text, its frontmatter as data, its body, size and modification time."""
    from extract.notes import json_safe, parse_frontmatter, split_frontmatter

    from vault_kg.core.safe_read import read_regular

    rel = note_path(vault, name)
    path = vault.root / rel
    try:
        data = read_regular(path, MAX_READ_BYTES + 1, root=vault.root)
        mtime = os.stat(path).st_mtime
    except OSError as exc:
        raise KgError(f"{rel}: cannot read the note ({exc.strerror or exc}); check that it is a regular file") from exc
    if len(data) > MAX_READ_BYTES:
        raise KgError(f"{rel}: over {MAX_READ_BYTES // 1_000_000} MB; open it in an editor instead")
    text = data.decode("utf-8-sig", "replace")
    fm_text, body, body_line = split_frontmatter(text)
    problem = None
    try:
        front = json_safe(parse_frontmatter(fm_text)) if fm_text is not None else {}
    except ValueError as exc:
        front, problem = None, str(exc)
    return {
        "path": rel,
        "node": f"note:{rel}",
        "frontmatter": front,
        "frontmatter_error": problem,
        "body": body,
        "body_line": body_line,
        "text": text,
        "bytes": len(data),
        "modified": _stamp(mtime),
    }


def format_read(note: dict[str, Any]) -> str:
    return f"{note['path']} ({note['bytes']} bytes, modified {note['modified']})\n\n{note['text'].rstrip()}"


def list_notes(vault: Scope, folder: str | None = None, tag: str | None = None, since_days: float | None = None, limit: int = 50, sort: str = "recent") -> NoteList:
    """Notes under `folder`, carrying `tag` (frontmatter tags; `tool` also matches `tool/semrush`),
    changed in the last `since_days`; newest first (`sort="recent"`) or by path."""
    from extract.notes import VaultAdapter

    if sort not in ("recent", "path"):
        raise KgError(f"sort {sort!r}: use recent or path")
    prefix = _folder_prefix(folder)
    cutoff = time.time() - since_days * 86400 if since_days is not None else None
    rows = []
    for rel in VaultAdapter().list_sources(vault.root)[0]:
        if prefix and not rel.startswith(prefix):
            continue
        try:
            mtime = os.stat(vault.root / rel).st_mtime
        except OSError:
            continue
        if cutoff is None or mtime >= cutoff:
            rows.append((rel, mtime))
    rows.sort(key=(lambda r: (-r[1], r[0])) if sort == "recent" else (lambda r: r[0]))
    notes, matched = [], 0
    for rel, mtime in rows:
        head = _head(vault.root, rel)
        if tag and not _has_tag(head.get("tags"), tag):
            continue
        matched += 1
        if len(notes) < limit:
            notes.append({"path": rel, "summary": head.get("summary", ""), "tags": head.get("tags", []), "modified": _stamp(mtime)})
    return {"folder": prefix or None, "tag": tag, "since_days": since_days, "total": matched, "notes": notes}


def format_list(data: dict[str, Any]) -> str:
    from vault_kg.core.agent_text import one_line

    lines = [f"{n['modified']}  {n['path']}" + (f": {one_line(n['summary'], 120)}" if n["summary"] else "") for n in data["notes"]]
    more = data["total"] - len(data["notes"])
    return "\n".join(lines + ([f"… {more} more; narrow with a folder or tag, or raise the limit"] if more > 0 else [])) or "no notes match"


def append_note(vault: Scope, name: str, text: str, long_lived: bool = False) -> NoteWrite:
    """Add `text` at the end of an existing note (a blank line before it), then update the graph.

    The append is made to the note as it is when written: a line another program saved meanwhile
    stays above it. A `long_lived` caller (the MCP server) wakes the model worker at once."""
    if not text.strip():
        raise KgError("nothing to append: the text is empty")
    rel = _editable(vault, name)

    def append(old: str | None) -> str:
        old = _existing(rel, old)
        eol = "\r\n" if "\r\n" in old else "\n"  # the note's own line ending: no other byte of it changes
        added = text.strip("\r\n").replace("\r\n", "\n").replace("\n", eol)
        return old.rstrip("\r\n") + eol + eol + added + eol

    return _save(vault, rel, append, text, "appended", long_lived)


def edit_note(vault: Scope, name: str, old_text: str, new_text: str, replace_all: bool = False, long_lived: bool = False) -> NoteWrite:
    """Replace `old_text` (exactly, once; every occurrence with `replace_all`) by `new_text`.

    The replacement is made in the note as it is when written; when another program changed it
    meanwhile and `old_text` is no longer there (exactly once), nothing is written."""
    if not old_text:
        raise KgError("the text to replace is empty; give the exact text to replace (copy it from the note)")
    if old_text == new_text:
        raise KgError("the old and the new text are the same; nothing to change")
    rel = _editable(vault, name)
    replaced: list[int] = []

    def edit(old: str | None) -> str:
        old = _existing(rel, old)
        count = old.count(old_text)
        if count == 0:
            raise KgError(f"{rel}: the text to replace is not in the note (it must match exactly, spaces and line breaks included); nothing written")
        if count > 1 and not replace_all:
            raise KgError(f"{rel}: the text to replace occurs {count} times; add surrounding text to make it unique, or replace every occurrence (--all, MCP replace_all); nothing written")
        replaced[:] = [count if replace_all else 1]
        return old.replace(old_text, new_text) if replace_all else old.replace(old_text, new_text, 1)

    result = _save(vault, rel, edit, new_text, "edited", long_lived)
    result["replaced"] = replaced[0]
    return result


def format_write(result: dict[str, Any]) -> str:
    replaced = f" ({result['replaced']} replacement{'s' if result['replaced'] != 1 else ''})" if "replaced" in result else ""
    graph = " and updated the graph" if result["indexed"] else "; run `kg build` to add it to the graph"
    return f"{result['action']} {result['path']}{replaced}{graph}"


def journal_add(vault: Scope, text: str, project: str | None = None) -> JournalEntry:
    """Append a timestamped entry to today's journal note (secrets redacted before it is written)."""
    from episodic.dates import resolve_timezone
    from episodic.journal import append_entry

    from vault_kg.core.config import load_config

    tz = resolve_timezone(load_config().timezone)
    return append_entry(vault.root, text, project=project, now=datetime.now(tz), tz=tz).to_dict()


def format_entry(entry: dict[str, Any]) -> str:
    where = f" · {entry['project']}" if entry["project"] else ""
    return f"{entry['file']}:{entry['line']}  {entry['day']} {entry['time']}{where}"


def recent(vault: Scope, days: float = 1.0, limit: int = 50) -> Recent:
    """What happened in the last `days`: notes changed (journal days apart) and journal entries, newest first."""
    from episodic.dates import resolve_timezone, today_in
    from episodic.journal import read_day

    from vault_kg.core.config import load_config

    if not 0 < days <= 3660:
        raise KgError(f"days={days}: give a window from a few minutes (0.01) to 3660 days")
    changed = list_notes(vault, since_days=days, limit=10**9)
    notes = [n for n in changed["notes"] if not n["path"].startswith(JOURNAL_DIR + "/")]
    today = today_in(resolve_timezone(load_config().timezone))
    entries = []
    for back in range(int(days) + 1 if days >= 1 else 1):
        for entry in reversed(read_day(vault.root, today - timedelta(days=back))):
            entries.append({**entry.to_dict(), "text": entry.text.strip()})
    return {"days": days, "notes": notes[:limit], "notes_total": len(notes), "journal": entries[:limit], "journal_total": len(entries)}


def format_recent(data: dict[str, Any]) -> str:
    from vault_kg.core.agent_text import one_line

    out = [f"notes changed in the last {data['days']:g} day(s): {data['notes_total']}"]
    out += [f"  {n['modified']}  {n['path']}" + (f": {one_line(n['summary'], 100)}" if n["summary"] else "") for n in data["notes"]]
    out.append(f"journal entries: {data['journal_total']}")
    for e in data["journal"]:
        first = next((ln for ln in e["text"].split("\n") if ln.strip()), "")
        project = f" · {one_line(e['project'], 60)}" if e["project"] else ""
        out.append(f"  {e['day']} {e['time']}{project}: {one_line(first.lstrip('- '), 120)} ({e['file']}:{e['line']})")
    return "\n".join(out)


def _editable(vault: Scope, name: str) -> str:
    """The note's path, refusing journal days (append-only through journal_add), also when the
    note is reached through a folder link into the journal (`daily -> journal`)."""
    rel = note_path(vault, name)
    real = os.path.realpath(vault.root / rel)
    root = os.path.realpath(vault.root)
    real_rel = os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(root + os.sep) else rel
    if any(r.casefold().startswith(JOURNAL_DIR + "/") for r in (rel, real_rel)):
        raise KgError(f"{rel}: journal days are append-only; add an entry with `kg journal add` (MCP: journal_add) instead")
    return rel


def _existing(rel: str, text: str | None) -> str:
    if text is None:
        raise KgError(f"{rel}: the note is gone (deleted or renamed meanwhile); nothing written")
    return text


def _save(vault: Scope, rel: str, change: Callable[[str | None], str], added: str, action: str, long_lived: bool) -> NoteWrite:
    """Write through the one guarded write (only `added` is scanned for secrets), then update the graph."""
    from vault_kg.storage.layout import Layout
    from vault_kg.notes.vault_write import change_note

    target, new = change_note(vault.root, rel, change, contract=None, scan=added)
    indexed = Layout(vault.out).cache_db.exists()
    if indexed:
        from vault_kg.jobs.scope_update import update_scope

        update_scope(vault, [target], long_lived=long_lived)
    return {"action": action, "path": rel, "node": f"note:{rel}", "bytes": len(new.encode("utf-8")), "indexed": indexed}


def _folder_prefix(folder: str | None) -> str:
    if not folder or folder.strip() in (".", "/"):
        return ""
    raw = folder.strip().replace("\\", "/").strip("/")
    if raw.startswith(("..", "~")) or "/../" in f"/{raw}/" or Path(raw).is_absolute():
        raise KgError(f"folder {folder!r}: give a folder inside the vault, like `notes` or `clients/acme`")
    return raw + "/"


def _head(root: Path, rel: str) -> dict[str, Any]:
    """Summary and tags from a note's frontmatter ({} when it has none or it is malformed)."""
    from extract.notes import parse_frontmatter, split_frontmatter

    from vault_kg.core.safe_read import read_regular

    try:
        text = read_regular(root / rel, 64 * 1024, root=root, trust_folders=True).decode("utf-8", "replace")
        fm_text = split_frontmatter(text)[0]
        front = parse_frontmatter(fm_text) if fm_text else {}
    except (OSError, ValueError):
        return {}
    tags = front.get("tags") or []
    tags = [tags] if isinstance(tags, str) else [str(t) for t in tags if isinstance(t, (str, int))] if isinstance(tags, list) else []
    summary = front.get("summary")
    return {"summary": " ".join(summary.split()) if isinstance(summary, str) else "", "tags": [t.lstrip("#") for t in tags]}


def _has_tag(tags: list[str] | None, wanted: str) -> bool:
    key = wanted.lstrip("#").lower()
    return any(t.lower() == key or t.lower().startswith(key + "/") for t in tags or [])


def _stamp(mtime: float) -> str:
    return datetime.fromtimestamp(mtime).astimezone().isoformat(timespec="seconds")
