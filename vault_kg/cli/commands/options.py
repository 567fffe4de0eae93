"""What every `kg` command shares: the common options, declared once, and the one way to print.

A command parses its options, calls one library function and hands the result to `emit` with
that verb's text renderer; `--json` prints the same data as JSON. Errors go through `cli.main`
(`kg: error: ...`, or `{"error": ...}` with `--json`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer

VaultOpt = typer.Option(None, "--vault", help="The vault folder (default: KG_VAULT, the enclosing vault, or the config file).")
OutOpt = typer.Option(None, "--out", help="Artifact folder (default: <scope root>/kg-out).")
ScopeOpt = typer.Option(None, "--scope", "-s", help="Scope name: `vault` or a registered project; repeat for several.")
JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")
StaleOpt = typer.Option(False, "--include-stale", help="Also show stale and superseded nodes, flagged.")
AsOfOpt = typer.Option(None, "--as-of", help="Answer with what was valid on this date (YYYY-MM-DD).")


def emit(data: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    """Print `data`: as indented JSON with `--json`, else through the verb's text renderer."""
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(text(data) + "\n")


def vault_scope_of(vault: Optional[Path], out: Optional[Path] = None) -> Any:
    """The vault scope a command works on (`--vault`, KG_VAULT, the enclosing vault, the config)."""
    from vault_kg.core.scopes import vault_scope

    return vault_scope(vault, out)


def vault_root(vault: Optional[Path]) -> Path:
    """The vault folder a command works on, resolved by the library's one rule."""
    from vault_kg.core.config import resolve_vault

    return resolve_vault(vault)
