"""PreToolUse (Write|Edit|MultiEdit): refuse the writes that bypass the vault's rules.

The decision is `vault_kg.memory.guardrails.decide`; this shell only reads the payload and answers in
Claude Code's PreToolUse form: a `deny` with the reason (which Claude sees, with the command to
use instead), or nothing at all, which lets the call through. A call on anything but a markdown
file returns before the configuration is read.
"""

from __future__ import annotations

from typing import Any

from vault_kg import api

from .common import hook_env, payload_cwd


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    tool_name, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if api.write_target(tool_name, tool_input, payload_cwd(payload)) is None:
        return None
    env = hook_env(payload)
    decision = api.decide_write(tool_name, tool_input, env.cwd, env.cfg, env.vault)
    if decision is None:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": decision.reason,
        }
    }
