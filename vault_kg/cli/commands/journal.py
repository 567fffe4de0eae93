"""`kg journal add` and `kg recall`: the episodic journal from the command line.

A thin shell over episodic.journal and the front door's recall. Nothing heavy is imported at
module level: `kg journal add` must stay fast, and only a recall that searches loads an embedder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from vault_kg.cli.commands.options import JsonOpt, VaultOpt, emit


def _vault_and_tz(vault: Optional[Path]) -> tuple[Path, Any]:
    from episodic.dates import resolve_timezone
    from vault_kg.core.config import load_config, resolve_vault

    cfg = load_config()
    return resolve_vault(vault, cfg), resolve_timezone(cfg.timezone)


def journal_add(
    text: str = typer.Argument(..., help="What happened (secrets are redacted before it is written)."),
    project: Optional[str] = typer.Option(None, "--project", "-p", help="The project the entry is about."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Append a timestamped entry to today's journal note (journal/YYYY-MM-DD.md).

    \b
    Example: kg journal add "Fixed the webhook retries (exponential backoff)" --project payments
    """
    from vault_kg import api

    emit(api.journal_add(text, vault, project), as_json, api.renderer("journal_add"))


def recall_command(
    question: str = typer.Argument("", help="A question; dates in it (yesterday, last week, 2025-03-14) narrow the days."),
    today: bool = typer.Option(False, "--today", help="Print today's entries (no search)."),
    yesterday: bool = typer.Option(False, "--yesterday", help="Print yesterday's entries (no search)."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=200, help="At most this many entries."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Recall journal entries: what was done when, searched within the days the question names.

    \b
    Example: kg recall "when did I fix the webhook retries" --limit 5
    Example: kg recall "what was I doing yesterday"
    Example: kg recall --yesterday --json
    """
    from episodic import recall as rc
    from vault_kg import api
    from vault_kg.core.errors import KgError

    root, tz = _vault_and_tz(vault)
    if today or yesterday:
        days = ([*rc.day_range(tz, None, offset=1)] if yesterday else []) + ([*rc.day_range(tz, None, offset=0)] if today else [])
        result = rc.recall_days(root, days, question="today" if today and not yesterday else "yesterday")
    elif not question.strip():
        raise KgError('nothing to recall: give a question (kg recall "what did I do yesterday") or --today')
    else:
        result = api.recall_result(question, root, limit)
    if result.sync is not None and result.sync.rebuilt:
        print(f"journal index rebuilt from the markdown: {result.sync.rebuilt}", file=sys.stderr)
    emit(result.to_dict(), as_json, lambda _: rc.format_result(result))


def register(app: typer.Typer) -> None:
    """Add `kg journal add` and `kg recall` to the main app."""
    journal_app = typer.Typer(help="The daily journal in the vault (journal/YYYY-MM-DD.md).", no_args_is_help=True)
    journal_app.command("add")(journal_add)
    app.add_typer(journal_app, name="journal")
    app.command("recall")(recall_command)
