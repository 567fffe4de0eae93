"""Registering project repositories in the config file (comments and order preserved)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_kg.core import config as cfgmod
from vault_kg.core.errors import KgError
from vault_kg.core.store import atomic_write

__all__ = ["add_project", "remove_project"]


def _read_config() -> tuple[Path, Any]:
    import tomlkit

    config_file = cfgmod.config_path()
    try:
        text = cfgmod.config_text(config_file)
        doc = tomlkit.parse(text) if text is not None else tomlkit.document()
    except KgError:
        raise
    except Exception as exc:
        raise KgError(f"{config_file}: not valid TOML ({exc}); fix it first") from exc
    return config_file, doc


def _write_config(config_file: Path, doc: Any) -> None:
    import tomlkit

    config_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(config_file, tomlkit.dumps(doc).encode())


def add_project(path: Path, name: str | None = None) -> dict[str, Any]:
    import tomlkit

    root = path.expanduser().resolve()
    if not root.is_dir():
        raise KgError(f"{path}: not a folder; pass the repository's root")
    name = name or root.name
    if name == "vault" or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise KgError(f"'{name}': not a usable scope name; pass --name with letters, digits, - or _")
    config_file, doc = _read_config()
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
    _write_config(config_file, doc)
    return {"name": name, "path": str(root), "config": str(config_file)}


def remove_project(name: str) -> dict[str, Any]:
    """Drop a project from the config; the repository and its artifacts are not touched."""
    config_file, doc = _read_config()
    projects = doc.get("projects")
    entry = projects.get(name) if projects is not None else None
    if entry is None:
        known = ", ".join(sorted(projects)) if projects else "none"
        raise KgError(f"no project named '{name}' in {config_file} (registered: {known}); `kg project list` shows them")
    path = entry if isinstance(entry, str) else entry.get("path", "")
    del projects[name]
    _write_config(config_file, doc)
    root = Path(str(path)).expanduser()
    return {"name": name, "path": str(root), "config": str(config_file), "artifacts": str(root / cfgmod.OUT_DIRNAME)}
