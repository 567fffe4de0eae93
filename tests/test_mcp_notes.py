"""The memory-server tool set over the real MCP client (stdio, `kg mcp` as a subprocess):
read_note, list_notes, append_note, edit_note, journal_add, recent, update, lint, brief. Each
write goes through the guarded write; bad input is one line and leaves every file as it was."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest
from fastmcp.exceptions import ToolError

from conftest import EXAMPLE_VAULT, kg_process
from mcp_client import SyncClient, start_server

NOTE = "services/Payments API.md"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("mcp-notes")
    vault = base / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    config = base / "config.toml"
    config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
    done = kg_process("build", "--vault", str(vault), env={"KG_CONFIG": str(config), "KG_OLLAMA": "off", "KG_VAULT": ""}, cwd=base)
    assert done.returncode == 0, done.stderr
    return {"base": base, "vault": vault, "config": config}


@pytest.fixture(scope="module")
def mcp(world: dict[str, Path]) -> Iterator[SyncClient]:
    client = start_server(world["config"], world["base"])
    yield client
    client.close()


def snapshot(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md")) if "kg-out" not in p.parts}


def refused(mcp: SyncClient, world: dict[str, Path], tool: str, match: str, **args: object) -> str:
    """The call fails with one line matching `match`, and no note changed."""
    before = snapshot(world["vault"])
    with pytest.raises(ToolError, match=match) as error:
        mcp.call(tool, **args)
    message = str(error.value).strip()
    assert len(message.splitlines()) == 1, message
    assert snapshot(world["vault"]) == before, f"{tool} wrote something although it refused"
    return message


def test_structured_tools_declare_their_output_schema(mcp: SyncClient) -> None:
    tools = {t.name: t for t in mcp.run(mcp.client.list_tools())}
    for name, field in (("read_note", "frontmatter"), ("list_notes", "notes"), ("append_note", "indexed"), ("edit_note", "path"), ("journal_add", "day"), ("recent", "journal")):
        schema = tools[name].output_schema
        assert schema and schema["type"] == "object" and field in schema["properties"], name
    assert tools["read_note"].annotations.read_only_hint and not tools["edit_note"].annotations.destructive_hint


def test_read_note_gives_the_full_text_and_the_frontmatter(mcp: SyncClient, world: dict[str, Path]) -> None:
    result = mcp.call("read_note", note="Payments API")
    data = result.structured_content
    assert data["path"] == NOTE and data["text"] == (world["vault"] / NOTE).read_text(encoding="utf-8")
    assert data["frontmatter"]["summary"].startswith("Acme's subscription billing API") and "client/acme" in data["frontmatter"]["tags"]
    assert result.content[0].text.startswith(f"{NOTE} (") and data["frontmatter"]["summary"] in result.content[0].text
    assert result.data.path == NOTE  # the client parsed the structured content against the declared schema


def test_list_notes_by_folder_tag_and_recent_change(mcp: SyncClient, world: dict[str, Path]) -> None:
    services = mcp.call("list_notes", folder="services", sort="path").structured_content
    assert services["notes"] and all(n["path"].startswith("services/") for n in services["notes"])
    assert [n["path"] for n in services["notes"]] == sorted(n["path"] for n in services["notes"])
    acme = mcp.call("list_notes", tag="client/acme").structured_content["notes"]
    assert acme and all(any(t.startswith("client/acme") for t in n["tags"]) for n in acme)
    assert NOTE in {n["path"] for n in acme}
    old = world["vault"] / "clients" / "Globex.md"
    import os

    os.utime(old, (1_000_000_000, 1_000_000_000))
    fresh = {n["path"] for n in mcp.call("list_notes", since_days=30, limit=1000).structured_content["notes"]}
    assert "clients/Globex.md" not in fresh and NOTE in fresh
    refused(mcp, world, "list_notes", "folder", folder="../outside")


def test_append_note_writes_through_the_guard_and_updates_the_graph(mcp: SyncClient, world: dict[str, Path]) -> None:
    before = (world["vault"] / NOTE).read_text(encoding="utf-8")
    result = mcp.call("append_note", note=NOTE, text="Retry budgets are set in [[Rotate Stripe Keys]] too.")
    assert result.structured_content["indexed"] is True and result.structured_content["action"] == "appended"
    after = (world["vault"] / NOTE).read_text(encoding="utf-8")
    assert after.startswith(before.rstrip("\n")) and after.endswith("Retry budgets are set in [[Rotate Stripe Keys]] too.\n")
    links = mcp.call("neighbors", node="Payments API", relation="links_to", direction="out", limit=500).structured_content["neighbors"]
    assert any(n["id"] == "note:runbooks/Rotate Stripe Keys.md" for n in links)


def test_edit_note_replaces_one_exact_string(mcp: SyncClient, world: dict[str, Path]) -> None:
    result = mcp.call("edit_note", note=NOTE, old_text="FastAPI + Postgres", new_text="FastAPI + PostgreSQL 16").structured_content
    assert result["replaced"] == 1 and result["indexed"] is True
    text = (world["vault"] / NOTE).read_text(encoding="utf-8")
    assert "FastAPI + PostgreSQL 16" in text and "FastAPI + Postgres)" not in text
    assert mcp.call("explain", node="Payments API").structured_content["node"]["summary"].startswith("Acme's subscription billing API (FastAPI + PostgreSQL 16)")


def test_bad_writes_are_one_line_and_write_nothing(mcp: SyncClient, world: dict[str, Path]) -> None:
    assert "occurs" in refused(mcp, world, "edit_note", "occurs [0-9]+ times", note=NOTE, old_text="Stripe", new_text="Adyen")
    refused(mcp, world, "edit_note", "not in the note", note=NOTE, old_text="no such sentence anywhere", new_text="x")
    refused(mcp, world, "append_note", "secret", note=NOTE, text="the key is AKIAIOSFODNN7EXAMPLE")
    refused(mcp, world, "edit_note", "secret", note=NOTE, old_text="FastAPI", new_text="ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    refused(mcp, world, "append_note", "escapes the vault|not inside the vault|no note", note="../outside.md", text="x")
    refused(mcp, world, "append_note", "not inside the vault|no note", note="/etc/passwd", text="x")
    refused(mcp, world, "read_note", "no note", note="No such note anywhere")
    refused(mcp, world, "append_note", "scope/global|kg promote", note=NOTE, text="Everyone uses this. #scope/global")
    refused(mcp, world, "edit_note", "scope/", note=NOTE, old_text="  - scope/acme\n", new_text="")  # the note met the contract: it must still
    refused(mcp, world, "list_notes", "limit", limit=0)
    assert not (world["base"] / "outside.md").exists()


def test_paths_out_of_the_vault_are_refused_when_the_file_exists(mcp: SyncClient, world: dict[str, Path]) -> None:
    """The escape guard itself answers: the target exists outside the vault, so no "no note" lookup
    can stand in for it; nothing of it is read, and nothing is written to it."""
    outside = world["base"] / "Private.md"
    text = "---\nsummary: private diary outside the vault\ntags: [topic/private]\n---\n# Private\n\nPRIVATE-LINE-7731\n"
    outside.write_text(text, encoding="utf-8")
    link = world["vault"] / "notes" / "Linked.md"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(outside)
    try:
        for note in ("../Private.md", "notes/../../Private.md", "../Private"):
            assert "PRIVATE-LINE" not in refused(mcp, world, "read_note", "escapes the vault", note=note)
            refused(mcp, world, "append_note", "escapes the vault", note=note, text="appended from the vault")
            refused(mcp, world, "edit_note", "escapes the vault", note=note, old_text="PRIVATE-LINE-7731", new_text="changed")
        refused(mcp, world, "read_note", "not inside the vault", note=str(outside))
        refused(mcp, world, "append_note", "symlink", note="notes/Linked.md", text="through the link")
        assert "PRIVATE-LINE" not in refused(mcp, world, "read_note", "symlink", note="notes/Linked.md")
        assert outside.read_text(encoding="utf-8") == text
    finally:
        link.unlink()
        outside.unlink()


def test_journal_add_then_recent_shows_it_with_the_changed_notes(mcp: SyncClient, world: dict[str, Path]) -> None:
    entry = mcp.call("journal_add", text="Moved the payments API to PostgreSQL 16", project="payments").structured_content
    assert entry["file"].startswith("journal/") and entry["project"] == "payments"
    day = (world["vault"] / entry["file"]).read_text(encoding="utf-8")
    assert "Moved the payments API to PostgreSQL 16" in day
    refused(mcp, world, "edit_note", "append-only", note=entry["file"], old_text="Moved", new_text="Did not move")
    activity = mcp.call("recent", days=1)
    data = activity.structured_content
    assert any(e["text"].endswith("Moved the payments API to PostgreSQL 16") for e in data["journal"])
    assert NOTE in {n["path"] for n in data["notes"]} and not any(n["path"].startswith("journal/") for n in data["notes"])
    assert "Moved the payments API" in activity.content[0].text


def test_update_picks_up_a_note_written_by_another_program(mcp: SyncClient, world: dict[str, Path]) -> None:
    note = world["vault"] / "inbox" / "Airship dock.md"
    note.write_text("---\nsummary: Where the airship docks\ntags: [topic/airship, scope/global]\n---\n# Airship dock\n", encoding="utf-8")
    run = mcp.call("update", scope="vault")
    assert "inbox/Airship dock.md" in run.structured_content["extracted"] and run.content[0].text.startswith("updated vault:")
    assert mcp.call("explain", node="Airship dock").structured_content["node"]["summary"] == "Where the airship docks"


def test_lint_and_brief(mcp: SyncClient) -> None:
    report = mcp.call("lint")
    assert report.structured_content["notes"] > 10
    assert any(p["source"].startswith("broken/") or p["source"].startswith("inbox/") for p in report.structured_content["problems"])
    assert report.content[0].text.splitlines()[-1].endswith("notes")
    brief = mcp.call("brief")
    assert brief.content[0].text.startswith("<vault-kg-brief>") and "Central notes in the vault" in brief.structured_content["sections"]
