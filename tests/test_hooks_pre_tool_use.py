"""PreToolUse guardrails: the decision as a library call, then the hook run as Claude Code runs it.

The process tests take the command from hooks/hooks.json, substitute `${CLAUDE_PLUGIN_ROOT}` with
this checkout (the plugin) and run it under /bin/sh with Claude Code's PreToolUse payloads on
stdin, the launcher finding `kg` through KG_BIN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from hook_world import World, fake_kg, make_world, session_payload
from vault_kg.core.config import load_config
from vault_kg.memory.guardrails import JOURNAL, PROMOTION, REPO_NOTE, decide

TODAY = date(2026, 3, 12)
PAST_DAY = "journal/2026-03-10.md"
PAST_DAY_TEXT = "---\ntitle: 2026-03-10\ntags: [type/journal, scope/global]\n---\n# 2026-03-10\n\n## 09:14 · payments\nRetried the webhook with backoff.\n\n## 15:02 · payments\nShipped it.\n"
REPO_NOTE_TEXT = "---\nsummary: How the payments service retries webhooks.\ntags: [topic/payments, type/howto]\n---\n# Webhook retries\n"


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = make_world(tmp_path, build=False)
    (world.vault / "journal").mkdir()
    (world.vault / PAST_DAY).write_text(PAST_DAY_TEXT, encoding="utf-8")
    (world.vault / f"journal/{TODAY.isoformat()}.md").write_text(PAST_DAY_TEXT.replace("2026-03-10", TODAY.isoformat()), encoding="utf-8")
    return world


def run_decide(world: World, tool: str, tool_input: dict[str, Any], **env: str) -> Any:
    old = {k: os.environ.get(k) for k in env}
    os.environ.update({"KG_CONFIG": str(world.config), **env})
    try:
        cfg = load_config()
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return decide(tool, tool_input, world.project, cfg, vault=world.vault, today=TODAY)


def write(path: Path, content: str) -> dict[str, Any]:
    return {"file_path": str(path), "content": content}


def edit(path: Path, old: str, new: str, replace_all: bool = False) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": replace_all}


# --- the decision -------------------------------------------------------------------------------


def test_tagging_a_note_scope_global_is_refused_with_kg_promote(world: World) -> None:
    note = world.vault / "clients" / "Acme Corp.md"
    decision = run_decide(world, "Edit", edit(note, "scope/acme]", "scope/acme, scope/global]"))
    assert decision is not None and decision.rule == PROMOTION
    assert "clients/Acme Corp.md" in decision.reason and "kg promote" in decision.reason
    # An inline #scope/global in the body is read by the graph as a tag too.
    assert run_decide(world, "Edit", edit(note, "# Acme Corp\n", "# Acme Corp\n#scope/global\n")).rule == PROMOTION
    # So is a brand new note born global, whatever the folder.
    fresh = write(world.vault / "global" / "Retries.md", "---\nsummary: Retry with backoff.\ntags:\n  - scope/global\n---\n")
    assert run_decide(world, "Write", fresh).rule == PROMOTION


def test_notes_already_global_and_other_tags_are_left_alone(world: World) -> None:
    already = world.vault / "tools" / "Stripe.md"
    text = already.read_text(encoding="utf-8")
    assert "scope/global" in text
    assert run_decide(world, "Write", write(already, text + "\nMore on Stripe.\n")) is None
    acme = world.vault / "clients" / "Acme Corp.md"
    assert run_decide(world, "Edit", edit(acme, "topic/payments", "topic/billing")) is None
    # An edit that would not apply (old_string absent) is the tool's failure, not ours.
    assert run_decide(world, "Edit", edit(acme, "not in the note", "#scope/global")) is None


def test_past_journal_days_are_append_only(world: World) -> None:
    day = world.vault / PAST_DAY
    changed = run_decide(world, "Edit", edit(day, "Shipped it.", "Shipped it on Tuesday."))
    assert changed is not None and changed.rule == JOURNAL
    assert "kg journal add" in changed.reason and "2026-03-10" in changed.reason
    assert run_decide(world, "Write", write(day, PAST_DAY_TEXT.replace("## 09:14 · payments\nRetried the webhook with backoff.\n\n", ""))).rule == JOURNAL
    inserted = {"file_path": str(day), "edits": [{"old_string": "## 15:02", "new_string": "A late line.\n\n## 15:02"}]}
    assert run_decide(world, "MultiEdit", inserted).rule == JOURNAL
    # Appending below the existing lines is fine, as is any edit of today's note.
    assert run_decide(world, "Write", write(day, PAST_DAY_TEXT + "\n## 18:40 · payments\nLate note.\n")) is None
    assert run_decide(world, "Edit", edit(day, "Shipped it.\n", "Shipped it.\n\n## 18:40\nLate note.\n")) is None
    today = world.vault / f"journal/{TODAY.isoformat()}.md"
    assert run_decide(world, "Edit", edit(today, "Shipped it.", "Shipped it on Tuesday.")) is None


def test_every_edit_of_a_multiedit_is_checked(world: World) -> None:
    """A harmless first edit does not let a later one through: the text after all edits is judged."""
    acme = world.vault / "clients" / "Acme Corp.md"
    harmless = {"old_string": "topic/payments", "new_string": "topic/billing"}
    promoting = {"file_path": str(acme), "edits": [harmless, {"old_string": "scope/acme]", "new_string": "scope/acme, scope/global]"}]}
    assert run_decide(world, "MultiEdit", promoting).rule == PROMOTION
    day = world.vault / PAST_DAY
    appended = {"old_string": "Shipped it.\n", "new_string": "Shipped it.\n\n## 18:40\nLate note.\n"}
    rewriting = {"file_path": str(day), "edits": [appended, {"old_string": "Retried the webhook", "new_string": "Dropped the webhook"}]}
    assert run_decide(world, "MultiEdit", rewriting).rule == JOURNAL
    assert run_decide(world, "MultiEdit", {"file_path": str(day), "edits": [appended]}) is None


def test_note_shaped_markdown_in_a_project_is_refused(world: World) -> None:
    target = world.project / "docs" / "webhook-retries.md"
    decision = run_decide(world, "Write", write(target, REPO_NOTE_TEXT))
    assert decision is not None and decision.rule == REPO_NOTE
    assert "payments" in decision.reason and "remember" in decision.reason and str(world.vault) in decision.reason
    # Turning a plain README into a note by editing counts too.
    readme = world.project / "README.md"
    readme.write_text("# payments\n", encoding="utf-8")
    assert run_decide(world, "Edit", edit(readme, "# payments\n", REPO_NOTE_TEXT)).rule == REPO_NOTE


def test_plain_markdown_in_a_project_and_notes_outside_projects_are_allowed(world: World, tmp_path: Path) -> None:
    assert run_decide(world, "Write", write(world.project / "CHANGELOG.md", "# Changelog\n\n- retries\n")) is None
    # Frontmatter without namespaced tags (a docs site page) is not a vault note.
    assert run_decide(world, "Write", write(world.project / "docs" / "index.md", "---\nsummary: Home\ntags: [docs]\n---\n")) is None
    assert run_decide(world, "Write", write(tmp_path / "elsewhere" / "note.md", REPO_NOTE_TEXT)) is None
    # A note-shaped file the user already keeps in the repository may be edited.
    kept = world.project / "docs" / "kept.md"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(REPO_NOTE_TEXT, encoding="utf-8")
    assert run_decide(world, "Edit", edit(kept, "retries", "retries twice")) is None


def test_a_vault_inside_a_project_follows_the_vault_rules(world: World) -> None:
    world.config.write_text(world.config.read_text(encoding="utf-8") + f'[projects.monorepo]\npath = "{world.base}"\n', encoding="utf-8")
    assert run_decide(world, "Write", write(world.vault / "notes" / "Retries.md", REPO_NOTE_TEXT)) is None
    assert run_decide(world, "Write", write(world.vault / ".obsidian" / "x.md", REPO_NOTE_TEXT)) is None
    assert run_decide(world, "Write", write(world.base / "docs" / "Retries.md", REPO_NOTE_TEXT)).rule == REPO_NOTE


def test_the_off_switch_in_config_and_environment(world: World) -> None:
    target = write(world.project / "docs" / "n.md", REPO_NOTE_TEXT)
    assert run_decide(world, "Write", target) is not None
    assert run_decide(world, "Write", target, KG_GUARDRAILS="off") is None
    world.write_config("[guardrails]\nenabled = false\n")
    assert run_decide(world, "Write", target) is None


# --- the hook, as Claude Code runs it -------------------------------------------------------------


def run_hook(world: World, payload: dict[str, Any] | str, **env: str) -> subprocess.CompletedProcess[str]:
    (group,) = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    assert set(group["matcher"].split("|")) == {"Write", "Edit", "MultiEdit"}
    (hook,) = group["hooks"]
    command = hook["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_"))}
    full_env.update({"KG_CONFIG": str(world.config), "KG_OLLAMA": "off", "KG_VAULT": str(world.vault), "CLAUDE_PLUGIN_ROOT": str(REPO)})
    full_env.update({"KG_BIN": str(fake_kg(world.base / "tools")), **env})
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["/bin/sh", "-c", command], input=data, env=full_env, cwd=world.project, capture_output=True, text=True, timeout=120)


def pre_tool_use(world: World, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return session_payload(world, "PreToolUse", permission_mode="default", tool_name=tool, tool_input=tool_input, tool_use_id="toolu_01ABCdef")


def denial(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert spec["hookEventName"] == "PreToolUse" and spec["permissionDecision"] == "deny"
    return spec["permissionDecisionReason"]


def test_each_rule_denies_in_claude_codes_json(world: World) -> None:
    acme = world.vault / "clients" / "Acme Corp.md"
    assert "kg promote" in denial(run_hook(world, pre_tool_use(world, "Edit", edit(acme, "scope/acme]", "scope/acme, scope/global]"))))
    # The real clock: a day long past is past in any time zone.
    old_day = world.vault / "journal" / "2020-01-06.md"
    old_day.write_text(PAST_DAY_TEXT.replace("2026-03-10", "2020-01-06"), encoding="utf-8")
    assert "kg journal add" in denial(run_hook(world, pre_tool_use(world, "MultiEdit", {"file_path": str(old_day), "edits": [{"old_string": "Shipped it.", "new_string": "", "replace_all": False}]})))
    assert "remember" in denial(run_hook(world, pre_tool_use(world, "Write", write(world.project / "notes" / "retries.md", REPO_NOTE_TEXT))))


def test_allowed_calls_are_silent(world: World) -> None:
    for tool, tool_input in [
        ("Write", write(world.project / "app_notes.md", "# Notes\n")),
        ("Edit", edit(world.vault / "clients" / "Acme Corp.md", "topic/payments", "topic/billing")),
        ("Write", write(world.project / "pkg" / "new.py", "X = 1\n")),
        ("Read", {"file_path": str(world.vault / "Home.md")}),
    ]:
        done = run_hook(world, pre_tool_use(world, tool, tool_input))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), (tool, tool_input)


def test_the_off_switch_lets_the_write_through(world: World) -> None:
    payload = pre_tool_use(world, "Write", write(world.project / "notes" / "retries.md", REPO_NOTE_TEXT))
    assert denial(run_hook(world, payload))
    done = run_hook(world, payload, KG_GUARDRAILS="off")
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize("payload", ["{not json", "[1, 2]", json.dumps({"tool_name": "Write", "tool_input": "oops"})])
def test_a_malformed_payload_fails_open(world: World, payload: str) -> None:
    done = run_hook(world, payload)
    assert done.returncode == 0 and done.stdout == ""


def test_a_binary_note_is_read_as_the_graph_reads_it(world: World) -> None:
    """Undecodable bytes used to raise and fail open (issue 29, finding 14); they are kept as they
    are now. A binary note has no tags for the graph (it is quarantined), so the write goes through."""
    note = world.vault / "clients" / "Binary.md"
    note.write_bytes(b"\xff\xfe not utf-8 \x81")
    done = run_hook(world, pre_tool_use(world, "Edit", edit(note, "not", "#scope/global")))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_a_failure_in_the_rules_fails_open_and_is_logged(world: World) -> None:
    done = run_hook(world, '["not a payload object"]')
    assert done.returncode == 0 and done.stdout == ""
    assert "pre-tool-use" in done.stderr and "hook payload is a JSON list" in (world.vault / "kg-out" / "hooks.log").read_text()


def test_the_no_op_path_imports_nothing_heavy(world: World) -> None:
    probe = (
        "import sys, io, json\n"
        "sys.stdin = io.StringIO(json.dumps({'tool_name': 'Write', 'tool_input': {'file_path': '/tmp/x.py', 'content': ''}}))\n"
        "from hooks.dispatch import main\n"
        "main(['pre-tool-use'])\n"
        "heavy = [m for m in ('yaml', 'frontmatter', 'networkx', 'typer', 'extract.notes', 'episodic.dates') if m in sys.modules]\n"
        "print(json.dumps(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60, env={**os.environ, "KG_CONFIG": str(world.config)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
