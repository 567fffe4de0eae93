"""PreCompact: the context is about to be summarized, so push-recall's dedup window starts over.

Claude Code's PreCompact cannot add context; the brief comes back through SessionStart `compact`.
This hook records, and never speaks.
"""

from __future__ import annotations

from typing import Any

from .common import hook_env


def handle(payload: dict[str, Any]) -> None:
    env = hook_env(payload)
    if env.vault is None or not payload.get("session_id"):
        return None
    from vault_kg import api

    api.reset_push_recall(env.vault, str(payload["session_id"]))
    return None
