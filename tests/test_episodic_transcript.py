"""A journal entry from a realistic Claude Code transcript, without any model."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from episodic.journal import day_file
from episodic.transcript import entry_text, journal_session, summarize_transcript
from vault_kg.core.errors import KgError

FIXTURE = Path(__file__).parent / "fixtures" / "episodic" / "claude_session.jsonl"


def test_the_summary_holds_what_the_session_did() -> None:
    s = summarize_transcript(FIXTURE, vault=Path("/home/dev/vault"))
    assert s.project == "payments-api" and s.branch == "fix/webhook-retries"
    assert s.first_request.startswith("The Stripe webhook handler retries failed deliveries")
    assert s.last_request == "Great. Now update the runbook note in my vault about webhook retries, then commit."
    assert s.files_edited == ["app/webhooks/backoff.py", "app/webhooks/stripe.py", "tests/webhooks/test_stripe.py"]
    assert s.notes_edited == ["payments/webhook-retries"]
    assert s.commands[1:] == ["ruff check app/webhooks", 'git add -A && git commit -m "Back off webhook retries exponentially"']
    assert s.title == "Stripe webhook retries: exponential backoff with jitter"


def test_the_session_end_entry_is_written_redacted_with_a_link(tmp_path: Path) -> None:
    entry = journal_session(tmp_path, FIXTURE, now=datetime(2025, 3, 11, 9, 10))
    text = day_file(tmp_path, entry.day).read_text(encoding="utf-8")
    assert entry.project == "payments-api" and entry.time == "09:10"
    assert "sk_live_51HqZx" not in text and "[REDACTED:stripe-key]" in text
    assert f"[session 6f1c2a9e]({FIXTURE.resolve().as_uri()})" in entry.text
    assert "- Files edited: `app/webhooks/backoff.py`" in entry.text


def test_meta_and_command_turns_are_not_requests(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: ..."}}\n'
        '{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}\n'
        '{"type":"user","cwd":"/tmp/nowhere/proj-x","message":{"role":"user","content":"Only request"}}\n',
        encoding="utf-8",
    )
    s = summarize_transcript(path)
    assert (s.first_request, s.last_request, s.project) == ("Only request", "", "proj-x")
    assert "Asked: Only request" in entry_text(s)


def test_a_missing_transcript_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KgError, match="cannot read the session transcript"):
        summarize_transcript(tmp_path / "gone.jsonl")
