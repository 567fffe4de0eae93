"""The memsearch recall backend is an extra: choosing it without its packages is one clear line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from episodic.recall import JournalIndex, require_memsearch
from vault_kg.core.errors import KgError


def test_the_memsearch_backend_without_its_packages_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pymilvus" else real(name, *a))
    vault = tmp_path / "vault"
    vault.mkdir()
    with pytest.raises(KgError) as raised:
        JournalIndex(vault).open()
    message = str(raised.value)
    assert "kg-vault[memsearch]" in message and "pymilvus" in message and "\n" not in message
    assert not (vault / "kg-out" / "journal.db").exists()  # nothing opened before the check


def test_the_extra_installed_passes_the_check() -> None:
    require_memsearch()  # the suite installs kg-vault[test], which includes the extra
