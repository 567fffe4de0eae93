"""`kg ledger`: the recall ledger, a thin shell over `vault_kg.memory.ledger`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def ledger_command(
    vault: Optional[Path] = typer.Option(None, "--vault", help="The vault (default: KG_VAULT, the enclosing vault, or the config)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable JSON on stdout."),
) -> None:
    """Sort the vault's notes into working, redundant, dormant and prunable, from the recall log.

    Surfaced: a query, explain, the brief or push-recall showed the note (this machine's log).
    The code already says it: anchored to code that holds 80% of the note's words (docs/memory.md).

    \b
    Example: kg ledger
    Example: kg ledger --json
    """
    from vault_kg.cli.commands.options import emit
    from vault_kg import api

    emit(api.ledger(vault), as_json, api.renderer("ledger"))


def register(app: typer.Typer) -> None:
    app.command("ledger")(ledger_command)
