"""The last turn of a Claude Code session transcript: the files it edited and what it said.

A turn starts at the last real user request (tool results and meta lines are not requests) and
runs to the end of the transcript; only the last 4 MB are read, since the Stop hook runs every
turn (a longer turn is read from there). The Stop hook reads it to credit notes and to tell
whether a note push-recall injected was used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .transcript import EDIT_TOOLS, content_of, transcript_records, tool_uses, user_text

MAX_TEXT_CHARS = 2_000_000
TAIL_BYTES = 4 * 1024 * 1024  # the Stop hook runs every turn: a long session is not re-read whole


@dataclass
class Turn:
    edited: list[str] = field(default_factory=list)  # absolute paths, in order of first edit
    text: str = ""  # what the agent wrote and passed to its tools, lowercased


def last_turn(transcript: Path) -> Turn:
    records = transcript_records(transcript, TAIL_BYTES)
    start = max((i for i, r in enumerate(records) if user_text(r)), default=-1) + 1
    turn = Turn()
    parts: list[str] = []
    for record in records[start:]:
        if record.get("type") != "assistant":
            continue
        content = content_of(record)
        if isinstance(content, list):
            parts += [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        for use in tool_uses(record):
            args = use.get("input") or {}
            parts.append(json.dumps(args, ensure_ascii=False))
            raw = args.get(EDIT_TOOLS.get(str(use.get("name")), ""), None)
            if isinstance(raw, str) and raw and raw not in turn.edited:
                turn.edited.append(raw)
    turn.text = "\n".join(parts)[-MAX_TEXT_CHARS:].lower()
    return turn
