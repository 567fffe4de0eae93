"""Every hook fails open: bad payloads, a missing vault, a corrupt graph, an unwritable disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hook_world import World, make_world, session_payload, wait_for


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "post-tool-use", "stop", "pre-compact", "session-end"])
@pytest.mark.parametrize("payload", ["{not json", "[1, 2]"])
def test_a_malformed_payload_is_logged_and_exits_0(tmp_path: Path, event: str, payload: str) -> None:
    world = make_world(tmp_path, build=False)
    code, out, err = world.hook(event, payload)
    assert (code, out) == (0, None)
    assert f"kg hook {event}:" in err
    assert event in (world.vault / "kg-out" / "hooks.log").read_text()


def test_an_unknown_event_prints_usage_and_exits_0(tmp_path: Path) -> None:
    world = make_world(tmp_path, build=False)
    code, out, err = world.hook("subagent-stop", {})
    assert (code, out) == (0, None) and "usage: kg hook" in err


def test_a_missing_vault_still_starts_the_session_and_logs_beside_the_config(tmp_path: Path) -> None:
    world = make_world(tmp_path, build=False)
    world.write_config(vault=tmp_path / "no-such-vault")
    code, out, _ = world.hook("session-start", session_payload(world, "SessionStart", source="startup"))
    assert code == 0
    assert "kg: no vault found" in out["hookSpecificOutput"]["additionalContext"]
    code, out, _ = world.hook("session-end", session_payload(world, "SessionEnd", reason="other"))
    assert (code, out) == (0, None)
    assert "no vault found" in (world.config.parent / "hooks.log").read_text()


def test_a_corrupt_graph_cache_is_rebuilt_in_full_not_replaced_by_one_note(world: World) -> None:
    sources = json.loads((world.vault / "kg-out" / "graph.json").read_text())["graph"]["counts"]["sources"]
    cache = world.vault / "kg-out" / "cache" / "index.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    (world.vault / "kg-out" / "brief.json").write_text("{broken")
    code, out, err = world.hook("session-start", session_payload(world, "SessionStart", source="startup"))
    assert code == 0, err
    assert "has no graph yet" in out["hookSpecificOutput"]["additionalContext"]
    note = world.vault / "inbox" / "Ideas Scratchpad.md"
    payload = session_payload(world, "PostToolUse", tool_name="Edit", tool_input={"file_path": str(note)})
    code, out, err = world.hook("post-tool-use", payload)
    assert code == 0, err
    assert "graph cache is unusable" in out["hookSpecificOutput"]["additionalContext"]

    def rebuilt() -> bool:
        try:
            graph = json.loads((world.vault / "kg-out" / "graph.json").read_text())
        except ValueError:
            return False
        return graph["graph"]["counts"]["sources"] == sources

    assert wait_for(rebuilt), "the whole vault is back in the graph"


def test_an_unwritable_graph_and_log_fail_open_to_the_fallback_log(world: World) -> None:
    out_dir = world.vault / "kg-out"
    (out_dir / "graph.json").unlink()
    (out_dir / "graph.json").mkdir()  # writes of graph.json fail, as on a read-only disk
    (out_dir / "hooks.log").mkdir()  # and so does the log in the vault
    note = world.vault / "inbox" / "New idea.md"
    note.write_text("---\nsummary: A new idea\ntags: [topic/x, scope/global]\n---\n# New idea\n")
    payload = session_payload(world, "PostToolUse", tool_name="Write", tool_input={"file_path": str(note), "content": ""})
    code, out, err = world.hook("post-tool-use", payload)
    assert (code, out) == (0, None)
    assert "kg hook post-tool-use:" in err
    fallback = world.config.parent / "hooks.log"
    assert "post-tool-use:" in fallback.read_text()
    assert (out_dir / "graph.json").is_dir(), "nothing half-written in its place"


def test_session_start_stays_up_when_the_journal_is_not_utf8(world: World) -> None:
    from datetime import date

    journal = world.vault / "journal"
    journal.mkdir(exist_ok=True)
    (journal / f"{date.today().isoformat()}.md").write_bytes(b"\xff\xfe broken \x80")
    code, out, err = world.hook("session-start", session_payload(world, "SessionStart", source="startup"))
    assert code == 0, err
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "## Central notes in the vault" in text and "## Journal" not in text
    assert "journal_lines" in (world.vault / "kg-out" / "hooks.log").read_text()
    assert os.path.exists(world.vault / "kg-out" / "cache" / "index.sqlite")
