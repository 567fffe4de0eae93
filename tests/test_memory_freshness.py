"""Freshness at read time: a note whose anchored code changed is served as stale before any update
(query, explain, MCP, the session brief), and a query whose only match is stale says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anchor_helpers import World, anchor, kg, make_world, settle
from conftest import kg_process


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("KG_HTML", "off")
    w = make_world(tmp_path)
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")
    settle(w)
    code, _, err = kg("build", "--vault", str(w.vault))
    assert code == 0, err
    return w


def hits(world: World, question: str, *extra: str) -> list[dict]:
    code, out, err = kg("query", question, "--vault", str(world.vault), "--json", *extra)
    assert code == 0, err
    return json.loads(out)["hits"]


def test_a_body_edit_without_update_is_served_as_stale(world: World) -> None:
    assert [h["id"] for h in hits(world, "fetch retries three times")][:1] == ["note:notes/Retry.md"]
    world.edit("src/retry.py", "range(3)", "range(5)")  # a `git pull`: no hook, no update
    assert "note:notes/Retry.md" not in {h["id"] for h in hits(world, "fetch retries three times")}
    flagged = {h["id"]: h for h in hits(world, "fetch retries three times", "--include-stale")}
    assert flagged["note:notes/Retry.md"]["status"] == "stale"
    code, out, err = kg("query", "fetch retries three times", "--vault", str(world.vault))
    assert "Retry (note) [STALE]" not in out
    code, out, err = kg("explain", "notes/Retry.md", "--vault", str(world.vault))
    assert code != 0 and "is stale: not served as current" in err
    code, out, err = kg("explain", "notes/Retry.md", "--vault", str(world.vault), "--include-stale")
    assert code == 0 and "stale_reason: hash changed: src/retry.py › class Client › method fetch (seen at read time" in out


def test_a_comment_edit_keeps_the_note_current(world: World) -> None:
    world.edit("src/retry.py", "# try a few times before giving up", "# retry, then give up")
    assert "note:notes/Retry.md" in {h["id"] for h in hits(world, "fetch retries three times")}


def test_a_query_whose_only_match_is_stale_gets_a_hint(world: World) -> None:
    world.edit("src/retry.py", "range(3)", "range(5)")
    code, out, _ = kg("query", "three", "--vault", str(world.vault))
    assert code == 0
    assert out.startswith("no current matches for 'three': 1 stale or superseded match(es) are hidden; pass --include-stale")
    code, out, _ = kg("query", "zebra", "--vault", str(world.vault))
    assert out.startswith("no matches for 'zebra'")


def test_the_mcp_server_serves_it_as_stale(world: World) -> None:
    import asyncio

    from fastmcp import Client

    from vault_kg.mcp.server import build_server

    async def ask() -> tuple[dict, dict, dict]:
        async with Client(build_server(world.vault)) as client:
            before = (await client.call_tool("explain", {"node": "notes/Retry.md", "include_stale": True})).structured_content
            world.edit("src/retry.py", "range(3)", "range(5)")  # while the server holds its view open
            after = (await client.call_tool("explain", {"node": "notes/Retry.md", "include_stale": True})).structured_content
            query = (await client.call_tool("query", {"question": "fetch retries three times", "include_stale": True})).structured_content
            return before, after, query

    before, after, query = asyncio.run(ask())
    assert before["node"].get("status", "live") == "live"
    assert after["node"]["status"] == "stale" and "seen at read time" in after["node"]["stale_reason"]
    assert {h["id"]: h["status"] for h in query["hits"]}["note:notes/Retry.md"] == "stale"


def test_the_brief_lists_it_as_stale_and_not_as_central(world: World) -> None:
    payload = {"session_id": "s", "transcript_path": "/nonexistent.jsonl", "cwd": str(world.repo), "hook_event_name": "SessionStart", "source": "startup"}

    def brief() -> str:
        done = kg_process("hook", "session-start", input=json.dumps(payload), cwd=world.repo, env={"KG_VAULT": str(world.vault)})
        assert done.returncode == 0 and not done.stderr, done.stderr
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]

    before = brief()
    central = before.split("Central notes in the vault", 1)[1]
    assert "Retry (notes/Retry.md)" in central
    world.edit("src/retry.py", "range(3)", "range(5)")
    after = brief()
    stale = after.split("Stale notes", 1)[1].split("Central notes", 1)[0]
    assert "Retry (notes/Retry.md): hash changed: src/retry.py › class Client › method fetch" in stale
    assert "Retry (notes/Retry.md)" not in after.split("Central notes in the vault", 1)[1]


def test_a_view_the_server_keeps_open_checks_again_on_each_call(world: World) -> None:
    from vault_kg.mcp.server import ViewCache
    from vault_kg.core.scopes import vault_scope

    views = ViewCache()
    scope = vault_scope(world.vault)
    views.get(scope)  # opening the cache may create its -wal file: the signature settles after
    first = views.get(scope)
    assert first.nodes["note:notes/Retry.md"].get("status", "live") == "live"
    world.edit("src/retry.py", "range(3)", "range(5)")
    again = views.get(scope)
    assert again is first  # the same open view (the cache file did not change)
    assert again.nodes["note:notes/Retry.md"]["status"] == "stale"
