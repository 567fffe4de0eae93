"""A vault and a registered project in one folder: each scope's artifacts stay its own.

Phase 1 of #27 found that both wrote `<folder>/kg-out/`: building the vault there rebuilt the cache
over the project's code graph, and from then on `kg query --scope NAME` answered with notes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_kg import api
from vault_kg.core.errors import KgError
from vault_kg.core.projects import add_project


def test_a_vault_build_never_overwrites_a_project_graph_in_the_same_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "both"
    (folder / ".git").mkdir(parents=True)
    (folder / "retry.py").write_text('def backoff_delay(attempt: int) -> float:\n    """Doubling backoff."""\n    return 2.0**attempt\n', encoding="utf-8")
    (folder / "Backoff.md").write_text("# Backoff\n\nWe double the backoff delay.\n", encoding="utf-8")
    add_project(folder, "svc")
    api.update(scope="svc")
    before = [h["id"] for h in api.query("backoff delay", scope="svc")["hits"]]
    assert before and all(not i.startswith("note:") for i in before)
    with pytest.raises(KgError, match="a vault and a project in one folder cannot share it"):
        api.update(vault=folder)
    assert [h["id"] for h in api.query("backoff delay", scope="svc")["hits"]] == before, "the code graph was rebuilt as a vault"
