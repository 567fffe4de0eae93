"""`kg remember`, `kg note show|list|append|edit`, `kg recent`, `kg brief`: notes the way a memory
server's user handles them.

Thin shells over `vault_kg.notes.remember`, `vault_kg.notes.notebook` and `vault_kg.memory.session_brief`, the verbs the MCP
tools of the same names call. Every write goes through the vault's one guarded write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vault_kg.cli.commands.options import JsonOpt, VaultOpt, emit, vault_root


def remember_command(
    path: str = typer.Argument(..., help="Vault-relative path of the new note, e.g. `notes/Retry budget.md`."),
    summary: str = typer.Option(..., "--summary", help="One line saying what the note is about."),
    tag: list[str] = typer.Option(..., "--tag", "-t", help="A namespaced tag; repeat; one must be `scope/…`."),
    body: str = typer.Option("", "--body", help="The markdown body ([[wikilinks]] connect it); `-` reads it from stdin."),
    anchor: Optional[str] = typer.Option(None, "--anchor", help="PATH::SYMBOL, PATH#Heading or [[Other Note]]: the note goes stale when that changes."),
    project: Optional[str] = typer.Option(None, "--project", help="The registered project an anchor's PATH is in (default: found from PATH)."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Create a new note in the frontmatter contract, optionally anchored, and add it to the graph.

    Refuses an existing file, a path outside the vault, text that looks like a secret and a new
    `scope/global` tag (that is `kg promote`'s job); nothing is written then.

    \b
    Example: kg remember "notes/Retry budget.md" --summary "Webhook retries back off exponentially" --tag topic/payments --tag scope/payments --body "See [[Payments API]]."
    Example: kg remember notes/Fetch.md --summary "fetch retries three times" --tag scope/payments --anchor src/retry.py::Client.fetch --project payments
    """
    from vault_kg import api

    emit(api.remember(path, summary, tag, _text_arg(body), vault, anchor, project), as_json, api.renderer("remember"))


def brief_command(
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print the session brief the SessionStart hook injects (conventions, stale notes, central nodes, journal).

    \b
    Example: kg brief
    """
    from vault_kg import api

    if vault is not None:
        vault = vault_root(vault)  # an explicit vault that does not exist is an error, not "no vault"
    emit(api.brief(vault=vault), as_json, api.renderer("brief"))


def _text_arg(text: str) -> str:
    import sys

    return sys.stdin.read() if text == "-" else text


def note_show(
    name: str = typer.Argument(..., help="The note: vault path, file name, title or alias."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print a note's full text (with --json: its frontmatter as data, body, size, modified time).

    \b
    Example: kg note show "Payments API"
    """
    from vault_kg import api

    emit(api.read_note(name, vault), as_json, api.renderer("read_note"))


def note_list(
    folder: Optional[str] = typer.Option(None, "--folder", help="Only notes under this vault folder, e.g. `clients`."),
    tag: Optional[str] = typer.Option(None, "--tag", "-t", help="Only notes with this frontmatter tag (`client` also matches `client/acme`)."),
    days: Optional[float] = typer.Option(None, "--days", min=0.0001, help="Only notes changed in the last DAYS days."),
    sort: str = typer.Option("recent", "--sort", help="recent (newest first) or path."),
    limit: int = typer.Option(50, "-n", "--limit", min=1, max=10000, help="At most this many notes (1-10000)."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """List notes by folder, tag or recent change, with their summaries; newest first.

    \b
    Example: kg note list --folder services --sort path
    Example: kg note list --tag client --days 7 -n 20
    """
    from vault_kg import api

    emit(api.list_notes(vault, folder, tag, days, limit, sort), as_json, api.renderer("list_notes"))


def note_append(
    name: str = typer.Argument(..., help="The note: vault path, file name, title or alias."),
    text: str = typer.Argument(..., help="Markdown to add at the end; `-` reads it from stdin."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Append text to an existing note (guarded: contract, secrets, scope/global) and update the graph.

    \b
    Example: kg note append "Payments API" "Retries now back off exponentially (see [[Webhook Relay]])."
    """
    from vault_kg import api

    emit(api.append_note(name, _text_arg(text), vault), as_json, api.renderer("append_note"))


def note_edit(
    name: str = typer.Argument(..., help="The note: vault path, file name, title or alias."),
    old: str = typer.Option(..., "--old", help="The exact text to replace (it must occur once, unless --all)."),
    new: str = typer.Option(..., "--new", help="The text to put in its place."),
    replace_all: bool = typer.Option(False, "--all", help="Replace every occurrence, not just a unique one."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Replace an exact string in a note (refuses missing or ambiguous text) and update the graph.

    \b
    Example: kg note edit "Payments API" --old "FastAPI + Postgres" --new "FastAPI + PostgreSQL 16"
    """
    from vault_kg import api

    emit(api.edit_note(name, old, new, vault, replace_all), as_json, api.renderer("edit_note"))


def recent_command(
    days: float = typer.Option(1.0, "--days", min=0.01, max=3660, help="The window, in days (default: the last day)."),
    limit: int = typer.Option(50, "-n", "--limit", min=1, max=10000, help="At most this many notes and entries."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Recent activity: notes changed and journal entries written in the last DAYS days.

    \b
    Example: kg recent --days 7
    """
    from vault_kg import api

    emit(api.recent(vault, days, limit), as_json, api.renderer("recent"))


def register(app: typer.Typer) -> None:
    """Add `kg remember`, `kg note …`, `kg recent` and `kg brief` to the main app."""
    app.command("remember")(remember_command)
    note_app = typer.Typer(help="Read, list, append to and edit vault notes (every write guarded).\n\nExample: kg note list --tag client", no_args_is_help=True)
    for name, command in (("show", note_show), ("list", note_list), ("append", note_append), ("edit", note_edit)):
        note_app.command(name)(command)
    app.add_typer(note_app, name="note")
    app.command("recent")(recent_command)
    app.command("brief")(brief_command)
