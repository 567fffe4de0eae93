"""`kg doctor`: whether kg works here, a verdict per line and the fix for each line that fails."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vault_kg.cli.commands.options import JsonOpt, VaultOpt


def doctor_command(
    vault: Optional[Path] = VaultOpt,
    quick: bool = typer.Option(False, "--quick", help="Skip the timed model call and the embedding."),
    as_json: bool = JsonOpt,
) -> None:
    """One report: kg and where the plugin's launcher finds it, the config and the vault, each
    scope built and current, the model (reachable, present, notes pending, one short call timed),
    the embedder, the hooks and their last failures, the watcher, the sync remote. Exits 1 when
    something is broken; each failing line names the fix.

    \b
    Example: kg doctor
    Example: kg doctor --quick --json
    """
    from vault_kg.cli.commands.options import emit
    from vault_kg import api

    report = api.doctor(vault, measure=not quick)
    emit(report, as_json, api.renderer("doctor"))
    if report["broken"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)
