"""Stop: credit the notes anchored to files the turn edited, and mark push-recall notes it used.

Records only (the recall log, push-recall's session state); prints nothing, so the agent's turn
ends as it would without kg. See `vault_kg.memory.credit`.
"""

from __future__ import annotations

from typing import Any

from .common import hook_env


def handle(payload: dict[str, Any]) -> None:
    raw = payload.get("transcript_path")
    session = str(payload.get("session_id") or "")
    if not isinstance(raw, str) or not raw or payload.get("stop_hook_active"):
        return None
    env = hook_env(payload)
    if env.vault is None:
        return None
    from vault_kg import api

    api.credit_turn(env.vault, env.cfg, raw, session)
    return None
