"""UserPromptSubmit push-recall, run as Claude Code runs it (`kg hook user-prompt-submit` in a fresh
process, the payload on stdin): each guardrail pinned, plus PreCompact's reset of the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hook_world import World, add_anchored_note, make_world, session_payload

RELAY = "note:services/Webhook Relay.md"
WEAK = "what about the webhook relay"  # title whole, one summary word: 0.77
STRONG = "the webhook relay drops stripe events"  # title whole, three summary words: 1.0


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def prompt(world: World, text: str, env: dict[str, str] | None = None, session: str | None = None) -> tuple[str | None, dict | None]:
    payload = session_payload(world, "UserPromptSubmit", prompt=text, permission_mode="default")
    if session:
        payload["session_id"] = session
    code, out, err = world.hook("user-prompt-submit", payload, env)
    assert code == 0, err
    assert not err, err
    if out is None:
        return None, None
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = out["hookSpecificOutput"]["additionalContext"]
    notes = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(notes) == 1, text  # one note per turn, always
    return text, out


def injected(text: str | None) -> str | None:
    if text is None:
        return None
    line = next(line for line in text.splitlines() if line.startswith("- "))
    return "note:" + line.split("(", 1)[1].split(")", 1)[0]


def test_a_strong_match_injects_one_note_as_background(world: World) -> None:
    text, out = prompt(world, STRONG)
    assert injected(text) == RELAY
    assert text.startswith("<vault-kg-recall>") and text.rstrip().endswith("</vault-kg-recall>")
    assert "ignore it if it does not bear on the request" in text
    assert set(out) == {"hookSpecificOutput"}
    log = [json.loads(line) for line in (world.vault / "kg-out" / "recall-log.jsonl").read_text().splitlines()]
    assert [(e["via"], e["notes"]) for e in log] == [("push", [RELAY])]


def test_unrelated_and_weak_prompts_stay_silent(world: World) -> None:
    for text in ("fix the typo in the readme heading", "payments", "please run the tests again", "thanks!"):
        assert prompt(world, text) == (None, None), text
    assert not (world.vault / "kg-out" / "recall-log.jsonl").exists()


def test_the_floor_is_absolute_and_configurable(world: World) -> None:
    assert injected(prompt(world, WEAK, session="s-default")[0]) == RELAY
    world.write_config("[push_recall]\nfloor = 0.9\n")
    assert prompt(world, WEAK, session="s-high")[0] is None
    assert injected(prompt(world, STRONG, session="s-high")[0]) == RELAY
    world.write_config("[push_recall]\nfloor = 1.5\n")
    code, out, err = world.hook("user-prompt-submit", session_payload(world, "UserPromptSubmit", prompt=STRONG))
    assert (code, out) == (0, None)  # a bad config fails open: one line naming the file and the fix
    assert f"{world.config}: [push_recall] floor = 1.5 is not a number from 0 to 1; fix it" in err


def test_dedup_with_a_rising_bar(world: World) -> None:
    assert injected(prompt(world, WEAK)[0]) == RELAY
    assert prompt(world, WEAK)[0] is None  # ignored, same strength: not again
    assert injected(prompt(world, STRONG)[0]) == RELAY  # clearly stronger: again
    assert injected(prompt(world, STRONG)[0]) != RELAY  # the bar rose past 1.0


def test_a_note_injected_and_used_stays_suppressed(world: World) -> None:
    assert injected(prompt(world, WEAK)[0]) == RELAY
    turn = [
        {"type": "user", "message": {"role": "user", "content": WEAK}, "timestamp": "2099-01-01T10:00:00Z"},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": str(world.vault / "services" / "Webhook Relay.md")}},
                    {"type": "text", "text": "Per the vault note, the relay verifies signatures first."},
                ],
            },
            "timestamp": "2099-01-01T10:00:05Z",
        },
    ]
    world.transcript.write_text("".join(json.dumps(r) + "\n" for r in turn))
    code, out, err = world.hook("stop", session_payload(world, "Stop", stop_hook_active=False, permission_mode="default"))
    assert (code, out, err) == (0, None, "")
    assert injected(prompt(world, STRONG)[0]) != RELAY  # used: never again in this window


def test_naming_an_anchored_file_bypasses_the_floor_once_per_session(world: World) -> None:
    add_anchored_note(world)
    text, _ = prompt(world, "can you tidy pkg/core.py a bit")
    assert injected(text) == "note:notes/Engine Lifecycle.md"
    assert "names a file it is anchored to" in text
    assert prompt(world, "and core.py again please")[0] is None  # once per session
    assert injected(prompt(world, "now core.py", session="another-session")[0]) == "note:notes/Engine Lifecycle.md"


def test_compaction_resets_the_dedup_window(world: World) -> None:
    assert injected(prompt(world, WEAK)[0]) == RELAY
    assert prompt(world, WEAK)[0] is None
    code, out, err = world.hook("pre-compact", session_payload(world, "PreCompact", trigger="auto", custom_instructions=""))
    assert (code, out, err) == (0, None, "")
    assert injected(prompt(world, WEAK)[0]) == RELAY
    assert prompt(world, WEAK)[0] is None
    code, out, err = world.hook("session-start", session_payload(world, "SessionStart", source="compact", model="claude-sonnet-4-5"))
    assert code == 0 and out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert injected(prompt(world, WEAK)[0]) == RELAY


def test_the_off_switch(world: World) -> None:
    assert prompt(world, STRONG, env={"KG_PUSH_RECALL": "off"})[0] is None
    world.write_config("[push_recall]\nenabled = false\n")
    assert prompt(world, STRONG)[0] is None
    world.write_config()
    assert injected(prompt(world, STRONG)[0]) == RELAY


def test_bad_payloads_fail_open(world: World) -> None:
    for payload in (
        "",
        "[]",
        json.dumps({**session_payload(world, "UserPromptSubmit"), "prompt": 7}),
        json.dumps({**session_payload(world, "UserPromptSubmit", prompt=STRONG), "session_id": "../../etc/x"}),
    ):
        code, out, _ = world.hook("user-prompt-submit", payload)
        assert code == 0
        if out is not None:  # a hostile session id never names a file outside kg-out/push-recall
            assert not list((world.vault.parent).glob("etc*"))


def test_strength_is_absolute_and_needs_two_shared_words() -> None:
    from vault_kg.memory.push_recall import strength, terms

    summary = "Small Go service that receives Stripe webhooks, verifies signatures and fans events out to Acme and Globex."
    assert strength(terms(WEAK), "Webhook Relay", [], summary) == 0.7667
    assert strength(terms(STRONG), "Webhook Relay", [], summary) == 1.0
    assert strength(terms("run the tests"), "Testing", [], "Testing rules - pytest, fixtures.") == 0.0  # one word, even a whole title
    assert strength(terms("the relay for stripe"), "Webhook Relay", ["Stripe relay"], "") == 0.65  # an alias names it whole
    assert strength(terms("unrelated words entirely"), "Webhook Relay", [], summary) == 0.0


def test_the_pointer_names_the_mcp_tool_under_the_plugin_and_the_command_without(world: World, tmp_path: Path) -> None:
    alone, _ = prompt(world, STRONG, session="shell")
    assert alone is not None and "  more: `kg explain 'services/Webhook Relay.md'`" in alone
    plugin, _ = prompt(world, STRONG, env={"CLAUDE_PLUGIN_ROOT": str(tmp_path)}, session="plugin")
    assert plugin is not None and '  more: `explain(node="services/Webhook Relay.md")`' in plugin and "kg explain" not in plugin
