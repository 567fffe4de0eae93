"""What every hook needs before it knows whether there is work: the vault, the projects, a log.

Only the standard library and `vault_kg.core.config` (tomllib) are imported here, so a hook that has
nothing to do exits in a few milliseconds of its own time.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_kg.core.config import OUT_DIRNAME, Config, config_path, find_repo_upwards, find_vault_upwards, inside, load_config

LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 1_000_000
CACHE_DB = ("cache", "index.sqlite")


@dataclass
class HookEnv:
    """The configuration and the places a hook payload refers to."""

    cfg: Config
    cwd: Path
    vault: Path | None

    def out(self, root: Path) -> Path:
        return root / OUT_DIRNAME

    def project_of(self, path: Path) -> tuple[str, Path] | None:
        """The registered project whose folder holds `path` (real paths compared)."""
        real = os.path.realpath(path)
        for name, root in sorted(self.cfg.projects.items()):
            base = os.path.realpath(root)
            if real == base or real.startswith(base + os.sep):
                return name, Path(base)
        return None

    def current_project(self) -> tuple[str | None, Path | None]:
        """The project the session runs in: a registered scope, else the enclosing repository."""
        found = self.project_of(self.cwd)
        if found is not None:
            return found
        try:
            repo = find_repo_upwards(self.cwd)
        except OSError:
            repo = None
        return None, repo


def payload_cwd(payload: dict[str, Any]) -> Path:
    raw = payload.get("cwd")
    return Path(raw) if isinstance(raw, str) and raw else Path.cwd()


def hook_env(payload: dict[str, Any]) -> HookEnv:
    """Resolve the vault the way the CLI does, but from the session's folder, never failing."""
    cfg = load_config()
    cwd = payload_cwd(payload)
    return HookEnv(cfg, cwd, locate_vault(cfg, cwd))


def locate_vault(cfg: Config, cwd: Path) -> Path | None:
    candidate: Path | None = None
    if os.environ.get("KG_VAULT"):
        candidate = Path(os.environ["KG_VAULT"]).expanduser()
    else:
        try:
            candidate = find_vault_upwards(cwd) or cfg.vault
        except OSError:
            candidate = cfg.vault
    if candidate is None or not candidate.is_dir():
        return None
    return Path(os.path.realpath(candidate))


def is_built(root: Path) -> bool:
    """True when the scope at `root` has a graph (an update on an unbuilt scope would be partial)."""
    return root.joinpath(OUT_DIRNAME, *CACHE_DB).is_file()


def cache_problem(root: Path) -> str | None:
    """Why the scope's cache cannot serve an update of one file (None: it can).

    An update of one file on a cache that must be recreated would build a graph of that file
    alone, so callers rebuild in full instead. A busy or locked cache is not a problem: the
    engine waits for it.
    """
    import sqlite3

    from vault_kg.cache import SCHEMA

    db = root.joinpath(OUT_DIRNAME, *CACHE_DB)
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            graph = con.execute("SELECT 1 FROM meta WHERE key='graph'").fetchone() if version == SCHEMA else True
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        return f"{exc}" if "no such table" in str(exc) else None
    except sqlite3.DatabaseError as exc:
        return str(exc)
    if version != SCHEMA:
        return f"cache format {version}, expected {SCHEMA}"
    return None if graph else "no graph recorded"


def log_failure(event: str, message: str, vault: Path | None) -> Path | None:
    """Append one failure to `<vault>/kg-out/hooks.log`, else beside the config file; never raise."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    text = f"{stamp} {event}: {message.rstrip()}\n"
    folders = []
    if vault is not None:
        folders.append(vault / OUT_DIRNAME)
    folders.append(config_path().parent)
    for folder in folders:
        path = folder / LOG_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_suffix(".log.1"))
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
            return path
        except OSError:
            continue
    return None
