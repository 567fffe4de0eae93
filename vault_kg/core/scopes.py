"""Scopes: the vault, and one scope per registered project. Never merged; queries name them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vault_kg.core.config import OUT_DIRNAME, Config, load_config, resolve_vault
from vault_kg.core.errors import KgError

__all__ = ["Scope", "VAULT", "detect_project", "project_at", "project_scope", "resolve_scopes", "vault_scope"]

VAULT = "vault"


@dataclass(frozen=True)
class Scope:
    name: str
    kind: str
    root: Path
    out: Path


def vault_scope(vault: Path | None = None, out: Path | None = None, cfg: Config | None = None) -> Scope:
    root = resolve_vault(vault, cfg)
    return Scope(VAULT, "vault", root, (out or root / OUT_DIRNAME).resolve())


def project_scope(name: str, cfg: Config | None = None, out: Path | None = None) -> Scope:
    cfg = cfg or load_config()
    if name not in cfg.projects:
        known = ", ".join(sorted(cfg.projects)) or "none"
        raise KgError(f"unknown scope '{name}' (registered projects: {known}); add it with `kg project add PATH --name {name}`")
    root = cfg.projects[name].resolve()
    if not root.is_dir():
        raise KgError(f"{root}: project '{name}' folder does not exist; fix it in {cfg.path}")
    return Scope(name, "code", root, (out or root / OUT_DIRNAME).resolve())


def project_at(cfg: Config, path: Path) -> tuple[str, Path] | None:
    """The registered project whose folder holds `path` (real paths; the deepest when they nest).

    The one rule for "this path belongs to that project": the CLI's default scope, the hooks and
    the MCP server all ask it.
    """
    real = os.path.realpath(path)
    found: tuple[str, Path] | None = None
    for name, root in sorted(cfg.projects.items()):
        base = os.path.realpath(root)
        if (real == base or real.startswith(base.rstrip(os.sep) + os.sep)) and (found is None or len(base) > len(str(found[1]))):
            found = name, Path(base)
    return found


def detect_project(cfg: Config, start: Path | None = None) -> str | None:
    """The registered project enclosing `start` (default: the current directory), if any."""
    found = project_at(cfg, start or Path.cwd())
    return found[0] if found else None


def resolve_scopes(names: list[str] | None, vault: Path | None = None, out: Path | None = None, cfg: Config | None = None) -> list[Scope]:
    """Scopes named on the command line; by default the enclosing project, else the vault."""
    cfg = cfg or load_config()
    if not names:
        if vault is None:
            detected = detect_project(cfg)
            if detected:
                return [project_scope(detected, cfg, out)]
        return [vault_scope(vault, out, cfg)]
    names = list(dict.fromkeys(names))  # `--scope vault --scope vault`: each scope once, not every hit twice
    scopes = []
    for name in names:
        scopes.append(vault_scope(vault, out if len(names) == 1 else None, cfg) if name == VAULT else project_scope(name, cfg, out if len(names) == 1 else None))
    return scopes
