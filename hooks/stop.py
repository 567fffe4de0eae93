"""Stop: credit the notes anchored to files the turn edited, and mark push-recall notes it used.

Records only (the recall log, push-recall's session state); prints nothing, so the agent's turn
ends as it would without kg. See `vault_kg.memory.credit`.
"""

from __future__ import annotations

from typing import Any

from .common import hook_env


def handle(payload: dict[str, Any]) -> None:
    raw = payload.get("transcript_path")
    session = str(payload.get("session_id") or "")
    if not isinstance(raw, str) or not raw or payload.get("stop_hook_active"):
        return None
    env = hook_env(payload)
    if env.vault is None:
        return None
    from episodic.last_turn import last_turn
    from episodic.transcript import accepted_transcript
    from vault_kg.memory import credit
    from vault_kg.memory import push_recall
    from vault_kg.memory.recall_log import record

    turn = last_turn(accepted_transcript(raw))
    credited = credit.anchored_notes(env.vault, credit.project_files(env.cfg, turn.edited)) if turn.edited else []
    record(env.vault, "credit", credited, session=session)
    injected = push_recall.injected_this_session(env.vault, session)
    if injected:
        used = set(credited) | set(credit.cited(injected, credit.note_labels(env.vault, sorted(injected)), turn.text))
        push_recall.mark_used(env.vault, session, sorted(used))
    return None
