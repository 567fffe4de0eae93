"""`kg watch`: keep the vault's graph current in the foreground (the library is `vault_kg.watch.watcher`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer


def watch_command(
    vault: Optional[Path] = typer.Option(None, "--vault", help="The vault (default: KG_VAULT, the enclosing vault, or the config file)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.1, help="Stop after this many seconds (default: run until Ctrl-C)."),
    once: bool = typer.Option(False, "--once", help="Stop after the first update that changed the graph (the catch-up at start counts)."),
    debounce: float = typer.Option(0.5, "--debounce", min=0.05, max=60.0, help="Seconds a burst of writes must stay quiet before one update."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per update on stdout (JSON Lines)."),
) -> None:
    """Watch the vault and update its graph a moment after notes change (created, edited, renamed, deleted).

    Catches up first with what changed while nothing watched, then runs one incremental update per
    burst of writes, through the same route as `kg update PATH`. Ignores kg-out/, dot-folders
    (.obsidian, .git) and files that are not notes. Ctrl-C stops it cleanly. `kg mcp` already
    watches its vault while it runs; use this for everything else (Obsidian, git pull, scripts).

    \b
    Example: kg watch --timeout 2  # watch for two seconds, then stop
    Example: kg watch --once --timeout 5 --json  # stop at the first update that changes the graph
    """
    from vault_kg.core.config import load_config
    from vault_kg.core.scopes import vault_scope
    from vault_kg.watch.watcher import Report, format_report, watch_vault

    cfg = load_config()
    scope = vault_scope(vault, cfg=cfg)

    def show(report: Report) -> None:
        line = json.dumps(report.as_dict(), ensure_ascii=False) if as_json else format_report(report)
        (sys.stdout if as_json or not report.error else sys.stderr).write(line + "\n")
        if not as_json:
            for notice in report.notices:
                sys.stderr.write(f"kg: {notice}\n")
        (sys.stdout if as_json or not report.error else sys.stderr).flush()

    if not as_json:
        sys.stderr.write(f"kg: watching {scope.root} (Ctrl-C to stop)\n")
    updates = watch_vault(scope, show, cfg, timeout=timeout, once=once, debounce=debounce)
    if not as_json:
        sys.stderr.write(f"kg: stopped watching after {updates} update(s)\n")


def register(app: typer.Typer) -> None:
    app.command("watch")(watch_command)
