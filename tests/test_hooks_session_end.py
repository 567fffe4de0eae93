"""SessionEnd: the session's journal entry lands in today's note, and that note reaches the graph."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from conftest import REPO
from episodic.journal import read_day
from hook_world import World, make_world, session_payload, wait_for

TRANSCRIPT = REPO / "tests" / "fixtures" / "episodic" / "claude_session.jsonl"


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = make_world(tmp_path)
    shutil.copy(TRANSCRIPT, world.transcript)
    return world


def test_session_end_appends_the_journal_entry_and_indexes_the_day(world: World) -> None:
    payload = session_payload(world, "SessionEnd", reason="prompt_input_exit")
    code, out, err = world.hook("session-end", payload)
    assert (code, out) == (0, None), err
    entries = read_day(world.vault, date.today())
    assert len(entries) == 1
    entry = entries[0]
    assert entry.project == "payments", "the registered project the session ran in"
    assert "- Asked: The Stripe webhook handler retries failed deliveries" in entry.text
    assert "Transcript: [session 6f1c2a9e]" in entry.text
    note_id = f"note:{entry.file}"

    def indexed() -> bool:
        graph = json.loads((world.vault / "kg-out" / "graph.json").read_text())
        return any(n["id"] == note_id for n in graph["nodes"])

    assert wait_for(indexed), "the background `kg update` adds the day note to the vault graph"


def test_a_missing_transcript_is_logged_and_the_hook_still_exits_0(world: World) -> None:
    payload = session_payload(world, "SessionEnd", reason="clear")
    payload["transcript_path"] = str(world.transcript.parent / "gone.jsonl")
    code, out, err = world.hook("session-end", payload)
    assert (code, out) == (0, None)
    log = (world.vault / "kg-out" / "hooks.log").read_text()
    assert "session-end: KgError:" in log and "gone.jsonl: cannot read the session transcript" in log
    assert "gone.jsonl" in err
    assert read_day(world.vault, date.today()) == []
