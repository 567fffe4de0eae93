"""Where an anchor's history goes: one append-only file beside the vault's notes, not their properties.

What an anchor needs to be checked (its locator and hash) stays in the note's `anchors:`. What
happened to it (anchored, accepted, reanchored, superseded, retired: when, and the hash before)
is appended to `<vault>/.kg/anchor-history.jsonl`, one JSON object a line with the note's path,
instead of growing a `history:` list in the note's properties with every repair. The folder is
hidden, so neither Obsidian nor kg reads it as a note, and it is not under `kg-out/`, so it
travels with the vault: `kg sync` marks it `merge=union` in `.gitattributes`, which keeps both
machines' lines of an append-only log. `kg check` reads it for the hash kg last wrote for each
anchor (a different hash in the note was edited by hand); a `history:` list an older kg left in
a note is still read, and moved here by that note's next repair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vault_kg.core.errors import KgError
from vault_kg.core.safe_read import inside, read_regular
from vault_kg.core.secrets import redact

__all__ = ["ATTRIBUTE_LINE", "HISTORY_PARTS", "REPAIR_ACTIONS", "append", "entries", "history_path", "with_written", "written_hashes"]

HISTORY_PARTS = (".kg", "anchor-history.jsonl")
ATTRIBUTE_LINE = ".kg/*.jsonl merge=union"
REPAIR_ACTIONS = ("anchor", "accept", "reanchor")
MAX_BYTES = 64 * 1024 * 1024


def history_path(vault: Path) -> Path:
    return vault.joinpath(*HISTORY_PARTS)


def entries(vault: Path) -> list[dict[str, Any]]:
    """Every entry, oldest first; a line that is not a JSON object (a bad merge) is passed over."""
    try:
        raw = read_regular(history_path(vault), MAX_BYTES, root=vault)
    except OSError:
        return []
    found = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("note"), str):
            found.append(item)
    return found


def written_hashes(vault: Path) -> dict[str, dict[str, str]]:
    """Note → `project:locator` → the hash kg last wrote for that anchor (what `kg check` compares)."""
    out: dict[str, dict[str, str]] = {}
    for entry in entries(vault):
        if entry.get("action") in REPAIR_ACTIONS and entry.get("hash"):
            out.setdefault(entry["note"], {})[f"{entry.get('project', '')}:{entry.get('locator', '')}"] = str(entry["hash"])
    return out


def with_written(records: dict[str, dict[str, Any]], vault: Path) -> dict[str, dict[str, Any]]:
    """The notes' anchor records with the hashes kg last wrote (this file's, after any a note's own
    old `history:` holds), as `vault_kg.anchors.evaluate` compares them."""
    written = written_hashes(vault)
    if not written:
        return records
    return {rel: {**record, "written": {**record.get("written", {}), **written[rel]}} if rel in written else record for rel, record in records.items()}


def append(vault: Path, note: str, items: list[dict[str, Any]]) -> None:
    """Append one line per entry for `note` (redacted), through the vault's one safe write (its
    lock, a regular file inside the vault, appended in place)."""
    if not items:
        return
    from vault_kg.core.safe_write import rewrite

    path = history_path(vault)
    rel = "/".join(HISTORY_PARTS)
    folder = path.parent
    if folder.is_symlink() or (folder.exists() and not inside(folder, vault)) or path.is_symlink():
        raise KgError(f"{path}: a link where kg keeps anchor history; remove it (the notes were written, their history was not)")
    lines = "".join(redact(json.dumps({"note": note, **item}, ensure_ascii=False, sort_keys=True)) + "\n" for item in items)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise KgError(f"{path}: cannot append the anchor history ({exc.strerror or exc}); the notes were written, check that the folder is writable") from exc
    rewrite(vault, path, rel, lambda old: (old or "") + ("\n" if old and not old.endswith("\n") else "") + lines, noun="the anchor history (the notes were written)")
