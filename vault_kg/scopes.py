"""Scopes: the vault, and one scope per registered project. Never merged; queries name them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .core.config import OUT_DIRNAME, Config, find_repo_upwards, load_config, resolve_vault
from .core.errors import KgError

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


def detect_project(cfg: Config, start: Path | None = None) -> str | None:
    """The registered project enclosing `start` (walking up to `.git/`, like git), if any."""
    repo = find_repo_upwards((start or Path.cwd()).resolve())
    if repo is None:
        return None
    for name, path in sorted(cfg.projects.items()):
        if path.resolve() == repo:
            return name
    return None


def resolve_scopes(
    names: list[str] | None, vault: Path | None = None, out: Path | None = None, cfg: Config | None = None
) -> list[Scope]:
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
