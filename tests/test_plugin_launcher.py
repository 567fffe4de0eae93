"""The plugin's hooks and MCP server started exactly as Claude Code starts them, with no `kg` on PATH.

Each hook command is taken from hooks/hooks.json and the server command from plugin.json, with
`${CLAUDE_PLUGIN_ROOT}` and `${user_config.*}` substituted the way Claude Code does, then run by
/bin/sh in an environment whose PATH holds no `kg` and whose HOME holds no tool installs. The
launcher must find kg through the setting it is given, or say in one line how to install it
(`KG_PROVISION=off` here: the install the launcher starts itself is tests/test_plugin_provision.py's).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from conftest import REPO
from hook_world import World, fake_kg, make_world, session_payload
from vault_kg.storage.layout import Layout
from vault_kg import __version__

HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
SERVER = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["mcpServers"]["vault-kg"]


def hook_command(event: str) -> str:
    (group,) = HOOKS[event]
    (hook,) = group["hooks"]
    return hook["command"]


def path_without_kg() -> str:
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "kg").exists())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("launch"))
    for root in (world.vault, world.project):
        Layout(root / "kg-out").reconciled.write_text("fresh\n")
    # The config names the project but no vault: only the plugin option can point at it.
    world.config.write_text(f'[projects.payments]\npath = "{world.project}"\n', encoding="utf-8")
    return world


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """The plugin as Claude Code installs it: a copy of the checkout's plugin files."""
    root = tmp_path / "plugin cache" / "vault-kg"
    for part in ("bin", "hooks", ".claude-plugin"):
        shutil.copytree(REPO / part, root / part)
    return root


def claude_env(world: World, plugin: Path, home: Path, options: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """What a hook process gets: the user's environment minus kg, plus the plugin variables."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "PIPX_", "UV_", "XDG_", "CLAUDE_"))}
    env.update({"PATH": path_without_kg(), "HOME": str(home), "KG_CONFIG": str(world.config), "KG_OLLAMA": "off", "KG_PROVISION": "off", "CLAUDE_PLUGIN_ROOT": str(plugin)})
    env["CLAUDE_PLUGIN_DATA"] = str(home / ".claude" / "plugins" / "data" / "vault-kg-vault-kg")
    env.update({f"CLAUDE_PLUGIN_OPTION_{key.upper()}": value for key, value in (options or {}).items()})
    env.update(extra)
    return env


def run_hook(event: str, plugin: Path, env: dict[str, str], payload: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = hook_command(event).replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def brief(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_hooks_json_starts_every_hook_through_the_shipped_launcher() -> None:
    for event in HOOKS:
        assert re.fullmatch(r'"\$\{CLAUDE_PLUGIN_ROOT\}/bin/kg-launch" hook [a-z-]+', hook_command(event)), hook_command(event)
    assert SERVER["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/kg-launch" and SERVER["args"] == ["mcp"]
    assert os.access(REPO / "bin" / "kg-launch", os.X_OK)


def test_kg_is_found_through_kg_bin_and_the_vault_through_the_plugin_option(world: World, plugin: Path, tmp_path: Path) -> None:
    kg = fake_kg(tmp_path / "tools")
    payload = session_payload(world, "SessionStart", source="startup")
    without = run_hook("SessionStart", plugin, claude_env(world, plugin, tmp_path / "home", KG_BIN=str(kg)), payload, world.project)
    assert without.returncode == 0 and "Central notes in the vault" not in without.stdout
    env = claude_env(world, plugin, tmp_path / "home", {"vault": str(world.vault)}, KG_BIN=str(kg))
    assert "## Central notes in the vault" in brief(run_hook("SessionStart", plugin, env, payload, world.project))


@pytest.mark.parametrize("where", ["KG_BIN", "the former kg_bin option", "~/.local/bin", "uv tool dir", "plugin data"])
def test_kg_is_found_without_path(world: World, plugin: Path, tmp_path: Path, where: str) -> None:
    home = tmp_path / "home"
    extra: dict[str, str] = {}
    options = {"vault": str(world.vault)}
    if where == "KG_BIN":
        extra["KG_BIN"] = str(fake_kg(tmp_path / "elsewhere"))
    elif where == "the former kg_bin option":  # set before the option left plugin.json: Claude Code still passes it
        options["kg_bin"] = str(fake_kg(tmp_path / "elsewhere"))
    elif where == "~/.local/bin":
        fake_kg(home / ".local" / "bin")
    elif where == "uv tool dir":
        fake_kg(home / ".local" / "share" / "uv" / "tools" / "kg-vault" / "bin")
    else:  # what bin/kg_provision.py leaves in the plugin's data folder, installed from this plugin folder
        data = Path(claude_env(world, plugin, home)["CLAUDE_PLUGIN_DATA"])
        fake_kg(data / "envs" / "1" / "bin")
        (data / "current").symlink_to(data / "envs" / "1")
        (data / "source").write_text(f"{plugin}\n{__version__}\n")
    env = claude_env(world, plugin, home, options, **extra)
    assert "## Central notes in the vault" in brief(run_hook("SessionStart", plugin, env, session_payload(world, "SessionStart", source="startup"), world.project))


def test_an_edit_hook_runs_through_the_launcher_and_updates_the_note(world: World, plugin: Path, tmp_path: Path) -> None:
    note = world.vault / "notes" / "Launcher Check.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\nsummary: Written to prove the launcher starts the edit hook.\ntags: [scope/global, topic/plugin]\n---\nSee [[Payments API]].\n")
    env = claude_env(world, plugin, tmp_path / "home", {"vault": str(world.vault)}, KG_BIN=str(fake_kg(tmp_path / "tools")))
    payload = session_payload(world, "PostToolUse", tool_name="Write", tool_input={"file_path": str(note)}, tool_response={"filePath": str(note), "success": True})
    done = run_hook("PostToolUse", plugin, env, payload, world.project)
    assert done.returncode == 0, done.stderr
    graph = json.loads((world.vault / "kg-out" / "graph.json").read_text())
    assert any(n.get("source") == "notes/Launcher Check.md" for n in graph["nodes"])


@pytest.mark.parametrize("event", list(HOOKS))
def test_with_no_kg_anywhere_every_hook_exits_0_with_one_line_on_how_to_install(world: World, plugin: Path, tmp_path: Path, event: str) -> None:
    env = claude_env(world, plugin, tmp_path / "home", {"vault": str(world.vault)})
    done = run_hook(event, plugin, env, session_payload(world, event), world.project)
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert lines == [f"vault-kg: the kg command is not installed; run '{plugin}/bin/kg-launch' --provision (or: pipx install '{plugin}'), or set KG_BIN to its path"]
    if event == "SessionStart":  # shown to the user once per session, not to the model
        assert json.loads(done.stdout) == {"systemMessage": lines[0]}
    else:
        assert done.stdout == ""


def test_a_vault_option_that_does_not_exist_gives_one_line_and_fails_open(world: World, plugin: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no such vault"
    env = claude_env(world, plugin, tmp_path / "home", {"vault": str(missing)}, KG_BIN=str(fake_kg(tmp_path / "tools")))
    done = run_hook("PostToolUse", plugin, env, session_payload(world, "PostToolUse"), world.project)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.splitlines() == [f"vault-kg: the vault folder '{missing}' (plugin option 'vault') does not exist; create it or fix the option under /plugin > vault-kg > Configure"]


def test_a_kg_bin_that_is_not_a_program_gives_one_line(world: World, plugin: Path, tmp_path: Path) -> None:
    env = claude_env(world, plugin, tmp_path / "home", KG_BIN=str(tmp_path / "nope" / "kg"))
    done = run_hook("SessionEnd", plugin, env, session_payload(world, "SessionEnd"), world.project)
    assert done.returncode == 0 and len(done.stderr.splitlines()) == 1
    assert "is not an executable file" in done.stderr and str(tmp_path / "nope" / "kg") in done.stderr


def server_argv(plugin: Path) -> tuple[str, list[str], dict[str, str]]:
    """plugin.json's server entry as Claude Code expands it (no option set: empty strings)."""

    def expand(text: str, options: dict[str, str]) -> str:
        text = text.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
        return re.sub(r"\$\{user_config\.(\w+)\}", lambda m: options.get(m.group(1), ""), text)

    return expand(SERVER["command"], {}), SERVER["args"], SERVER["env"]


def test_the_mcp_server_starts_through_the_launcher_and_reports_kgs_version(world: World, plugin: Path, tmp_path: Path) -> None:
    command, args, env_template = server_argv(plugin)
    options = {"vault": str(world.vault)}
    env = claude_env(world, plugin, tmp_path / "home", FASTMCP_LOG_LEVEL="WARNING", KG_BIN=str(fake_kg(tmp_path / "tools")))
    env.update({k: re.sub(r"\$\{user_config\.(\w+)\}", lambda m: options[m.group(1)], v) for k, v in env_template.items()})

    async def session() -> tuple[str, str, list[str]]:
        # mode="legacy": the initialize handshake Claude Code performs, whose serverInfo it shows.
        async with Client(StdioTransport(command, args, env=env, cwd=str(world.project)), timeout=120, mode="legacy") as client:
            info = client.initialize_result.server_info
            result = await client.call_tool("god_nodes", {"scope": "vault", "n": 3})
            return info.name, info.version, [row["label"] for row in result.structured_content["nodes"]]

    name, version, labels = asyncio.run(session())
    assert (name, version) == ("vault-kg", __version__) and len(labels) == 3


@pytest.mark.parametrize("problem", ["no kg", "no such vault"])
def test_the_mcp_server_that_cannot_start_exits_with_one_line(world: World, plugin: Path, tmp_path: Path, problem: str) -> None:
    command, args, env_template = server_argv(plugin)
    env = claude_env(world, plugin, tmp_path / "home")
    env.update({k: "" for k in env_template})  # options left unset: Claude Code substitutes ""
    if problem == "no such vault":
        env.update(CLAUDE_PLUGIN_OPTION_VAULT=str(tmp_path / "gone"), KG_BIN=str(fake_kg(tmp_path / "tools")))
    done = subprocess.run([command, *args], env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert ("kg command is not installed" if problem == "no kg" else f"vault folder '{tmp_path / 'gone'}'") in done.stderr


def test_the_launcher_by_hand_answers_version_as_the_troubleshooting_guide_says(world: World, plugin: Path, tmp_path: Path) -> None:
    fake_kg(tmp_path / "home" / ".local" / "bin")
    done = subprocess.run([str(plugin / "bin" / "kg-launch"), "--version"], env=claude_env(world, plugin, tmp_path / "home"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == f"kg {__version__}\n"
