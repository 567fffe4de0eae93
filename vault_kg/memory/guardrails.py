"""Guardrails on how an agent writes: the decision behind the PreToolUse hook.

Three writes are refused, each with the command to use instead: newly tagging a vault note
`scope/global` (promotion goes through `kg promote`), changing or removing lines of a past
journal day (day notes are append-only: every entry keeps its `file:line`), and writing a
note-shaped markdown file (a `summary` and namespaced `tags`) into a registered project
repository (knowledge lives in the vault). A file the rules cannot read (a FIFO, a device, a link
out of its folder, a huge file) is refused too, rather than blocking the hook or letting the write
through unchecked. Everything else is allowed.

`decide` is pure given its inputs (the files it reads are the ones the write would change).
Only the standard library and `vault_kg.core.config` are imported at module level, so the hook can
tell in a few milliseconds that a call is none of its business; the note parser is imported
only once a markdown file in the vault or a project is about to change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from vault_kg.core.config import Config, inside

__all__ = [
    "Decision",
    "GLOBAL_TAG",
    "GUARDED_TOOLS",
    "JOURNAL",
    "MARKDOWN_SUFFIXES",
    "MAX_CHECK_BYTES",
    "PROMOTION",
    "REPO_NOTE",
    "UNREADABLE",
    "appends_only",
    "decide",
    "journal_day",
    "new_global_tag",
    "note_shaped",
    "note_tags",
    "past_day_rewrite",
    "project_of",
    "proposed_text",
    "read_text",
    "target_path",
    "today_for",
]

GUARDED_TOOLS = ("Write", "Edit", "MultiEdit")
MARKDOWN_SUFFIXES = (".md", ".markdown")
GLOBAL_TAG = "scope/global"
PROMOTION, JOURNAL, REPO_NOTE, UNREADABLE = "promotion", "journal", "repo-note", "unreadable"
MAX_CHECK_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Decision:
    """A refused write: which rule refused it and what the agent should do instead."""

    rule: str
    reason: str


def target_path(tool_name: Any, tool_input: Any, cwd: Path) -> Path | None:
    """The markdown file a guarded tool call would write, or None when no rule can apply."""
    if tool_name not in GUARDED_TOOLS or not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw.lower().endswith(MARKDOWN_SUFFIXES):
        return None
    path = Path(raw)
    return path if path.is_absolute() else cwd / path


def decide(
    tool_name: Any,
    tool_input: Any,
    cwd: Path,
    cfg: Config,
    *,
    vault: Path | None = None,
    today: date | None = None,
) -> Decision | None:
    """The refusal for this tool call, or None to let it through (the default for anything unclear)."""
    path = target_path(tool_name, tool_input, cwd)
    if path is None or not cfg.guardrails:
        return None
    vault = vault if vault is not None else cfg.vault
    if vault is not None and _under(path, vault):
        rel = inside(path, vault)  # None under kg-out or a hidden folder: not a note
        if rel is None or not rel.endswith(".md"):
            return None
        try:
            before = read_text(path, vault)
        except OSError as exc:
            return _unchecked(rel, exc)
        after = proposed_text(tool_name, tool_input, before)
        if after is None:
            return None
        day = journal_day(rel)
        if day is not None:
            return past_day_rewrite(rel, day, before, after, today or today_for(cfg))
        return new_global_tag(rel, before, after)
    project = project_of(path, cfg)
    if project is None:
        return None
    name, root = project
    rel = inside(path, root)
    if rel is None:
        return None
    try:
        before = read_text(path, root)
    except OSError as exc:
        return _unchecked(rel, exc)
    after = proposed_text(tool_name, tool_input, before)
    if after is None or not note_shaped(rel, after) or (before is not None and note_shaped(rel, before)):
        return None
    where = f"{vault}/" if vault is not None else "the vault"
    return Decision(
        REPO_NOTE,
        f"vault-kg: {rel} in project '{name}' is a knowledge note (summary and namespaced tags), and knowledge "
        f"lives in the vault, not in project repositories. Save it with the vault-kg MCP tool `remember` "
        f"(summary, tags, body; `anchor` ties it to code in '{name}'), or write it in {where}. "
        "To write a plain markdown file here, leave out the vault frontmatter.",
    )


def _unchecked(rel: str, exc: OSError) -> Decision:
    """A file the rules cannot read (a FIFO, a device, a link out of its folder, one too large) is
    not written through the agent: the write would go through unchecked, or block the agent."""
    return Decision(UNREADABLE, f"vault-kg: {rel} {exc.strerror or exc}; kg cannot check this write, so it is refused (edit the file outside the agent if it is meant)")


def appends_only(before: str, after: str) -> bool:
    """`after` is `before` with lines added at its end: every byte of `before` stays, and its last
    line is not extended. Compared as text, not as `str.splitlines` lines, which treat `\x1c` or
    U+2028 as line breaks (a line changed after one of them used to pass)."""
    if not after.startswith(before):
        return False
    rest = after[len(before) :]
    return not before or before.endswith("\n") or not rest or rest.startswith(("\n", "\r\n"))


def past_day_rewrite(rel: str, day: date, before: str | None, after: str, today: date) -> Decision | None:
    """Past day notes are append-only: every existing line must stay where it is."""
    if day >= today or before is None:
        return None
    if appends_only(before, after):
        return None
    return Decision(
        JOURNAL,
        f"vault-kg: {rel} is a past journal day ({day.isoformat()}, today is {today.isoformat()}); day notes are "
        "append-only, so every entry keeps its file:line. Record a correction or a late note as a new entry: "
        '`kg journal add "..." --project NAME` (today\'s note), or append it below the existing lines of that day.',
    )


def new_global_tag(rel: str, before: str | None, after: str) -> Decision | None:
    """Refuse a write after which the note carries `scope/global` and before which it did not."""
    if GLOBAL_TAG not in note_tags(rel, after) or (before is not None and GLOBAL_TAG in note_tags(rel, before)):
        return None
    return Decision(
        PROMOTION,
        f"vault-kg: this write would tag {rel} `{GLOBAL_TAG}`. Knowledge becomes global only through promotion, "
        "which checks that it recurs across clients and projects and drafts the global note with its evidence: "
        '`kg promote --suggest` lists candidates, `kg promote "LABEL"` drafts one. Keep the note in its '
        "client/project scope (the rest of this write is fine without the tag).",
    )


def _under(path: Path, root: Path) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def project_of(path: Path, cfg: Config) -> tuple[str, Path] | None:
    for name, root in sorted(cfg.projects.items()):
        if inside(path, root) is not None:
            return name, root
    return None


def journal_day(rel: str) -> date | None:
    """The day of a journal day note (`journal/YYYY-MM-DD.md`), None for any other note."""
    from episodic.journal import JOURNAL_DIRNAME, day_of

    folder, _, name = rel.rpartition("/")
    return day_of(Path(name)) if folder == JOURNAL_DIRNAME else None


def today_for(cfg: Config) -> date:
    """Today in the configured time zone (the system's when unset or unknown)."""
    from episodic.dates import resolve_timezone, today_in
    from vault_kg.core.errors import KgError

    try:
        tz = resolve_timezone(cfg.timezone)
    except KgError:
        tz = resolve_timezone("")
    return today_in(tz)


def read_text(path: Path, root: Path) -> str | None:
    """The file's current text (None: it does not exist yet), read through the one reader: a FIFO,
    a device, a link out of `root` or a file over `MAX_CHECK_BYTES` raise `OSError` (never block);
    bytes that are not UTF-8 are kept as surrogates, so a line holding one is still compared."""
    from vault_kg.core.safe_read import UnsafeFile, read_regular

    try:
        data = read_regular(path, MAX_CHECK_BYTES + 1, root=root)
    except FileNotFoundError:
        return None
    if len(data) > MAX_CHECK_BYTES:
        raise UnsafeFile(path, f"is over {MAX_CHECK_BYTES // (1024 * 1024)} MB")
    return data.decode("utf-8-sig", "surrogateescape")


def proposed_text(tool_name: str, tool_input: dict[str, Any], before: str | None) -> str | None:
    """The file's text after the call, as Claude Code's tool would leave it (None: the call would fail)."""
    if tool_name == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool_name == "MultiEdit" else [tool_input]
    if not isinstance(edits, list) or not edits:
        return None
    text = before
    for edit in edits:
        if not isinstance(edit, dict):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if text is None:
            if old:
                return None
            text = new  # an Edit with an empty old_string creates the file
            continue
        if not old or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") is True else text.replace(old, new, 1)
    return text


def _read_note(rel: str, text: str) -> tuple[list[str], dict[str, Any]]:
    from extract.notes import extract_note
    from vault_kg.core import model as m

    extraction = extract_note(rel, text.encode("utf-8", "surrogateescape"))
    return list(extraction.nodes[m.note_id(rel)].get("tags") or []), extraction.meta


def note_tags(rel: str, text: str) -> set[str]:
    """The tags the graph would read from this text (frontmatter and inline)."""
    return set(_read_note(rel, text)[0])


def note_shaped(rel: str, text: str) -> bool:
    """Vault frontmatter: a `summary` key and at least one namespaced tag in `tags`."""
    meta = _read_note(rel, text)[1]
    return bool(meta.get("summary_present")) and any("/" in tag for tag in meta.get("fm_tags") or [])
