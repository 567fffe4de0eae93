"""Where a session, a hook or a server call stands: the config, its folder, the vault, the project.

One resolution for every face: the vault through `config.find_vault` (the CLI's own rules, from a
start folder, never raising) and the project through `scopes.project_at`. Only the standard
library and tomllib are imported, so a hook that has nothing to do stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vault_kg.core.config import Config, find_repo_upwards, find_vault, load_config
from vault_kg.core.scopes import project_at

__all__ = ["Place", "locate"]


@dataclass
class Place:
    """The configuration, the folder a request comes from and the vault (None: no vault found)."""

    cfg: Config
    cwd: Path
    vault: Path | None

    def project_of(self, path: Path) -> tuple[str, Path] | None:
        """The registered project whose folder holds `path`."""
        return project_at(self.cfg, path)

    def current_project(self) -> tuple[str | None, Path | None]:
        """The project the session runs in: a registered scope, else the enclosing repository."""
        found = self.project_of(self.cwd)
        if found is not None:
            return found
        try:
            repo = find_repo_upwards(self.cwd)
        except OSError:
            repo = None
        return None, repo


def locate(start: Path | None = None, cfg: Config | None = None, vault: Path | None = None) -> Place:
    """Resolve the place from `start` (default: the current directory); never raises for a missing vault."""
    cfg = cfg or load_config()
    cwd = start if start is not None else Path.cwd()
    return Place(cfg, cwd, find_vault(vault, cfg, cwd))
