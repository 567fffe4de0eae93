"""The plugin files wire exactly the hooks and the server that exist, in the shape Claude Code reads."""

from __future__ import annotations

import json
import shlex

from conftest import REPO
from hooks.dispatch import EVENTS


def test_hooks_json_wires_the_seven_events_to_kg_hook_through_the_launcher() -> None:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    hooks = data["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd"}
    commands = {}
    for event, groups in hooks.items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60
                argv = shlex.split(hook["command"])
                assert argv[:2] == ["${CLAUDE_PLUGIN_ROOT}/bin/kg-launch", "hook"] and argv[2] in EVENTS
                commands[event] = argv[2]
    assert commands == {
        "SessionStart": "session-start",
        "UserPromptSubmit": "user-prompt-submit",
        "PreToolUse": "pre-tool-use",
        "PostToolUse": "post-tool-use",
        "Stop": "stop",
        "PreCompact": "pre-compact",
        "SessionEnd": "session-end",
    }
    assert set(hooks["PostToolUse"][0]["matcher"].split("|")) == {"Write", "Edit", "MultiEdit", "NotebookEdit"}
    assert set(hooks["PreToolUse"][0]["matcher"].split("|")) == {"Write", "Edit", "MultiEdit"}
    # Claude Code has no way for PreCompact to add context: the re-brief is SessionStart's `compact`;
    # PreCompact only resets push-recall's dedup window. The events without tools take no matcher.
    assert "compact" in hooks["SessionStart"][0]["matcher"].split("|")
    assert all("matcher" not in hooks[event][0] for event in ("UserPromptSubmit", "Stop", "PreCompact"))


def test_plugin_json_registers_the_mcp_server_and_lets_hooks_json_load_by_convention() -> None:
    data = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert data["name"] == "vault-kg" and data["version"]
    server = data["mcpServers"]["vault-kg"]
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/kg-launch" and server["args"] == ["mcp"]
    assert server["env"] == {f"CLAUDE_PLUGIN_OPTION_{key.upper()}": f"${{user_config.{key}}}" for key in data["userConfig"]}
    assert "hooks" not in data, "hooks/hooks.json loads by convention; naming it again makes Claude Code report a duplicate"
