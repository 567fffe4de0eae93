"""Stop: citation credit for the notes anchored to the files a turn edited, read from the real
transcript, recorded and never spoken; PreCompact as Claude Code sends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hook_world import World, add_anchored_note, make_world, session_payload

NOTE = "note:notes/Engine Lifecycle.md"


@pytest.fixture()
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path)
    assert add_anchored_note(w) == NOTE
    return w


def transcript(world: World, *turns: tuple[str, list[dict]]) -> None:
    records = []
    for prompt, uses in turns:
        records.append({"type": "user", "message": {"role": "user", "content": prompt}, "sessionId": "6f1c2a9e", "cwd": str(world.project)})
        records.append(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args} for i, (name, args) in enumerate(uses)] + [{"type": "text", "text": "Done."}],
                },
            }
        )
        records.append({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "ok"}]}})
    world.transcript.write_text("".join(json.dumps(r) + "\n" for r in records))


def stop(world: World) -> None:
    code, out, err = world.hook("stop", session_payload(world, "Stop", permission_mode="default", stop_hook_active=False))
    assert (code, out, err) == (0, None, "")


def credits(world: World) -> list[list[str]]:
    log = world.vault / "kg-out" / "recall-log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [e["notes"] for e in lines if e["via"] == "credit"]


def test_the_turn_that_edits_anchored_code_credits_the_note(world: World) -> None:
    core = str(world.project / "pkg" / "core.py")
    transcript(world, ("tidy the engine", [("Edit", {"file_path": core, "old_string": "Runs things.", "new_string": "Runs them."})]))
    stop(world)
    assert credits(world) == [[NOTE]]


def test_only_the_last_turn_counts_and_other_files_credit_nothing(world: World) -> None:
    core = str(world.project / "pkg" / "core.py")
    transcript(
        world,
        ("tidy the engine", [("Edit", {"file_path": core, "old_string": "a", "new_string": "b"})]),
        ("now the util", [("Write", {"file_path": str(world.project / "pkg" / "util.py"), "content": "X = 1\n"}), ("Bash", {"command": f"cat {core}"})]),
    )
    stop(world)
    assert credits(world) == []


def test_a_transcript_outside_claude_folders_is_refused(world: World, tmp_path: Path) -> None:
    elsewhere = tmp_path / "t.jsonl"
    elsewhere.write_text("")
    code, out, err = world.hook("stop", {**session_payload(world, "Stop", stop_hook_active=False), "transcript_path": str(elsewhere)})
    assert (code, out) == (0, None) and "not a Claude Code transcript" in err
    assert credits(world) == []


def test_a_long_session_is_read_from_its_tail(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from episodic import last_turn

    core = str(world.project / "pkg" / "core.py")
    chatter = [("an earlier request " + "x" * 2000, [("Bash", {"command": "echo " + "y" * 2000})]) for _ in range(40)]
    transcript(world, *chatter, ("tidy the engine", [("Edit", {"file_path": core, "old_string": "a", "new_string": "b"})]))
    monkeypatch.setattr(last_turn, "TAIL_BYTES", 20_000)  # far less than the transcript
    assert world.transcript.stat().st_size > 100_000
    turn = last_turn.last_turn(world.transcript)
    assert turn.edited == [core] and "echo" not in turn.text
