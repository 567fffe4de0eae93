"""`kg recall` on kg's own passage index: entries asked about in other words, with no memsearch or Milvus.

A generated journal (`episodic_corpus`), built and embedded in-process with wordllama. memsearch
and pymilvus are made unimportable for these tests: recall must not need them by default.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

from episodic_corpus import write_journal
from vault_kg import api
from vault_kg.core.scopes import vault_scope
from vault_kg.jobs import embed

END = date(2025, 3, 14)
PARAPHRASE = "money numbers wrong for european transfers"  # shares no word with the entry it asks about
ENTRY = "Reconciled the ledger drift for EUR payouts"


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = tmp_path_factory.mktemp("recall-passages") / "vault"
    vault.mkdir()
    write_journal(vault, days=30, end=END)
    assert any(ENTRY in p.read_text(encoding="utf-8") for p in (vault / "journal").glob("*.md")), "the corpus changed: pick another entry"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KG_OLLAMA", "off")
        api.update(vault=vault)
    embed.catch_up(vault_scope(vault), ("wordllama",))
    return vault


@pytest.fixture(autouse=True)
def no_memsearch(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("memsearch", "pymilvus", "milvus_lite"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError


def test_recall_finds_a_paraphrase_by_meaning_without_memsearch(journal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not api.recall_result(PARAPHRASE, journal).hits, "BM25 alone must miss it, or this proves nothing"
    monkeypatch.setenv("KG_EMBEDDERS", "wordllama")
    found = api.recall_result(PARAPHRASE, journal, limit=5)
    assert found.mode == "search" and found.hits, found
    assert ENTRY in found.hits[0].entry.text, [h.entry.text for h in found.hits]


def test_recall_keeps_its_date_range(journal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_EMBEDDERS", "wordllama")
    found = api.recall_result(f"{PARAPHRASE} on 2025-03-01", journal, limit=5)
    assert all(h.entry.day == date(2025, 3, 1) for h in found.hits), [h.entry.day for h in found.hits]
