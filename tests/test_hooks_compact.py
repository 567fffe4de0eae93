"""After a compaction the agent is briefed again: SessionStart with source `compact`.

Claude Code's PreCompact hook has no way to add context to the new window, so hooks.json lists
`compact` in SessionStart's matcher; this pins that the same brief comes back.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO
from hook_world import make_world, session_payload


def test_the_compact_session_start_reinjects_the_startup_brief(tmp_path: Path) -> None:
    (group,) = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"]
    assert "compact" in group["matcher"].split("|")
    world = make_world(tmp_path)
    briefs = {}
    for source in ("startup", "compact"):
        code, out, err = world.hook("session-start", session_payload(world, "SessionStart", source=source, model="claude-sonnet-4-5"))
        assert code == 0, err
        assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        briefs[source] = out["hookSpecificOutput"]["additionalContext"]
    assert "Central notes in the vault" in briefs["compact"]
    assert briefs["compact"] == briefs["startup"]
