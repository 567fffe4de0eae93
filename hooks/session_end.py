"""SessionEnd: append the session's journal entry, then bring that day's note into the vault graph.

The entry is built from the transcript's structure by `episodic.transcript` (no model). The
journal note is a vault note like any other, so a detached `kg update` re-extracts it without
making the agent wait; it is skipped when the vault has never been built.
"""

from __future__ import annotations

from typing import Any

from vault_kg.core.errors import KgError

from .common import hook_env, is_built


def handle(payload: dict[str, Any]) -> None:
    env = hook_env(payload)
    if env.vault is None:
        raise KgError("no vault found for the journal entry; set KG_VAULT or run `kg init --vault PATH`")
    raw = payload.get("transcript_path")
    if not isinstance(raw, str) or not raw:
        raise KgError("SessionEnd payload has no transcript_path; nothing to journal")
    from vault_kg import api

    registered = env.project_of(env.cwd)
    entry = api.journal_session(env.vault, raw, registered[0] if registered else None, env.cfg.timezone)
    if is_built(env.vault):
        api.index_note_later(env.vault, env.vault / entry.file)
