"""The plugin installs the documented way, driven through the real Claude Code CLI in a scratch HOME.

`claude plugin validate`, `claude plugin marketplace add <checkout>`, `claude plugin install
vault-kg@vault-kg --config ...` and `claude mcp list` (which starts the plugin's MCP server through
the launcher and reports whether it connected) need no login. The CLI comes from npm
(`@anthropic-ai/claude-code`): `claude` on PATH, `$CLAUDE_BIN`, or installed into
`$KG_CLAUDE_PREFIX` (default ~/.cache/kg-vault-ci/claude-code) on first use, as `.ci/run` does
(the `claude` fixture, in conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from test_plugin_launcher import fake_kg, path_without_kg

NOT_CHECKED_OUT = shutil.ignore_patterns(".git", ".venv", "kg-out", "__pycache__", "*.egg-info", ".pytest_cache", "node_modules")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A clean checkout of the repository (what `git clone` gives a user)."""
    target = tmp_path / "vault-kg"
    shutil.copytree(REPO, target, ignore=NOT_CHECKED_OUT, symlinks=True)
    return target


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def run(claude: str, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    scratch = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "KG_"))}
    scratch.update(
        {
            "HOME": str(home),
            "PATH": path_without_kg(),
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "KG_OLLAMA": "off",
            "KG_PROVISION": "off",  # the launcher's own install of kg: tests/test_install_fresh.py
            "KG_CONFIG": str(home / "kg-config.toml"),
        }
    )
    scratch.update(env)
    return subprocess.run([claude, *args], env=scratch, cwd=home, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def test_validate_passes_for_the_marketplace_and_the_plugin_and_catches_a_broken_manifest(claude: str, checkout: Path, home: Path) -> None:
    for target in (checkout, checkout / ".claude-plugin" / "plugin.json"):
        done = run(claude, home, "plugin", "validate", str(target))
        assert done.returncode == 0 and "Validation passed" in done.stdout, done.stdout + done.stderr
    market = checkout / ".claude-plugin" / "marketplace.json"
    broken = json.loads(market.read_text())
    del broken["owner"]
    market.write_text(json.dumps(broken))
    done = run(claude, home, "plugin", "validate", str(checkout))
    assert done.returncode != 0 and "owner" in done.stdout + done.stderr


def test_marketplace_add_and_install_then_the_server_connects_through_the_launcher(claude: str, checkout: Path, home: Path, tmp_path: Path) -> None:
    added = run(claude, home, "plugin", "marketplace", "add", str(checkout))
    assert added.returncode == 0 and "Successfully added marketplace: vault-kg" in added.stdout, added.stdout + added.stderr

    vault = checkout / "examples" / "vault"
    kg = fake_kg(tmp_path / "tools")
    built = subprocess.run([str(kg), "build", "--vault", str(vault)], env={**os.environ, "KG_OLLAMA": "off", "KG_CONFIG": str(home / "kg-config.toml")}, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr

    installed = run(claude, home, "plugin", "install", "vault-kg@vault-kg", "--config", f"vault={vault}")
    assert installed.returncode == 0 and "Successfully installed plugin: vault-kg@vault-kg" in installed.stdout, installed.stdout + installed.stderr
    assert "not yet set" not in installed.stdout + installed.stderr  # every option the plugin declares was given
    (plugin,) = json.loads(run(claude, home, "plugin", "list", "--json").stdout)
    assert plugin["id"] == "vault-kg@vault-kg" and plugin["enabled"] and plugin["version"] == json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    root = Path(plugin["installPath"])
    assert os.access(root / "bin" / "kg-launch", os.X_OK) and (root / "hooks" / "hooks.json").is_file()
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["pluginConfigs"]["vault-kg@vault-kg"]["options"] == {"vault": str(vault)}

    # No kg on PATH and none installed in HOME: the server cannot start, and Claude Code says so.
    assert "plugin:vault-kg:vault-kg:" in (listed := run(claude, home, "mcp", "list").stdout) and "Failed to connect" in listed
    # KG_BIN in the environment Claude Code was started with: it reaches the launcher, which starts kg.
    listed = run(claude, home, "mcp", "list", KG_BIN=str(kg)).stdout
    assert "plugin:vault-kg:vault-kg:" in listed and "Connected" in listed and "Failed" not in listed, listed
