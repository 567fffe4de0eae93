"""PostToolUse: the agent's edits reach the graph at once; anything else costs nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from hook_world import World, make_world, session_payload
from vault_kg.query.graph_view import load_view
from vault_kg.core.scopes import Scope

HEAVY = ("networkx", "typer", "rich", "numpy", "igraph", "sqlite3", "vault_kg.update.engine", "fastmcp")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """One built world: every test adds or edits its own files."""
    return make_world(tmp_path_factory.mktemp("post"))


def edit(world: World, path: Path, tool: str = "Edit") -> dict:
    tool_input = {"file_path": str(path), "old_string": "a", "new_string": "b"} if tool == "Edit" else {"file_path": str(path), "content": path.read_text() if path.exists() else ""}
    return session_payload(world, "PostToolUse", tool_name=tool, tool_input=tool_input, tool_response={"filePath": str(path), "success": True})


def vault_nodes(world: World) -> set[str]:
    graph = json.loads((world.vault / "kg-out" / "graph.json").read_text())
    return {n["id"] for n in graph["nodes"]}


def test_a_path_outside_vault_and_projects_returns_before_any_heavy_import(world: World, tmp_path: Path) -> None:
    payload = edit(world, tmp_path / "elsewhere" / "notes.md", tool="Write")
    code = (
        "import io, json, sys\n"
        f"sys.stdin = io.StringIO({json.dumps(json.dumps(payload))})\n"
        "from hooks.dispatch import main\n"
        "assert main(['post-tool-use']) == 0\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**world.env, "PATH": "/usr/bin:/bin"}, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", "the fast path imported heavy modules"


def test_a_path_outside_prints_nothing_and_logs_nothing(world: World, tmp_path: Path) -> None:
    code, out, err = world.hook("post-tool-use", edit(world, tmp_path / "x.py"))
    assert (code, out, err) == (0, None, "")
    assert not (world.vault / "kg-out" / "hooks.log").exists()


def test_writing_a_vault_note_adds_it_to_the_graph(world: World) -> None:
    note = world.vault / "inbox" / "Retry budget.md"
    note.write_text("---\nsummary: Webhook retries stop after five attempts\ntags: [topic/payments, scope/global]\n---\n# Retry budget\nSee [[Payments API]].\n")
    code, out, err = world.hook("post-tool-use", edit(world, note, tool="Write"))
    assert (code, out) == (0, None), (out, err)
    view = load_view(Scope("vault", "vault", world.vault, world.vault / "kg-out"))
    node = view.nodes["note:inbox/Retry budget.md"]
    assert node["summary"] == "Webhook retries stop after five attempts"
    assert any(e["target"] == "note:services/Payments API.md" for e in view.out_edges.get("note:inbox/Retry budget.md"))
    assert "note:inbox/Retry budget.md" in vault_nodes(world)


def test_a_note_with_broken_frontmatter_is_reported_to_the_agent(world: World) -> None:
    note = world.vault / "inbox" / "Ideas Scratchpad.md"
    note.write_text("---\nsummary: [unclosed\ntags: [scope/global]\n---\n# Ideas\n")
    code, out, err = world.hook("post-tool-use", edit(world, note))
    assert code == 0, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert context.startswith("kg: inbox/Ideas Scratchpad.md:2: properties ignored") and "close the `[` list" in context


def test_editing_a_project_file_updates_its_code_graph(world: World) -> None:
    source = world.project / "pkg" / "util.py"
    source.write_text(source.read_text() + "\n\ndef retry_budget(attempts):\n    return min(attempts, 5)\n")
    code, out, err = world.hook("post-tool-use", edit(world, source))
    assert code == 0, err
    view = load_view(Scope("payments", "code", world.project, world.project / "kg-out"))
    assert view.find("retry_budget"), "the new function is in the code graph"
    assert out is None, "no anchored note went stale, so the hook has nothing to tell the agent"


def test_other_tools_and_unbuilt_vaults_are_left_alone(tmp_path: Path) -> None:
    world = make_world(tmp_path, build=False)
    note = world.vault / "inbox" / "New.md"
    note.write_text("---\nsummary: x\ntags: [scope/global]\n---\n")
    read = session_payload(world, "PostToolUse", tool_name="Read", tool_input={"file_path": str(note)})
    assert world.hook("post-tool-use", read)[:2] == (0, None)
    assert world.hook("post-tool-use", edit(world, note, tool="Write"))[:2] == (0, None)
    assert not (world.vault / "kg-out").exists(), "no partial graph of one note"


def test_concurrent_hooks_queue_and_both_edits_land(world: World) -> None:
    notes = []
    for name in ("Alpha budget", "Beta budget"):
        note = world.vault / "inbox" / f"{name}.md"
        note.write_text(f"---\nsummary: {name}\ntags: [topic/x, scope/global]\n---\n# {name}\n")
        notes.append(note)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "hook", "post-tool-use"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**__import__("os").environ, **world.env},
        )
        for _ in notes
    ]
    for proc, note in zip(procs, notes):
        proc.stdin.write(json.dumps(edit(world, note, tool="Write")))
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout.read() == ""
    nodes = vault_nodes(world)
    assert {"note:inbox/Alpha budget.md", "note:inbox/Beta budget.md"} <= nodes
    assert "note:services/Payments API.md" in nodes, "the rest of the vault is still there"


def test_editing_anchored_code_tells_the_agent_which_note_went_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = make_world(tmp_path)
    monkeypatch.setenv("KG_CONFIG", str(world.config))
    from vault_kg.notes.anchor_repair import add_anchor
    from vault_kg.core.scopes import vault_scope

    add_anchor(vault_scope(world.vault), "Payments API", "pkg/util.py::helper", "payments")
    source = world.project / "pkg" / "util.py"
    source.write_text(source.read_text().replace("    return x\n", "    return x * 2\n", 1))
    code, out, err = world.hook("post-tool-use", edit(world, source))
    assert code == 0, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("kg: note services/Payments API.md is now stale (hash changed")
    again = world.hook("post-tool-use", edit(world, source))
    assert again[:2] == (0, None), "reported once, not on every later edit"
