"""A vault and a registered project, built for real, and a way to run `kg hook` as Claude Code does."""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from conftest import EXAMPLE_VAULT, REPO, kg_process

AGENTS_MD = """# Agent notes for payments
Follow [[Python Style]] and everything tagged #convention/testing.
"""


@dataclass
class World:
    base: Path
    vault: Path
    project: Path
    config: Path

    @property
    def env(self) -> dict[str, str]:
        return {"KG_CONFIG": str(self.config), "KG_OLLAMA": "off", "KG_VAULT": "", "CLAUDE_CONFIG_DIR": str(self.claude_dir)}

    @property
    def claude_dir(self) -> Path:
        """This world's `$CLAUDE_CONFIG_DIR`: session transcripts are accepted only under its `projects/`."""
        return self.base / ".claude"

    @property
    def transcript(self) -> Path:
        """Where Claude Code writes this session's transcript."""
        path = self.claude_dir / "projects" / "-payments" / "6f1c2a9e-4b7d-4c1e-9a33-0d2f8e71b5c4.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write_config(self, extra: str = "", vault: Path | None = None) -> None:
        self.config.write_text(
            f'vault = "{vault or self.vault}"\n{extra}\n[projects.payments]\npath = "{self.project}"\nconventions = ["Git Commits"]\n',
            encoding="utf-8",
        )

    def hook(self, event: str, payload: dict[str, Any] | str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any] | None, str]:
        """Run `kg hook EVENT` in a fresh process with the payload on stdin: (exit code, JSON out, stderr)."""
        data = payload if isinstance(payload, str) else json.dumps(payload)
        done = kg_process("hook", event, input=data, env={**self.env, **(env or {})}, cwd=self.project)
        out = json.loads(done.stdout) if done.stdout.strip() else None
        return done.returncode, out, done.stderr


_BUILT: list[Path] = []


def make_world(base: Path, build: bool = True) -> World:
    """A fresh world in `base`; built ones are copies of one world built (for real) per test run."""
    if build and _BUILT:
        for name in ("vault", "payments"):
            shutil.copytree(_BUILT[0] / name, base / name, symlinks=True)
        world = World(base, base / "vault", base / "payments", base / "config.toml")
        world.write_config()
        return world
    vault = base / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    project = base / "payments"
    shutil.copytree(REPO / "tests" / "fixtures" / "code" / "python_repo", project)
    (project / ".git").mkdir()
    (project / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    world = World(base, vault, project, base / "config.toml")
    world.write_config()
    if build:
        for args in (["build", "--vault", str(vault)], ["build", "--scope", "payments"]):
            done = kg_process(*args, env=world.env, cwd=base)
            assert done.returncode == 0, done.stderr
        template = Path(tempfile.mkdtemp(prefix="kg-hook-world-"))
        for name in ("vault", "payments"):
            shutil.copytree(base / name, template / name, symlinks=True)
        atexit.register(shutil.rmtree, template, True)
        _BUILT.append(template)
    return world


def session_payload(world: World, event: str, **extra: Any) -> dict[str, Any]:
    """The fields Claude Code sends with every hook."""
    return {
        "session_id": "6f1c2a9e-4b7d-4c1e-9a33-0d2f8e71b5c4",
        "transcript_path": str(world.transcript),
        "cwd": str(world.project),
        "hook_event_name": event,
        **extra,
    }


def fake_kg(folder: Path) -> Path:
    """An installed `kg`: a script running this interpreter's vault_kg, as pipx's entry point would."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "kg"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from vault_kg.cli.entry import main; main()" "$@"\n')
    script.chmod(0o755)
    return script


def wait_for(check: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def add_anchored_note(world: World, rel: str = "notes/Engine Lifecycle.md", target: str = "pkg/core.py::Engine") -> str:
    """A vault note anchored (with `kg anchor`) to code in the payments project, graph updated; its id."""
    note = world.vault / rel
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("---\nsummary: How the engine starts and stops.\ntags: [scope/payments]\n---\nBody.\n")
    for args in (["anchor", rel, "--to", target, "--project", "payments"], ["update", "--vault", str(world.vault)]):
        done = kg_process(*args, env=world.env, cwd=world.base)
        assert done.returncode == 0, done.stderr
    return f"note:{rel}"
