"""SessionStart: inject the session brief (`vault_kg.memory.session_brief`), fenced as reference data.

The hook adds what only a session start does: it starts the background reconcile when a
scope's last full update is too old, and says so in one line. A brief section that fails is
logged to hooks.log and left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_kg import api

from .common import HookEnv, hook_env, log_failure

__all__ = ["build_brief", "handle", "reconcile_notice"]


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    if payload.get("source") == "compact":  # a new context window: push-recall may repeat itself
        from .pre_compact import handle as reset_push_recall

        reset_push_recall(payload)
    env = hook_env(payload)
    text = build_brief(env)
    if not text:
        return None
    try:
        api.record_brief(env)
    except Exception as exc:  # the recall log is bookkeeping: never cost the brief
        log_failure("session-start", f"record_brief: {type(exc).__name__}: {exc}", env.vault)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def build_brief(env: HookEnv) -> str:
    """The library's brief for this session, with the reconcile notice; failed sections are logged."""
    result = api.session_brief(env, lambda project, root, vault_built, project_built: reconcile_notice(env, project, root, vault_built, project_built))
    for error in result.errors:
        log_failure("session-start", error, env.vault)
    return result.text


def reconcile_notice(env: HookEnv, project: str | None, root: Path | None, vault_built: bool, project_built: bool) -> list[str]:
    """Start the background update of the built scopes; one line when one was long overdue."""
    targets = []
    if vault_built and env.vault is not None:
        targets.append({"kind": "vault", "name": "vault", "root": str(env.vault)})
    if project_built and project and root is not None:
        targets.append({"kind": "code", "name": project, "root": str(root)})
    overdue = api.refresh_in_background(targets, env.cfg.reconcile_days)
    if not overdue:
        return []
    ages = [f"{api.one_line(t['name'], 80)} ({'never reconciled' if age is None else f'last full update {age:.0f} days ago'})" for t, age in overdue]
    return [f"kg: refreshing {', '.join(ages)} in the background; answers may lag until it finishes."]
