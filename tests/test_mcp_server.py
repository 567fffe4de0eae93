"""The MCP server driven by a real MCP client: fastmcp's Client starting `kg mcp` over stdio.

One server process serves the whole module (starting one costs about a second); its client
lives on a private event-loop thread and the tests call it synchronously through `call()`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
from fastmcp.exceptions import ToolError

from conftest import EXAMPLE_VAULT, REPO, kg_process
from mcp_client import SyncClient, start_server

TOOLS = {
    "query",
    "explain",
    "neighbors",
    "path",
    "god_nodes",
    "affected",
    "check",
    "recall",
    "remember",
    "brief",
    "read_note",
    "list_notes",
    "append_note",
    "edit_note",
    "journal_add",
    "recent",
    "update",
    "lint",
    "doctor",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A built copy of the example vault, a built project, and a config naming both."""
    base = tmp_path_factory.mktemp("mcp")
    vault = base / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    project = base / "payments"
    shutil.copytree(REPO / "tests" / "fixtures" / "code" / "python_repo", project)
    (project / ".git").mkdir()
    config = base / "config.toml"
    config.write_text(f'vault = "{vault}"\n\n[projects]\npayments = "{project}"\n', encoding="utf-8")
    env = {"KG_CONFIG": str(config), "KG_OLLAMA": "off", "KG_VAULT": ""}
    for args in (["build", "--vault", str(vault)], ["build", "--scope", "payments"]):
        done = kg_process(*args, env=env, cwd=base)
        assert done.returncode == 0, done.stderr
    done = kg_process("journal", "add", "Fixed the Stripe webhook retries with exponential backoff", "--project", "payments", "--vault", str(vault), env=env)
    assert done.returncode == 0, done.stderr
    return {"base": base, "vault": vault, "project": project, "config": config}


@pytest.fixture(scope="module")
def mcp(world: dict[str, Path]) -> Iterator[SyncClient]:
    client = start_server(world["config"], world["base"])
    yield client
    client.close()


def test_lists_every_tool_with_a_self_teaching_description(mcp: SyncClient) -> None:
    tools = {t.name: t for t in mcp.run(mcp.client.list_tools())}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert "Example:" in (tool.description or ""), tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object" and tool.output_schema["properties"], f"{tool.name}: no output schema"
    budget = tools["query"].input_schema["properties"]["budget"]
    assert budget["minimum"] == 100 and budget["maximum"] == 50_000
    assert tools["god_nodes"].input_schema["properties"]["n"]["maximum"] == 200


def test_query_answers_with_citable_hits_text_and_data(mcp: SyncClient) -> None:
    result = mcp.call("query", question="stripe webhook retries", budget=600)
    hits = result.structured_content["hits"]
    assert hits and hits[0]["seed"]
    assert any("Webhook" in h["label"] for h in hits)
    text = result.content[0].text
    assert f"{hits[0]['source']}:{hits[0]['line']}" in text


def test_query_across_scopes_names_the_scope_of_each_hit(mcp: SyncClient) -> None:
    result = mcp.call("query", question="engine helper", scopes=["vault", "payments"])
    assert result.structured_content["multi_scope"] is True
    assert {h["scope"] for h in result.structured_content["hits"]} <= {"vault", "payments"}
    assert any(h["scope"] == "payments" for h in result.structured_content["hits"])


def test_explain_neighbors_and_path(mcp: SyncClient) -> None:
    explained = mcp.call("explain", node="Payments API").structured_content
    assert explained["node"]["id"] == "note:services/Payments API.md"
    assert explained["incoming"]
    near = mcp.call("neighbors", node="Payments API", direction="in", relation="links_to").structured_content
    assert near["neighbors"] and all(n["direction"] == "in" and n["relation"] == "links_to" for n in near["neighbors"])
    route = mcp.call("path", a="Payments Worker", b="Acme Corp").structured_content
    assert route["found"] and route["steps"][0] == "note:services/Payments Worker.md" and route["steps"][-1] == "note:clients/Acme Corp.md"


def test_hints_in_answers_and_errors_name_the_tools_and_their_parameters_not_the_cli(mcp: SyncClient, world: dict[str, Path]) -> None:
    with pytest.raises(ToolError) as missing:
        mcp.call("explain", node="No such note anywhere")
    assert 'try `query(question="No such note anywhere")` to search' in str(missing.value) and "kg query" not in str(missing.value)
    cut = mcp.call("query", question="webhook retries", budget=100).content[0].text
    assert "[truncated:" in cut and "raise budget to see them" in cut and "--budget" not in cut, cut
    retry = world["vault"] / "notes" / "Stale Hint.md"
    retry.parent.mkdir(exist_ok=True)
    retry.write_text("---\nsummary: Zebrafish.\ntags: [scope/global]\n---\nZebrafish.\n")
    env = {"KG_CONFIG": str(world["config"]), "KG_OLLAMA": "off", "KG_VAULT": ""}
    done = kg_process("retire", "notes/Stale Hint.md", "--reason", "the zebrafish left", "--vault", str(world["vault"]), env=env)
    assert done.returncode == 0, done.stderr
    mcp.call("update", scope="vault")
    hidden = mcp.call("query", question="zebrafish")
    text = hidden.content[0].text
    assert "pass include_stale=true to see them flagged, and `check()` says why" in text and "--include-stale" not in text, text


def test_doctor_answers_a_verdict_per_line(mcp: SyncClient) -> None:
    report = mcp.call("doctor", quick=True).structured_content
    verdicts = {line["check"]: line["verdict"] for line in report["lines"]}
    assert report["broken"] is False and verdicts["vault"] == "ok" and verdicts["scope vault"] in ("ok", "warn") and verdicts["model"] == "off"


def test_god_nodes_of_the_vault_and_of_a_project(mcp: SyncClient) -> None:
    vault_nodes = mcp.call("god_nodes", scope="vault", n=3).structured_content["nodes"]
    assert len(vault_nodes) == 3 and all(n["kind"] == "note" for n in vault_nodes)
    code_nodes = mcp.call("god_nodes", scope="payments", n=5).structured_content["nodes"]
    assert code_nodes and all(n["source"].endswith(".py") for n in code_nodes)


def test_affected_lists_the_dependants_of_a_symbol(mcp: SyncClient) -> None:
    result = mcp.call("affected", symbol="helper", scope="payments", depth=2).structured_content
    assert result["id"].endswith("helper")
    assert result["affected"], "something in the fixture repo calls helper()"


def test_recall_finds_the_journal_entry(mcp: SyncClient) -> None:
    result = mcp.call("recall", question="when did I fix the webhook retries", limit=3)
    entries = result.structured_content["entries"]
    assert entries and "exponential backoff" in entries[0]["text"]
    assert entries[0]["file"].startswith("journal/")


def test_remember_writes_a_contract_note_and_indexes_it(mcp: SyncClient, world: dict[str, Path]) -> None:
    result = mcp.call(
        "remember",
        path="notes/Retry budget.md",
        summary="Webhook retries back off exponentially, five attempts at most",
        tags=["topic/payments", "scope/payments"],
        body="Agreed after the [[Payments API]] incident.",
    ).structured_content
    assert result["indexed"] is True
    text = (world["vault"] / "notes" / "Retry budget.md").read_text(encoding="utf-8")
    assert text.startswith("---\nsummary: Webhook retries back off exponentially") and "scope/payments" in text
    explained = mcp.call("explain", node="Retry budget").structured_content
    assert any(i["id"] == "note:services/Payments API.md" for i in explained["outgoing"]["links_to"])
    with pytest.raises(ToolError, match="already exists"):
        mcp.call("remember", path="notes/Retry budget.md", summary="again", tags=["scope/payments"])


def test_remember_refuses_to_promote_a_note_to_scope_global(mcp: SyncClient, world: dict[str, Path]) -> None:
    """MCP writes skip the PreToolUse hook, so `remember` holds the guardrail's promotion rule itself."""
    tools = {t.name: t for t in mcp.run(mcp.client.list_tools())}
    schema = json.dumps(tools["remember"].input_schema) + (tools["remember"].description or "")
    assert "scope/payments" in schema and '"scope/global"]' not in schema
    for tags in (["topic/payments", "scope/global"], ["topic/payments"]):
        body = "" if "scope/global" in tags else "Shared by everyone. #scope/global"
        with pytest.raises(ToolError, match="kg promote") as refused:
            mcp.call("remember", path="notes/Everywhere.md", summary="Retries are global", tags=tags, body=body)
        assert len(str(refused.value).strip().splitlines()) == 1
        assert not (world["vault"] / "notes" / "Everywhere.md").exists()


def test_the_server_sees_updates_made_by_other_processes(mcp: SyncClient, world: dict[str, Path]) -> None:
    note = world["vault"] / "inbox" / "Zeppelin hangar.md"
    before = mcp.call("query", question="zeppelin hangar").structured_content["hits"]
    assert not any(h["source"] == "inbox/Zeppelin hangar.md" for h in before)
    note.write_text("---\nsummary: Where the zeppelin is kept\ntags: [topic/zeppelin, scope/global]\n---\n# Zeppelin hangar\n", encoding="utf-8")
    done = kg_process("update", str(note), "--vault", str(world["vault"]), env={"KG_CONFIG": str(world["config"]), "KG_OLLAMA": "off"})
    assert done.returncode == 0, done.stderr
    after = mcp.call("query", question="zeppelin hangar").structured_content["hits"]
    assert after[0]["source"] == "inbox/Zeppelin hangar.md"
    assert mcp.call("explain", node="Zeppelin hangar").structured_content["node"]["summary"] == "Where the zeppelin is kept"


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("remember", {"path": "../outside.md", "summary": "x", "tags": ["scope/payments"]}, "escapes the vault"),
        ("remember", {"path": "/etc/evil.md", "summary": "x", "tags": ["scope/payments"]}, "relative to the vault"),
        ("remember", {"path": "kg-out/x.md", "summary": "x", "tags": ["scope/payments"]}, "kg-out"),
        ("remember", {"path": "KG-OUT/x.md", "summary": "x", "tags": ["scope/payments"]}, "kg-out"),
        ("remember", {"path": ".Obsidian/x.md", "summary": "x", "tags": ["scope/payments"]}, "hidden folder"),
        ("remember", {"path": "notes/Key.md", "summary": "key", "tags": ["scope/payments"], "body": "aws AKIAIOSFODNN7EXAMPLE"}, "secret"),
        ("remember", {"path": "notes/Untagged.md", "summary": "x", "tags": ["payments"]}, "namespaced|scope/"),
        ("god_nodes", {"n": 0}, "greater than or equal to 1"),
        ("god_nodes", {"n": 5000}, "less than or equal to 200"),
        ("query", {"question": "x", "budget": 10**9}, "less than or equal to 50000"),
        ("affected", {"symbol": "helper", "scope": "payments", "depth": 99}, "less than or equal to 6"),
        ("neighbors", {"node": "Payments API", "direction": "sideways"}, "in|out|both"),
        ("query", {"question": ""}, "at least 1 character"),
        ("explain", {"node": "No such note anywhere"}, "no node named"),
        ("god_nodes", {"scope": "nosuchproject"}, "unknown scope 'nosuchproject'"),
    ],
)
def test_bad_inputs_are_rejected_with_one_clear_line(mcp: SyncClient, world: dict[str, Path], tool: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message) as error:
        mcp.call(tool, **args)
    assert len(str(error.value).strip().splitlines()) == 1, f"not one line: {error.value}"
    assert "pydantic" not in str(error.value) and "[type=" not in str(error.value)
    assert not (world["base"] / "outside.md").exists()
    assert not (world["vault"] / "notes" / "Key.md").exists()
    assert not (world["vault"] / "KG-OUT").exists()


def test_remember_with_an_anchor_and_check_after_the_code_changes(mcp: SyncClient, world: dict[str, Path]) -> None:
    made = mcp.call(
        "remember",
        path="notes/Helper contract.md",
        summary="helper() returns its argument unchanged",
        tags=["topic/payments", "scope/payments"],
        body="Callers rely on it.",
        anchor="pkg/util.py::helper",
        project="payments",
    ).structured_content
    assert made["anchor"]["project"] == "payments" and made["anchor"]["locator"].startswith("pkg/util.py")
    assert "anchors:" in (world["vault"] / "notes" / "Helper contract.md").read_text(encoding="utf-8")
    clean = mcp.call("check", scope="payments").structured_content
    assert not any(d["source"] == "notes/Helper contract.md" for d in clean["dirty"])
    source = world["project"] / "pkg" / "util.py"
    source.write_text(source.read_text().replace("    return x\n", "    return x * 2\n", 1))
    result = mcp.call("check", scope="payments")
    dirty = {d["source"]: d["reason"] for d in result.structured_content["dirty"]}
    assert dirty["notes/Helper contract.md"].startswith("hash changed")
    assert "notes/Helper contract.md: hash changed" in result.content[0].text
    with pytest.raises(ToolError, match="no function|no .*`nosuch`|candidates"):
        mcp.call("remember", path="notes/Bad anchor.md", summary="x", tags=["scope/payments"], anchor="pkg/util.py::nosuch", project="payments")
    assert not (world["vault"] / "notes" / "Bad anchor.md").exists(), "all or nothing"


def test_resources_serve_the_report_and_stats(mcp: SyncClient) -> None:
    templates = {t.uri_template for t in mcp.run(mcp.client.list_resource_templates())}
    assert templates == {"kg://report/{scope}", "kg://stats/{scope}"}
    report = mcp.run(mcp.client.read_resource("kg://report/vault"))[0].text
    assert report.startswith("#") and "Payments API" in report
    import json

    stats = json.loads(mcp.run(mcp.client.read_resource("kg://stats/payments"))[0].text)
    assert stats["scope"] == "payments" and stats["nodes"] > 0


def test_a_slow_call_does_not_stop_the_others(mcp: SyncClient, world: dict[str, Path]) -> None:
    """A recall that waits for the journal index (held here, as another kg process would) leaves
    the server free: `query` and `god_nodes` answer meanwhile, then the recall finishes too."""
    import time

    from filelock import FileLock

    lock = FileLock(str(world["vault"] / "kg-out" / "journal-index.lock"))
    lock.acquire(timeout=10)
    try:
        slow = asyncio.run_coroutine_threadsafe(mcp.client.call_tool("recall", {"question": "webhook retries"}), mcp.loop)
        time.sleep(1.0)
        assert not slow.done(), "the recall is waiting for the journal index"
        started = time.monotonic()
        answer = mcp.call("query", question="webhook retries", budget=400)
        central = mcp.call("god_nodes", scope="vault", n=3)
        assert time.monotonic() - started < 15 and answer.structured_content["hits"] and central.structured_content["nodes"]
        assert not slow.done(), "both answered while the slow call was still running"
    finally:
        lock.release()
    entries = slow.result(timeout=120).structured_content["entries"]
    assert entries and "exponential backoff" in entries[0]["text"]


def test_a_note_swapped_for_a_fifo_does_not_stop_the_server(mcp: SyncClient, world: dict[str, Path]) -> None:
    note = world["vault"] / "services" / "Webhook Relay.md"
    saved = note.read_bytes()
    note.unlink()
    os.mkfifo(note)
    try:
        answer = mcp.call("query", question="webhook relay retries", budget=2000)
        assert any(h["id"] == "note:services/Webhook Relay.md" for h in answer.structured_content["hits"])
        assert mcp.call("god_nodes", scope="vault", n=2).structured_content["nodes"]
    finally:
        note.unlink()
        note.write_bytes(saved)


def test_a_scope_named_twice_answers_each_hit_once(mcp: SyncClient) -> None:
    hits = mcp.call("query", question="webhook retries", scopes=["vault", "vault"], budget=5000).structured_content["hits"]
    keys = [(h["scope"], h["id"]) for h in hits]
    assert keys and len(keys) == len(set(keys))
