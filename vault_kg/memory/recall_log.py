"""The recall log: which vault notes kg put in front of an agent, and which the agent's work
credited, per machine (`<vault>/kg-out/recall-log.jsonl`, never synced: kg-out is ignored).

One JSON object a line, appended: `{"t": unix time, "via": "query" | "explain" | "brief" | "push"
| "mcp-query" | "mcp-explain" | "credit", "notes": [note ids], "q": question, "session": id}`;
the question is redacted (`vault_kg.core.secrets.redact`): a prompt that pasted a key keeps only
`[REDACTED:kind]` here.
The file is capped at `MAX_BYTES`: past it, it becomes `recall-log.jsonl.1` (the one older
generation kept) and a new file starts, so the log never grows without bound. `kg ledger` reads
both. Recording never raises: a read-only disk costs the log line, never the answer.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from vault_kg.storage.layout import Layout, out_dir

__all__ = ["MAX_BYTES", "MAX_QUERY_CHARS", "VIAS", "entries", "log_path", "record", "record_hits"]

MAX_BYTES = 4_000_000
MAX_QUERY_CHARS = 300
VIAS = ("query", "explain", "brief", "push", "mcp-query", "mcp-explain", "credit")


def log_path(vault: Path) -> Path:
    return Layout(out_dir(vault)).recall_log


def record(vault: Path | None, via: str, notes: Iterable[str], query: str | None = None, session: str | None = None) -> None:
    """Append one line naming the vault notes surfaced (or credited); nothing for no notes."""
    ids = sorted({n for n in notes if isinstance(n, str) and n.startswith("note:")})
    if vault is None or not ids:
        return
    entry: dict[str, Any] = {"t": round(time.time(), 3), "via": via, "notes": ids}
    if query:
        from vault_kg.core.secrets import redact

        entry["q"] = redact(query[: MAX_QUERY_CHARS * 4])[:MAX_QUERY_CHARS]  # redacted before the cut: a cut key is no longer seen
    if session:
        entry["session"] = session
    path = log_path(vault)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
    except OSError:
        pass


def record_hits(scopes: list[Any], answer: dict[str, Any], via: str, query: str | None = None) -> None:
    """The vault notes among a query's hits (or an explain's node), from whichever face asked."""
    vault = next((s.root for s in scopes if getattr(s, "kind", "") == "vault"), None)
    if vault is None:
        return
    if "hits" in answer:
        ids = [h["id"] for h in answer["hits"] if h.get("scope") == "vault"]
    else:
        ids = [answer.get("node", {}).get("id", "")] if answer.get("scope") == "vault" else []
    record(vault, via, ids, query)


def entries(vault: Path) -> Iterator[dict[str, Any]]:
    """Every well-formed line, older generation first; torn or foreign lines are skipped."""
    for path in (log_path(vault).with_name(log_path(vault).name + ".1"), log_path(vault)):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(item, dict) and isinstance(item.get("notes"), list) and item.get("via") in VIAS:
                        yield item
        except OSError:
            continue
