"""The plugin installs kg itself: in the background, said in one line, upgraded with the plugin,
and a failure says what to run. Driven through bin/kg-launch exactly as hooks.json states it.

The source installed here is a tiny stand-in for kg (`provision_helpers.tiny_plugin`: a real
package that pip builds and installs for real, in seconds); the real kg, from PyPI, is installed
once by tests/test_install_fresh.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from provision_helpers import provision_pid, stop_provision, tiny_plugin, wait_provisioned
from test_plugin_launcher import hook_command, path_without_kg

INSTALL_S = 300  # a deadline, not a measurement: a pip install on a busy machine


def launcher_env(home: Path, plugin: Path, data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "PIPX_", "UV_", "XDG_", "CLAUDE_", "VIRTUAL_ENV"))}
    env.update({"PATH": path_without_kg(), "HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data)})
    env.setdefault("PIP_CACHE_DIR", os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"))
    env.update(extra)
    return env


def hook(event: str, plugin: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = hook_command(event).replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    payload = {"session_id": "s", "cwd": str(plugin), "hook_event_name": event}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60)


def system_message(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    message: Any = json.loads(done.stdout)["systemMessage"]
    return str(message)


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture
def world(tmp_path: Path):
    data = tmp_path / "plugin data"
    yield tmp_path, data
    stop_provision(data)


def test_no_kg_installs_one_in_the_background_says_so_once_then_upgrades_with_the_plugin(world: tuple[Path, Path]) -> None:
    base, data = world
    plugin = tiny_plugin(base / "cache" / "1.0.0", "1.0.0")
    before = tree(plugin)
    env = launcher_env(base / "home", plugin, data)

    first = hook("SessionStart", plugin, env)
    assert system_message(first) == f"vault-kg: installing kg, about a minute; the brief starts next session (log: {data / 'provision.log'})"
    assert provision_pid(data) is not None and not (data / "source").exists()  # the hook returned before the install finished
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"):
        done = hook(event, plugin, env)
        assert done.returncode == 0 and done.stdout == "", (event, done.stdout)
    assert "still installing kg" in system_message(hook("SessionStart", plugin, env))

    assert wait_provisioned(data, INSTALL_S), (data / "provision.log").read_text()
    assert json.loads(hook("SessionStart", plugin, env).stdout) == {"ran": "session-start", "version": "1.0.0"}
    assert tree(plugin) == before  # nothing written into the plugin folder: no .venv, no build/, no egg-info
    old = (data / "current").resolve()

    # Claude Code installs version 1.1.0 into a new cache folder: the old kg serves until the new one is in.
    upgraded = tiny_plugin(base / "cache" / "1.1.0", "1.1.0")
    env = launcher_env(base / "home", upgraded, data)
    assert json.loads(hook("SessionStart", upgraded, env).stdout) == {"ran": "session-start", "version": "1.0.0"}
    assert wait_provisioned(data, INSTALL_S), (data / "provision.log").read_text()
    assert json.loads(hook("SessionStart", upgraded, env).stdout) == {"ran": "session-start", "version": "1.1.0"}
    assert old.is_dir()  # a server started before the upgrade may still run from it
    assert (data / "source").read_text().splitlines() == [str(upgraded), "1.1.0"]


def test_a_failed_install_says_what_to_run_and_is_not_retried_on_every_hook(world: tuple[Path, Path]) -> None:
    base, data = world
    plugin = tiny_plugin(base / "plugin", "1.0.0")
    (plugin / "episodic").rmdir()  # a plugin folder someone tidied by hand
    env = launcher_env(base / "home", plugin, data)
    hook("SessionStart", plugin, env)
    assert not wait_provisioned(data, INSTALL_S)
    line = system_message(hook("SessionStart", plugin, env))
    assert line == (
        f"vault-kg: installing kg failed: {plugin / 'episodic'} is missing from the plugin; reinstall it (claude plugin install vault-kg@vault-kg); "
        f"fix that, then run: '{plugin}/bin/kg-launch' --provision (log: {data / 'provision.log'})"
    )
    log = (data / "provision.log").read_text()
    hook("PostToolUse", plugin, env)
    assert provision_pid(data) is None and (data / "provision.log").read_text() == log  # no new attempt behind the user's back

    (plugin / "episodic").mkdir()
    done = subprocess.run([str(plugin / "bin" / "kg-launch"), "--provision"], env=env, capture_output=True, text=True, timeout=INSTALL_S)
    assert done.returncode == 0 and "kg installed in" in done.stdout, done.stderr
    assert not (data / "provision.failed").exists()
    assert json.loads(hook("Stop", plugin, env).stdout) == {"ran": "stop", "version": "1.0.0"}


def test_a_broken_install_is_named_with_the_command_that_repairs_it(world: tuple[Path, Path]) -> None:
    base, data = world
    plugin = tiny_plugin(base / "plugin", "1.0.0")
    kg = data / "current" / "bin" / "kg"
    kg.parent.mkdir(parents=True)
    kg.write_text("#!/no/such/python\n")  # the interpreter it was made with is gone
    kg.chmod(0o755)
    (data / "source").write_text(f"{plugin}\n1.0.0\n")
    env = launcher_env(base / "home", plugin, data)
    line = system_message(hook("SessionStart", plugin, env))
    assert line.startswith(f"vault-kg: the kg this plugin installed ({kg}) failed (exit 12") and f"'{plugin}/bin/kg-launch' --provision" in line
    done = subprocess.run([str(plugin / "bin" / "kg-launch"), "--which"], env=env, capture_output=True, text=True, timeout=30)
    assert done.stdout == f"{kg}\tplugin\t{data}\n"


def test_without_python_or_with_the_install_off_the_launcher_says_how_to_install(world: tuple[Path, Path]) -> None:
    base, data = world
    plugin = tiny_plugin(base / "plugin", "1.0.0")
    off = hook("SessionStart", plugin, launcher_env(base / "home", plugin, data, KG_PROVISION="off"))
    assert system_message(off) == f"vault-kg: the kg command is not installed; run '{plugin}/bin/kg-launch' --provision (or: pipx install '{plugin}'), or set KG_BIN to its path"
    bare = Path(base / "bare-bin")
    bare.mkdir()
    for tool in ("sed", "mkdir"):
        os.symlink(subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip(), bare / tool)
    nopython = hook("SessionStart", plugin, launcher_env(base / "home", plugin, data, PATH=str(bare)))
    assert "no python3 to install it with" in system_message(nopython)
    assert provision_pid(data) is None and not (data / "current").exists()
