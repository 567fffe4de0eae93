"""What every hook needs before it knows whether there is work: the place (vault, project), a log.

Where the session stands is the library's own answer (`vault_kg.core.place.locate`: the CLI's rules
for the vault, `scopes.project_at` for the project, from the session's folder, never raising);
hooks never open the cache themselves. Only the standard library and `vault_kg.core.config`/`place`
(tomllib) are imported here, so a hook that has nothing to do exits in a few milliseconds of its
own time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from vault_kg.core.config import OUT_DIRNAME, config_path, inside
from vault_kg.api import is_built
from vault_kg.core.place import Place, locate

LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 1_000_000

HookEnv = Place  # the hooks' name for the library's place (config, session folder, vault)

__all__ = ["HookEnv", "cache_problem", "hook_env", "inside", "is_built", "log_failure", "payload_cwd"]


def payload_cwd(payload: dict[str, Any]) -> Path:
    raw = payload.get("cwd")
    return Path(raw) if isinstance(raw, str) and raw else Path.cwd()


def hook_env(payload: dict[str, Any]) -> HookEnv:
    """Resolve the vault the way the CLI does, but from the session's folder, never failing."""
    return locate(payload_cwd(payload))


def cache_problem(root: Path) -> str | None:
    """Why the scope's cache at `root` cannot serve an update of one file (None: it can)."""
    from vault_kg import api

    return api.cache_problem(root)


def log_failure(event: str, message: str, vault: Path | None) -> Path | None:
    """Append one failure, redacted, to `<vault>/kg-out/hooks.log`, else beside the config file; never raise."""
    from vault_kg.core.secrets import redact  # only on failure: the fast path never pays for it

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    text = f"{stamp} {event}: {redact(message.rstrip())}\n"
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
