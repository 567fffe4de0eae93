"""The doctor's lines about what kg reads: the config file, the vault, and each scope's graph.

A scope is current when an update would find nothing to do: the read-only probe `kg update`'s
fast path asks (`vault_kg.update.noop_probe`), which compares the cache's file stats with the
files on disk and the artifacts with what the cache wrote.
"""

from __future__ import annotations

from pathlib import Path

from vault_kg.core.config import Config, config_path, load_config
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope, project_scope, vault_scope
from vault_kg.health.report import Report
from vault_kg.storage.layout import is_built

__all__ = ["check_config", "check_scopes"]


def check_config(report: Report, vault: Path | None) -> tuple[Config | None, Scope | None]:
    """The config file and the vault; the config and the vault's scope when they can be read."""
    path = config_path()
    try:
        cfg = load_config()
    except KgError as exc:
        report.add("config", "fail", str(exc), f"fix {path}, or move it away and run `kg init --vault PATH`")
        return None, None
    report.add("config", "ok" if path.is_file() else "off", f"{path}" + ("" if path.is_file() else " (none: defaults, KG_VAULT and the folder you are in)"))
    try:
        scope = vault_scope(vault, cfg=cfg)
    except KgError as exc:
        report.add("vault", "fail", str(exc), "kg init --vault PATH (or the plugin option `vault`, or KG_VAULT)")
        return cfg, None
    report.add("vault", "ok", str(scope.root))
    return cfg, scope


def _scope_line(report: Report, scope: Scope) -> None:
    from vault_kg.update.noop_probe import probe

    flag = "--vault" if scope.kind == "vault" else "--scope"
    target = str(scope.root) if scope.kind == "vault" else scope.name
    name = f"scope {scope.name}"
    if not is_built(scope.root):
        report.add(name, "fail", f"{scope.root}: not built yet", f"kg build {flag} '{target}'")
        return
    current = probe(scope)
    if current is None:
        report.add(name, "warn", f"{scope.root}: files changed since the last update (or an update is running)", f"kg update {flag} '{target}'")
        return
    report.add(name, "ok", f"{scope.root}: current ({current.nodes} nodes, {current.edges} edges, {current.sources} files)")


def check_scopes(report: Report, cfg: Config, vault: Scope | None) -> None:
    """Each scope: the vault and every registered project, built and current."""
    if vault is not None:
        _scope_line(report, vault)
    for name in sorted(cfg.projects):
        try:
            scope = project_scope(name, cfg)
        except KgError as exc:
            report.add(f"scope {name}", "fail", str(exc), f"kg project remove {name}, or fix its path in {cfg.path}")
            continue
        _scope_line(report, scope)
