"""One way to find where you are: the vault (config.find_vault / resolve_vault, from a start
folder) and the project (scopes.project_at), the same for the CLI, the hooks and the MCP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hooks.common import hook_env
from vault_kg.storage.cache import problem
from vault_kg.core.config import find_vault, load_config, resolve_vault
from vault_kg.core.errors import KgError
from vault_kg.core.place import locate
from vault_kg.storage.layout import cache_db
from vault_kg.core.scopes import detect_project, project_at


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "notes").mkdir()
    outer = tmp_path / "src" / "mono"
    inner = outer / "services" / "billing"
    plain = tmp_path / "src" / "plain"  # registered, but not a git repository
    for folder in (outer / ".git", inner / "app", plain / "lib"):
        folder.mkdir(parents=True)
    (tmp_path / "link").symlink_to(inner)
    config = tmp_path / "config.toml"
    config.write_text(f'vault = "{vault}"\n[projects]\nmono = "{outer}"\nbilling = "{inner}"\nplain = "{plain}"\n', encoding="utf-8")
    monkeypatch.setenv("KG_CONFIG", str(config))
    monkeypatch.delenv("KG_VAULT", raising=False)
    return {"base": tmp_path, "vault": vault, "outer": outer, "inner": inner, "plain": plain}


def test_one_rule_for_this_path_belongs_to_that_project(tree: dict[str, Path]) -> None:
    cfg = load_config()
    cases = {
        tree["outer"] / "README.md": "mono",
        tree["inner"] / "app" / "x.py": "billing",  # the deepest registered folder wins
        tree["base"] / "link" / "app": "billing",  # real paths are compared
        tree["plain"] / "lib": "plain",  # no .git needed: registration decides
        tree["base"] / "src": None,
    }
    for path, name in cases.items():
        found = project_at(cfg, path)
        assert (found[0] if found else None) == name, path
        assert detect_project(cfg, path) == name, path
        place = hook_env({"cwd": str(path)})
        assert (place.project_of(path) or (None,))[0] == name, path


def test_the_vault_is_found_the_same_way_with_or_without_raising(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config()
    inside = tree["vault"] / "notes"
    assert find_vault(start=inside) == resolve_vault(start=inside) == tree["vault"].resolve()
    assert hook_env({"cwd": str(inside)}).vault == tree["vault"].resolve()
    assert locate(tree["outer"]).vault == tree["vault"].resolve()  # from the config file
    gone = tree["base"] / "gone"
    monkeypatch.setenv("KG_VAULT", str(gone))
    assert find_vault(cfg=cfg, start=inside) is None and locate(inside).vault is None
    with pytest.raises(KgError, match="does not exist"):
        resolve_vault(cfg=cfg, start=inside)


def test_cache_problem_names_what_is_wrong_without_touching_the_cache(tree: dict[str, Path]) -> None:
    db = cache_db(tree["vault"])
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all, just bytes" * 100)
    before = db.read_bytes()
    assert "not a database" in (problem(db) or "")
    assert db.read_bytes() == before


@pytest.mark.parametrize("event", ["post-tool-use", "pre-tool-use"])
def test_a_hook_with_nothing_to_do_imports_nothing_heavy(tree: dict[str, Path], event: str) -> None:
    """An edit outside the vault and the projects: the place is resolved, nothing else is loaded."""
    import json
    import os
    import subprocess
    import sys

    payload = {"cwd": str(tree["base"]), "tool_name": "Edit", "tool_input": {"file_path": str(tree["base"] / "elsewhere.py"), "old_string": "a", "new_string": "b"}}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from vault_kg.cli.entry import main; main()", "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "vault_kg.core.place" in loaded or event == "pre-tool-use"
    heavy = {"networkx", "yaml", "orjson", "sqlite3", "typer", "fastmcp", "pydantic", "vault_kg.update.engine", "vault_kg.storage.cache", "vault_kg.cli.app"}
    assert not heavy & loaded, sorted(heavy & loaded)
