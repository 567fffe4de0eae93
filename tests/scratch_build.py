"""An incremental result against a from-scratch build of the same vault, byte for byte."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from vault_kg.storage.cache import ScopeCache

from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

ARTIFACTS = ("graph.json", "GRAPH_REPORT.md", "brief.json")


def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config_file: bool = True) -> None:
    """No graph.html, no model pass, a config of the test's own and no KG_VAULT. With
    `config_file`, that config exists: a missing one is watched through its folder, which every
    scratch build changes (and a changed dependency is never patched)."""
    monkeypatch.setenv("KG_HTML", "off")
    monkeypatch.setenv("KG_OLLAMA", "off")
    monkeypatch.setenv("KG_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.delenv("KG_VAULT", raising=False)
    if config_file:
        (tmp_path / "config.toml").write_text("")


def numbered_notes(root: Path, notes: int = 30) -> Path:
    """A vault of `notes` notes, each with a summary, a tag, an alias, a link to another note, a
    dangling link, an inline tag and two sections: what the patch tests edit."""
    root.mkdir(parents=True)
    for i in range(notes):
        body = "\n".join(f"## Part {k}\ntext {k} of note {i}" for k in range(2))
        (root / f"Note {i}.md").write_text(f"---\nsummary: note {i}\ntags: [topic/t{i % 3}]\naliases: [n{i}]\n---\n[[Note {(i * 7 + 1) % notes}]] [[Missing {i % 4}]] #inline/t{i % 2}\n{body}\n")
    return root


def artifacts(vault: Path) -> dict[str, bytes]:
    """The vault's artifacts as they are on disk."""
    return {name: (vault / "kg-out" / name).read_bytes() for name in ARTIFACTS}


def scratch(vault: Path, tmp_path: Path) -> dict[str, bytes]:
    """The artifacts a fresh build of a copy of the vault writes, with the copy's path put back."""
    copy = tmp_path / "scratch"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(vault, copy, ignore=shutil.ignore_patterns("kg-out"))
    run(vault_scope(copy))
    return {name: data.replace(str(copy).encode(), str(vault).encode()) for name, data in artifacts(copy).items()}


@contextmanager
def whole_route_loads() -> Iterator[list[int]]:
    """Counts the runs inside the block that load every extraction (what the whole route does first)."""
    calls: list[int] = []
    original = ScopeCache.load_all

    def counting(self: ScopeCache):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ScopeCache, "load_all", counting)
        yield calls
