"""A journal entry from a Claude Code session transcript (JSONL), built without any model.

The session-end hook calls :func:`journal_session`: what project, what was asked first and last,
which files and vault notes were edited, which commands ran, and a link back to the transcript.
Everything is read from the transcript's structure (user turns, tool_use blocks); nothing is
guessed, so the entry is fast, deterministic and cannot hallucinate.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from vault_kg.core.errors import KgError
from vault_kg.core.safe_read import inside, read_regular

from .journal import Entry, append_entry

EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}
SHELL_TOOLS = {"Bash": "command"}
MAX_REQUEST_CHARS = 280
MAX_TITLE_CHARS = 200  # a 10 MB session title once pushed the rest of the day past what a reader reads
MAX_COMMAND_CHARS = 120
MAX_LISTED = 8
MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024  # a longer session is read from its tail
# User turns that are not requests: tool results, hook/command chatter, interrupted markers.
_NOT_A_REQUEST = re.compile(
    r"^\s*(<command-(name|message|args)>|<local-command-stdout>|<user-prompt-submit-hook>|Caveat: |"
    r"\[Request interrupted)"
)


@dataclass
class SessionSummary:
    transcript: Path
    project: str = ""
    cwd: str = ""
    session_id: str = ""
    branch: str = ""
    title: str = ""
    first_request: str = ""
    last_request: str = ""
    files_edited: list[str] = field(default_factory=list)
    notes_edited: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    started: str = ""
    ended: str = ""


def transcript_roots() -> list[Path]:
    """Where Claude Code writes session transcripts: `~/.claude/projects/`, and
    `$CLAUDE_CONFIG_DIR/projects/` when that is set."""
    roots = [Path.home() / ".claude" / "projects"]
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        roots.append(Path(configured).expanduser() / "projects")
    return roots


def accepted_transcript(raw: str) -> Path:
    """The transcript path a hook was given, if it is one Claude Code could have written.

    A payload is input like any other: a path that resolves (symlinks followed) outside the
    transcript folders is refused, so the hook never reads, or links in the journal, a file such
    as `/etc/shadow`; FIFOs and devices are refused when read.
    """
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise KgError(f"{raw}: the transcript path is not absolute; nothing journaled")
    roots = transcript_roots()
    if not any(inside(path, root) and os.path.realpath(path) != os.path.realpath(root) for root in roots):
        where = " or ".join(str(r) for r in roots)
        raise KgError(f"{path}: not a Claude Code transcript (they live under {where}); nothing journaled")
    return Path(os.path.realpath(path))


def transcript_records(path: Path, limit: int = MAX_TRANSCRIPT_BYTES) -> list[dict[str, Any]]:
    try:
        raw = read_regular(path, limit, tail=True).decode("utf-8", "replace")
    except OSError as exc:
        raise KgError(f"{path}: cannot read the session transcript ({exc.strerror}); check the path") from exc
    out = []
    for line in raw.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue  # a partial last line while the session is still being written
        if isinstance(obj, dict):
            out.append(obj)
    return out


def content_of(record: dict[str, Any]) -> Any:
    """A record's `message.content`, or None when the record has no such shape (a `message` that
    is a string or a list: one odd record must not lose the session's entry)."""
    message = record.get("message")
    return message.get("content") if isinstance(message, dict) else None


def user_text(record: dict[str, Any]) -> str:
    """The text of a real user request ("" for tool results, meta and command chatter)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return ""
    content = content_of(record)
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        return ""
    text = text.strip()
    return "" if not text or _NOT_A_REQUEST.match(text) else text


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def tool_uses(record: dict[str, Any]) -> list[dict[str, Any]]:
    if record.get("type") != "assistant":
        return []
    content = content_of(record)
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("input", {}), dict)]


def _display_path(raw: str, cwd: str) -> str:
    path = Path(raw)
    if cwd:
        try:
            return path.relative_to(cwd).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def summarize_transcript(path: Path, *, vault: Path | None = None, project: str | None = None) -> SessionSummary:
    """Read a Claude Code JSONL transcript into the facts a journal entry needs."""
    summary = SessionSummary(transcript=path)
    requests: list[str] = []
    for record in transcript_records(path):
        if record.get("type") == "summary" and record.get("summary") and not summary.title:
            summary.title = _one_line(str(record["summary"])[: MAX_TITLE_CHARS * 4], MAX_TITLE_CHARS)
        summary.cwd = summary.cwd or str(record.get("cwd") or "")[:4096]
        summary.session_id = summary.session_id or str(record.get("sessionId") or "")[:200]
        summary.branch = summary.branch or _one_line(str(record.get("gitBranch") or "")[:1000], MAX_TITLE_CHARS)
        if record.get("timestamp"):
            summary.started = summary.started or str(record["timestamp"])
            summary.ended = str(record["timestamp"])
        if text := user_text(record):
            requests.append(text)
        for use in tool_uses(record):
            _note_tool_use(summary, use, vault)
    if requests:
        summary.first_request = _one_line(requests[0], MAX_REQUEST_CHARS)
        summary.last_request = _one_line(requests[-1], MAX_REQUEST_CHARS) if len(requests) > 1 else ""
    summary.project = project or _project_of(summary.cwd)
    return summary


def _note_tool_use(summary: SessionSummary, use: dict[str, Any], vault: Path | None) -> None:
    name, args = use.get("name"), use.get("input") or {}
    if not isinstance(name, str):
        return
    if name in EDIT_TOOLS and isinstance(args.get(EDIT_TOOLS[name]), str):
        raw = args[EDIT_TOOLS[name]]
        note = _vault_note(raw, vault)
        bucket, item = (summary.notes_edited, note) if note else (summary.files_edited, _display_path(raw, summary.cwd))
        if item not in bucket:
            bucket.append(item)
    elif name in SHELL_TOOLS and isinstance(args.get(SHELL_TOOLS[name]), str):
        command = _one_line(args[SHELL_TOOLS[name]].strip().split("\n")[0], MAX_COMMAND_CHARS)
        if command and command not in summary.commands:
            summary.commands.append(command)


def _vault_note(raw: str, vault: Path | None) -> str:
    """`folder/note` for a markdown file inside the vault, else ""."""
    if vault is None or not raw.endswith(".md"):
        return ""
    try:
        rel = Path(raw).resolve().relative_to(vault.resolve())
    except (ValueError, OSError):
        return ""
    return rel.with_suffix("").as_posix()


def _project_of(cwd: str) -> str:
    """The repository the session ran in (walk up to `.git`, as git does), else the folder name."""
    if not cwd:
        return ""
    from vault_kg.core.config import find_repo_upwards

    folder = Path(cwd)
    try:
        repo = find_repo_upwards(folder) if folder.exists() else None
    except OSError:
        repo = None
    return (repo or folder).name


def _listed(items: list[str], fmt: str) -> str:
    shown = ", ".join(fmt.format(i) for i in items[:MAX_LISTED])
    extra = len(items) - MAX_LISTED
    return shown + (f" (+{extra} more)" if extra > 0 else "")


def entry_text(summary: SessionSummary) -> str:
    """The journal entry body: a short list a person (and BM25) can read."""
    lines = []
    if summary.title:
        lines.append(f"Session: {summary.title}")
    if summary.first_request:
        lines.append(f"- Asked: {summary.first_request}")
    if summary.last_request:
        lines.append(f"- Last request: {summary.last_request}")
    if summary.files_edited:
        lines.append(f"- Files edited: {_listed(summary.files_edited, '`{}`')}")
    if summary.notes_edited:
        lines.append(f"- Notes edited: {_listed(summary.notes_edited, '[[{}]]')}")
    if summary.commands:
        lines.append(f"- Commands: {_listed(summary.commands, '`{}`')}")
    if summary.branch:
        lines.append(f"- Branch: `{summary.branch}`")
    label = summary.session_id[:8] or summary.transcript.stem[:8]
    lines.append(f"- Transcript: [session {label}]({summary.transcript.resolve().as_uri()})")
    return "\n".join(lines)


def journal_session(
    vault: Path,
    transcript: Path,
    *,
    project: str | None = None,
    now: datetime | None = None,
    tz: tzinfo | None = None,
) -> Entry:
    """Append the session's journal entry (secrets are redacted by append_entry)."""
    summary = summarize_transcript(transcript, vault=vault, project=project)
    return append_entry(vault, entry_text(summary), project=summary.project or None, now=now, tz=tz)
