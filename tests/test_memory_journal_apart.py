"""Journal days are episodic memory: out of ranking, communities, affected and default queries,
still in the index and reachable with `--kind journal`; and the query filters (tag, folder, kind,
date) on the library, the CLI and the MCP tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anchor_helpers import kg
from vault_kg.core.memory_kinds import Filters, is_episodic, make_filters
from vault_kg.core.errors import KgError
from vault_kg.query.graph_view import load_view
from vault_kg.query import verbs as q
from vault_kg.core.scopes import vault_scope


def _note(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KG_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("KG_OLLAMA", "off")
    monkeypatch.setenv("KG_HTML", "off")
    v = tmp_path / "vault"
    (v / ".obsidian").mkdir(parents=True)
    _note(v / "services/Payments API.md", "---\nsummary: The payments API takes card charges through Stripe.\ntags: [tool/stripe, client/acme]\n---\nCharges go to [[Stripe]]. Webhooks retry.\n")
    _note(v / "tools/Stripe.md", "---\nsummary: Stripe, our card processor.\ntags: [tool/stripe]\ndate: 2024-02-01\n---\nUsed by [[Payments API]].\n")
    _note(v / "tools/Redis.md", "---\nsummary: Redis queues for webhook retries.\ntags: [tool/redis]\ndate: 2023-05-01\n---\nSee [[Payments API]].\n")
    # Journal days that link everywhere and each other: as ordinary notes they would be crowned.
    for day in ("2025-03-12", "2025-03-13", "2025-03-14"):
        others = " ".join(f"[[{d}]]" for d in ("2025-03-12", "2025-03-13", "2025-03-14") if d != day)
        _note(v / f"journal/{day}.md", f"---\ntags: [type/journal]\n---\n## 10:00 · payments\nWorked on the Stripe webhooks and the payments API. {others} [[Stripe]] [[Payments API]]\n")
    for day in ("2025-03-12", "2025-03-13"):  # and links into the journal from notes
        _note(v / f"inbox/Link {day}.md", f"---\nsummary: pointer\n---\n[[{day}]]\n")
    code, out, err = kg("build", "--vault", str(v))
    assert code == 0, err
    return v


def test_journal_days_are_not_ranked_nor_clustered(vault: Path) -> None:
    graph = json.loads((vault / "kg-out" / "graph.json").read_text())
    nodes = {n["id"]: n for n in graph["nodes"]}
    journal = [nid for nid in nodes if nid.startswith("note:journal/")]
    assert len(journal) == 3
    assert all(is_episodic(nodes[nid]) for nid in journal)
    assert not set(graph["graph"]["god_nodes"]) & set(journal)
    assert all(nodes[nid].get("rank", 0.0) == 0.0 and "community" not in nodes[nid] for nid in journal)
    members = {nid for c in graph["graph"]["communities"] for nid in c["members_top"]}
    assert not members & set(journal)
    assert "note:tools/Stripe.md" in graph["graph"]["god_nodes"]
    brief = json.loads((vault / "kg-out" / "brief.json").read_text())
    assert not [g for g in brief["god_nodes"] if g["id"].startswith("note:journal/")]


def test_default_query_leaves_the_journal_out_and_kind_journal_reaches_it(vault: Path) -> None:
    code, out, _ = kg("query", "stripe webhooks payments", "--vault", str(vault), "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits and not [h for h in hits if h["source"].startswith("journal/")]
    code, out, _ = kg("query", "stripe webhooks payments", "--vault", str(vault), "--kind", "journal", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert sorted(h["source"] for h in hits if h["kind"] == "note") == ["journal/2025-03-12.md", "journal/2025-03-13.md", "journal/2025-03-14.md"]
    assert all(h["source"].startswith("journal/") for h in hits)
    code, out, _ = kg("query", "stripe webhooks", "--vault", str(vault), "--kind", "journal", "--since", "2025-03-13", "--until", "2025-03-13", "--json")
    assert {h["source"] for h in json.loads(out)["hits"]} == {"journal/2025-03-13.md"}


def test_affected_leaves_the_journal_out(vault: Path) -> None:
    answer = q.affected(load_view(vault_scope(vault)), "Stripe")
    ids = {h["id"] for h in answer["affected"]}
    assert "note:services/Payments API.md" in ids
    assert not [i for i in ids if "journal/" in i]


def test_tag_folder_and_date_filters(vault: Path) -> None:
    view = load_view(vault_scope(vault))
    scope = vault_scope(vault)
    by_tag = q.query([scope], "payments stripe redis webhook", filters=make_filters(tags=["client"]), views=[view])
    assert {h["id"] for h in by_tag["hits"]} == {"note:services/Payments API.md"}
    by_folder = q.query([scope], "payments stripe redis webhook", filters=make_filters(folder="tools/"), views=[load_view(scope)])
    assert {h["id"] for h in by_folder["hits"]} == {"note:tools/Stripe.md", "note:tools/Redis.md"}
    by_date = q.query([scope], "payments stripe redis webhook", filters=make_filters(folder="tools", since="2024-01-01"), views=[load_view(scope)])
    assert {h["id"] for h in by_date["hits"]} == {"note:tools/Stripe.md"}
    nothing = q.query([scope], "payments stripe redis webhook", filters=make_filters(kinds=["function"]), views=[load_view(scope)])
    assert nothing["hits"] == []


def test_bad_filters_get_one_line() -> None:
    with pytest.raises(KgError, match="unknown kind 'notes'"):
        make_filters(kinds=["notes"])
    with pytest.raises(KgError, match="--since '14/03/2025': not a date"):
        make_filters(since="14/03/2025")
    assert not Filters().admits({"kind": "note", "source": "journal/2025-03-14.md"})
    assert Filters().admits({"kind": "note", "source": "journal/notes.md"})


def test_the_mcp_query_tool_takes_the_filters(vault: Path) -> None:
    import asyncio

    from fastmcp import Client

    from vault_kg.mcp.server import build_server

    async def ask() -> tuple[dict, dict]:
        async with Client(build_server(vault)) as client:
            plain = await client.call_tool("query", {"question": "stripe webhooks payments"})
            journal = await client.call_tool("query", {"question": "stripe webhooks payments", "kinds": ["journal"], "since": "2025-03-14"})
            return plain.structured_content, journal.structured_content

    plain, journal = asyncio.run(ask())
    assert plain["hits"] and not [h for h in plain["hits"] if h["source"].startswith("journal/")]
    assert {h["source"] for h in journal["hits"]} == {"journal/2025-03-14.md"}
