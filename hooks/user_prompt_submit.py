"""UserPromptSubmit: push-recall, at most one vault note as dismissible background.

The decision is `vault_kg.memory.push_recall.recall_for_prompt`; this shell reads the payload and answers
in Claude Code's form (`hookSpecificOutput.additionalContext`), or prints nothing: silent unless a
note matches strongly.
"""

from __future__ import annotations

from typing import Any

from .common import hook_env


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    env = hook_env(payload)
    if env.vault is None or not env.cfg.push_recall:
        return None
    from vault_kg import api

    text = api.push_recall(env.vault, env.cfg, prompt, str(payload.get("session_id") or ""))
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
