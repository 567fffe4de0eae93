"""SessionEnd: append the session's journal entry, then bring that day's note into the vault graph.

The entry is built from the transcript's structure by `episodic.transcript` (no model). The
journal note is a vault note like any other, so a detached `kg update` re-extracts it without
making the agent wait; it is skipped when the vault has never been built.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
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
    from episodic.dates import resolve_timezone
    from episodic.transcript import accepted_transcript, journal_session

    transcript = accepted_transcript(raw)
    registered = env.project_of(env.cwd)
    entry = journal_session(
        env.vault,
        transcript,
        project=registered[0] if registered else None,
        tz=resolve_timezone(env.cfg.timezone),
    )
    if is_built(env.vault):
        index_later(env.vault, env.vault / entry.file)


def index_later(vault: Path, note: Path) -> None:
    """`kg update NOTE` in its own session: the hook returns while the note is re-extracted."""
    subprocess.Popen(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "update", str(note), "--vault", str(vault)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
