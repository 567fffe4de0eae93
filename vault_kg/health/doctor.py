"""`kg doctor`: every check, in the order a user would fix things, gathered into one report.

A check that raises does not end the report: its line says it could not tell, with the error,
so one broken part never hides the state of the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from vault_kg.health.install import check_install
from vault_kg.health.models import check_embedder, check_model
from vault_kg.health.report import Report, format_doctor
from vault_kg.health.scopes import check_config, check_scopes
from vault_kg.health.upkeep import check_hooks, check_sync, check_watcher

__all__ = ["doctor", "format_doctor"]


def _guarded(report: Report, name: str, check: Callable[[], Any]) -> None:
    try:
        check()
    except Exception as exc:  # a doctor reports, it does not crash
        report.add(name, "fail", f"could not check ({type(exc).__name__}: {str(exc)[:200]})", "run `kg doctor` again; if it repeats, report it with this line")


def doctor(vault: Path | None = None, measure: bool = True) -> dict[str, Any]:
    """The report as plain data (`broken`, `lines`: check, verdict, detail, fix); `measure`
    times one short model call and one embedding."""
    report = Report()
    _guarded(report, "install", lambda: check_install(report))
    cfg, scope = check_config(report, vault)
    if cfg is not None:
        _guarded(report, "scopes", lambda: check_scopes(report, cfg, scope))
        _guarded(report, "model", lambda: check_model(report, cfg, scope, measure))
    if measure:
        _guarded(report, "embedder", lambda: check_embedder(report))
    _guarded(report, "hooks", lambda: check_hooks(report, scope))
    _guarded(report, "watcher", lambda: check_watcher(report, scope))
    _guarded(report, "sync", lambda: check_sync(report, scope))
    return report.as_dict()
