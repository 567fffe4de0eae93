"""Citation credit and use, decided after a turn from what it edited and said (the Stop hook).

- *Credit*: a vault note anchored to a file the turn edited bore on the work. Credited notes go
  to the recall log (`via: credit`), which `kg ledger` reads.
- *Use*: a note push-recall injected this session that the turn cites (its path or its title
  appears in what the agent wrote or passed to a tool) or credits was used, and push-recall
  keeps it suppressed for the rest of the window.
Nothing here speaks to the agent.
"""

from __future__ import annotations

import os
from pathlib import Path

from vault_kg.anchors.anchored_index import iter_anchored, open_cache
from vault_kg.storage.light_reads import CacheError, note_rows
from vault_kg.core.config import Config

__all__ = ["anchored_notes", "cited", "credit_turn", "note_labels", "project_files"]


def anchored_notes(vault: Path, files: list[tuple[str, str]]) -> list[str]:
    """Vault notes anchored to any of `files` ((project, relpath) pairs), by id."""
    wanted = set(files)
    con = open_cache(vault) if wanted else None
    if con is None:
        return []
    try:
        return [nid for nid, _, anchored in iter_anchored(con) if wanted & set(anchored)]
    except CacheError:
        return []
    finally:
        con.close()


def project_files(cfg: Config, paths: list[str]) -> list[tuple[str, str]]:
    """(project, relpath) for each path inside a registered project (real paths compared)."""
    out = []
    for raw in paths:
        real = os.path.realpath(raw)
        for name, root in sorted(cfg.projects.items()):
            base = os.path.realpath(root)
            if real.startswith(base + os.sep):
                out.append((name, real[len(base) + 1 :].replace(os.sep, "/")))
                break
    return out


def cited(injected: dict[str, dict], labels: dict[str, str], text: str) -> list[str]:
    """Injected notes whose vault path (with or without `.md`) or title the turn's text holds."""
    found = []
    for nid in sorted(injected):
        rel = nid.removeprefix("note:")
        names = {rel.lower(), rel[:-3].lower() if rel.endswith(".md") else rel.lower()}
        label = labels.get(nid, "").strip().lower()
        if len(label) >= 4:
            names.add(label)
        if any(n and n in text for n in names):
            found.append(nid)
    return found


def note_labels(vault: Path, ids: list[str]) -> dict[str, str]:
    con = open_cache(vault) if ids else None
    if con is None:
        return {}
    try:
        return {nid: node.get("label") or "" for nid, node in note_rows(con, ids).items()}
    except CacheError:
        return {}
    finally:
        con.close()


def credit_turn(vault: Path, cfg: Config, transcript_path: Path | str, session: str) -> None:
    """The Stop hook's bookkeeping: credit the notes anchored to files the last turn edited (the
    recall log), and mark the push-recall notes the turn used (cited, or credited)."""
    from episodic.last_turn import last_turn
    from episodic.transcript import accepted_transcript
    from vault_kg.memory import push_recall
    from vault_kg.memory.recall_log import record

    turn = last_turn(accepted_transcript(str(transcript_path)))
    credited = anchored_notes(vault, project_files(cfg, turn.edited)) if turn.edited else []
    record(vault, "credit", credited, session=session)
    injected = push_recall.injected_this_session(vault, session)
    if injected:
        used = set(credited) | set(cited(injected, note_labels(vault, sorted(injected)), turn.text))
        push_recall.mark_used(vault, session, sorted(used))
