"""`kg anchor`, `kg check`, `kg reanchor`, `kg accept`, `kg supersede`, `kg retire`: thin shells over
`vault_kg.anchor_check` (deterministic staleness) and `vault_kg.anchor_repair` (frontmatter repairs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer

VaultOption = typer.Option(None, "--vault", help="The vault (default: KG_VAULT, the enclosing vault, or the config).")
JsonOption = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")
OnOption = typer.Option(None, "--on", help="Effective date YYYY-MM-DD (default: today).")


def _emit(data: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    sys.stdout.write((json.dumps(data, indent=2, ensure_ascii=False, default=str) if as_json else text(data)) + "\n")


def _vault(vault: Optional[Path]):
    from vault_kg.scopes import vault_scope

    return vault_scope(vault)


def anchor_command(
    note: str = typer.Argument(..., help="The note: vault path, file name or alias."),
    to: str = typer.Option(..., "--to", help="PATH::SYMBOL (code), PATH#Heading or PATH#<first cell> (markdown), or [[Other Note]]."),
    project: Optional[str] = typer.Option(None, "--project", help="Registered project PATH is in (default: found from PATH)."),
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """Anchor a note to a code symbol, a markdown span or another note (writes `anchors:`).

    \b
    Example: kg anchor notes/Retries.md --to src/retry.py::Client.fetch --project payments
    """
    from vault_kg.anchor_repair import add_anchor

    result = add_anchor(_vault(vault), note, to, project)

    def text(r: dict[str, Any]) -> str:
        a = r["anchor"]
        target = a.get("note") or f"{a['project']}:{a['locator']}"
        return f"{r['note']}: {'anchored to' if r['changed'] else 'already anchored to'} {target}"

    _emit(result, as_json, text)


def check_command(
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on any dirty anchor or anchor issue (for CI)."),
    scope: Optional[list[str]] = typer.Option(None, "--scope", "-s", help="Only anchors into these projects (`vault` = all); repeatable."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Check the notes that were current on this date (YYYY-MM-DD)."),
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """Recompute every anchor against the files as they are now; list dirty notes and issues.

    \b
    Example: kg check --strict  # in CI: fails when a note describes code that changed
    """
    from vault_kg.anchor_check import check, format_check

    projects = [s for s in scope or [] if s != "vault"] or None
    report = check(_vault(vault), projects, strict, as_of)
    _emit(report, as_json, format_check)
    if not report["ok"]:
        raise typer.Exit(1)


def reanchor_command(
    note: str = typer.Argument(..., help="The note whose anchors moved."),
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """Follow symbols that moved: same locator, else exactly one same-name, same-hash symbol.

    \b
    Example: kg reanchor notes/Retries.md
    """
    from vault_kg.anchor_repair import reanchor

    result = reanchor(_vault(vault), note)
    _emit(result, as_json, lambda r: "\n".join([f"{r['note']}: {m['from']} → {m['locator']}" for m in r["moved"]]) or f"{r['note']}: every anchor holds; nothing to do")


def accept_command(
    note: str = typer.Argument(..., help="The note that is still right after the code changed."),
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """The note still holds after the edit: take the symbols' current hashes (body untouched).

    \b
    Example: kg accept notes/Retries.md
    """
    from vault_kg.anchor_repair import accept

    result = accept(_vault(vault), note)
    _emit(result, as_json, lambda r: "\n".join(f"{r['note']}: accepted {a['locator']}" for a in r["accepted"]) or f"{r['note']}: no anchor changed; nothing to accept")


def supersede_command(
    old: str = typer.Argument(..., help="The note that no longer holds."),
    new: str = typer.Argument(..., help="The note that replaces it."),
    on: Optional[str] = OnOption,
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """OLD is superseded by NEW: both kept, OLD's window closes, NEW's opens (history appended).

    \b
    Example: kg supersede "notes/Retry v1.md" "notes/Retry v2.md"
    """
    from vault_kg.anchor_repair import supersede

    result = supersede(_vault(vault), old, new, on)
    _emit(result, as_json, lambda r: f"{r['old']} superseded by {r['new']} on {r['on']}" + ("" if r["changed"] else " (already; nothing written)"))


def retire_command(
    note: str = typer.Argument(..., help="The note that no longer holds, with no successor."),
    reason: str = typer.Option(..., "--reason", help="Why it no longer holds."),
    on: Optional[str] = OnOption,
    vault: Optional[Path] = VaultOption,
    as_json: bool = JsonOption,
) -> None:
    """Close a note's validity window (kept for --as-of, hidden from queries).

    \b
    Example: kg retire notes/Legacy-queue.md --reason "queue removed in v3"
    """
    from vault_kg.anchor_repair import retire

    result = retire(_vault(vault), note, reason, on)
    _emit(result, as_json, lambda r: f"{r['note']} retired on {r['on']}: {r['reason']}")


def register(app: typer.Typer) -> None:
    app.command("anchor")(anchor_command)
    app.command("check")(check_command)
    app.command("reanchor")(reanchor_command)
    app.command("accept")(accept_command)
    app.command("supersede")(supersede_command)
    app.command("retire")(retire_command)
