"""Helpers for the sync/promote/consolidate tests: an isolated git identity and small vaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A git identity (CI has none) and no user/system git config leaking into the test."""
    empty = home / "gitconfig"
    empty.write_text("[init]\n\tdefaultBranch = main\n")
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def note(summary: str, tags: list[str], body: str) -> str:
    return f"---\nsummary: {summary}\ntags: [{', '.join(tags)}]\n---\n{body.rstrip()}\n"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a vault except git's and kg's own folders, by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not {".git", "kg-out"} & set(p.relative_to(root).parts)}


def graph_without_root(vault: Path) -> dict:
    data = json.loads((vault / "kg-out" / "graph.json").read_text(encoding="utf-8"))
    data["graph"].pop("root")
    return data
