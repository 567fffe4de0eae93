"""`kg anchor`, `kg check`, `kg reanchor`, `kg accept`, `kg supersede`, `kg retire`: thin shells over
`vault_kg.anchors.check` (deterministic staleness) and `vault_kg.notes.anchor_repair` (frontmatter repairs)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vault_kg.cli.commands.options import JsonOpt, VaultOpt, emit

OnOption = typer.Option(None, "--on", help="Effective date YYYY-MM-DD (default: today).")


def anchor_command(
    note: str = typer.Argument(..., help="The note: vault path, file name or alias."),
    to: str = typer.Option(..., "--to", help="PATH::SYMBOL (code), PATH#Heading or PATH#<first cell> (markdown), or [[Other Note]]."),
    project: Optional[str] = typer.Option(None, "--project", help="Registered project PATH is in (default: found from PATH)."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Anchor a note to a code symbol, a markdown span or another note (writes `anchors:`).

    \b
    Example: kg anchor notes/Retries.md --to src/retry.py::Client.fetch --project payments
    """
    from vault_kg import api

    emit(api.anchor(note, to, vault, project), as_json, api.renderer("anchor"))


def check_command(
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on any dirty anchor or anchor issue (for CI)."),
    scope: Optional[list[str]] = typer.Option(None, "--scope", "-s", help="Only anchors into these projects (`vault` = all); repeatable."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Check the notes that were current on this date (YYYY-MM-DD)."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Recompute every anchor against the files as they are now; list dirty notes and issues.

    \b
    Example: kg check --strict  # in CI: fails when a note describes code that changed
    """
    from vault_kg import api

    projects = [s for s in scope or [] if s != "vault"] or None
    report = api.check(vault, projects, strict, as_of)
    emit(report, as_json, api.renderer("check"))
    if not report["ok"]:
        raise typer.Exit(1)


def reanchor_command(
    note: str = typer.Argument(..., help="The note whose anchors moved."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Follow symbols that moved: same locator, else exactly one same-name, same-hash symbol.

    \b
    Example: kg reanchor notes/Retries.md
    """
    from vault_kg import api

    emit(api.reanchor(note, vault), as_json, api.renderer("reanchor"))


def accept_command(
    note: str = typer.Argument(..., help="The note that is still right after the code changed."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The note still holds after the edit: take the symbols' current hashes (body untouched).

    \b
    Example: kg accept notes/Retries.md
    """
    from vault_kg import api

    emit(api.accept(note, vault), as_json, api.renderer("accept"))


def supersede_command(
    old: str = typer.Argument(..., help="The note that no longer holds."),
    new: str = typer.Argument(..., help="The note that replaces it."),
    on: Optional[str] = OnOption,
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """OLD is superseded by NEW: both kept, OLD's window closes, NEW's opens (history appended).

    \b
    Example: kg supersede "notes/Retry v1.md" "notes/Retry v2.md"
    """
    from vault_kg import api

    emit(api.supersede(old, new, vault, on), as_json, api.renderer("supersede"))


def retire_command(
    note: str = typer.Argument(..., help="The note that no longer holds, with no successor."),
    reason: str = typer.Option(..., "--reason", help="Why it no longer holds."),
    on: Optional[str] = OnOption,
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Close a note's validity window (kept for --as-of, hidden from queries).

    \b
    Example: kg retire notes/Legacy-queue.md --reason "queue removed in v3"
    """
    from vault_kg import api

    emit(api.retire(note, reason, vault, on), as_json, api.renderer("retire"))


def register(app: typer.Typer) -> None:
    app.command("anchor")(anchor_command)
    app.command("check")(check_command)
    app.command("reanchor")(reanchor_command)
    app.command("accept")(accept_command)
    app.command("supersede")(supersede_command)
    app.command("retire")(retire_command)
