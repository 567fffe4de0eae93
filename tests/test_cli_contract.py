"""The README's promise about the CLI, checked for every command and subcommand typer knows:

- every command takes `--json` (the few that cannot are listed below with the reason);
- its help ends with runnable examples (`Example: …` lines), and each example, run as a shell
  command in a sandbox (its own HOME and config, a private copy of the example vault at ~/vault,
  a registered project at ~/src/payments, a local Ollama stand-in), exits 0.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from conftest import EXAMPLE_VAULT
from ollama_fake import DEFAULT_MODEL, FakeOllama
from vault_kg.cli.app import app

NO_JSON = {
    "hook": "speaks the Claude Code hook protocol: a JSON event on stdin, a JSON answer on stdout",
    "mcp": "an MCP stdio server: every tool already answers structured content (`--check` lists them)",
    "merge-journal": "a git merge driver: git reads its exit status and the merged file, not stdout",
}
NOT_RUN = {
    "claude mcp add vault-kg -- kg mcp": "the Claude Code CLI, not kg: it registers `kg mcp` with Claude Code",
}
RETRY_PY = '''"""Retrying HTTP client."""


class Client:
    def fetch(self, url):
        """Fetch with three attempts."""
        for attempt in range(3):
            return url
'''


def leaf_commands() -> list[tuple[str, click.Command]]:
    def walk(command: click.Command, path: list[str]):
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    return list(walk(typer.main.get_command(app), []))


COMMANDS = leaf_commands()


def examples_of(command: click.Command) -> list[str]:
    """The `Example:` lines that end the command's help (nothing else may follow them)."""
    lines = [line.strip() for line in (command.help or "").strip().splitlines() if line.strip()]
    tail: list[str] = []
    for line in reversed(lines):
        if not line.startswith("Example: "):
            break
        tail.insert(0, line[len("Example: ") :])
    return tail


def test_every_command_is_walked() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"build", "update", "query", "journal add", "project add", "project list", "recall", "check", "hook", "mcp"} <= names
    assert len(names) >= 30


@pytest.mark.parametrize("name,command", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_takes_json_or_says_why_not(name: str, command: click.Command) -> None:
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert ("--json" in options) != (name in NO_JSON), f"kg {name}: --json {'missing' if name not in NO_JSON else 'present but listed as an exception'}"


@pytest.mark.parametrize("name,command", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_help_ends_with_runnable_examples(name: str, command: click.Command) -> None:
    examples = examples_of(command)
    assert examples, f"kg {name}: its help does not end with `Example: …` lines"
    runnable = [e for e in examples if e not in NOT_RUN]
    assert runnable and runnable[-1] == examples[-1], f"kg {name}: the last example must be one this test runs"
    for example in runnable:
        assert re.search(r"\bkg ", example) and "  " not in example.split("  # ")[0], f"kg {name}: one shell command per line: {example!r}"
    shown = CliRunner().invoke(app, [*name.split(), "--help"], terminal_width=80)
    assert shown.exit_code == 0, shown.output
    for example in examples:  # printed as written: one line each, not re-wrapped (click's \\b paragraphs)
        assert f"  Example: {example}\n" in shown.output, f"kg {name} --help does not show {example!r}:\n{shown.output}"


def test_hook_help_is_the_cli_help_not_a_hook_run() -> None:
    """`kg hook` skips the CLI for speed; `--help` must still print help (it used to read stdin and run)."""
    shown = subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "hook", "session-start", "--help"], capture_output=True, text=True, input="", timeout=60)
    assert shown.returncode == 0 and "Example: echo" in shown.stdout and "hookSpecificOutput" not in shown.stdout, shown.stdout


# ------------------------------------------------------------------ running the examples


@pytest.fixture(scope="module")
def ollama() -> FakeOllama:
    with FakeOllama(models={DEFAULT_MODEL: "sha256:" + "a" * 64}) as fake:
        yield fake


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, ollama: FakeOllama) -> Path:
    """A home a user of the README would have: config, ~/vault built, ~/src/payments registered."""
    home = tmp_path_factory.mktemp("cli-home") / "home"
    vault, project = home / "vault", home / "src" / "payments"
    shutil.copytree(EXAMPLE_VAULT, vault)
    # the example vault's demos of bad input: a malformed note and a note breaking the contract
    # (they would fail `kg lint --strict`, as they should)
    shutil.rmtree(vault / "broken")
    shutil.rmtree(vault / "inbox")
    notes = vault / "notes"
    notes.mkdir()
    for name, text in {
        "Retries": "How the payments client retries HTTP calls, three attempts.",
        "Retry v1": "The first retry policy.",
        "Retry v2": "The retry policy that replaced v1.",
        "Legacy-queue": "The old job queue.",
        "payments": "What the payments project is.",
    }.items():
        (notes / f"{name}.md").write_text(f"---\nsummary: {text}\ntags: [topic/payments, scope/global]\n---\n# {name}\n\n{text}\n")
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "src" / "retry.py").write_text(RETRY_PY)
    (project / "README.md").write_text("# Payments\n\n## Install\n\npip install payments\n")
    bin_dir = home / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kg"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from vault_kg.cli.entry import main; main()" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = sandbox_env(home, ollama)
    for setup in (
        "kg init --vault ~/vault",
        "kg project add ~/src/payments --name payments",
        "git init -q --bare ~/vault-remote.git",
        "git init -q -b main ~/vault && git -C ~/vault remote add origin ~/vault-remote.git",
        "kg build --vault ~/vault",
        "kg build --scope payments",
        "kg anchor notes/Retries.md --to src/retry.py::Client.fetch --project payments",
        'kg journal add "Fixed the webhook retries (exponential backoff)" --project payments',
        "git -C ~/vault add -A && git -C ~/vault commit -q -m 'the vault so far'",  # a vault kept in git
    ):
        done = subprocess.run(["bash", "-c", setup], cwd=vault, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{setup}: {done.stderr}"
    return home


def sandbox_env(home: Path, ollama: FakeOllama) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "XDG_", "OLLAMA_"))}
    env.update(
        HOME=str(home),
        PATH=f"{home / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        BROWSER="true",
        OLLAMA_HOST=ollama.url,
        KG_HTML="inline",
        GIT_AUTHOR_NAME="kg",
        GIT_AUTHOR_EMAIL="kg@invalid",
        GIT_COMMITTER_NAME="kg",
        GIT_COMMITTER_EMAIL="kg@invalid",
    )
    return env


EXAMPLES = [(name, example) for name, command in [("(kg --help)", typer.main.get_command(app)), *COMMANDS] for example in examples_of(command) if example not in NOT_RUN]


@pytest.mark.parametrize("name,example", EXAMPLES, ids=[f"{n}: {e[:50]}" for n, e in EXAMPLES])
def test_each_help_example_runs(name: str, example: str, template: Path, ollama: FakeOllama, tmp_path: Path) -> None:
    """Each example in a private copy of the sandbox home, from inside the vault, as a user types it."""
    home = tmp_path / "home"
    shutil.copytree(template, home, symlinks=True)
    config = home / ".config" / "vault-kg" / "config.toml"
    config.write_text(config.read_text().replace(str(template), str(home)))  # the copy's own vault and project
    if name == "init":
        config.unlink()  # what you run first, on a fresh machine
    env = sandbox_env(home, ollama)
    done = subprocess.run(["bash", "-c", example], cwd=home / "vault", env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"`{example}` exited {done.returncode}: {done.stderr.strip()[-800:]}"
