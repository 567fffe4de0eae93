"""Thin, typed calls to the `git` command line for the vault repository.

`kg sync` and `kg consolidate --apply` drive the user's own git: their remotes, credentials and
hooks apply unchanged. Every call runs with `-C <vault>`, a fixed locale (so messages can be
matched) and no pager or editor (nothing may wait for a terminal).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vault_kg.core.errors import KgError

__all__ = [
    "GIT_TIMEOUT_S",
    "Repo",
    "git_env",
    "head",
    "identity_missing",
    "is_repo",
    "last_line",
    "open_repo",
    "operation_in_progress",
    "run_git",
    "status_entries",
    "unmerged_paths",
    "z_split",
]

GIT_TIMEOUT_S = float(os.environ.get("KG_GIT_TIMEOUT", "300"))


@dataclass(frozen=True)
class Repo:
    """The git work tree holding the vault; `prefix` is the vault's folder inside it ('' at top)."""

    vault: Path
    top: Path
    prefix: str

    def git(self, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_git(self.vault, *args, check=check, env=env)

    def vault_rel(self, top_rel: str) -> str | None:
        """A top-relative path as vault-relative, or None when it lies outside the vault."""
        if not self.prefix:
            return top_rel
        return top_rel[len(self.prefix) :] if top_rel.startswith(self.prefix) else None

    def top_rel(self, vault_rel: str) -> str:
        return self.prefix + vault_rel

    @property
    def git_dir(self) -> Path:
        out = self.git("rev-parse", "--absolute-git-dir").stdout.strip()
        return Path(out)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANG": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": "true"})
    env.update(extra or {})
    return env


def run_git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `git -C cwd ARGS`; with `check`, a failure becomes one KgError line with git's reason."""
    if shutil.which("git") is None:
        raise KgError("git is not installed or not on PATH; install git to sync the vault")
    try:
        # surrogateescape: a file name that is not UTF-8 comes back as Python names it (os.fsdecode), never a traceback
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, errors="surrogateescape", env=git_env(env), timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise KgError(f"{cwd}: `git {' '.join(args)}` took longer than {GIT_TIMEOUT_S:.0f}s; check the remote and retry") from exc
    if check and proc.returncode != 0:
        raise KgError(f"{cwd}: `git {' '.join(args)}` failed: {last_line(proc)}")
    return proc


def last_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The most telling line git printed (fatal/error lines first)."""
    lines = [line.strip() for line in (proc.stderr + "\n" + proc.stdout).splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[-1] if lines else f"exit code {proc.returncode}"


def open_repo(vault: Path) -> Repo:
    """The repository the vault lives in, or a clear line saying how to make it one."""
    proc = run_git(vault, "rev-parse", "--show-toplevel", "--show-prefix", check=False)
    if proc.returncode != 0:
        raise KgError(f"{vault}: the vault is not a git repository; run `git -C '{vault}' init` and add a remote, or `kg sync --init`")
    top, _, prefix = proc.stdout.partition("\n")
    return Repo(vault, Path(top.strip()), prefix.strip())


def is_repo(vault: Path) -> bool:
    if shutil.which("git") is None:
        return False
    return run_git(vault, "rev-parse", "--show-toplevel", check=False).returncode == 0


def z_split(output: str) -> list[str]:
    return [item for item in output.split("\0") if item]


def status_entries(repo: Repo) -> list[tuple[str, str]]:
    """Uncommitted changes under the vault as (XY status, vault-relative path), untracked included."""
    out = repo.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".").stdout
    items = z_split(out)
    entries: list[tuple[str, str]] = []
    i = 0
    while i < len(items):
        code, path = items[i][:2], items[i][3:]
        if code[0] in "RC":
            i += 1  # the rename source follows
        rel = repo.vault_rel(path)
        if rel is not None:
            entries.append((code, rel))
        i += 1
    return entries


def unmerged_paths(repo: Repo) -> list[str]:
    out = repo.git("diff", "--name-only", "-z", "--diff-filter=U").stdout
    return sorted(z_split(out))


def operation_in_progress(repo: Repo) -> str | None:
    """'rebase' or 'merge' when git is in the middle of one (the user must finish or abort it)."""
    git_dir = repo.git_dir
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        return "rebase"
    if (git_dir / "MERGE_HEAD").exists():
        return "merge"
    return None


def head(repo: Repo) -> str | None:
    proc = repo.git("rev-parse", "--verify", "-q", "HEAD", check=False)
    return proc.stdout.strip() or None


def identity_missing(proc: subprocess.CompletedProcess[str]) -> bool:
    text = proc.stderr + proc.stdout
    return "Please tell me who you are" in text or "empty ident name" in text
