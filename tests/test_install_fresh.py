"""One step from nothing: the plugin installs kg itself, and the README's Python-only install works.

Both start from a fresh HOME, with no `kg` on PATH and a clean clone of the repository (no venv in
it). The plugin is added and installed with the real Claude Code CLI; its session-start hook,
run as hooks.json states it with the variables Claude Code sets, starts the install of kg from
PyPI; once it is in, every hook, `kg mcp --check` and `kg doctor` run through the launcher, and
`claude mcp list` connects to the server. The README's lines run as written, in another fresh
HOME, side by side with the plugin's install (each takes a minute or two; pip's cache is shared),
once per test run: the `fresh` fixture below.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import EXAMPLE_VAULT, REPO
from provision_helpers import provision_pid, stop_provision, wait_provisioned
from test_plugin_install import NOT_CHECKED_OUT, run
from test_plugin_launcher import HOOKS, hook_command, path_without_kg

INSTALL_S = 900  # a deadline for a real install from PyPI on a busy machine, not a measurement
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
TRANSCRIPT = REPO / "tests" / "fixtures" / "episodic" / "claude_session.jsonl"
SESSION = "6f1c2a9e-4b7d-4c1e-9a33-0d2f8e71b5c4"


def readme_block(after: str) -> str:
    """The first fenced block of README.md after the paragraph that starts with `after`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(re.escape(after) + r".*?```sh\n(.*?)```", text, re.S)
    assert found, f"README.md has no code block after {after!r}"
    return found.group(1)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment in a fresh HOME: no kg, no tool folders, pip's own settings and cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "PIPX_", "UV_", "XDG_", "CLAUDE_", "ANTHROPIC_", "VIRTUAL_ENV"))}
    env.update({"HOME": str(home), "PATH": path_without_kg(), "PIP_CACHE_DIR": PIP_CACHE, "KG_OLLAMA": "off"})
    env.update(extra)
    return env


@dataclass
class Fresh:
    home: Path
    checkout: Path
    plugin: Path
    data: Path
    vault: Path
    env: dict[str, str]
    first: subprocess.CompletedProcess[str]
    running_after_first: bool
    provision_s: float
    readme_home: Path
    readme: subprocess.CompletedProcess[str]


def start_readme_install(home: Path, checkout: Path) -> subprocess.Popen[str]:
    """The README's "only Python" lines, as written, from the folder that holds the clone."""
    home.mkdir()
    lines = readme_block("With only Python")
    # PIP_COMPILE=0 (pip --no-compile; PIP_NO_COMPILE=1 would mean the opposite): CI time only, byte-compiling
    # is ~40% of the install and changes nothing tested here
    return subprocess.Popen(["/bin/sh", "-ec", lines], cwd=checkout.parent, env=clean_env(home, PIP_COMPILE="0"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def install_plugin(claude: str, home: Path, checkout: Path, vault: Path) -> Path:
    home.mkdir()
    added = run(claude, home, "plugin", "marketplace", "add", str(checkout))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run(claude, home, "plugin", "install", "vault-kg@vault-kg", "--config", f"vault={vault}")
    assert installed.returncode == 0 and "not yet set" not in installed.stdout + installed.stderr, installed.stdout + installed.stderr
    (plugin,) = json.loads(run(claude, home, "plugin", "list", "--json").stdout)
    return Path(plugin["installPath"])


def hook_env(home: Path, plugin: Path, data: Path, vault: Path) -> dict[str, str]:
    """What Claude Code gives a plugin's hook: its folder, its data folder, its options."""
    return clean_env(home, CLAUDE_PLUGIN_ROOT=str(plugin), CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PLUGIN_OPTION_VAULT=str(vault), CLAUDE_CONFIG_DIR=str(home / ".claude"))


def run_hook(fresh_env: dict[str, str], plugin: Path, event: str, cwd: Path, **extra: Any) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": SESSION, "cwd": str(cwd), "hook_event_name": event, **extra}
    command = hook_command(event).replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), env=fresh_env, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, claude: str) -> Iterator[Fresh]:
    base = tmp_path_factory.mktemp("fresh")
    checkout = base / "vault-kg"
    shutil.copytree(REPO, checkout, ignore=NOT_CHECKED_OUT, symlinks=True)
    vault = base / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    readme_checkout = base / "readme" / "vault-kg"  # its own clone: pip builds in the folder it installs from
    shutil.copytree(REPO, readme_checkout, ignore=NOT_CHECKED_OUT, symlinks=True)
    readme = start_readme_install(base / "readme-home", readme_checkout)
    home = base / "home"
    data = home / ".claude" / "plugins" / "data" / "vault-kg-vault-kg"  # Claude Code's folder for plugin vault-kg@vault-kg
    try:
        plugin = install_plugin(claude, home, checkout, vault)
        env = hook_env(home, plugin, data, vault)
        began = time.monotonic()
        first = run_hook(env, plugin, "SessionStart", vault, source="startup")
        running = provision_pid(data) is not None and not (data / "source").exists()
        assert wait_provisioned(data, INSTALL_S), (data / "provision.log").read_text()[-3000:]
        provision_s = time.monotonic() - began
        out, _ = readme.communicate(timeout=INSTALL_S)
        readme_done = subprocess.CompletedProcess(readme.args, readme.returncode, out, "")
        yield Fresh(home, checkout, plugin, data, vault, env, first, running, provision_s, base / "readme-home", readme_done)
    finally:
        if readme.poll() is None:
            os.killpg(readme.pid, 9)
        stop_provision(data)


def test_the_first_session_start_says_one_line_and_does_not_wait_for_the_install(fresh: Fresh) -> None:
    assert fresh.first.returncode == 0
    assert json.loads(fresh.first.stdout) == {"systemMessage": f"vault-kg: installing kg, about a minute; the brief starts next session (log: {fresh.data / 'provision.log'})"}
    assert fresh.running_after_first
    print(f"\nprovision: {fresh.provision_s:.0f}s")


def test_after_the_install_every_hook_and_the_mcp_check_run_through_the_launcher(fresh: Fresh) -> None:
    launcher = fresh.plugin / "bin" / "kg-launch"
    built = subprocess.run([str(launcher), "build", "--vault", str(fresh.vault)], env=fresh.env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    transcript = fresh.home / ".claude" / "projects" / "-vault" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(TRANSCRIPT, transcript)
    note = fresh.vault / "notes" / "Installed.md"
    write = {"tool_name": "Write", "tool_input": {"file_path": str(note), "content": "---\nsummary: Written after the plugin installed kg.\ntags: [scope/global]\n---\nSee [[Payments API]].\n"}}
    extra: dict[str, dict[str, Any]] = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "how do we retry failed Stripe webhooks?"},
        "PreToolUse": write,
        "PostToolUse": {**write, "tool_response": {"filePath": str(note), "success": True}},
        "Stop": {"transcript_path": str(transcript)},
        "PreCompact": {"trigger": "manual"},
        "SessionEnd": {"transcript_path": str(transcript), "reason": "prompt_input_exit"},
    }
    assert set(extra) == set(HOOKS)
    for event in HOOKS:
        if event == "PostToolUse":
            note.parent.mkdir(exist_ok=True)
            note.write_text(write["tool_input"]["content"])
        done = run_hook(fresh.env, fresh.plugin, event, fresh.vault, **extra[event])
        assert done.returncode == 0 and "vault-kg:" not in done.stderr, (event, done.stderr)
        if event == "SessionStart":
            assert "## Central notes in the vault" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert not (fresh.vault / "kg-out" / "hooks.log").exists(), (fresh.vault / "kg-out" / "hooks.log").read_text()
    graph = json.loads((fresh.vault / "kg-out" / "graph.json").read_text())
    assert any(n.get("source") == "notes/Installed.md" for n in graph["nodes"])

    check = subprocess.run([str(launcher), "mcp", "--check"], env=fresh.env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0 and "query" in check.stdout and "doctor" in check.stdout, check.stdout + check.stderr


def test_claude_code_connects_to_the_server_the_plugin_installed(fresh: Fresh, claude: str) -> None:
    # Claude Code computes CLAUDE_PLUGIN_DATA itself here: the kg found must be the one installed above.
    listed = run(claude, fresh.home, "mcp", "list", CLAUDE_PLUGIN_OPTION_VAULT=str(fresh.vault))
    assert "plugin:vault-kg:vault-kg:" in listed.stdout and "Connected" in listed.stdout and "Failed" not in listed.stdout, listed.stdout + listed.stderr


def test_the_plugin_folder_holds_no_venv_and_nothing_the_install_wrote(fresh: Fresh) -> None:
    copied = {p.name for p in fresh.checkout.iterdir()}
    assert {p.name for p in fresh.plugin.iterdir()} == copied and ".venv" not in copied  # no venv, no build/, no egg-info
    which = subprocess.run([str(fresh.plugin / "bin" / "kg-launch"), "--which"], env=fresh.env, capture_output=True, text=True, timeout=30)
    assert which.stdout == f"{fresh.data / 'current' / 'bin' / 'kg'}\tplugin\t{fresh.data}\n"


def test_kg_doctor_through_the_launcher_is_healthy(fresh: Fresh) -> None:
    done = subprocess.run([str(fresh.plugin / "bin" / "kg-launch"), "doctor", "--json"], env=fresh.env, cwd=fresh.vault, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    found = {line["check"]: line for line in report["lines"]}
    assert found["launcher"]["verdict"] == "ok" and str(fresh.data) in found["launcher"]["detail"]


def test_the_readmes_python_only_install_puts_kg_on_path_as_it_says(fresh: Fresh) -> None:
    assert fresh.readme.returncode == 0, fresh.readme.stdout[-3000:]
    home = fresh.readme_home
    bare = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    before = subprocess.run(["/bin/sh", "-c", "kg --version"], env=bare, capture_output=True, text=True, timeout=60)
    assert before.returncode == 127  # not on a PATH without ~/.local/bin: the README says what to add
    fix = re.search(r"`(echo 'export PATH=[^`]+)`", (REPO / "README.md").read_text(encoding="utf-8"))
    assert fix, "README.md no longer says how to put ~/.local/bin on PATH"
    subprocess.run(["/bin/sh", "-c", fix.group(1)], env=bare, check=True, timeout=30)
    after = subprocess.run(["/bin/sh", "-l", "-c", "kg --version"], env=bare, capture_output=True, text=True, timeout=60)
    from vault_kg import __version__

    assert after.returncode == 0 and after.stdout == f"kg {__version__}\n", after.stdout + after.stderr
