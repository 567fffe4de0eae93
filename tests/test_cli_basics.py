"""CLI conventions every command shares: --version, bounded counts, JSON errors, examples kept as lines."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from conftest import kg_process
from vault_kg import __version__


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_package_version(flag: str) -> None:
    done = kg_process(flag)
    assert done.returncode == 0 and done.stdout == f"kg {__version__}\n"


def test_the_package_and_the_plugin_carry_one_version() -> None:
    repo = Path(__file__).resolve().parents[1]
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    assert pyproject["project"]["name"] == "kg-vault" and pyproject["project"]["scripts"] == {"kg": "vault_kg.cli.entry:main"}
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "vault_kg.__version__"}
    assert json.loads((repo / ".claude-plugin" / "plugin.json").read_text())["version"] == __version__


def test_project_remove_unregisters_and_leaves_the_repository_alone(tmp_path: Path, isolated_config: Path) -> None:
    repo = tmp_path / "payments"
    (repo / "kg-out").mkdir(parents=True)
    other = tmp_path / "infra"
    other.mkdir()
    assert kg_process("project", "add", str(repo)).returncode == 0
    assert kg_process("project", "add", str(other)).returncode == 0
    config = isolated_config / "config.toml"
    config.write_text("# my projects\n" + config.read_text())

    done = kg_process("project", "remove", "payments", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"name": "payments", "path": str(repo), "config": str(config), "artifacts": str(repo / "kg-out")}
    assert json.loads(kg_process("project", "list", "--json").stdout) == [{"name": "infra", "path": str(other)}]
    assert config.read_text().startswith("# my projects\n") and (repo / "kg-out").is_dir()

    again = kg_process("project", "remove", "payments")
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr == f"kg: error: no project named 'payments' in {config} (registered: infra); `kg project list` shows them\n"


@pytest.mark.parametrize("args", [["god-nodes", "-n", "0"], ["god-nodes", "-n", "-2"], ["god-nodes", "-n", "201"], ["recall", "x", "-n", "0"], ["recall", "x", "--limit", "-1"]])
def test_a_count_out_of_range_is_an_error_not_silently_clamped(args: list[str], example_vault: Path) -> None:
    done = kg_process(*args, "--vault", str(example_vault))
    assert done.returncode == 2 and done.stdout == ""
    assert "is not in the range 1<=x<=" in done.stderr


@pytest.mark.parametrize(
    "args, message, code",
    [
        (["stats", "--vault", "/no/such/vault"], "/no/such/vault: vault folder does not exist", 1),
        (["project", "remove", "ghost"], "no project named 'ghost'", 1),
        (["god-nodes", "-n", "0"], "Invalid value for '-n': 0 is not in the range 1<=x<=200.", 2),
        (["query"], "Missing argument 'QUESTION'.", 2),
    ],
)
def test_with_json_an_error_is_one_json_object_on_stdout(args: list[str], message: str, code: int) -> None:
    done = kg_process(*args, "--json")
    assert done.returncode == code and done.stderr == ""
    error = json.loads(done.stdout)
    assert message in error["error"] and error["exit_code"] == code and "\n" not in error["error"]


def test_without_json_the_same_error_is_one_line_on_stderr() -> None:
    done = kg_process("stats", "--vault", "/no/such/vault")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("kg: error: /no/such/vault: vault folder does not exist") and done.stderr.count("\n") == 1


def test_help_keeps_each_example_on_its_own_line() -> None:
    done = kg_process("recall", "--help")
    assert done.returncode == 0
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert 'Example: kg recall "when did I fix the webhook retries" --limit 5' in lines
    assert 'Example: kg recall "what was I doing yesterday"' in lines
    assert "Example: kg recall --yesterday --json" in lines
    assert "Example: kg project remove payments" in [line.strip() for line in kg_process("project", "remove", "--help").stdout.splitlines()]
