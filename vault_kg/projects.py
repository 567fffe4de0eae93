"""Registering project repositories in the config file (comments and order preserved)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import config as cfgmod
from .errors import KgError
from .store import atomic_write


def add_project(path: Path, name: str | None = None) -> dict[str, Any]:
    import tomlkit

    root = path.expanduser().resolve()
    if not root.is_dir():
        raise KgError(f"{path}: not a folder; pass the repository's root")
    name = name or root.name
    if name == "vault" or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise KgError(f"'{name}': not a usable scope name; pass --name with letters, digits, - or _")
    config_file = cfgmod.config_path()
    try:
        doc = tomlkit.parse(config_file.read_text(encoding="utf-8")) if config_file.exists() else tomlkit.document()
    except Exception as exc:
        raise KgError(f"{config_file}: not valid TOML ({exc}); fix it first") from exc
    projects = doc.get("projects")
    if projects is None:
        projects = tomlkit.table()
        doc["projects"] = projects
    existing = projects.get(name)
    if existing is not None:
        current = existing if isinstance(existing, str) else existing.get("path")
        if current and Path(str(current)).expanduser().resolve() != root:
            raise KgError(f"project '{name}' is already registered at {current}; pick another --name")
    entry = tomlkit.inline_table()
    entry["path"] = str(root)
    projects[name] = entry
    config_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(config_file, tomlkit.dumps(doc).encode())
    return {"name": name, "path": str(root), "config": str(config_file)}
