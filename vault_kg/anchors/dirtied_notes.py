"""What an edit to code did to the vault: the anchored notes it just made dirty.

One function for the CLI (`kg update FILE` in a project) and the PostToolUse hook, so both say
the same thing in the same words.
"""

from __future__ import annotations

from pathlib import Path

from vault_kg.core.config import Config
from vault_kg.core.errors import KgError

__all__ = ["notes_dirtied"]


def notes_dirtied(project: str, relpaths: list[str], vault: Path | None = None, cfg: Config | None = None) -> list[str]:
    """One line per anchored vault note that editing `relpaths` (files of `project`) just made dirty.

    Never raises for a missing vault or graph: an edit must not fail because the vault is absent.
    """
    if not relpaths:
        return []
    from vault_kg.anchors.check import dirty_notes_for_paths
    from vault_kg.core.scopes import vault_scope

    try:
        return list(dirty_notes_for_paths(vault_scope(vault, cfg=cfg), project, relpaths, cfg=cfg))
    except KgError:
        return []
