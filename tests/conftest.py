"""Shared fixtures: an isolated config/home per test, the example vault, and a real `kg` process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_VAULT = REPO / "examples" / "vault"


@pytest.fixture(autouse=True)
def isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config file and no inherited vault or Ollama settings."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("KG_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KG_OLLAMA", "off")
    return home


@pytest.fixture
def example_vault(tmp_path: Path) -> Path:
    """A private copy of the bundled example vault."""
    target = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, target)
    return target


def kg_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `kg` entry point in a fresh Python process."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", "from vault_kg.entry import main; main()", *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, input=input,
    )


@pytest.fixture
def kg():
    return kg_process
